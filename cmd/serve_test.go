package cmd

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ttsgen/ttsgen/internal/audio"
	"github.com/ttsgen/ttsgen/internal/server/servertest"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"
)

// served is a `ttsgen serve` running in this process.
type served struct {
	url  string
	stop func() int // SIGINT, as Execute delivers it; returns the exit status
}

// startServe runs `ttsgen serve --addr 127.0.0.1:0 args...` and waits until it says it is ready, reading its log
// as a user would.
func startServe(t *testing.T, args ...string) served {
	t.Helper()
	logR, logW := io.Pipe()
	streams := IO{In: strings.NewReader(""), Out: io.Discard, ErrOut: logW}
	root := NewRootCmd(streams)
	root.SetArgs(append([]string{"serve", "--addr", "127.0.0.1:0"}, args...))
	ctx, interrupt := context.WithCancelCause(context.Background())
	code := make(chan int, 1)
	go func() {
		err := root.ExecuteContext(ctx)
		code <- exitCode(ctx, logW, err)
		logW.Close()
	}()
	lines := bufio.NewScanner(logR)
	url := ""
	for url == "" || !strings.Contains(lines.Text(), "msg=ready") {
		if !lines.Scan() {
			t.Fatalf("serve stopped before it was ready (exit %d)", <-code)
		}
		if m := regexp.MustCompile(` url=(\S+)`).FindStringSubmatch(lines.Text()); m != nil {
			url = m[1]
		}
	}
	go io.Copy(io.Discard, logR) // the rest of the log
	s := served{url: url, stop: func() int { interrupt(errInterrupted); return <-code }}
	t.Cleanup(func() { interrupt(errInterrupted) })
	return s
}

func (s served) client() sdk.Client {
	return sdk.NewClient(option.WithBaseURL(s.url+"/v1/"), option.WithAPIKey("unused"), option.WithMaxRetries(0))
}

// TestServeSpeaksAsSynthDoes: through OpenAI's client, a request's audio is byte for byte what `ttsgen synth -o -`
// writes for the same text and settings (no noise: deterministic), as wav, as pcm, and streamed as events.
func TestServeSpeaksAsSynthDoes(t *testing.T) {
	isolate(t)
	needORT(t)
	const text = "Hello there. The server speaks as synth does, 3 times over!"
	want := run(t, "", "synth", "--voice", tinyVoice, "--noise-scale", "0", "--noise-w", "0", "-o", "-", text)
	if want.code != 0 || len(want.out) < 10000 {
		t.Fatalf("synth: exit %d, %d bytes: %s", want.code, len(want.out), want.errOut)
	}
	srv := startServe(t, "--voice", tinyVoice)
	client := srv.client()
	noNoise := []option.RequestOption{option.WithJSONSet("noise_scale", 0), option.WithJSONSet("noise_w", 0)}
	params := func(format sdk.AudioSpeechNewParamsResponseFormat) sdk.AudioSpeechNewParams {
		return sdk.AudioSpeechNewParams{Model: sdk.SpeechModelTTS1, Input: text, ResponseFormat: format,
			Voice: sdk.AudioSpeechNewParamsVoiceUnion{OfString: sdk.String("alloy")}}
	}
	resp, err := client.Audio.Speech.New(t.Context(), params("wav"), noNoise...)
	if got := servertest.ReadBody(t, resp, err); !bytes.Equal(got, []byte(want.out)) {
		t.Errorf("wav: %d bytes from the server, %d from synth; want the same bytes", len(got), len(want.out))
	}
	resp, err = client.Audio.Speech.New(t.Context(), params("pcm"), noNoise...)
	if got := servertest.ReadBody(t, resp, err); !bytes.Equal(got, []byte(want.out[44:])) {
		t.Errorf("pcm: %d bytes; want synth's %d samples' bytes", len(got), len(want.out)-44)
	}
	sse := params("pcm")
	sse.StreamFormat = sdk.AudioSpeechNewParamsStreamFormatSSE
	resp, err = client.Audio.Speech.New(t.Context(), sse, noNoise...)
	if err != nil {
		t.Fatal(err)
	}
	stream := ssestream.NewStream[struct{ Type, Audio string }](ssestream.NewDecoder(resp), nil)
	var got []byte
	for stream.Next() {
		chunk, _ := base64.StdEncoding.DecodeString(stream.Current().Audio)
		got = append(got, chunk...)
	}
	if err := stream.Err(); err != nil || !bytes.Equal(got, []byte(want.out[44:])) {
		t.Errorf("sse: %d bytes of deltas, %v", len(got), err)
	}
	if code := srv.stop(); code != ExitOK {
		t.Errorf("exit %d after SIGINT; want %d", code, ExitOK)
	}
}

