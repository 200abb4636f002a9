package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ttsgen/ttsgen/internal/audio"
	"github.com/ttsgen/ttsgen/internal/engine"
	"github.com/ttsgen/ttsgen/internal/ort"
	"github.com/ttsgen/ttsgen/internal/ortlib"
)

// tinyVoice is the team's small random-weight voice with the default voice's architecture: it makes noise, not
// speech, but exercises the real model path (batching, lengths) quickly.
const tinyVoice = "../testdata/tiny-voice/tiny.onnx"

type runResult struct {
	code        int
	out, errOut string
}

// run executes ttsgen in-process with args and an isolated environment (config, caches, voices in temp dirs).
func run(t *testing.T, stdin string, args ...string) runResult {
	t.Helper()
	return runTTY(t, IO{}, stdin, args...)
}

// runTTY is run with the terminal flags of tty: as if those streams were a terminal.
func runTTY(t *testing.T, tty IO, stdin string, args ...string) runResult {
	t.Helper()
	var out, errOut bytes.Buffer
	streams := IO{In: strings.NewReader(stdin), Out: &out, ErrOut: &errOut, InTTY: tty.InTTY, OutTTY: tty.OutTTY,
		ErrTTY: tty.ErrTTY}
	root := NewRootCmd(streams)
	root.SetArgs(args)
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	err := root.ExecuteContext(ctx)
	code := exitCode(ctx, &errOut, err)
	return runResult{code: code, out: out.String(), errOut: errOut.String()}
}

// isolate points config and voices at empty temp folders, keeping the ORT library setup installed.
func isolate(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if os.Getenv("TTSGEN_ORT_LIB") == "" && os.Getenv("TTSGEN_CACHE_DIR") == "" {
		t.Setenv("TTSGEN_CACHE_DIR", ortlib.CacheDir()) // keep finding the library setup installed
	}
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "config"))
	t.Setenv("TTSGEN_VOICES_DIR", filepath.Join(dir, "voices"))
	t.Setenv("TTSGEN_DEVICE", "cpu")
	return dir
}

// needORT skips (or, under make test, fails) when ONNX Runtime is not installed.
func needORT(t *testing.T) {
	t.Helper()
	if _, err := newSettings().ortLibrary(); err != nil {
		if os.Getenv("TTSGEN_REQUIRE_ORT") != "" {
			t.Fatalf("ONNX Runtime is required (TTSGEN_REQUIRE_ORT is set): %v", err)
		}
		t.Skip(err)
	}
}

