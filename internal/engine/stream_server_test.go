package engine_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ttsgen/ttsgen/internal/engine"
	"github.com/ttsgen/ttsgen/internal/server"
	"github.com/ttsgen/ttsgen/internal/server/servertest"
)

// windowsDecoded is how many decoder windows the engine has run.
func windowsDecoded(e *engine.Engine) int {
	for _, s := range e.Stats() {
		if s.Stage == "decoder" {
			return s.Items
		}
	}
	return 0
}

// One long sentence, asked for without normalisation, reaches an HTTP client window by window: the decoder is held
// after its first run until the client has its first bytes, so those bytes cannot wait for the last window.
func TestFirstBytesReachTheClientBeforeTheSentencesLastWindow(t *testing.T) {
	b, e := servertest.RealBackend(t, engine.Options{Threads: 1, Tuning: engine.Tuning{DecoderWindow: 16, DecoderBatch: 2}},
		servertest.TinyVoice)
	firstBytes, gaveUp := make(chan struct{}), make(chan struct{})
	var runs atomic.Int64
	var giveUp sync.Once
	engine.HoldDecoder(b.Voices[0].Model, func() {
		if runs.Add(1) == 1 {
			return
		}
		select {
		case <-firstBytes:
		case <-gaveUp:
		case <-time.After(time.Minute): // a bound on a hang, not a timing assertion
			giveUp.Do(func() {
				t.Error("the decoder was held after its first run and no audio reached the client")
				close(gaveUp)
			})
		}
	})
	s := server.New(server.Options{})
	if err := s.Ready(b); err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(ts.Close)

	body := `{"text": "This one sentence goes on and on, long enough for the decoder to cut it into a great many windows, ` +
		`each of which is decoded in its turn", "normalize": false, "noise_scale": 0, "noise_w": 0, "format": "pcm"}`
	resp, err := http.Post(ts.URL+"/api/speech", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if _, err := io.ReadFull(resp.Body, make([]byte, 2)); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d, first bytes: %v", resp.StatusCode, err)
	}
	atFirstBytes := windowsDecoded(e)
	close(firstBytes)
	rest, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	total := windowsDecoded(e)
	t.Logf("%d of the sentence's %d windows were decoded when its first bytes arrived; %d bytes followed", atFirstBytes, total, len(rest))
	if total < 4 || atFirstBytes >= total {
		t.Errorf("%d of %d windows decoded at the first bytes; want the first bytes before the last window", atFirstBytes, total)
	}
}