// TestServeWithoutNormalisationIsSynthsAudio: normalize false, an extra field of OpenAI's request, gives byte for
// byte what `ttsgen synth --no-normalize-audio -o -` writes (here each sentence whole: a CPU decodes no windows).
func TestServeWithoutNormalisationIsSynthsAudio(t *testing.T) {
	isolate(t)
	needORT(t)
	const text = "Kept at the model's own level. Two sentences of it."
	want := run(t, "", "synth", "--voice", tinyVoice, "--no-normalize-audio", "--noise-scale", "0", "--noise-w", "0", "-o", "-", text)
	normalised := run(t, "", "synth", "--voice", tinyVoice, "--noise-scale", "0", "--noise-w", "0", "-o", "-", text)
	if want.code != 0 || len(want.out) < 10000 || want.out == normalised.out {
		t.Fatalf("synth: exit %d, %d bytes, the same as normalised: %v; %s", want.code, len(want.out),
			want.out == normalised.out, want.errOut)
	}
	srv := startServe(t, "--voice", tinyVoice)
	client := srv.client()
	resp, err := client.Audio.Speech.New(t.Context(), sdk.AudioSpeechNewParams{Model: sdk.SpeechModelTTS1,
		Input: text, ResponseFormat: "wav", Voice: sdk.AudioSpeechNewParamsVoiceUnion{OfString: sdk.String("alloy")}},
		option.WithJSONSet("noise_scale", 0), option.WithJSONSet("noise_w", 0), option.WithJSONSet("normalize", false))
	if got := servertest.ReadBody(t, resp, err); !bytes.Equal(got, []byte(want.out)) {
		t.Errorf("%d bytes from the server, %d from synth --no-normalize-audio; want the same bytes", len(got), len(want.out))
	}
	if code := srv.stop(); code != ExitOK {
		t.Errorf("exit %d after SIGINT; want %d", code, ExitOK)
	}
}

// TestServeTheBuiltInVoiceUnderOpenAINames: with no --voice, OpenAI's names speak with the built-in voice.
func TestServeTheBuiltInVoiceUnderOpenAINames(t *testing.T) {
	isolate(t)
	needORT(t)
	srv := startServe(t)
	client := srv.client()
	resp, err := client.Audio.Speech.New(t.Context(), sdk.AudioSpeechNewParams{Model: sdk.SpeechModelTTS1HD,
		Input: "Good morning.", ResponseFormat: "wav", Voice: sdk.AudioSpeechNewParamsVoiceUnion{OfString: sdk.String("shimmer")}})
	samples, rate, err := audio.ReadWAV(bytes.NewReader(servertest.ReadBody(t, resp, err)))
	if err != nil {
		t.Fatal(err)
	}
	if rate != 22050 || len(samples) < rate/2 || rms(samples) < 100 {
		t.Errorf("%d samples at %d Hz, rms %.0f: not speech", len(samples), rate, rms(samples))
	}
	resp, err = http.Get(srv.url + "/v1/audio/voices")
	if list := string(servertest.ReadBody(t, resp, err)); !strings.Contains(list, `"id":"en_US-ttsgen-medium"`) {
		t.Errorf("voices: %s", list)
	}
	if code := srv.stop(); code != ExitOK {
		t.Errorf("exit %d after SIGINT; want %d", code, ExitOK)
	}
}

// bench --url drives a running server: here 3 of the three-sentence requests, 0.3 s apart, as the vLLM-style
// load test sends 80, and a voice the server does not have, whose 400s are counted by status.
func TestBenchDrivesAServer(t *testing.T) {
	isolate(t)
	needORT(t)
	srv := startServe(t, "--voice", tinyVoice)
	r := run(t, "", "bench", "--url", srv.url, "--texts", "../samples/three-sentences.txt", "--rate", "3.333",
		"--requests", "3", "--warmup", "0", "--json")
	var report struct {
		Mode           string
		Requests       int
		Errors         int
		AudioSeconds   float64               `json:"audio_seconds"`
		FirstAudio     struct{ P50 float64 } `json:"first_audio_ms"`
		Latency        struct{ P50 float64 } `json:"latency_ms"`
		ErrorsByStatus map[string]int        `json:"errors_by_status"`
	}
	if err := json.Unmarshal([]byte(r.out), &report); err != nil || r.code != 0 {
		t.Fatalf("exit %d, %v: %s %s", r.code, err, r.out, r.errOut)
	}
	if report.Mode != "open-loop" || report.Requests != 3 || report.Errors != 0 || report.AudioSeconds < 3 ||
		report.FirstAudio.P50 <= 0 || report.FirstAudio.P50 >= report.Latency.P50 {
		t.Errorf("report %+v", report)
	}
	r = run(t, "", "bench", "--url", srv.url, "--texts", "../samples/three-sentences.txt", "--voice", "nobody",
		"--requests", "2", "--warmup", "0")
	if r.code != ExitFailure || !strings.Contains(r.errOut, `HTTP 400: voice "nobody" is neither`) {
		t.Errorf("exit %d: %s", r.code, r.errOut)
	}
	if r := run(t, "", "bench", "--url", srv.url, "--texts", "x", "--compare", "sequential"); r.code != ExitUsage {
		t.Errorf("--url with --compare: exit %d", r.code)
	}
}