func TestUsageErrors(t *testing.T) {
	isolate(t)
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"batch", "x.jsonl"}, "-o DIR is required"},
		{[]string{"batch", "-o", "out"}, "at least one INPUT"},
		{[]string{"batch", "/nonexistent/in.jsonl", "-o", "out"}, "input /nonexistent/in.jsonl: no such file or directory"},
		{[]string{"batch", "x.jsonl", "-o", "out", "--jobs", "-3"}, "--jobs -3: want a positive number of items, or 0 for the default"},
		{[]string{"batch", "cmd_test.go", "-o", "out"}, "input cmd_test.go: unsupported kind of file (want .jsonl"},
		{[]string{"batch", "-", "-", "-o", "out"}, `standard input ("-") is given twice`},
		{[]string{"batch", "-", "-o", "cmd_test.go"}, "-o cmd_test.go is a file: batch writes its audio and results.jsonl into a folder"},
		{[]string{"synth", "hi", "--file", "x.txt", "-o", "x.wav"}, "either as arguments or with --file"},
		{[]string{"synth", "hi", "-o", "x.wav", "--length-scale", "0"}, "--length-scale 0 is outside (0, 20]"},
		{[]string{"synth", "hi", "-o", "x.wav", "--noise-scale", "-1"}, "--noise-scale -1 is outside [0, 10]"},
		{[]string{"synth", "hi", "-o", "x.wav", "--sentence-silence", "99"}, "--sentence-silence 99 is outside"},
		{[]string{"bench"}, "--texts FILE is required"},
		{[]string{"bench", "--texts", "x", "--compare", "piper"}, `the only comparison is "sequential"`},
		{[]string{"bench", "--texts", "x", "--tune", "max-batches=2"}, `unknown key "max-batches"; the keys are max-batch, max-batch-phonemes,`},
		{[]string{"bench", "--texts", "x", "--tune", "decoder-window=big"}, `decoder-window: "big" is not a whole number`},
		{[]string{"bench", "--texts", "x", "--tune", "upsampling=fft"}, `upsampling: "fft" is not one of convtranspose, polyphase`},
		{[]string{"bench", "--texts", "x", "--tune", "no-strips=maybe"}, `no-strips: "maybe" is not true or false`},
		{[]string{"bench", "--texts", "x", "--tune", "max-batch"}, `max-batch: "" is not a whole number`},
		{[]string{"synth", "--no-such-flag"}, "unknown flag: --no-such-flag"},
		{[]string{"synth", "hi", "-o", "x.wav", "--config", "/nonexistent/ttsgen.yaml"}, "config file"},
		{[]string{"serve", "--addr", "8880"}, "want HOST:PORT"},
		{[]string{"serve", "--max-queue", "0"}, "--max-queue must be positive"},
		{[]string{"serve", "--grace", "0s"}, "--grace must be positive"},
		{[]string{"serve", "--openai-voice", "robot=tiny"}, "robot is not one of OpenAI's voice names"},
		{[]string{"serve", "--openai-voice", "alloy=:3"}, "want NAME=VOICE"},
		{[]string{"serve", "extra"}, "serve takes no arguments"},
		{[]string{"bench", "--url", "http://127.0.0.1:1", "--texts", "x", "--compare", "sequential"}, "does not go with --url"},
		{[]string{"bench", "--texts", "x", "--compare", "sequential", "--rate", "5"}, "capped by the arrival rate"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			r := run(t, "", tt.args...)
			if r.code != ExitUsage || !strings.Contains(r.errOut, tt.want) {
				t.Errorf("exit %d, stderr %q; want exit %d and %q", r.code, r.errOut, ExitUsage, tt.want)
			}
			if _, err := os.Stat("out"); err == nil {
				os.RemoveAll("out")
				t.Error("a refused command created out/")
			}
		})
	}
}

func TestUnknownDeviceIsAUsageError(t *testing.T) {
	isolate(t)
	needORT(t)
	for _, tt := range []struct{ flag, value, want string }{
		{"--device", "tpu", `unknown --device "tpu"`},
		{"--precision", "fp8", `unknown --precision "fp8" (want fp32 or fp16)`},
	} {
		r := run(t, "", "synth", "hi", "-o", filepath.Join(t.TempDir(), "x.wav"), tt.flag, tt.value)
		if r.code != ExitUsage || !strings.Contains(r.errOut, tt.want) {
			t.Errorf("%s %s: exit %d, stderr %q", tt.flag, tt.value, r.code, r.errOut)
		}
	}
}

func TestMissingORTLibraryIsExplained(t *testing.T) {
	isolate(t)
	r := run(t, "", "synth", "hi", "-o", filepath.Join(t.TempDir(), "x.wav"), "--ort-lib", "/nonexistent/libonnxruntime.so")
	if r.code != ExitFailure || !strings.Contains(r.errOut, "--ort-lib") || !strings.Contains(r.errOut, "/nonexistent/libonnxruntime.so") {
		t.Errorf("exit %d, stderr %q", r.code, r.errOut)
	}
}

