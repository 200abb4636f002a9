package server

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/ttsgen/ttsgen/internal/audio"
	"github.com/ttsgen/ttsgen/internal/engine"
	"github.com/ttsgen/ttsgen/internal/pipeline"
)

// job is a validated speech request, ready to speak.
type job struct {
	voice  *pipeline.LoadedVoice
	text   pipeline.Text
	opt    pipeline.SpeakOptions
	format Format
}

// prepare checks req against the served voices and the limits and resolves its settings as synth does: unset
// scales are the voice's own.
func (b *backend) prepare(req SpeechRequest, o Options) (*job, *Error) {
	if e := checkText(req.Text, o.MaxInput); e != nil {
		return nil, e
	}
	v, e := b.voice(req.Voice)
	if e != nil {
		return nil, e
	}
	format, e := checkFormat(req.Format)
	if e != nil {
		return nil, e
	}
	if e := checkSettings(req); e != nil {
		return nil, e
	}
	cfg := v.Voice.Config
	speaker, err := cfg.SpeakerID(string(req.Speaker))
	if err != nil {
		return nil, BadRequest(paramSpeaker, "unknown_speaker", "%v", err)
	}
	scales := pipeline.Defaults{}.Scales(cfg.Inference, req.LengthScale, req.NoiseScale, req.NoiseW)
	if req.Speed != nil {
		scales.Length /= float32(*req.Speed)
		if scales.Length > maxLengthScale {
			return nil, BadRequest("speed", "invalid_value", "speed %g makes the voice's length scale %g, beyond %d: "+
				"ask for a higher speed", *req.Speed, scales.Length, maxLengthScale)
		}
	}
	silence := DefaultSentenceSilence
	for _, s := range []*float64{o.SentenceSilence, req.SentenceSilence} {
		if s != nil {
			silence = *s
		}
	}
	text := b.Frontend.Split(req.Text)
	if text.Estimate() == 0 {
		return nil, BadRequest(paramText, "nothing_to_speak", "the text has no words to speak, only punctuation or symbols")
	}
	// Normalisation needs a sentence's every sample: only audio at the model's own level can go out as the
	// engine decodes it.
	level := audio.Level{}
	if req.Normalize != nil && !*req.Normalize {
		level.Normalisation = audio.ModelLevel
	}
	return &job{voice: v, text: text, format: format,
		opt: pipeline.SpeakOptions{Speaker: speaker, Scales: scales, SentenceSilence: silence, Level: level,
			Stream: level.KeepsModelLevel() && format.StreamsByWindow}}, nil
}

