package server_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ttsgen/ttsgen/internal/audio"
	"github.com/ttsgen/ttsgen/internal/audio/decodetest"
	"github.com/ttsgen/ttsgen/internal/engine"
	"github.com/ttsgen/ttsgen/internal/pipeline"
	"github.com/ttsgen/ttsgen/internal/server"
	"github.com/ttsgen/ttsgen/internal/server/servertest"
)

// watchedEngine passes every sentence to the real engine and counts how each came back: spoken, or gone with an
// error (a cancelled request's sentence leaves the engine's queue with context.Canceled).
type watchedEngine struct {
	pipeline.Engine
	mu        sync.Mutex
	submitted int
	spoken    int
	streamed  int // samples that came through Request.Stream, before their Result
	failed    []error
}

func (w *watchedEngine) Submit(ctx context.Context, m *engine.Model, req engine.Request) <-chan engine.Result {
	w.mu.Lock()
	w.submitted++
	w.mu.Unlock()
	in := w.Engine.Submit(ctx, m, req)
	out := make(chan engine.Result, 1)
	go func() {
		res := <-in
		w.mu.Lock()
		if res.Err == nil {
			w.spoken++
			w.streamed += res.Streamed
		} else {
			w.failed = append(w.failed, res.Err)
		}
		w.mu.Unlock()
		out <- res
	}()
	return out
}

func (w *watchedEngine) streamedSamples() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.streamed
}

func (w *watchedEngine) counts() (submitted, spoken int, failed []error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.submitted, w.spoken, append([]error(nil), w.failed...)
}

