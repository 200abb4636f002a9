package server_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ttsgen/ttsgen/internal/audio"
	"github.com/ttsgen/ttsgen/internal/audio/decodetest"
	"github.com/ttsgen/ttsgen/internal/engine"
	"github.com/ttsgen/ttsgen/internal/pipeline"
	"github.com/ttsgen/ttsgen/internal/server"
	"github.com/ttsgen/ttsgen/internal/server/servertest"
)

// start serves a ready server over eng with the tiny voice (and the three-speaker one) on a loopback httptest
// server.
func start(t *testing.T, opts server.Options, eng pipeline.Engine) (*server.Server, *httptest.Server) {
	t.Helper()
	s := server.New(opts)
	if err := s.Ready(servertest.Backend(t, eng, servertest.TinyVoice, servertest.ThreeSpeakerVoice)); err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(ts.Close)
	return s, ts
}

func post(t *testing.T, ctx context.Context, url, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// expectedPCM is what the server must send for the fake engine's sentences: each peak-normalised as synth does,
// with silence samples between them.
func expectedPCM(t *testing.T, sentences [][]int64, silence int) []int16 {
	t.Helper()
	var out []int16
	for i, ids := range sentences {
		if i > 0 {
			out = append(out, make([]int16, silence)...)
		}
		out = append(out, audio.PCM16(servertest.Audio(ids))...)
	}
	return out
}

// collect reads every submission the fake engine has had.
func collect(eng *servertest.Engine) [][]int64 {
	var ids [][]int64
	for {
		select {
		case r := <-eng.Submitted:
			ids = append(ids, r.IDs)
		default:
			return ids
		}
	}
}

func TestSpeechIsEverySentenceInOrderWithSilence(t *testing.T) {
	eng := servertest.NewEngine(16, false)
	_, ts := start(t, server.Options{}, eng)
	resp := post(t, t.Context(), ts.URL+"/api/speech", `{"text": "Hello there. This is the second sentence.", "sentence_silence": 0.1}`)
	body := servertest.ReadBody(t, resp, nil)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "audio/wav" {
		t.Fatalf("status %d, content type %q: %s", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	samples, rate, err := audio.ReadWAV(bytes.NewReader(body))
	if err != nil || rate != 22050 {
		t.Fatalf("WAV at %d Hz: %v", rate, err)
	}
	sentences := collect(eng)
	if len(sentences) != 2 {
		t.Fatalf("%d sentences reached the engine; want 2", len(sentences))
	}
	if want := expectedPCM(t, sentences, 2205); !slicesEqual(samples, want) {
		t.Errorf("%d samples; want %d: the sentences and their silence, in order", len(samples), len(want))
	}
}

func TestPCMIsTheWAVStreamWithoutItsHeader(t *testing.T) {
	_, ts := start(t, server.Options{}, servertest.NewEngine(16, false))
	const text = `"text": "One sentence. And another one."`
	wav := servertest.ReadBody(t, post(t, t.Context(), ts.URL+"/api/speech", `{`+text+`}`), nil)
	resp := post(t, t.Context(), ts.URL+"/api/speech", `{`+text+`, "format": "pcm"}`)
	pcm := servertest.ReadBody(t, resp, nil)
	if resp.Header.Get("Content-Type") != "audio/pcm" || resp.Header.Get("X-Sample-Rate") != "22050" {
		t.Errorf("headers %v", resp.Header)
	}
	if len(wav) < 44 || !bytes.Equal(pcm, wav[44:]) {
		t.Errorf("pcm has %d bytes, wav %d: pcm must be the wav's samples", len(pcm), len(wav))
	}
}

func slicesEqual(a, b []int16) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestSettingsReachTheEngine(t *testing.T) {
	eng := servertest.NewEngine(16, false)
	_, ts := start(t, server.Options{}, eng)
	resp := post(t, t.Context(), ts.URL+"/api/speech", `{"text": "Hi.", "voice": "tiny-vits-3speakers", "speaker": "speaker2",
		"speed": 2, "length_scale": 1.5, "noise_scale": 0, "noise_w": 0.25}`)
	servertest.ReadBody(t, resp, nil)
	req := <-eng.Submitted
	if want := (engine.Scales{Noise: 0, Length: 0.75, NoiseW: 0.25}); req.Scales != want || req.Speaker != 2 {
		t.Errorf("engine got speaker %d, scales %+v; want speaker 2, %+v", req.Speaker, req.Scales, want)
	}
	resp = post(t, t.Context(), ts.URL+"/api/speech", `{"text": "Hi.", "speed": 0.5}`)
	servertest.ReadBody(t, resp, nil)
	if req := <-eng.Submitted; req.Scales != (engine.Scales{Noise: 0.667, Length: 2, NoiseW: 0.8}) {
		t.Errorf("speed 0.5 with the voice's own scales: %+v", req.Scales)
	}
}

// normalize false keeps the model's own level and, in a format that streams by window, asks the engine for each
// sentence's audio as it is decoded; normalised audio, or flac, is taken whole.
func TestNormalizeFalseKeepsTheModelsLevelAndStreams(t *testing.T) {
	eng := servertest.NewEngine(16, false)
	_, ts := start(t, server.Options{}, eng)
	for _, tt := range []struct {
		settings string
		level    audio.Level
		stream   bool
	}{
		{`"format": "pcm"`, audio.Level{}, false},
		{`"format": "pcm", "normalize": true`, audio.Level{}, false},
		{`"format": "pcm", "normalize": false`, audio.Level{Normalisation: audio.ModelLevel}, true},
		{`"format": "flac", "normalize": false`, audio.Level{Normalisation: audio.ModelLevel}, false},
	} {
		resp := post(t, t.Context(), ts.URL+"/api/speech", `{"text": "Hello there.", `+tt.settings+`}`)
		body := servertest.ReadBody(t, resp, nil)
		req := <-eng.Submitted
		if streams := req.Stream != nil; streams != tt.stream {
			t.Errorf("%s: the engine was asked to stream: %v; want %v", tt.settings, streams, tt.stream)
		}
		if strings.Contains(tt.settings, "pcm") {
			want := tt.level.PCM16(servertest.Audio(req.IDs))
			if got := decodetest.Samples(body); !slicesEqual(got, want) {
				t.Errorf("%s: %d samples, not the sentence's %d at level %+v", tt.settings, len(got), len(want), tt.level)
			}
		}
	}
	checkError(t, post(t, t.Context(), ts.URL+"/api/speech", `{"text": "Hi.", "normalize": "no"}`), 400, "invalid_type",
		"normalize", "true or false")
}

func TestBadRequestsGetActionableErrors(t *testing.T) {
	_, ts := start(t, server.Options{MaxInput: 40, MaxBodyBytes: 200}, servertest.NewEngine(64, false))
	long := strings.Repeat("word ", 10)
	for _, tt := range []struct {
		name, body string
		status     int
		code       string
		param      any // nil for none
		message    string
	}{
		{"empty body", ``, 400, "invalid_json", nil, "body is empty"},
		{"malformed", `{"text": "hi"`, 400, "invalid_json", nil, "middle of its JSON"},
		{"not an object", `[1, 2]`, 400, "invalid_type", nil, "an object"},
		{"two objects", `{"text": "a."} {"text": "b."}`, 400, "invalid_json", nil, "exactly one"},
		{"wrong type", `{"text": 5}`, 400, "invalid_type", "text", "text must be a string, not a JSON number"},
		{"wrong number type", `{"text": "hi", "speed": "fast"}`, 400, "invalid_type", "speed", "a number"},
		{"unknown field", `{"text": "hi", "lenght_scale": 2}`, 400, "unknown_parameter", "lenght_scale", "spelling"},
		{"empty text", `{"text": ""}`, 400, "empty_input", "text", "at least one word"},
		{"whitespace text", `{"text": " \n\t "}`, 400, "empty_input", "text", "at least one word"},
		{"only punctuation", `{"text": "..."}`, 400, "nothing_to_speak", "text", "no words"},
		{"too long", `{"text": "` + long + `"}`, 400, "input_too_long", "text", "50 characters, more than the 40"},
		{"unknown voice", `{"text": "hi", "voice": "nobody"}`, 400, "unknown_voice", "voice", `"nobody" is not served here: choose one of tiny, tiny-vits-3speakers`},
		{"unknown speaker", `{"text": "hi", "voice": "tiny-vits-3speakers", "speaker": "bob"}`, 400, "unknown_speaker", "speaker", "speaker0"},
		{"speaker out of range", `{"text": "hi", "speaker": 3}`, 400, "unknown_speaker", "speaker", "out of range"},
		{"speed too high", `{"text": "hi", "speed": 4.5}`, 400, "invalid_value", "speed", "outside the range [0.25, 4]"},
		{"speed zero", `{"text": "hi", "speed": 0}`, 400, "invalid_value", "speed", "outside the range"},
		{"length scale zero", `{"text": "hi", "length_scale": 0}`, 400, "invalid_value", "length_scale", "(0, 20]"},
		{"noise negative", `{"text": "hi", "noise_w": -1}`, 400, "invalid_value", "noise_w", "[0, 10]"},
		{"silence too long", `{"text": "hi", "sentence_silence": 61}`, 400, "invalid_value", "sentence_silence", "[0, 60]"},
		{"slow speed past the length limit", `{"text": "hi", "speed": 0.25, "length_scale": 6}`, 400, "invalid_value", "speed", "beyond 20"},
		{"unknown format", `{"text": "hi", "format": "ogg"}`, 400, "unknown_response_format", "format", "wav, pcm, mp3"},
		{"body too large", `{"text": "` + strings.Repeat("a", 300) + `"}`, 413, "request_too_large", nil, "200 bytes"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			resp := post(t, t.Context(), ts.URL+"/api/speech", tt.body)
			checkError(t, resp, tt.status, tt.code, tt.param, tt.message)
		})
	}
	// The server keeps serving.
	if resp := post(t, t.Context(), ts.URL+"/api/speech", `{"text": "Still here."}`); resp.StatusCode != 200 {
		t.Errorf("after the bad requests: status %d", resp.StatusCode)
	}
}

// checkError checks that resp is an error in the OpenAI shape with these status, code, param and message.
func checkError(t *testing.T, resp *http.Response, status int, code string, param any, message string) {
	t.Helper()
	body := servertest.ReadBody(t, resp, nil)
	var got struct {
		Error map[string]any `json:"error"`
	}
	if err := json.Unmarshal(body, &got); err != nil || got.Error == nil {
		t.Fatalf("status %d, body %q: not an error object", resp.StatusCode, body)
	}
	for _, key := range []string{"message", "type", "param", "code"} {
		if _, ok := got.Error[key]; !ok {
			t.Errorf("error has no %q: %s", key, body)
		}
	}
	msg, _ := got.Error["message"].(string)
	if resp.StatusCode != status || got.Error["code"] != code || got.Error["param"] != param || !strings.Contains(msg, message) {
		t.Errorf("got %d %s; want %d, code %s, param %v, a message with %q", resp.StatusCode, body, status, code, param, message)
	}
}

func TestUnknownRoutesAndMethodsAreJSONErrors(t *testing.T) {
	_, ts := start(t, server.Options{}, servertest.NewEngine(1, false))
	resp, err := http.Get(ts.URL + "/api/speech")
	if err != nil {
		t.Fatal(err)
	}
	if allow := resp.Header.Get("Allow"); allow != "POST" {
		t.Errorf("a 405 with Allow %q; HTTP asks for the methods the route takes (POST)", allow)
	}
	checkError(t, resp, 405, "method_not_allowed", nil, "takes POST")
	resp, err = http.Get(ts.URL + "/nowhere")
	if err != nil {
		t.Fatal(err)
	}
	checkError(t, resp, 404, "not_found", nil, "POST /v1/audio/speech")
}

func TestAPIKey(t *testing.T) {
	_, ts := start(t, server.Options{APIKey: "sesame"}, servertest.NewEngine(16, false))
	for _, auth := range []string{"", "Bearer wrong", "sesame", "Bearer sesame2"} {
		req, _ := http.NewRequest(http.MethodPost, ts.URL+"/api/speech", strings.NewReader(`{"text": "hi"}`))
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if resp.Header.Get("WWW-Authenticate") == "" {
			t.Errorf("%q: a 401 says how to authenticate", auth)
		}
		checkError(t, resp, 401, "invalid_api_key", nil, "Authorization: Bearer")
	}
	for _, auth := range []string{"Bearer sesame", "bearer sesame", "BEARER  sesame"} { // the scheme is case-blind
		req, _ := http.NewRequest(http.MethodPost, ts.URL+"/api/speech", strings.NewReader(`{"text": "hi"}`))
		req.Header.Set("Authorization", auth)
		if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 200 {
			t.Errorf("with the key (%q): %v, %v", auth, resp, err)
		}
	}
	if resp, err := http.Get(ts.URL + "/health"); err != nil || resp.StatusCode != 200 {
		t.Errorf("health needs no key: %v, %v", resp, err)
	}
}

func TestHealthAnswers503UntilReady(t *testing.T) {
	s := server.New(server.Options{})
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	resp, err := http.Get(ts.URL + "/health")
	if err != nil {
		t.Fatal(err)
	}
	checkError(t, resp, 503, "not_ready", nil, "loading")
	checkError(t, post(t, t.Context(), ts.URL+"/api/speech", `{"text": "hi"}`), 503, "not_ready", nil, "loading")
	if err := s.Ready(servertest.Backend(t, servertest.NewEngine(1, false), servertest.TinyVoice)); err != nil {
		t.Fatal(err)
	}
	if resp, err := http.Get(ts.URL + "/health"); err != nil || resp.StatusCode != 200 {
		t.Errorf("ready: %v, %v", resp, err)
	}
}

func TestAudioStreamsSentenceBySentence(t *testing.T) {
	eng := servertest.NewEngine(16, true)
	_, ts := start(t, server.Options{}, eng)
	answered := make(chan *http.Response, 1)
	go func() {
		answered <- post(t, t.Context(), ts.URL+"/api/speech", `{"text": "The first sentence. The second one.", "format": "pcm"}`)
	}()
	first, second := <-eng.Submitted, <-eng.Submitted
	eng.ReleaseOne()
	resp := <-answered
	defer resp.Body.Close()
	// The first sentence's audio arrives while the second is still held in the engine.
	got := make([]byte, 2*len(first.IDs)*servertest.SamplesPerID)
	if _, err := io.ReadFull(resp.Body, got); err != nil {
		t.Fatal(err)
	}
	if eng.Held() != 1 {
		t.Fatalf("%d sentences held; want the second still held", eng.Held())
	}
	want := audio.PCM16(servertest.Audio(first.IDs))
	for i, s := range want {
		if int16(binary.LittleEndian.Uint16(got[2*i:])) != s {
			t.Fatalf("sample %d of the first sentence differs", i)
		}
	}
	eng.Release()
	rest, err := io.ReadAll(resp.Body)
	if err != nil || len(rest) != 2*(4410+len(second.IDs)*servertest.SamplesPerID) {
		t.Errorf("rest of the stream: %d bytes, %v", len(rest), err)
	}
}

func TestQueueFullIs429AtOnce(t *testing.T) {
	eng := servertest.NewEngine(16, true)
	_, ts := start(t, server.Options{MaxQueue: 1}, eng)
	first := make(chan *http.Response, 1)
	go func() {
		first <- post(t, context.Background(), ts.URL+"/api/speech", `{"text": "Waiting in the engine."}`)
	}()
	<-eng.Submitted // the first request is admitted and in the engine
	resp := post(t, t.Context(), ts.URL+"/api/speech", `{"text": "One too many."}`)
	if resp.Header.Get("Retry-After") == "" {
		t.Error("a 429 says when to retry")
	}
	checkError(t, resp, 429, "queue_full", nil, "--max-queue")
	eng.Release()
	// Its whole body read, the admitted request has left: the end of a stream is sent after its handler returns.
	if resp := <-first; resp.StatusCode != 200 || len(servertest.ReadBody(t, resp, nil)) == 0 {
		t.Errorf("the admitted request: status %d", resp.StatusCode)
	}
	if resp := post(t, t.Context(), ts.URL+"/api/speech", `{"text": "Room again."}`); resp.StatusCode != 200 {
		t.Errorf("once the queue has room: status %d", resp.StatusCode)
	}
}

func TestClientDisconnectTakesItsSentencesOutOfTheEngine(t *testing.T) {
	eng := servertest.NewEngine(64, true)
	s, ts := start(t, server.Options{SentencesInFlight: 3}, eng)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, ts.URL+"/api/speech",
			strings.NewReader(`{"text": "One. Two. Three. Four. Five. Six."}`))
		_, err := http.DefaultClient.Do(req)
		done <- err
	}()
	for range 3 {
		<-eng.Submitted // the request's first three sentences are in the engine, the rest wait for places
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("client: %v", err)
	}
	for range 3 {
		if err := <-eng.Left; !errors.Is(err, context.Canceled) {
			t.Errorf("a sentence left the engine with %v", err)
		}
	}
	// The server stays healthy, and the request's other sentences never reached the engine.
	eng.Release()
	if resp := post(t, t.Context(), ts.URL+"/api/speech", `{"text": "Next."}`); resp.StatusCode != 200 {
		t.Errorf("next request: status %d", resp.StatusCode)
	}
	if n := len(collect(eng)); n != 1 {
		t.Errorf("%d sentences reached the engine after the disconnect; want only the next request's", n)
	}
	_ = s
}

