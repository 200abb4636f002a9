package cmd

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/ttsgen/ttsgen/internal/engine"
)

// writeConfig puts a config.yaml where isolate's XDG_CONFIG_HOME makes ttsgen look for it.
func writeConfig(t *testing.T, dir, yaml string) string {
	t.Helper()
	path := filepath.Join(dir, "config", "ttsgen", "config.yaml")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestBadConfigIsAUsageErrorNamingKeyAndFile(t *testing.T) {
	for _, tt := range []struct{ name, yaml, want string }{
		{"misspelt key", "lenght_scale: 1.2\n", `unknown key "lenght_scale" (did you mean "length_scale"?)`},
		{"unknown key", "colour: blue\n", `unknown key "colour"`},
		{"wrong type", "length_scale: fast\n", `length_scale: "fast" is not a valid value for --length-scale (float32)`},
		{"wrong type, shared setting", "threads: many\n", `threads: "many" is not a valid value for --threads (int)`},
		{"bad device", "device: tpu\n", `unknown --device "tpu"`},
		{"not YAML", "length_scale: [1\n", "reading config file"},
		{"list for a one-value key", "length_scale: [1, 2]\n",
			`length_scale: a list is not a valid value for --length-scale, which takes one value (float32)`},
		{"table for a flag", "voice: {}\n", `voice: a table is not a valid value for --voice (string)`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := isolate(t)
			t.Setenv("TTSGEN_DEVICE", "") // isolate's cpu would win over the file's device
			path := writeConfig(t, dir, tt.yaml)
			r := run(t, "", "synth", "hi", "-o", filepath.Join(t.TempDir(), "x.wav"))
			if r.code != ExitUsage || !strings.Contains(r.errOut, tt.want) ||
				(tt.name != "bad device" && !strings.Contains(r.errOut, path)) {
				t.Errorf("config %q: exit %d, stderr %q; want exit 2 naming %s and %q", tt.yaml, r.code, r.errOut, path, tt.want)
			}
		})
	}
}

func TestEnvironmentVariableOfABadValueIsNamed(t *testing.T) {
	isolate(t)
	t.Setenv("TTSGEN_SENTENCE_SILENCE", "long")
	r := run(t, "", "synth", "hi", "-o", filepath.Join(t.TempDir(), "x.wav"))
	if r.code != ExitUsage || !strings.Contains(r.errOut, "environment variable TTSGEN_SENTENCE_SILENCE") {
		t.Errorf("exit %d, stderr %q", r.code, r.errOut)
	}
}

// A voice setting reaches synth from the config file and from the environment, and a flag beats both.
func TestVoiceSettingsComeFromFlagEnvironmentConfig(t *testing.T) {
	dir := isolate(t)
	needORT(t)
	seconds := func(t *testing.T, args ...string) float64 {
		t.Helper()
		out := filepath.Join(t.TempDir(), "x.wav")
		r := run(t, "", append([]string{"synth", "--voice", tinyVoice, "Hello there, how are you today?", "-o", out,
			"--noise-scale", "0", "--noise-w", "0"}, args...)...)
		if r.code != 0 {
			t.Fatalf("exit %d: %s", r.code, r.errOut)
		}
		samples, rate := readWAVFile(t, out)
		return float64(len(samples)) / float64(rate)
	}
	plain := seconds(t)
	writeConfig(t, dir, "length_scale: 2\n")
	fromFile := seconds(t)
	t.Setenv("TTSGEN_LENGTH_SCALE", "3")
	fromEnv := seconds(t)
	fromFlag := seconds(t, "--length-scale", "1")
	if !(fromFile > 1.7*plain && fromEnv > 1.3*fromFile && fromFlag < 1.1*plain && fromFlag > 0.9*plain) {
		t.Errorf("audio seconds: default %.2f, config length_scale 2 %.2f, env 3 %.2f, flag 1 %.2f", plain, fromFile,
			fromEnv, fromFlag)
	}
}