// A run that lost some of its requests prints its report and exits 1, saying how many failed: its figures are
// not those of the load asked for. A server that never answers fails its requests after bench.ResponseTimeout
// instead of holding the run (not waited for here: a minute).
func TestBenchExitsOneWhenRequestsFail(t *testing.T) {
	isolate(t)
	var n atomic.Int32
	wav := func(samples int) []byte {
		b := binary.LittleEndian.AppendUint32([]byte("RIFF"), uint32(36+2*samples))
		b = append(b, "WAVEfmt "...)
		b = binary.LittleEndian.AppendUint32(b, 16)
		b = binary.LittleEndian.AppendUint16(b, 1)
		b = binary.LittleEndian.AppendUint16(b, 1)
		b = binary.LittleEndian.AppendUint32(b, 22050)
		b = binary.LittleEndian.AppendUint32(b, 44100)
		b = binary.LittleEndian.AppendUint16(b, 2)
		b = binary.LittleEndian.AppendUint16(b, 16)
		b = append(b, "data"...)
		b = binary.LittleEndian.AppendUint32(b, uint32(2*samples))
		return append(b, make([]byte, 2*samples)...)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1)%2 == 0 {
			http.Error(w, `{"error":{"message":"overloaded"}}`, http.StatusInternalServerError)
			return
		}
		w.Write(wav(22050))
	}))
	defer srv.Close()
	r := run(t, "", "bench", "--url", srv.URL, "--texts", "../samples/three-sentences.txt", "--requests", "4",
		"--warmup", "0", "--concurrency", "1")
	if r.code != ExitFailure || !strings.Contains(r.errOut, "2 of 4 requests failed; first: HTTP 500: overloaded") ||
		!strings.Contains(r.out, "x real time") {
		t.Errorf("exit %d, stdout %q, stderr %q; want the report and exit 1", r.code, r.out, r.errOut)
	}
}

// A voice that is not there at all is a usage error said before the server listens, as batch says a wrong --voice:
// no "listening" line, no drain, exit 2, one line that names the voice.
func TestServeUnknownVoiceIsAUsageErrorBeforeListening(t *testing.T) {
	for _, tt := range []struct {
		name, config string
		args         []string
		want         string
	}{
		{"config file", "voice: nonexistent\n", nil, `voice not found: "nonexistent"`},
		{"flag", "", []string{"--voice", "nonexistent"}, `voice not found: "nonexistent"`},
		{"path", "", []string{"--voice", "/nowhere/x.onnx"}, "voice /nowhere/x.onnx: no such file or directory"},
		{"openai", "", []string{"--openai-voice", "alloy=nonexistent"}, `--openai-voice alloy: voice not found: "nonexistent"`},
		{"openai speaker", "", []string{"--openai-voice", "alloy=default:7"}, "--openai-voice alloy=default:7: speaker 7"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := isolate(t)
			if tt.config != "" {
				writeConfig(t, dir, tt.config)
			}
			r := run(t, "", append([]string{"serve", "--addr", "127.0.0.1:0"}, tt.args...)...)
			if r.code != ExitUsage || strings.Count(r.errOut, "\n") != 1 || !strings.HasPrefix(r.errOut, "ttsgen: ") ||
				!strings.Contains(r.errOut, tt.want) {
				t.Errorf("exit %d, stderr %q; want exit 2 and one line with %q", r.code, r.errOut, tt.want)
			}
		})
	}
}

