package server_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

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
		} else {
			w.failed = append(w.failed, res.Err)
		}
		w.mu.Unlock()
		out <- res
	}()
	return out
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