func TestRequestTimeout(t *testing.T) {
	eng := servertest.NewEngine(16, true)
	_, ts := start(t, server.Options{RequestTimeout: 50 * time.Millisecond}, eng)
	checkError(t, post(t, t.Context(), ts.URL+"/api/speech", `{"text": "Never answered."}`), 503, "timeout",
		nil, "--request-timeout")
	if err := <-eng.Left; !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("the sentence left with %v", err)
	}
}

func TestMetrics(t *testing.T) {
	_, ts := start(t, server.Options{}, servertest.NewEngine(16, false))
	servertest.ReadBody(t, post(t, t.Context(), ts.URL+"/api/speech", `{"text": "Counted. Twice over.", "sentence_silence": 0}`), nil)
	servertest.ReadBody(t, post(t, t.Context(), ts.URL+"/api/speech", `{"text": ""}`), nil)
	resp, err := http.Get(ts.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body := string(servertest.ReadBody(t, resp, nil))
	for _, want := range []string{
		`ttsgen_http_requests_total{code="200",route="POST /api/speech"} 1`,
		`ttsgen_http_requests_total{code="400",route="POST /api/speech"} 1`,
		"ttsgen_speech_requests_in_flight 0",
		"ttsgen_engine_queue_depth 0",
		"ttsgen_speech_first_audio_seconds_count 1",
		"ttsgen_speech_duration_seconds_count 1",
		"ttsgen_speech_audio_seconds_total ",
		"go_goroutines ",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %q", want)
		}
	}
}