// metricsSay polls /metrics until every one of lines is in it, failing the test if that has not happened by the
// deadline (a bound on a hang, not a timing assertion).
func metricsSay(t *testing.T, url string, deadline time.Duration, lines ...string) {
	t.Helper()
	give := time.Now().Add(deadline)
	for {
		resp, err := http.Get(url + "/metrics")
		body := string(servertest.ReadBody(t, resp, err))
		missing := ""
		for _, l := range lines {
			if !strings.Contains(body, l+"\n") {
				missing = l
				break
			}
		}
		if missing == "" {
			return
		}
		if time.Now().After(give) {
			t.Fatalf("after %v, /metrics still lacks %q", deadline, missing)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A client that closes its connection after the first bytes of a long request stops it in the real engine: the
// sentences it had in the engine leave its queue (the server's in-flight and queue gauges fall to 0), the rest are
// never submitted, and the server then speaks the next request in full.
func TestClientDisconnectEmptiesTheRealEnginesQueue(t *testing.T) {
	b, _ := servertest.RealBackend(t, engine.Options{Threads: 1}, servertest.TinyVoice)
	watched := &watchedEngine{Engine: b.Engine}
	b.Engine = watched
	s := server.New(server.Options{SentencesInFlight: 8})
	if err := s.Ready(b); err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(ts.Close)

	const sentences = 60
	text := strings.Repeat("This sentence is one of many in a long request. ", sentences)
	ctx, hangUp := context.WithCancel(t.Context())
	resp := post(t, ctx, ts.URL+"/api/speech", `{"text": "`+text+`", "format": "pcm"}`)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	if _, err := io.ReadFull(resp.Body, make([]byte, 1000)); err != nil {
		t.Fatalf("the first bytes: %v", err)
	}
	hangUp()
	resp.Body.Close()

	metricsSay(t, ts.URL, time.Minute, "ttsgen_speech_requests_in_flight 0", "ttsgen_engine_queue_depth 0")
	submitted, spoken, failed := watched.counts()
	t.Logf("after the hang-up: %d sentences submitted, %d spoken, %d left the engine with an error", submitted, spoken, len(failed))
	if submitted != spoken+len(failed) {
		t.Errorf("%d sentences submitted, %d back: the engine still holds some", submitted, spoken+len(failed))
	}
	if len(failed) == 0 || submitted >= sentences {
		t.Errorf("%d of %d sentences submitted, %d left the engine unspoken: the request ran on without its client",
			submitted, sentences, len(failed))
	}
	for _, err := range failed {
		if !errors.Is(err, context.Canceled) {
			t.Errorf("a sentence left the engine with %v; want its request's cancellation", err)
		}
	}

	// The server then speaks a fresh request in full.
	resp = post(t, t.Context(), ts.URL+"/api/speech", `{"text": "A fresh request. It is spoken in full.", "format": "pcm"}`)
	body := servertest.ReadBody(t, resp, nil)
	_, spokenAfter, failedAfter := watched.counts()
	if resp.StatusCode != http.StatusOK || len(body) < 2*22050 || spokenAfter != spoken+2 || len(failedAfter) != len(failed) {
		t.Errorf("the next request: status %d, %d bytes, %d sentences spoken and %d failed; want 200, a second or more, 2 and 0",
			resp.StatusCode, len(body), spokenAfter-spoken, len(failedAfter)-len(failed))
	}
	metricsSay(t, ts.URL, time.Minute, "ttsgen_speech_requests_in_flight 0", "ttsgen_engine_queue_depth 0")
}

// windowedServer serves the tiny voice (ttsgen's own architecture, split at its decoder's latent) over a real CPU
// engine that decodes sentences in windows of 16 frames, two windows a run, as WebGPU runs it in windows of 512.
func windowedServer(t *testing.T) (*httptest.Server, server.Backend, *watchedEngine) {
	t.Helper()
	b, _ := servertest.RealBackend(t, engine.Options{Threads: 1, Tuning: engine.Tuning{DecoderWindow: 16, DecoderBatch: 2}},
		servertest.TinyVoice)
	watched := &watchedEngine{Engine: b.Engine}
	b.Engine = watched
	s := server.New(server.Options{})
	if err := s.Ready(b); err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(ts.Close)
	return ts, b, watched
}

// synthWAV is what `ttsgen synth -o -` writes for text on b's engine (servertest.SynthAudio).
func synthWAV(t *testing.T, b server.Backend, text string, level audio.Level) []byte {
	return servertest.SynthAudio(t, b, text, level, audio.WAV)
}

// Without normalisation, a voice decoded in windows streams window by window, and the body is byte for byte what
// synth --no-normalize-audio writes of the same text on the same engine (each sentence once whole): as wav, as pcm
// (its samples), and as flac, which goes a sentence at a time and decodes to the same samples; mp3, opus and aac
// stream by window too and decode to as long an audio. With normalisation
// nothing streams by window, and the body is synth's peak-normalised audio.
func TestWindowStreamedSpeechIsSynthsAudio(t *testing.T) {
	ts, b, watched := windowedServer(t)
	const text = "A sentence long enough to be decoded in many windows of the decoder. And a second one, shorter."
	const settings = `"text": "` + text + `", "noise_scale": 0, "noise_w": 0`
	want := synthWAV(t, b, text, audio.Level{Normalisation: audio.ModelLevel})
	if watched.streamedSamples() != 0 {
		t.Fatal("synth's pipeline streamed")
	}
	for _, tt := range []struct {
		format string
		window bool // whether the format streams window by window
	}{{"wav", true}, {"pcm", true}, {"flac", false}, {"mp3", true}, {"opus", true}, {"aac", true}} {
		t.Run(tt.format, func(t *testing.T) {
			before := watched.streamedSamples()
			resp := post(t, t.Context(), ts.URL+"/api/speech", `{`+settings+`, "normalize": false, "format": "`+tt.format+`"}`)
			got := servertest.ReadBody(t, resp, nil)
			switch tt.format {
			case "wav":
				if !bytes.Equal(got, want) {
					t.Errorf("%d bytes streamed; want synth's %d", len(got), len(want))
				}
			case "pcm":
				if !bytes.Equal(got, want[44:]) {
					t.Errorf("%d bytes streamed; want synth's %d samples' bytes", len(got), len(want)-44)
				}
			default: // flac decodes to synth's samples; the lossy formats to as many seconds of audio
				path := filepath.Join(t.TempDir(), "speech."+tt.format)
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
				samples, rate := decodetest.Decode(t, path)
				if header := resp.Header.Get("X-Sample-Rate"); header != strconv.Itoa(rate) {
					t.Errorf("X-Sample-Rate %s; the %s stream decodes at %d Hz", header, tt.format, rate)
				}
				wantSamples := decodetest.Samples(want[44:])
				seconds, wantSeconds := float64(len(samples))/float64(rate), float64(len(wantSamples))/22050
				switch {
				case tt.format == "flac" && !slices.Equal(samples, wantSamples):
					t.Errorf("flac decodes to %d samples; want synth's %d", len(samples), len(wantSamples))
				case math.Abs(seconds-wantSeconds) > 0.1: // a frame or two of priming and padding
					t.Errorf("%s decodes to %.3f s; synth's audio is %.3f s", tt.format, seconds, wantSeconds)
				}
			}
			streamed := watched.streamedSamples() - before
			t.Logf("%s: %d samples came window by window", tt.format, streamed)
			if window := streamed > 0; window != tt.window {
				t.Errorf("%d samples streamed by window; want window streaming %v", streamed, tt.window)
			}
		})
	}
	before := watched.streamedSamples()
	resp := post(t, t.Context(), ts.URL+"/api/speech", `{`+settings+`, "format": "wav"}`)
	if got, want := servertest.ReadBody(t, resp, nil), synthWAV(t, b, text, audio.Level{}); !bytes.Equal(got, want) {
		t.Errorf("normalised: %d bytes; want synth's %d", len(got), len(want))
	}
	if n := watched.streamedSamples() - before; n != 0 {
		t.Errorf("normalised audio: %d samples streamed by window; want each sentence whole", n)
	}
}