func TestVoicesListAndAdd(t *testing.T) {
	dir := isolate(t)
	r := run(t, "", "voices", "list", "--json")
	var list []voiceInfo
	if r.code != 0 || json.Unmarshal([]byte(r.out), &list) != nil || len(list) != 1 || list[0].Where != "(built in)" || list[0].SampleRate != 22050 {
		t.Fatalf("voices list: exit %d, out %q, err %q", r.code, r.out, r.errOut)
	}
	r = run(t, "", "voices", "add", tinyVoice)
	if r.code != 0 || !strings.Contains(r.out, "added tiny") {
		t.Fatalf("voices add: exit %d, out %q, err %q", r.code, r.out, r.errOut)
	}
	if _, err := os.Stat(filepath.Join(dir, "voices", "tiny.onnx.json")); err != nil {
		t.Errorf("voice not installed: %v", err)
	}
	r = run(t, "", "voices", "info", "tiny", "--json")
	var info voiceInfo
	if r.code != 0 || json.Unmarshal([]byte(r.out), &info) != nil || info.Name != "tiny" || info.SizeBytes == 0 {
		t.Errorf("voices info: exit %d, out %q, err %q", r.code, r.out, r.errOut)
	}
	r = run(t, "", "voices", "info", "missing-voice")
	if r.code != ExitFailure || !strings.Contains(r.errOut, `voice not found: "missing-voice"`) || !strings.Contains(r.errOut, "tiny") {
		t.Errorf("voices info missing: exit %d, err %q", r.code, r.errOut)
	}
}

func TestSynthWritesSpeechLengthWAV(t *testing.T) {
	isolate(t)
	needORT(t)
	out := filepath.Join(t.TempDir(), "out.wav")
	r := run(t, "", "synth", "--voice", tinyVoice, "Hello there. This is a second sentence.", "-o", out, "--sentence-silence", "0.5")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.errOut)
	}
	samples, rate := readWAVFile(t, out)
	if rate != 22050 {
		t.Errorf("rate %d", rate)
	}
	// Two sentences of ~15-30 phonemes each, plus 0.5 s of silence between them.
	if secs := float64(len(samples)) / float64(rate); secs < 0.8 || secs > 10 {
		t.Errorf("audio is %.2f s", secs)
	}
	if rms(samples) < 100 {
		t.Errorf("audio is near silent (rms %.1f)", rms(samples))
	}
	entries, _ := os.ReadDir(filepath.Dir(out))
	if len(entries) != 1 {
		t.Errorf("left behind: %v", entries)
	}
}

func TestSynthStdinToStdout(t *testing.T) {
	isolate(t)
	needORT(t)
	r := run(t, "Read from standard input.", "synth", "--voice", tinyVoice, "-o", "-")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.errOut)
	}
	samples, rate, err := audio.ReadWAV(bytes.NewReader([]byte(r.out)))
	if err != nil || rate != 22050 || len(samples) < 2000 {
		t.Fatalf("stdout WAV: %d samples at %d Hz, %v", len(samples), rate, err)
	}
}

func TestSynthNothingToSay(t *testing.T) {
	isolate(t)
	needORT(t)
	r := run(t, "", "synth", "--voice", tinyVoice, "...", "-o", filepath.Join(t.TempDir(), "x.wav"))
	if r.code != ExitFailure || !strings.Contains(r.errOut, "nothing to speak") {
		t.Errorf("exit %d, stderr %q", r.code, r.errOut)
	}
}

func readWAVFile(t *testing.T, path string) ([]int16, int) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	samples, rate, err := audio.ReadWAV(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return samples, rate
}

func rms(s []int16) float64 {
	var sum float64
	for _, v := range s {
		sum += float64(v) * float64(v)
	}
	return math.Sqrt(sum / math.Max(1, float64(len(s))))
}

