package pipeline

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"time"

	"github.com/ttsgen/ttsgen/internal/audio"
	"github.com/ttsgen/ttsgen/internal/engine"
	"github.com/ttsgen/ttsgen/internal/timestamps"
	"github.com/ttsgen/ttsgen/internal/voices"
)

// Engine is what the pipeline needs of the synthesis engine (engine.Engine): accept a sentence from any goroutine and
// hand back a channel that receives its audio once, and say how many sentences it takes before Submit blocks (what
// a job keeps in flight to keep it busy).
type Engine interface {
	Submit(ctx context.Context, m *engine.Model, req engine.Request) <-chan engine.Result
	QueueSize() int
}

// LoadedVoice is a voice whose model the engine has loaded.
type LoadedVoice struct {
	Voice *voices.Voice
	Model *engine.Model
}

// SpeakOptions are the per-text synthesis settings.
type SpeakOptions struct {
	Speaker         int64
	Scales          engine.Scales
	SentenceSilence float64 // seconds of silence between sentences
	Level           audio.Level
	// Timeline, when set, gets every sentence's words timed as they are written (a voice that gives no
	// durations fails at its first sentence, before any audio is written).
	Timeline *timestamps.Builder
	// Stream writes each sentence's audio as the engine decodes it (engine.Request.Stream: window by window, for
	// a voice the engine runs in decoder windows), flushing out after each piece, rather than once the sentence
	// is whole. The samples are the same. It needs Level.KeepsModelLevel(), since normalisation needs the whole
	// sentence, and no Timeline, whose sentence timing comes with the whole sentence.
	Stream bool
}

// streamChunks is how many pieces of a sentence's audio wait for the writer before the engine holds the next ones
// back (they then go together, or with the whole sentence): enough for the sentences written after the one being
// written to keep theirs.
const streamChunks = 16

// SentenceDone reports one written sentence, for progress and latency measurements and for what is written
// beside the audio.
type SentenceDone struct {
	AudioSeconds float64
	Latency      time.Duration // from submission to audio
	// Start is where the sentence's audio begins in the output, End where it ends, in samples at the voice's rate
	// (the silence before it included in Start).
	Start, End int64
}

// ErrNothingToSpeak is Speak's error for a text that gave no sentence with anything to say.
var ErrNothingToSpeak = errors.New("nothing to speak: the text has no words")