func TestVoices(t *testing.T) {
	_, ts := start(t, server.Options{}, servertest.NewEngine(1, false))
	resp, err := http.Get(ts.URL + "/api/voices")
	if err != nil {
		t.Fatal(err)
	}
	var got struct{ Voices []server.VoiceInfo }
	if err := json.Unmarshal(servertest.ReadBody(t, resp, nil), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Voices) != 2 || !got.Voices[0].Default || got.Voices[1].NumSpeakers != 3 || got.Voices[1].SampleRate != 22050 {
		t.Errorf("voices %+v", got.Voices)
	}
}

// logEvents is a slog handler that sends each record's message to a channel, so a test can wait for what the
// server says it is doing.
type logEvents chan string

func (l logEvents) Enabled(context.Context, slog.Level) bool      { return true }
func (l logEvents) Handle(_ context.Context, r slog.Record) error { l <- r.Message; return nil }
func (l logEvents) WithAttrs([]slog.Attr) slog.Handler            { return l }
func (l logEvents) WithGroup(string) slog.Handler                 { return l }

// waitLog waits for a log message that starts with prefix.
func waitLog(t *testing.T, events logEvents, prefix string) {
	t.Helper()
	for msg := range events {
		if strings.HasPrefix(msg, prefix) {
			return
		}
	}
}

