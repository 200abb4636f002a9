// Package servertest provides a fake engine and test voices for testing the speech server without a device: the
// fake answers at once with audio made from each sentence's ids, or holds its answers until told, so tests can
// watch requests wait, stream and leave; and, for tests of the whole way from a request to its audio, a backend over
// the real engine.
package servertest

import (
	"bytes"
	"context"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/ttsgen/ttsgen/internal/audio"
	"github.com/ttsgen/ttsgen/internal/engine"
	"github.com/ttsgen/ttsgen/internal/ort"
	"github.com/ttsgen/ttsgen/internal/ort/orttest"
	"github.com/ttsgen/ttsgen/internal/phonemes"
	"github.com/ttsgen/ttsgen/internal/pipeline"
	"github.com/ttsgen/ttsgen/internal/server"
	"github.com/ttsgen/ttsgen/internal/voices"
)

// Voice files in the repository, relative to its root (Backend finds it).
const (
	TinyVoice         = "testdata/tiny-voice/tiny.onnx"                        // one speaker
	ThreeSpeakerVoice = "testdata/piper-shaped-voice/tiny-vits-3speakers.onnx" // speaker0..speaker2
)

// SamplesPerID is how many samples of audio the fake engine makes for each phoneme id of a sentence.
const SamplesPerID = 64

// Audio is the fake engine's audio for a sentence: SamplesPerID samples per id, a sine whose pitch follows the
// ids, so that sentences differ.
func Audio(ids []int64) []float32 {
	out := make([]float32, len(ids)*SamplesPerID)
	for i := range out {
		out[i] = float32(0.5 * math.Sin(float64(i)*float64(ids[i/SamplesPerID]+1)/50))
	}
	return out
}

// Engine is a fake engine (pipeline.Engine). Each sentence's result is Audio(its ids), at once, or, while held,
// when Release lets it go; a held sentence whose request ends leaves at once with its context's error, as from
// the real engine's queue. Every sentence it takes (its request still live) is sent to Submitted, and every held
// one that leaves to Left, when those channels are set (buffer them: the engine does not wait for a reader).
type Engine struct {
	Submitted chan engine.Request
	Left      chan error

	mu   sync.Mutex
	hold bool
	held []*heldSentence
}

type heldSentence struct {
	req  engine.Request
	out  chan engine.Result
	stop func() bool
}

// NewEngine makes a fake engine with room for n notifications of each kind; hold says whether it holds results.
func NewEngine(n int, hold bool) *Engine {
	return &Engine{Submitted: make(chan engine.Request, n), Left: make(chan error, n), hold: hold}
}

// QueueSize is the engine's queue as the pipeline reads it.
func (e *Engine) QueueSize() int { return 64 }

func (e *Engine) Submit(ctx context.Context, _ *engine.Model, req engine.Request) <-chan engine.Result {
	out := make(chan engine.Result, 1)
	if ctx.Err() != nil { // turned away at the door, as the real engine does: never in its queue
		out <- engine.Result{Err: ctx.Err()}
		return out
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	notify(e.Submitted, req) // under the lock: a test that hears of a sentence finds it held
	if !e.hold {
		out <- engine.Result{Audio: Audio(req.IDs)}
		return out
	}
	h := &heldSentence{req: req, out: out}
	e.held = append(e.held, h)
	h.stop = context.AfterFunc(ctx, func() {
		e.mu.Lock()
		defer e.mu.Unlock()
		for i, x := range e.held {
			if x == h {
				e.held = append(e.held[:i], e.held[i+1:]...)
				out <- engine.Result{Err: ctx.Err()}
				notify(e.Left, ctx.Err())
				return
			}
		}
	})
	return out
}

// ReleaseOne answers the oldest held sentence, and reports whether there was one.
func (e *Engine) ReleaseOne() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.held) == 0 {
		return false
	}
	h := e.held[0]
	e.held = e.held[1:]
	h.stop()
	h.out <- engine.Result{Audio: Audio(h.req.IDs)}
	return true
}