// Piper's id layout for the standard en_US map: ^ _ then each phoneme followed by _, then $.
func TestPhonemizeJSONIsPiperExactPerLine(t *testing.T) {
	isolate(t)
	r := run(t, "Hello, world!\nno final mark here\n", "phonemize", "--no-normalize", "--json")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.errOut)
	}
	lines := strings.Split(strings.TrimSpace(r.out), "\n")
	if len(lines) != 2 {
		t.Fatalf("want one object per input line, got %q", r.out)
	}
	var first struct {
		Text     string  `json:"text"`
		Phonemes string  `json:"phonemes"`
		IDs      []int64 `json:"ids"`
	}
	if err := json.Unmarshal([]byte(lines[0]), &first); err != nil {
		t.Fatal(err)
	}
	// h ə l ˈ o ʊ , ␠ w ˈ ɜ ː l d !
	want := []int64{1, 0, 20, 0, 59, 0, 24, 0, 120, 0, 27, 0, 100, 0, 8, 0, 3, 0, 35, 0, 120, 0, 62, 0, 122, 0, 24, 0, 17, 0, 4, 0, 2}
	if first.Text != "Hello, world!" || first.Phonemes != "həlˈoʊ, wˈɜːld!" || fmt.Sprint(first.IDs) != fmt.Sprint(want) {
		t.Errorf("got %+v\nwant ids %v", first, want)
	}
	// The line without a final mark stays its own sentence, as Piper's command line reads it.
	if !strings.Contains(lines[1], `"text":"no final mark here","phonemes":"nˈoʊ fˈaɪnəl mˈɑːɹk hˈɪɹ"`) {
		t.Errorf("second line: %s", lines[1])
	}
}

func TestPhonemizeNormalisesByDefault(t *testing.T) {
	isolate(t)
	r := run(t, "", "phonemize", "--json", "It costs $5.")
	if r.code != 0 || !strings.Contains(r.out, `"text":"It costs five dollars."`) {
		t.Errorf("exit %d, out %s, err %s", r.code, r.out, r.errOut)
	}
}

// The scales reach the model: length_scale multiplies every phoneme's duration (before rounding up to frames).
func TestSynthLengthScaleStretchesSpeech(t *testing.T) {
	isolate(t)
	needORT(t)
	dir := t.TempDir()
	lengths := map[string]int{}
	for _, scale := range []string{"1", "1.5"} {
		out := filepath.Join(dir, scale+".wav")
		r := run(t, "", "synth", "--voice", tinyVoice, "--length-scale", scale, "--noise-w", "0", "--noise-scale", "0",
			"A sentence of a fair length, to measure.", "-o", out)
		if r.code != 0 {
			t.Fatalf("exit %d: %s", r.code, r.errOut)
		}
		samples, _ := readWAVFile(t, out)
		lengths[scale] = len(samples)
	}
	ratio := float64(lengths["1.5"]) / float64(lengths["1"])
	if ratio < 1.3 || ratio > 1.7 { // 1.5, give or take each phoneme's rounding up to whole frames
		t.Errorf("length ratio %.2f (%d vs %d samples), want about 1.5", ratio, lengths["1.5"], lengths["1"])
	}
}

// bench's JSON report counts the measured requests, and --per-request writes one line for each, in order, with what
// it said and how long it took.
func TestBenchPerRequestRecords(t *testing.T) {
	dir := isolate(t)
	needORT(t)
	texts := filepath.Join(dir, "texts.txt")
	if err := os.WriteFile(texts, []byte("Hello there.\nA second, longer text to say. And a third sentence.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	records := filepath.Join(dir, "requests.jsonl")
	r := run(t, "", "bench", "--texts", texts, "--voice", tinyVoice, "--requests", "3", "--warmup", "1",
		"--concurrency", "1", "--json", "--per-request", records, "-q")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.errOut)
	}
	var report struct {
		Requests, Sentences int
	}
	if err := json.Unmarshal([]byte(r.out), &report); err != nil {
		t.Fatalf("report is not one JSON object: %v\n%s", err, r.out)
	}
	if report.Requests != 3 || report.Sentences != 1+2+1 {
		t.Errorf("report: %d requests, %d sentences; want 3 and 4", report.Requests, report.Sentences)
	}
	lines := readLines(t, records, 3)
	for i, line := range lines {
		var rec struct {
			Request, Phonemes, Sentences int
			Text                         string
			AudioSeconds                 float64 `json:"audio_seconds"`
			LatencyMS                    float64 `json:"latency_ms"`
			FirstAudioMS                 float64 `json:"first_audio_ms"`
		}
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("line %d: %v: %s", i+1, err, line)
		}
		wantText := []string{"Hello there.", "A second, longer text to say. And a third sentence.", "Hello there."}[i]
		if rec.Request != i || rec.Text != wantText || rec.Phonemes < 10 || rec.AudioSeconds < 0.3 ||
			rec.FirstAudioMS <= 0 || rec.FirstAudioMS > rec.LatencyMS {
			t.Errorf("line %d: %s", i+1, line)
		}
	}
}