// Speech is POST /api/speech: it speaks a SpeechRequest and streams the audio in the asked-for format as the
// sentences are spoken, each sent as soon as it and those before it are; without normalisation, in a format that
// allows it, window by window as the engine decodes them. A failure before the first audio is answered with an
// Error; after it, the response is cut short (its connection aborted), so that a client never takes a truncated
// stream for a whole one. A request whose client goes away stops: its sentences not yet spoken
// leave the engine's queue.
func (s *Server) Speech(w http.ResponseWriter, r *http.Request) {
	arrived := time.Now()
	b := s.backend.Load()
	if b == nil {
		WriteError(w, ErrNotReady)
		return
	}
	j, e := s.admit(w, r, b)
	if e != nil {
		WriteError(w, e)
		return
	}
	defer s.admission.leave()
	s.metrics.inFlight.Inc()
	defer s.metrics.inFlight.Dec()

	ctx, cancel := context.WithTimeout(r.Context(), s.opts.RequestTimeout)
	defer cancel()
	cfg := j.voice.Voice.Config
	out, err := newAudioStream(ctx, w, j.format, cfg.Audio.SampleRate, s.opts.WriteTimeout, func(at time.Time) {
		s.metrics.firstAudio.Observe(at.Sub(arrived).Seconds())
	})
	if err != nil {
		WriteError(w, &Error{Status: http.StatusInternalServerError, Type: TypeServer, Code: "encoder_unavailable",
			Message: fmt.Sprintf("this server cannot encode %s: %v; ask for another response_format", j.format.Name, err)})
		return
	}
	defer out.release()
	sentences, err := pipeline.Speak(ctx, b.Engine, pipeline.NewInFlight(s.opts.SentencesInFlight), j.voice,
		b.Frontend.Stream(j.text, cfg), j.opt, out, nil)
	if err == nil {
		err = out.close()
	}
	total := time.Since(arrived)
	var firstAudio time.Duration
	if at := out.firstSent(); !at.IsZero() {
		firstAudio = at.Sub(arrived)
	}
	s.metrics.audio.Add(out.seconds())
	log := s.opts.Logger.With("request", s.requestID.Add(1), "voice", j.voice.Voice.Name, "format", j.format.Name,
		"sentences", sentences, "audio_s", round3(out.seconds()), "first_audio_s", round3(firstAudio.Seconds()),
		"total_s", round3(total.Seconds()))
	if err == nil {
		s.metrics.duration.Observe(total.Seconds())
		log.Info("spoken")
		return
	}
	log.Warn("not spoken", "error", err)
	out.abandon()
	switch {
	case out.hasStarted():
		panic(http.ErrAbortHandler) // the status is sent: cutting the stream short is the only way left to say so
	case errors.Is(context.Cause(r.Context()), errGraceOver):
		WriteError(w, errDraining)
	case r.Context().Err() != nil:
		WriteError(w, errClientGone) // nobody reads it; the metrics count it
	default:
		WriteError(w, speakError(err))
	}
}

// admit reads, checks and admits a speech request.
func (s *Server) admit(w http.ResponseWriter, r *http.Request, b *backend) (*job, *Error) {
	body, e := s.ReadBody(w, r)
	if e != nil {
		return nil, e
	}
	req, e := DecodeSpeechRequest(body)
	if e != nil {
		return nil, e
	}
	j, e := b.prepare(req, s.opts)
	if e != nil {
		return nil, e
	}
	if e := s.admission.enter(); e != nil {
		return nil, e
	}
	return j, nil
}

// speakError is the answer to a request that failed before any of its audio was sent.
func speakError(err error) *Error {
	switch {
	case errors.Is(err, pipeline.ErrNothingToSpeak):
		return BadRequest(paramText, "nothing_to_speak", "the text has no words to speak, only punctuation or symbols")
	case errors.Is(err, context.DeadlineExceeded):
		return &Error{Status: http.StatusServiceUnavailable, Type: TypeServer, Code: "timeout",
			Message: "the request took longer than the server's limit (ttsgen serve --request-timeout): send less text at a time, or retry when it is less busy"}
	case errors.Is(err, engine.ErrClosed):
		return errDraining
	}
	return errInternal(err)
}

func round3(x float64) float64 { return math.Round(x*1000) / 1000 }

// audioStream is a response's body as it is spoken: the encoder writes into a buffer that goes out at the end of
// each sentence or streamed piece (flush), or sooner when it fills. Every write to the connection must finish
// within writeTimeout. The buffer is locked: an encoder may write from a goroutine of its own (the AAC one copies
// ffmpeg's output), while the handler flushes.
type audioStream struct {
	enc          audio.Encoder
	ctx          context.Context // the request's: once it ends, nothing more is written
	w            http.ResponseWriter
	rc           *http.ResponseController
	unwatch      func() // stops waking a blocked write when ctx ends, once that is done
	format       Format
	rate         int
	writeTimeout time.Duration
	samples      int64 // written to the encoder, silence included
	onFirst      func(at time.Time)

	mu        sync.Mutex
	buf       *bufio.Writer
	started   time.Time // when bytes first went to the client (the status with them); zero until then
	abandoned bool      // the response is cut short: what the encoder still makes goes nowhere
}