// Release answers every held sentence and stops holding.
func (e *Engine) Release() {
	e.mu.Lock()
	e.hold = false
	e.mu.Unlock()
	for e.ReleaseOne() {
	}
}

// Held is how many sentences wait for Release.
func (e *Engine) Held() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.held)
}

func notify[T any](ch chan T, v T) {
	if ch != nil {
		select {
		case ch <- v:
		default:
			panic("servertest: notification channel full: give it more room")
		}
	}
}

// Backend is a server backend over eng with the given voices (paths; the first is the default), phonemized by
// espeak-ng in this process and normalised as synth does.
func Backend(t testing.TB, eng pipeline.Engine, voicePaths ...string) server.Backend {
	t.Helper()
	esp, err := phonemes.NewEspeak("")
	if err != nil {
		t.Fatal(err)
	}
	b := server.Backend{Engine: eng, Frontend: &pipeline.Frontend{Espeak: esp, Normalize: true}}
	root := repoRoot(t)
	for _, p := range voicePaths {
		v, err := voices.Open(filepath.Join(root, p))
		if err != nil {
			t.Fatal(err)
		}
		b.Voices = append(b.Voices, &pipeline.LoadedVoice{Voice: v})
	}
	return b
}

// RealBackend is Backend over a real CPU engine made with opts (its Device is set to cpu), the voices loaded into
// it. Without ONNX Runtime the test is skipped (or fails, under TTSGEN_REQUIRE_ORT=1); the engine is closed when
// the test ends.
func RealBackend(t testing.TB, opts engine.Options, voicePaths ...string) (server.Backend, *engine.Engine) {
	t.Helper()
	orttest.Need(t)
	opts.Device = ort.DeviceCPU
	eng, err := engine.NewEngine(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := eng.Close(); err != nil {
			t.Error(err)
		}
	})
	b := Backend(t, eng, voicePaths...)
	for _, v := range b.Voices {
		model, err := v.Voice.Model()
		if err != nil {
			t.Fatal(err)
		}
		cfg := v.Voice.Config
		if v.Model, err = eng.Load(v.Voice.Name, model, engine.ModelConfig{SampleRate: cfg.Audio.SampleRate,
			NumSpeakers: cfg.NumSpeakers}); err != nil {
			t.Fatal(err)
		}
	}
	return b, eng
}

// ReadBody reads a response's whole body and closes it; err is the request's, failing the test when set.
func ReadBody(t testing.TB, resp *http.Response, err error) []byte {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// repoRoot is the repository's root: the first folder above the test's own with a go.mod.
func repoRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("servertest: no go.mod above the test's folder")
		}
		dir = parent
	}
}

// SynthAudio is what `ttsgen synth` writes for text in format on b's engine with b's first voice, at the voice's
// scales without noise and the server's default silence between sentences: the pipeline, writing each sentence once
// it is whole. Server tests compare responses with it.
func SynthAudio(t testing.TB, b server.Backend, text string, level audio.Level, format audio.Format) []byte {
	t.Helper()
	v := b.Voices[0]
	cfg := v.Voice.Config
	var out bytes.Buffer
	enc, err := audio.NewEncoder(format, &out, cfg.Audio.SampleRate, audio.Options{})
	if err != nil {
		t.Fatal(err)
	}
	zero := float32(0)
	opt := pipeline.SpeakOptions{Scales: pipeline.Defaults{}.Scales(cfg.Inference, nil, &zero, &zero),
		SentenceSilence: server.DefaultSentenceSilence, Level: level}
	if _, err := pipeline.Speak(t.Context(), b.Engine, pipeline.NewInFlight(4), v,
		b.Frontend.Stream(b.Frontend.Split(text), cfg), opt, enc, nil); err != nil {
		t.Fatal(err)
	}
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}