// A voice that is there but does not load fails the server after it listens (its /health said 503 meanwhile): one
// line says which voice and why, exit 1, and nothing claims a drain of requests that a server without its voices
// never admitted.
func TestServeVoiceThatFailsToLoadSaysSoWithoutADrain(t *testing.T) {
	dir := isolate(t)
	needORT(t)
	voicesDir := filepath.Join(dir, "voices")
	cfg, err := os.ReadFile(strings.TrimSuffix(tinyVoice, ".onnx") + ".onnx.json")
	if err != nil {
		t.Fatal(err)
	}
	model, err := os.ReadFile(tinyVoice)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(voicesDir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"broken.onnx.json": cfg, "broken.onnx": model[:len(model)/2]} {
		if err := os.WriteFile(filepath.Join(voicesDir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r := run(t, "", "serve", "--addr", "127.0.0.1:0", "--voice", "broken")
	var errLines []string
	for _, line := range strings.Split(strings.TrimSpace(r.errOut), "\n") {
		if strings.HasPrefix(line, "ttsgen: ") {
			errLines = append(errLines, line)
		}
	}
	if r.code != ExitFailure || !strings.Contains(r.errOut, "msg=\"listening") || strings.Contains(r.errOut, "drain") ||
		len(errLines) != 1 || !strings.Contains(errLines[0], "voice broken failed to load") ||
		!strings.Contains(errLines[0], "not a whole ONNX model") {
		t.Errorf("exit %d, stderr:\n%s\nwant exit 1, no drain, and one line that voice broken failed to load and why", r.code, r.errOut)
	}
}

// A bad --allow-origin, from the command line or an item of the config file's list, is a usage error said before the
// server listens: exit 2, one line naming the flag and the value. (The voice is not there either, so that a serve
// that let the origin through would stop on the voice, saying something else, rather than serve.)
func TestServeBadAllowOriginIsAUsageErrorBeforeListening(t *testing.T) {
	for _, tt := range []struct {
		name, config string
		args         []string
		want         string
	}{
		{"no scheme", "", []string{"--allow-origin", "example.com"}, `--allow-origin "example.com": want * (any origin) or SCHEME://HOST[:PORT]`},
		{"path", "", []string{"--allow-origin", "https://app.example.com", "--allow-origin", "http://x.com/path"}, `--allow-origin "http://x.com/path"`},
		{"config list", "allow_origin: [https://app.example.com, https://app.example.com/]\n", nil, `--allow-origin "https://app.example.com/"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := isolate(t)
			if tt.config != "" {
				writeConfig(t, dir, tt.config)
			}
			r := run(t, "", append([]string{"serve", "--addr", "127.0.0.1:0", "--voice", "/nowhere/x.onnx"}, tt.args...)...)
			if r.code != ExitUsage || strings.Count(r.errOut, "\n") != 1 || !strings.HasPrefix(r.errOut, "ttsgen: ") ||
				!strings.Contains(r.errOut, tt.want) {
				t.Errorf("exit %d, stderr %q; want exit 2 and one line with %q", r.code, r.errOut, tt.want)
			}
		})
	}
}

// The config file's allow_origin list lets each of its origins' pages call the server from a browser: their
// preflights need no API key, their requests do, and a page of another origin is told nothing.
func TestServeAllowsTheConfigFilesOrigins(t *testing.T) {
	dir := isolate(t)
	needORT(t)
	writeConfig(t, dir, "allow_origin:\n  - https://app.example.com\n  - http://localhost:3000\n")
	srv := startServe(t, "--voice", tinyVoice, "--api-key", "sesame")
	ask := func(method, origin, key string) *http.Response {
		req, err := http.NewRequest(method, srv.url+"/v1/models", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Origin", origin)
		if method == http.MethodOptions {
			req.Header.Set("Access-Control-Request-Method", "GET")
			req.Header.Set("Access-Control-Request-Headers", "authorization")
		}
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		resp, err := http.DefaultClient.Do(req)
		servertest.ReadBody(t, resp, err)
		return resp
	}
	for _, origin := range []string{"https://app.example.com", "http://localhost:3000"} {
		if resp := ask(http.MethodOptions, origin, ""); resp.StatusCode/100 != 2 || resp.Header.Get("Access-Control-Allow-Origin") != origin {
			t.Errorf("preflight from %s: status %d, headers %v; want 2xx allowing it", origin, resp.StatusCode, resp.Header)
		}
		if resp := ask(http.MethodGet, origin, "sesame"); resp.StatusCode != 200 || resp.Header.Get("Access-Control-Allow-Origin") != origin {
			t.Errorf("GET from %s: status %d, headers %v; want 200 allowing it", origin, resp.StatusCode, resp.Header)
		}
	}
	if resp := ask(http.MethodGet, "http://localhost:3000", ""); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("GET without the key: status %d; want 401", resp.StatusCode)
	}
	if resp := ask(http.MethodGet, "https://elsewhere.example", "sesame"); resp.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("GET from another origin: headers %v; want no Access-Control-Allow-Origin", resp.Header)
	}
	if code := srv.stop(); code != ExitOK {
		t.Errorf("exit %d after SIGINT; want %d", code, ExitOK)
	}
}