// The sequential baseline is the voice run as Piper runs it: whole sentences and the voice's own graph (no
// windows, no tiles, no polyphase rewrite), batch 1, one session with every thread and its own memory arena,
// float32.
func TestSequentialBaselineRunsLikePiper(t *testing.T) {
	o := engine.Options{Threads: 4, Precision: engine.PrecisionFloat16,
		Tuning: engine.Tuning{TailTile: 512, DecoderWindow: 256, MaxBatch: 8}}
	sequentialEngine(&o)
	want := engine.Options{Threads: 4, Precision: engine.PrecisionFloat32, Tuning: engine.Tuning{ThreadsPerSession: 4,
		MaxBatch: 1, InFlight: 1, Upsampling: engine.UpsamplingConvTranspose, DecoderWindow: -1, TailTile: -1,
		SessionArenas: true}}
	if fmt.Sprintf("%+v", o) != fmt.Sprintf("%+v", want) {
		t.Errorf("baseline options\n got %+v\nwant %+v", o, want)
	}
}

// Each --tune KEY=VALUE sets its engine knob; a switch needs no value; provider options add up.
func TestTuneSetsTheEngineKnobs(t *testing.T) {
	var got engine.Tuning
	var help bool
	f := tuneFlag{&got, &help}
	for _, arg := range []string{"max-batch=8", "decoder-window=-1", "upsampling=convtranspose", "text-device=auto",
		"no-strips", "session-arenas=false", "provider-option=session.set_denormal_as_zero=1",
		"provider-option=ep.webgpuexecutionprovider.storageBufferCacheMode=simple", "ort-profile=/tmp/prof"} {
		if err := f.Set(arg); err != nil {
			t.Fatalf("--tune %s: %v", arg, err)
		}
	}
	want := engine.Tuning{MaxBatch: 8, DecoderWindow: -1, Upsampling: engine.UpsamplingConvTranspose,
		TextDevice: ort.DeviceAuto, NoStrips: true, ProfilePrefix: "/tmp/prof", ProviderOptions: map[string]string{
			"session.set_denormal_as_zero": "1", "ep.webgpuexecutionprovider.storageBufferCacheMode": "simple"}}
	if fmt.Sprintf("%+v", got) != fmt.Sprintf("%+v", want) || help {
		t.Errorf("tuning\n got %+v\nwant %+v (help %v)", got, want, help)
	}
}

// --tune help lists every key with what it does, and runs nothing (no --texts needed).
func TestTuneHelpListsTheKeys(t *testing.T) {
	isolate(t)
	r := run(t, "", "bench", "--tune", "help")
	if r.code != 0 {
		t.Fatalf("exit %d, stderr %q", r.code, r.errOut)
	}
	for _, k := range tuneKeys {
		if !strings.Contains(r.out, "  "+k.name+" ") || k.help == "" {
			t.Errorf("key %s missing from:\n%s", k.name, r.out)
		}
	}
	if help := run(t, "", "bench", "--help"); strings.Count(help.out, "\n") > 45 {
		t.Errorf("bench --help is %d lines, more than a screen", strings.Count(help.out, "\n"))
	}
}

// readLines reads the lines of a JSON-lines file, which must be n.
func readLines(t *testing.T, path string, n int) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != n {
		t.Fatalf("%s: %d lines, want %d:\n%s", path, len(lines), n, data)
	}
	return lines
}