// Speak synthesises sentences through the engine and writes them to out in reading order, with silence between
// sentences, flushing out after each (with opt.Stream, after each piece of one) so that a listener hears it, and
// returns how many it wrote (ErrNothingToSpeak when sentences yields none). The caller closes out. It submits each
// sentence as soon as sentences yields it (a Frontend streams a text's sentences as it phonemizes them) while
// writing those before it. Each sentence holds a place in inFlight, shared by the job's texts, from its submission
// until its audio is taken to be written. onSentence (may be nil) is called once per written sentence. On error or
// cancellation it stops early; what was written is then incomplete, which is why callers write to a temporary file.
func Speak(ctx context.Context, eng Engine, inFlight *InFlight, v *LoadedVoice, sentences iter.Seq2[Sentence, error],
	opt SpeakOptions, out audio.Encoder, onSentence func(SentenceDone)) (int, error) {
	if opt.Stream && (!opt.Level.KeepsModelLevel() || opt.Timeline != nil) {
		return 0, errors.New("pipeline: streaming a sentence as it is decoded needs the model's own level " +
			"(audio.ModelLevel) and no timeline")
	}
	ctx, cancel := context.WithCancel(ctx)
	type pending struct {
		sentence Sentence
		result   <-chan engine.Result // nil for err
		stream   chan []float32       // with opt.Stream
		err      error                // sentences failed: nothing follows
		sent     time.Time
	}
	// Results come back in any order but are written in reading order; the places of sentences submitted and not
	// written are given back however Speak returns (cancel stops the submitter, which then closes the queue).
	queue := make(chan pending, inFlight.Size())
	defer func() {
		cancel()
		for p := range queue {
			if p.result != nil {
				inFlight.release()
			}
		}
	}()
	go func() {
		defer close(queue)
		for s, err := range sentences {
			var p pending
			if err != nil {
				p.err = err
			} else {
				if inFlight.acquire(ctx) != nil {
					return
				}
				p = pending{sentence: s, sent: time.Now()}
				req := engine.Request{IDs: s.IDs, Speaker: opt.Speaker, Scales: opt.Scales}
				if opt.Stream {
					p.stream = make(chan []float32, streamChunks)
					req.Stream = p.stream
				}
				p.result = eng.Submit(ctx, v.Model, req)
			}
			select {
			case queue <- p:
			case <-ctx.Done():
				if p.result != nil {
					inFlight.release()
				}
				return
			}
			if err != nil {
				return
			}
		}
	}()

	silence := audio.SilenceSamples(opt.SentenceSilence, v.Voice.Config.Audio.SampleRate)
	written := 0
	var at int64 // samples written
	for p := range queue {
		if p.err != nil {
			return written, p.err
		}
		start := at
		if written > 0 {
			start += int64(silence)
		}
		// The sentence's audio: pieces as they are decoded (with opt.Stream), then the rest with its Result.
		began := false
		begin := func() error {
			if began || written == 0 {
				began = true
				return nil
			}
			began = true
			return audio.WriteSilence(out, silence)
		}
		streamed := 0 // samples of the sentence written as pieces
		writePiece := func(samples []float32) error {
			if len(samples) == 0 {
				return nil
			}
			if err := begin(); err != nil {
				return err
			}
			if err := out.Write(opt.Level.PCM16(samples)); err != nil {
				return err
			}
			streamed += len(samples)
			return out.Flush()
		}
		var res engine.Result
	wait:
		for {
			select {
			case piece := <-p.stream: // nil without opt.Stream: never ready
				if err := writePiece(piece); err != nil {
					inFlight.release()
					return written, err
				}
			case res = <-p.result:
				break wait
			case <-ctx.Done():
				inFlight.release()
				return written, ctx.Err()
			}
		}
		inFlight.release()
		if res.Err != nil {
			return written, fmt.Errorf("sentence %d (%q): %w", written+1, clip(p.sentence.Text, 60), res.Err)
		}
		// The engine sends every piece before the Result: those not read yet are waiting.
	rest:
		for streamed < res.Streamed {
			select {
			case piece := <-p.stream:
				if err := writePiece(piece); err != nil {
					return written, err
				}
			default:
				break rest
			}
		}
		if streamed != res.Streamed || streamed > len(res.Audio) {
			return written, fmt.Errorf("sentence %d: the engine streamed %d samples and says %d of %d", written+1,
				streamed, res.Streamed, len(res.Audio))
		}
		if opt.Timeline != nil {
			s := p.sentence
			if err := opt.Timeline.Add(timestamps.Unit{Source: s.Source, Text: s.Text, Phonemes: s.Phonemes, IDs: s.IDs,
				Durations: res.Durations, Start: start, Samples: len(res.Audio)}); err != nil {
				return written, err
			}
		}
		at = start
		if err := begin(); err != nil {
			return written, err
		}
		if err := out.Write(opt.Level.PCM16(res.Audio[streamed:])); err != nil {
			return written, err
		}
		if err := out.Flush(); err != nil {
			return written, err
		}
		written++
		if onSentence != nil {
			onSentence(SentenceDone{
				AudioSeconds: float64(len(res.Audio)) / float64(v.Voice.Config.Audio.SampleRate),
				Latency:      time.Since(p.sent),
				Start:        at,
				End:          at + int64(len(res.Audio)),
			})
		}
		at += int64(len(res.Audio))
	}
	if err := ctx.Err(); err != nil {
		return written, err
	}
	if written == 0 {
		return 0, ErrNothingToSpeak
	}
	return written, nil
}

// clip shortens s to at most n runes for error messages.
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