// serve runs Serve on a loopback listener until the returned cancel, reporting Serve's result on the channel.
func serve(t *testing.T, opts server.Options, eng pipeline.Engine) (url string, stop context.CancelFunc, served <-chan error) {
	t.Helper()
	s := server.New(opts)
	if err := s.Ready(servertest.Backend(t, eng, servertest.TinyVoice)); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- s.Serve(ctx, l, s.Handler()) }()
	return "http://" + l.Addr().String(), cancel, errc
}

func TestDrainFinishesAdmittedRequestsAndTurnsNewOnesAway(t *testing.T) {
	eng := servertest.NewEngine(16, true)
	events := make(logEvents, 100)
	url, stop, served := serve(t, server.Options{Logger: slog.New(events), Grace: time.Minute}, eng)
	inFlight := make(chan *http.Response, 1)
	go func() { inFlight <- post(t, context.Background(), url+"/api/speech", `{"text": "Finish me."}`) }()
	<-eng.Submitted
	stop()
	waitLog(t, events, "draining")
	resp, err := http.Get(url + "/health")
	if err != nil {
		t.Fatal(err)
	}
	checkError(t, resp, 503, "shutting_down", nil, "shutting down")
	checkError(t, post(t, t.Context(), url+"/api/speech", `{"text": "Too late."}`), 503, "shutting_down", nil, "another instance")
	eng.Release()
	resp = <-inFlight
	if body := servertest.ReadBody(t, resp, nil); resp.StatusCode != 200 || len(body) < 44 {
		t.Errorf("the admitted request: status %d, %d bytes", resp.StatusCode, len(body))
	}
	if err := <-served; err != nil {
		t.Errorf("Serve: %v", err)
	}
}

