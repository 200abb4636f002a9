package pipeline

import (
	"context"
	"fmt"
	"time"

	"github.com/ttsgen/ttsgen/audio"
	"github.com/ttsgen/ttsgen/gpu"
	"github.com/ttsgen/ttsgen/voices"
)

// Engine is what the pipeline needs of the synthesis engine (gpu.Engine): accept a sentence from any goroutine and
// hand back a channel that receives its audio once, and say how many sentences it takes before Submit blocks (what
// a job keeps in flight to keep it busy).
type Engine interface {
	Submit(ctx context.Context, m *gpu.Model, req gpu.Request) <-chan gpu.Result
	QueueSize() int
}

// LoadedVoice is a voice whose model the engine has loaded.
type LoadedVoice struct {
	Voice *voices.Voice
	Model *gpu.Model
}

// SpeakOptions are the per-text synthesis settings.
type SpeakOptions struct {
	Speaker         int64
	Scales          gpu.Scales
	SentenceSilence float64 // seconds of silence between sentences
}

// SentenceDone reports one finished sentence, for progress and latency measurements.
type SentenceDone struct {
	AudioSeconds float64
	Latency      time.Duration // from submission to audio
}

// Speak synthesises sentences through the engine and writes them to out in reading order, with silence between
// sentences. Each sentence holds a place in inFlight, shared by the job's texts, from its submission until its
// audio is taken to be written. onSentence (may be nil) is called once per finished sentence. On error or
// cancellation it stops early; what was written is then incomplete, which is why callers write to a temporary file.
func Speak(ctx context.Context, eng Engine, inFlight *InFlight, v *LoadedVoice, sentences []Sentence, opt SpeakOptions,
	out *audio.WAVWriter, onSentence func(SentenceDone)) error {
	ctx, cancel := context.WithCancel(ctx)
	type pending struct {
		result <-chan gpu.Result
		sent   time.Time
	}
	// Results come back in any order but are written in reading order; the places of sentences submitted and not
	// written are given back however Speak returns (cancel stops the submitter, which then closes the queue).
	queue := make(chan pending, inFlight.Size())
	defer func() {
		cancel()
		for range queue {
			inFlight.release()
		}
	}()
	go func() {
		defer close(queue)
		for _, s := range sentences {
			if inFlight.acquire(ctx) != nil {
				return
			}
			p := pending{sent: time.Now()}
			p.result = eng.Submit(ctx, v.Model, gpu.Request{IDs: s.IDs, Speaker: opt.Speaker, Scales: opt.Scales})
			select {
			case queue <- p:
			case <-ctx.Done():
				inFlight.release()
				return
			}
		}
	}()

	silence := audio.SilenceSamples(opt.SentenceSilence, v.Voice.Config.Audio.SampleRate)
	i := 0
	for p := range queue {
		var res gpu.Result
		select {
		case res = <-p.result:
		case <-ctx.Done():
			inFlight.release()
			return ctx.Err()
		}
		inFlight.release()
		if res.Err != nil {
			return fmt.Errorf("sentence %d (%q): %w", i+1, clip(sentences[i].Text, 60), res.Err)
		}
		if i > 0 {
			if err := out.WriteSilence(silence); err != nil {
				return err
			}
		}
		if err := out.Write(audio.PCM16(res.Audio)); err != nil {
			return err
		}
		if onSentence != nil {
			onSentence(SentenceDone{
				AudioSeconds: float64(len(res.Audio)) / float64(v.Voice.Config.Audio.SampleRate),
				Latency:      time.Since(p.sent),
			})
		}
		i++
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return nil
}

// clip shortens s to at most n runes for error messages.
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