func TestUnknownSubcommandsAreUsageErrors(t *testing.T) {
	isolate(t)
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"frob"}, `unknown command "frob" for "ttsgen"`},
		{[]string{"synt"}, `did you mean "synth"?`},
		{[]string{"voices", "frob"}, `unknown command "frob" for "ttsgen voices"`},
		{[]string{"voices", "lsit"}, `did you mean "list"?`},
		{[]string{"voices", "info"}, "accepts 1 arg(s), received 0"},
	} {
		r := run(t, "", tt.args...)
		if r.code != ExitUsage || !strings.Contains(r.errOut, tt.want) {
			t.Errorf("ttsgen %s: exit %d, stderr %q; want exit 2 and %q", strings.Join(tt.args, " "), r.code, r.errOut, tt.want)
		}
	}
	if r := run(t, "", "voices"); r.code != ExitOK || !strings.Contains(r.out, "Available Commands") {
		t.Errorf("ttsgen voices: exit %d, stdout %q; want its help", r.code, r.out)
	}
}

func TestEspeakDataMustExist(t *testing.T) {
	isolate(t)
	r := run(t, "", "--espeak-data", "/nonexistent", "phonemize", "hi")
	if r.code != ExitUsage || !strings.Contains(r.errOut, "--espeak-data /nonexistent: not a folder that contains espeak-ng-data") {
		t.Errorf("exit %d, stderr %q", r.code, r.errOut)
	}
}

func TestVersionNamesTheNativeLibraries(t *testing.T) {
	isolate(t)
	r := run(t, "", "--version")
	if r.code != ExitOK || !strings.HasPrefix(r.out, "ttsgen ") || !strings.Contains(r.out, "ONNX Runtime 1.") ||
		!strings.Contains(r.out, "espeak-ng 1.") {
		t.Errorf("exit %d, stdout %q", r.code, r.out)
	}
}

func TestHelpDocumentsExitStatuses(t *testing.T) {
	isolate(t)
	for _, cmd := range []string{"synth", "batch", "voices"} {
		if r := run(t, "", cmd, "--help"); !strings.Contains(r.out, "Exit status: 0 all done") {
			t.Errorf("ttsgen %s --help has no exit statuses:\n%s", cmd, r.out)
		}
	}
}

// serve's openai_voices table in the config file maps OpenAI's voice names, as --openai-voice does: its entries are
// checked like the flag's, and reach the server (which here cannot find the mapped voice).
func TestServeReadsTheOpenAIVoicesTable(t *testing.T) {
	for _, tt := range []struct {
		name, yaml string
		code       int
		want       string
	}{
		{"not an OpenAI name", "openai_voices:\n  robot: tiny\n", ExitUsage, "robot is not one of OpenAI's voice names"},
		{"the flag's name as a table", "openai_voice:\n  onyx: tiny\n", ExitUsage, `unknown key "openai_voice.onyx" (did you mean the table "openai_voices"?)`},
		{"mapped", "openai_voices:\n  onyx: /nowhere/x.onnx\n", ExitUsage, "--openai-voice onyx: voice /nowhere/x.onnx: no such file or directory"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := isolate(t)
			writeConfig(t, dir, tt.yaml)
			r := run(t, "", "serve", "--addr", "127.0.0.1:0")
			if r.code != tt.code || !strings.Contains(r.errOut, tt.want) {
				t.Errorf("config %q: exit %d, stderr %q; want exit %d and %q", tt.yaml, r.code, r.errOut, tt.code, tt.want)
			}
		})
	}
}

// parseServe runs serve's flags and settings with nothing started, and returns its voices and OpenAI voice map as the
// flags hold them.
func parseServe(t *testing.T, argv ...string) (voices []string, openAI map[string]string) {
	t.Helper()
	code, errOut := parseWith(t, IO{}, append([]string{"serve"}, argv...), func(s *settings, streams IO) *cobra.Command {
		c := newServeCmd(s, streams)
		c.RunE = func(cmd *cobra.Command, _ []string) error {
			var err error
			if voices, err = cmd.Flags().GetStringArray("voice"); err != nil {
				return err
			}
			openAI, err = cmd.Flags().GetStringToString("openai-voice")
			return err
		}
		return c
	})
	if code != ExitOK {
		t.Fatalf("serve %q: exit %d, stderr %q", argv, code, errOut)
	}
	return voices, openAI
}

