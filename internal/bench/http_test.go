package bench_test

import (
	"context"
	"encoding/binary"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/ttsgen/ttsgen/internal/bench"
	"github.com/ttsgen/ttsgen/internal/server"
	"github.com/ttsgen/ttsgen/internal/server/openai"
	"github.com/ttsgen/ttsgen/internal/server/servertest"
)

// speechServer is ttsgen's server over a fake engine, on loopback.
func speechServer(t *testing.T, opts server.Options, eng *servertest.Engine) *httptest.Server {
	t.Helper()
	s := server.New(opts)
	if err := s.Ready(servertest.Backend(t, eng, servertest.TinyVoice)); err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler(openai.Routes(s, nil)))
	t.Cleanup(ts.Close)
	return ts
}

func TestSpeechDrivesAnOpenAIEndpoint(t *testing.T) {
	eng := servertest.NewEngine(64, false)
	ts := speechServer(t, server.Options{SentenceSilence: new(0.0)}, eng)
	texts := []string{"One sentence.", "Two sentences here. And here."}
	target := bench.Speech{URL: ts.URL + "/v1", Client: bench.NewSpeechClient(2)}
	rep, err := bench.Run(context.Background(), texts, bench.Load{Concurrency: 2, Requests: 4}, target.Synth())
	if err != nil {
		t.Fatal(err)
	}
	var samples int // every sentence of the four requests
	for len(eng.Submitted) > 0 {
		samples += len((<-eng.Submitted).IDs) * servertest.SamplesPerID
	}
	if want := float64(samples) / 22050; rep.Errors != 0 || rep.AudioSeconds != want {
		t.Errorf("%d errors, %v s of audio; want none and %v s (the fake engine's samples)", rep.Errors, rep.AudioSeconds, want)
	}
	for _, r := range rep.PerRequest {
		if r.FirstAudioMS <= 0 || r.FirstAudioMS >= r.LatencyMS { // the first samples come before the end
			t.Errorf("request %d: first audio at %v ms of %v", r.Request, r.FirstAudioMS, r.LatencyMS)
		}
	}
}

// A server's answer is audio: it does not say how many sentences the server split the text into, so a report of
// requests sent over HTTP leaves them unknown (nil; null in JSON, "unknown" in the table) instead of counting 0.
func TestSpeechLeavesSentencesUnknown(t *testing.T) {
	eng := servertest.NewEngine(64, false)
	ts := speechServer(t, server.Options{}, eng)
	texts := []string{"One sentence.", "Two sentences here. And here."}
	target := bench.Speech{URL: ts.URL, Client: bench.NewSpeechClient(1)}
	rep, err := bench.Run(context.Background(), texts, bench.Load{Concurrency: 1}, target.Synth())
	if err != nil {
		t.Fatal(err)
	}
	if spoken := len(eng.Submitted); rep.Errors != 0 || rep.AudioSeconds <= 0 || spoken != 3 {
		t.Fatalf("%d errors, %v s of audio, %d sentences spoken; want 2 answered requests of 3 sentences",
			rep.Errors, rep.AudioSeconds, spoken)
	}
	if rep.Sentences != nil {
		t.Errorf("report counts %d sentences; want unknown (nil)", *rep.Sentences)
	}
	for _, r := range rep.PerRequest {
		if r.Sentences != nil || r.Phonemes != nil {
			t.Errorf("request %d: sentences %v, phonemes %v; want unknown (nil)", r.Request, r.Sentences, r.Phonemes)
		}
	}
	var js, table strings.Builder
	if err := rep.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	if err := rep.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	unknown := regexp.MustCompile(`(?m)^sentences +unknown`)
	if !strings.Contains(js.String(), `"sentences": null,`) || !unknown.MatchString(table.String()) {
		t.Errorf("the sentences are not said to be unknown:\n%s\n%s", js.String(), table.String())
	}
}

func TestSpeechCountsErrorsByStatus(t *testing.T) {
	ts := speechServer(t, server.Options{}, servertest.NewEngine(64, false))
	texts := []string{"Fine.", "", "Also fine."} // the empty text is a 400
	target := bench.Speech{URL: ts.URL, Voice: "nova"}
	rep, err := bench.Run(context.Background(), texts, bench.Load{Concurrency: 1, Requests: 6}, target.Synth())
	if err != nil {
		t.Fatal(err)
	}
	if rep.Errors != 2 || rep.ErrorsByStatus["400"] != 2 || !strings.Contains(rep.FirstError, "HTTP 400: there is no text") {
		t.Errorf("%d errors %v, first %q", rep.Errors, rep.ErrorsByStatus, rep.FirstError)
	}
	unreachable := bench.Speech{URL: "http://127.0.0.1:1"}
	rep, _ = bench.Run(context.Background(), texts[:1], bench.Load{Requests: 1}, unreachable.Synth())
	if rep.ErrorsByStatus["other"] != 1 {
		t.Errorf("a refused connection: %v", rep.ErrorsByStatus)
	}
}

// Other servers' WAV headers may carry more chunks before the samples (LIST, fact) and true lengths.
func TestSpeechReadsWAVWithMoreChunks(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		le := binary.LittleEndian
		h := []byte("RIFF\x00\x00\x00\x00WAVE")
		h = append(le.AppendUint32(append(h, "fmt "...), 16), 1, 0, 1, 0)
		h = le.AppendUint32(le.AppendUint32(h, 24000), 48000)
		h = append(h, 2, 0, 16, 0)
		h = append(le.AppendUint32(append(h, "LIST"...), 3), "abc\x00"...) // odd size: padded
		h = le.AppendUint32(append(h, "data"...), 48000)
		w.Write(append(h, make([]byte, 48000)...))
	}))
	defer ts.Close()
	rep, err := bench.Run(context.Background(), []string{"x"}, bench.Load{Requests: 1}, bench.Speech{URL: ts.URL}.Synth())
	if err != nil || rep.AudioSeconds != 1 {
		t.Errorf("%v s of audio, %v; want 1 s", rep.AudioSeconds, err)
	}
}