// A client that stops reading holds the drain no longer than the grace: its request's blocked write is woken when the
// grace is over, not left to the write timeout (a minute) or to the shutdown's last resort.
func TestDrainEndsAtTheGraceWhenAClientStopsReading(t *testing.T) {
	url, stop, served := serve(t, server.Options{Grace: 200 * time.Millisecond, MaxInput: 400_000}, &servertest.Engine{})
	conn, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.(*net.TCPConn).SetReadBuffer(4096)
	body := `{"text": "` + strings.Repeat("Words to fill a socket. ", 15000) + `", "format": "pcm"}` // 40 MB of audio
	fmt.Fprintf(conn, "POST /api/speech HTTP/1.1\r\nHost: ttsgen\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
		len(body), body)
	if _, err := conn.Read(make([]byte, 1)); err != nil { // its audio is streaming; now the client reads no more
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond) // the socket's buffers fill and the server's write blocks
	stopped := time.Now()
	stop()
	if err := <-served; err != nil {
		t.Errorf("Serve: %v", err)
	}
	if took := time.Since(stopped); took > 2*time.Second {
		t.Errorf("Serve returned %v after the signal; the grace is 200ms", took.Round(time.Millisecond))
	}
}

func TestDrainCancelsWhatOutlastsTheGrace(t *testing.T) {
	eng := servertest.NewEngine(16, true)
	url, stop, served := serve(t, server.Options{Grace: 20 * time.Millisecond}, eng)
	inFlight := make(chan *http.Response, 1)
	go func() { inFlight <- post(t, context.Background(), url+"/api/speech", `{"text": "Never finished."}`) }()
	<-eng.Submitted
	stop()
	if err := <-served; err != nil {
		t.Errorf("Serve: %v", err)
	}
	if err := <-eng.Left; !errors.Is(err, context.Canceled) {
		t.Errorf("the held sentence left with %v", err)
	}
	checkError(t, <-inFlight, 503, "shutting_down", nil, "shutting down")
}

// A server stopped before it was ready (its voices failed to load) admitted nothing: it closes without a drain and
// says nothing of one.
func TestServeOfAServerNeverReadyClosesWithoutADrain(t *testing.T) {
	events := make(logEvents, 100)
	s := server.New(server.Options{Logger: slog.New(events), Grace: time.Minute})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx, l, s.Handler()) }()
	resp, err := http.Get("http://" + l.Addr().String() + "/health")
	if err != nil {
		t.Fatal(err)
	}
	checkError(t, resp, 503, "not_ready", nil, "loading")
	stop()
	select {
	case err := <-served:
		if err != nil {
			t.Errorf("Serve: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Serve did not return")
	}
	for len(events) > 0 {
		if msg := <-events; strings.Contains(msg, "drain") {
			t.Errorf("a server that never became ready logged %q", msg)
		}
	}
}