// A config file's list gives a repeatable flag each of its items, as that many --flag VALUE do; the command line
// replaces the list.
func TestConfigListGivesARepeatableFlagEachItem(t *testing.T) {
	for _, yaml := range []string{
		"voice: [a.onnx, b.onnx]\nopenai_voice: [alloy=a.onnx, onyx=b.onnx]\n",
		"voice:\n  - a.onnx\n  - b.onnx\nopenai_voice:\n  - alloy=a.onnx\n  - onyx=b.onnx\n",
	} {
		dir := isolate(t)
		writeConfig(t, dir, yaml)
		voices, openAI := parseServe(t)
		if !slices.Equal(voices, []string{"a.onnx", "b.onnx"}) || !maps.Equal(openAI, map[string]string{"alloy": "a.onnx", "onyx": "b.onnx"}) {
			t.Errorf("config %q: --voice %q, --openai-voice %v; want both items of each list", yaml, voices, openAI)
		}
		if voices, _ := parseServe(t, "--voice", "c.onnx"); !slices.Equal(voices, []string{"c.onnx"}) {
			t.Errorf("config %q and --voice c.onnx: --voice %q, want the flag's alone", yaml, voices)
		}
	}

	dir := isolate(t)
	writeConfig(t, dir, "tune: [max-batch=8, decoder-window=16]\n")
	var tuning *engine.Tuning
	code, errOut := parseWith(t, IO{}, []string{"bench", "--texts", "t.txt"}, func(s *settings, streams IO) *cobra.Command {
		return newBenchCmd(s, streams, func(o *benchOptions) error { tuning = &o.tuning; return nil })
	})
	if code != ExitOK || tuning == nil || tuning.MaxBatch != 8 || tuning.DecoderWindow != 16 {
		t.Errorf("config tune: [max-batch=8, decoder-window=16]: exit %d, stderr %q, tuning %+v; want both keys set", code, errOut, tuning)
	}
}

// An environment variable is one value, parsed as the flag parses one on the command line: TTSGEN_VOICE=a,b is the
// one voice "a,b", as --voice a,b is (a path may hold a comma), while a map flag splits its pairs at commas.
func TestEnvironmentVariableIsOneValueOfARepeatableFlag(t *testing.T) {
	isolate(t)
	t.Setenv("TTSGEN_VOICE", "a,b.onnx")
	t.Setenv("TTSGEN_OPENAI_VOICE", "alloy=a.onnx,onyx=b.onnx")
	voices, openAI := parseServe(t)
	if !slices.Equal(voices, []string{"a,b.onnx"}) || !maps.Equal(openAI, map[string]string{"alloy": "a.onnx", "onyx": "b.onnx"}) {
		t.Errorf("TTSGEN_VOICE=a,b.onnx: --voice %q; TTSGEN_OPENAI_VOICE=alloy=a.onnx,onyx=b.onnx: --openai-voice %v", voices, openAI)
	}
}

// A list for a repeatable flag is checked item by item: an item that is not a value, or not one the flag takes, is a
// usage error naming the key and the file.
func TestConfigListItemsMustBeValues(t *testing.T) {
	for _, tt := range []struct{ name, yaml, want string }{
		{"nested list", "voice: [a.onnx, [b.onnx]]\n", "voice: item 2 of the list is not a value for --voice (stringArray)"},
		{"bad item", "openai_voice: [alloy=a.onnx, onyx]\n", `openai_voice: "onyx" is not a valid value for --openai-voice (stringToString)`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := isolate(t)
			path := writeConfig(t, dir, tt.yaml)
			ran := false
			code, errOut := parseWith(t, IO{}, []string{"serve"}, func(s *settings, streams IO) *cobra.Command {
				c := newServeCmd(s, streams)
				c.RunE = func(*cobra.Command, []string) error { ran = true; return nil }
				return c
			})
			if code != ExitUsage || ran || !strings.Contains(errOut, tt.want) || !strings.Contains(errOut, path) {
				t.Errorf("config %q: exit %d, ran %v, stderr %q; want exit 2 naming %s and %q", tt.yaml, code, ran, errOut, path, tt.want)
			}
		})
	}
}