// newAudioStream makes a response's body for a request that ends with ctx; onFirst is called when its first bytes go
// to the client. Call release before the handler returns.
func newAudioStream(ctx context.Context, w http.ResponseWriter, f Format, rate int, writeTimeout time.Duration,
	onFirst func(at time.Time)) (*audioStream, error) {
	a := &audioStream{ctx: ctx, w: w, rc: http.NewResponseController(w), format: f, rate: rate,
		writeTimeout: writeTimeout, onFirst: onFirst}
	a.buf = bufio.NewWriterSize(writerFunc(a.send), 64<<10)
	enc, err := audio.NewEncoder(f.Audio, writerFunc(a.encoded), rate, audio.Options{})
	if err != nil {
		return nil, err
	}
	a.enc = enc
	// A client that stops reading leaves a write blocked until the write timeout; when the request ends (the drain's
	// grace is over, its own timeout, the client gone), the deadline moves to now and the write returns.
	woken := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		defer close(woken)
		_ = a.rc.SetWriteDeadline(time.Now())
	})
	a.unwatch = sync.OnceFunc(func() {
		if !stop() {
			<-woken // the connection outlives the handler: no deadline may be set on it after
		}
	})
	return a, nil
}

// release stops watching the request's end; the handler calls it before it returns.
func (a *audioStream) release() { a.unwatch() }

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// encoded takes what the encoder made into the buffer.
func (a *audioStream) encoded(p []byte) (int, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.abandoned {
		return len(p), nil
	}
	return a.buf.Write(p)
}

// send writes to the client, sending the headers first. a.mu is held (it runs inside the buffer's writes).
func (a *audioStream) send(p []byte) (int, error) {
	if a.started.IsZero() {
		h := a.w.Header()
		h.Set("Content-Type", a.format.ContentType)
		h.Set("X-Sample-Rate", strconv.Itoa(a.format.Audio.DecodedRate(a.rate, audio.Options{}))) // not the voice's: MP3 at 44.1 kHz
		a.started = time.Now()
		a.onFirst(a.started)
	}
	_ = a.rc.SetWriteDeadline(time.Now().Add(a.writeTimeout))
	if err := a.ctx.Err(); err != nil { // checked after the deadline is pushed on: newAudioStream's watch comes later
		return 0, err
	}
	return a.w.Write(p)
}

func (a *audioStream) Write(pcm []int16) error {
	a.samples += int64(len(pcm))
	return a.enc.Write(pcm)
}

// Flush sends what the encoder has made of the samples so far (Speak calls it after each sentence, or each piece
// of one it streams).
func (a *audioStream) Flush() error {
	if err := a.enc.Flush(); err != nil {
		return err
	}
	return a.flush()
}

// Close ends the encoder's stream and sends the rest.
func (a *audioStream) Close() error { return a.close() }

// flush sends what is buffered now. Until the encoder has made a first byte (the AAC one answers from ffmpeg a
// while after its input), there is nothing to send, and flushing the connection then would send the status and
// headers without the body's Content-Type.
func (a *audioStream) flush() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := a.buf.Flush(); err != nil {
		return err
	}
	if a.started.IsZero() {
		return nil
	}
	if err := a.rc.Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
		return err
	}
	return nil
}

// close ends the encoder's stream and sends the rest.
func (a *audioStream) close() error {
	if err := a.enc.Close(); err != nil {
		return err
	}
	return a.flush()
}

// abandon frees the encoder of a response that is cut short or answered with an error, sending nothing more. Where
// nothing was sent, the connection gets its write deadline back, for the error the handler answers with.
func (a *audioStream) abandon() {
	a.mu.Lock()
	a.abandoned = true
	started := !a.started.IsZero()
	a.mu.Unlock()
	_ = a.enc.Close()
	a.release()
	if !started {
		_ = a.rc.SetWriteDeadline(time.Now().Add(a.writeTimeout))
	}
}

// hasStarted says whether any of the body went to the client.
func (a *audioStream) hasStarted() bool { return !a.firstSent().IsZero() }

// firstSent is when the body's first bytes went to the client (zero if none have).
func (a *audioStream) firstSent() time.Time {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.started
}

func (a *audioStream) seconds() float64 { return float64(a.samples) / float64(a.rate) }
