package cmd

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/ttsgen/ttsgen/internal/voices"
)

// parseWith runs a command built by newCmd with argv, in the cli/cli way: the command's run function is replaced,
// so what is checked is how flags, settings and arguments become its options, with nothing started.
func parseWith(t *testing.T, tty IO, argv []string, newCmd func(*settings, IO) *cobra.Command) (code int, errOut string) {
	t.Helper()
	var out, errBuf bytes.Buffer
	streams := IO{In: strings.NewReader(""), Out: &out, ErrOut: &errBuf, OutTTY: tty.OutTTY}
	root := NewRootCmd(streams)
	s := newSettings()
	for _, c := range root.Commands() {
		if c.Name() == argv[0] {
			root.RemoveCommand(c)
		}
	}
	sub := newCmd(s, streams)
	root.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error { return s.load(cmd) }
	root.AddCommand(sub)
	strictArgs(root)
	root.SetArgs(argv)
	ctx := context.Background()
	return exitCode(ctx, &errBuf, root.ExecuteContext(ctx)), errBuf.String()
}

func TestSynthParsesItsCommandLine(t *testing.T) {
	for _, tt := range []struct {
		argv     []string
		outTTY   bool
		wantOpts synthOptions
		wantArgs []string
		wantErr  string
	}{
		{argv: []string{"synth", "Hello", "there.", "-o", "x.flac"}, wantOpts: synthOptions{out: "x.flac"}, wantArgs: []string{"Hello", "there."}},
		{argv: []string{"synth", "-f", "book.txt", "-o", "-", "--timestamps", "b.srt"}, wantOpts: synthOptions{out: "-", file: "book.txt", timestamps: "b.srt"}},
		{argv: []string{"synth", "Hi"}, wantOpts: synthOptions{out: "-"}, wantArgs: []string{"Hi"}}, // stdout not a terminal
		{argv: []string{"synth", "Hi"}, outTTY: true, wantErr: "-o is required"},
		{argv: []string{"synth", "Hi", "-f", "x.txt", "-o", "x.wav"}, wantErr: "either as arguments or with --file"},
	} {
		t.Run(strings.Join(tt.argv, " "), func(t *testing.T) {
			isolate(t)
			var got *synthOptions
			var gotArgs []string
			code, errOut := parseWith(t, IO{OutTTY: tt.outTTY}, tt.argv, func(s *settings, streams IO) *cobra.Command {
				return newSynthCmd(s, streams, func(o *synthOptions, args []string) error {
					got, gotArgs = o, args
					return nil
				})
			})
			if tt.wantErr != "" {
				if code != ExitUsage || !strings.Contains(errOut, tt.wantErr) || got != nil {
					t.Fatalf("exit %d, stderr %q, ran %v; want a usage error %q and nothing run", code, errOut, got != nil, tt.wantErr)
				}
				return
			}
			if code != ExitOK || got == nil {
				t.Fatalf("exit %d, stderr %q", code, errOut)
			}
			if got.out != tt.wantOpts.out || got.file != tt.wantOpts.file || got.timestamps != tt.wantOpts.timestamps ||
				!slices.Equal(gotArgs, tt.wantArgs) {
				t.Errorf("options out=%q file=%q timestamps=%q args=%q; want %+v args %q", got.out, got.file,
					got.timestamps, gotArgs, tt.wantOpts, tt.wantArgs)
			}
		})
	}
}

func TestPhonemizeParsesItsCommandLine(t *testing.T) {
	isolate(t)
	var got *phonemizeOptions
	code, errOut := parseWith(t, IO{}, []string{"phonemize", "--json", "--no-normalize", "--voice", "v", "Dr.", "Who"},
		func(s *settings, streams IO) *cobra.Command {
			return newPhonemizeCmd(s, streams, func(o *phonemizeOptions) error { got = o; return nil })
		})
	want := &phonemizeOptions{voice: "v", asJSON: true, noNormalize: true, args: []string{"Dr.", "Who"}}
	if code != ExitOK || !reflect.DeepEqual(got, want) {
		t.Errorf("exit %d (%s), options %+v; want %+v", code, errOut, got, want)
	}
}

// wantUsageError checks that argv is refused as a usage error saying want, with nothing run.
func wantUsageError(t *testing.T, argv []string, want string, newCmd func(s *settings, streams IO, ran *bool) *cobra.Command) {
	t.Helper()
	ran := false
	code, errOut := parseWith(t, IO{}, argv, func(s *settings, streams IO) *cobra.Command { return newCmd(s, streams, &ran) })
	if code != ExitUsage || !strings.Contains(errOut, want) || ran {
		t.Errorf("%q: exit %d, stderr %q, ran %v; want exit %d saying %q, nothing run", argv, code, errOut, ran, ExitUsage, want)
	}
}

func TestBatchParsesItsCommandLine(t *testing.T) {
	parse := func(t *testing.T, argv ...string) (*batchOptions, []string) {
		t.Helper()
		var got *batchOptions
		var inputs []string
		code, errOut := parseWith(t, IO{}, argv, func(s *settings, streams IO) *cobra.Command {
			return newBatchCmd(s, streams, func(o *batchOptions, args []string) error { got, inputs = o, args; return nil })
		})
		if code != ExitOK || got == nil {
			t.Fatalf("%q: exit %d, stderr %q", argv, code, errOut)
		}
		return got, inputs
	}
	t.Run("flags", func(t *testing.T) {
		isolate(t)
		o, inputs := parse(t, "batch", "a.jsonl", "book.txt", "-o", "out", "--shard", "2/4", "--jobs", "8", "--force",
			"--timestamps", "srt", "--format", "flac", "--voice", "v", "--length-scale", "1.2")
		if !slices.Equal(inputs, []string{"a.jsonl", "book.txt"}) || o.outDir != "out" || o.shard != "2/4" || o.jobs != 8 ||
			!o.force || o.timestamps != "srt" || o.audio.format != "flac" || o.voice.voice != "v" || o.voice.lengthScale != 1.2 {
			t.Errorf("inputs %q, options %+v", inputs, *o)
		}
	})
	t.Run("settings: flag over environment over config file", func(t *testing.T) {
		dir := isolate(t)
		writeConfig(t, dir, "jobs: 3\nlength_scale: 1.5\nshard_count: 4\nformat: opus\n")
		t.Setenv("TTSGEN_JOBS", "5")
		t.Setenv("TTSGEN_SHARD_COUNT", "8")
		o, _ := parse(t, "batch", "a.jsonl", "-o", "out", "--format", "mp3")
		d, err := o.voice.defaults()
		if err != nil {
			t.Fatal(err)
		}
		if o.jobs != 5 || o.shardCount != 8 || o.audio.format != "mp3" || d.LengthScale == nil || *d.LengthScale != 1.5 {
			t.Errorf("jobs %d (want 5, the environment's), shard count %d (want 8), format %q (want mp3, the flag's), "+
				"length scale %v (want 1.5, the config file's)", o.jobs, o.shardCount, o.audio.format, d.LengthScale)
		}
	})
	t.Run("one run's paths are never settings", func(t *testing.T) {
		dir := isolate(t)
		writeConfig(t, dir, "output: elsewhere\n")
		wantUsageError(t, []string{"batch", "a.jsonl", "-o", "out"}, `unknown key "output"`, newBatchParse)
		t.Setenv("TTSGEN_SHARD", "1/2")
		writeConfig(t, dir, "")
		if o, _ := parse(t, "batch", "a.jsonl", "-o", "out"); o.shard != "" {
			t.Errorf("TTSGEN_SHARD gave --shard %q", o.shard)
		}
	})
	for _, tt := range []struct {
		argv []string
		want string
	}{
		{[]string{"batch", "-o", "out"}, "at least one INPUT"},
		{[]string{"batch", "a.jsonl"}, "-o DIR is required"},
		{[]string{"batch", "a.jsonl", "-o", "out", "--jobs", "many"}, `invalid argument "many" for "--jobs"`},
		{[]string{"batch", "a.jsonl", "-o", "out", "--shard-cont", "4"}, "unknown flag: --shard-cont"},
	} {
		t.Run(strings.Join(tt.argv, " "), func(t *testing.T) {
			isolate(t)
			wantUsageError(t, tt.argv, tt.want, newBatchParse)
		})
	}
}

func newBatchParse(s *settings, streams IO, ran *bool) *cobra.Command {
	return newBatchCmd(s, streams, func(*batchOptions, []string) error { *ran = true; return nil })
}

func TestBenchParsesItsCommandLine(t *testing.T) {
	parse := func(t *testing.T, argv ...string) *benchOptions {
		t.Helper()
		var got *benchOptions
		code, errOut := parseWith(t, IO{}, argv, func(s *settings, streams IO) *cobra.Command {
			return newBenchCmd(s, streams, func(o *benchOptions) error { got = o; return nil })
		})
		if code != ExitOK || got == nil {
			t.Fatalf("%q: exit %d, stderr %q", argv, code, errOut)
		}
		return got
	}
	t.Run("flags", func(t *testing.T) {
		isolate(t)
		o := parse(t, "bench", "--texts", "t.txt", "--concurrency", "4", "--warmup", "0", "--requests", "10", "--json",
			"--compare", "sequential", "--per-request", "r.jsonl", "--queue-size", "64", "--tune", "decoder-window=256")
		want := benchOptions{texts: "t.txt", voice: "", concurrency: 4, requests: 10, compare: "sequential", asJSON: true,
			perRequest: "r.jsonl", queueSize: 64}
		want.tuning.DecoderWindow = 256
		if !reflect.DeepEqual(*o, want) {
			t.Errorf("options %+v\nwant    %+v", *o, want)
		}
	})
	t.Run("settings: flag over config file", func(t *testing.T) {
		dir := isolate(t)
		writeConfig(t, dir, "warmup: 7\nqueue_size: 128\n")
		if o := parse(t, "bench", "--texts", "t.txt", "--queue-size", "32"); o.warmup != 7 || o.queueSize != 32 {
			t.Errorf("warmup %d (want 7, the config file's), queue size %d (want 32, the flag's)", o.warmup, o.queueSize)
		}
	})
	for _, tt := range []struct {
		argv []string
		want string
	}{
		{[]string{"bench"}, "--texts FILE is required"},
		{[]string{"bench", "--texts", "t.txt", "--compare", "piper"}, `the only comparison is "sequential"`},
		{[]string{"bench", "--texts", "t.txt", "--url", "http://127.0.0.1:1", "--compare", "sequential"}, "does not go with --url"},
		{[]string{"bench", "--texts", "t.txt", "--rate", "3", "--concurrency", "2"}, "not both"},
		{[]string{"bench", "--texts", "t.txt", "--tune", "no-such-key=1"}, `unknown key "no-such-key"`},
		{[]string{"bench", "--texts", "t.txt", "extra"}, "unknown command"},
	} {
		t.Run(strings.Join(tt.argv, " "), func(t *testing.T) {
			isolate(t)
			wantUsageError(t, tt.argv, tt.want, func(s *settings, streams IO, ran *bool) *cobra.Command {
				return newBenchCmd(s, streams, func(*benchOptions) error { *ran = true; return nil })
			})
		})
	}
}

func TestVoicesParsesItsCommandLine(t *testing.T) {
	// parse runs argv with every subcommand of voices replaced, and returns the options the one run got.
	parse := func(t *testing.T, argv ...string) any {
		t.Helper()
		var got any
		code, errOut := parseWith(t, IO{}, argv, func(s *settings, streams IO) *cobra.Command {
			return newVoicesCmd(s, streams, recordVoices(&got))
		})
		if code != ExitOK || got == nil {
			t.Fatalf("%q: exit %d, stderr %q", argv, code, errOut)
		}
		return got
	}
	t.Run("subcommands", func(t *testing.T) {
		dir := isolate(t)
		env := filepath.Join(dir, "voices")
		for _, tt := range []struct {
			argv []string
			want any
		}{
			{[]string{"voices", "list"}, &voicesListOptions{catalog: voices.DefaultIndex, dir: env}},
			{[]string{"voices", "list", "--available", "--catalog", "m/voices.json", "--json"},
				&voicesListOptions{available: true, catalog: "m/voices.json", asJSON: true, dir: env}},
			{[]string{"voices", "--json", "info", "en_GB-alan-medium"}, &voicesInfoOptions{name: "en_GB-alan-medium", asJSON: true, dir: env}},
			{[]string{"voices", "add", "x/v.onnx", "--replace"}, &voicesAddOptions{path: "x/v.onnx", replace: true, dir: env}},
			{[]string{"voices", "download", "a", "b", "--catalog", "c.json", "--json"}, &voicesDownloadOptions{names: []string{"a", "b"},
				catalog: "c.json", asJSON: true, dir: env}},
		} {
			got := parse(t, tt.argv...)
			if d, ok := got.(*voicesDownloadOptions); ok { // where it writes is the command's streams
				d.out, d.errOut = nil, nil
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("%q: options %+v, want %+v", tt.argv, got, tt.want)
			}
		}
	})
	t.Run("settings: the voices folder from the flag, the environment, the config file", func(t *testing.T) {
		dir := isolate(t)
		writeConfig(t, dir, "voices_dir: from-config\n")
		if o := parse(t, "voices", "info", "x", "--voices-dir", "from-flag").(*voicesInfoOptions); o.dir != "from-flag" {
			t.Errorf("--voices-dir from-flag: dir %q", o.dir)
		}
		if o := parse(t, "voices", "add", "x.onnx").(*voicesAddOptions); o.dir != filepath.Join(dir, "voices") {
			t.Errorf("TTSGEN_VOICES_DIR: dir %q", o.dir)
		}
		t.Setenv("TTSGEN_VOICES_DIR", "")
		if o := parse(t, "voices", "download", "x").(*voicesDownloadOptions); o.dir != "from-config" {
			t.Errorf("voices_dir in the config file: dir %q", o.dir)
		}
		writeConfig(t, dir, "voices_dir: ~/my voices\n") // a leading ~ is the home folder, as in a shell
		home, _ := os.UserHomeDir()
		if o := parse(t, "voices", "add", "x.onnx").(*voicesAddOptions); o.dir != filepath.Join(home, "my voices") {
			t.Errorf("voices_dir: ~/my voices: dir %q", o.dir)
		}
	})
	for _, tt := range []struct {
		argv []string
		want string
	}{
		{[]string{"voices", "info"}, "accepts 1 arg(s)"},
		{[]string{"voices", "add", "a.onnx", "b.onnx"}, "accepts 1 arg(s)"},
		{[]string{"voices", "list", "extra"}, "unknown command"},
		{[]string{"voices", "download"}, "name at least one voice"},
		{[]string{"voices", "lst"}, `did you mean "list"?`},
		{[]string{"voices", "add", "--replace=maybe", "a.onnx"}, `invalid argument "maybe"`},
	} {
		t.Run(strings.Join(tt.argv, " "), func(t *testing.T) {
			isolate(t)
			wantUsageError(t, tt.argv, tt.want, func(s *settings, streams IO, ran *bool) *cobra.Command {
				return newVoicesCmd(s, streams, voicesRunners{
					list:     func(*voicesListOptions) error { *ran = true; return nil },
					info:     func(*voicesInfoOptions) error { *ran = true; return nil },
					add:      func(*voicesAddOptions) error { *ran = true; return nil },
					download: func(*voicesDownloadOptions) error { *ran = true; return nil },
				})
			})
		})
	}
}

// recordVoices replaces every subcommand of voices with one that keeps its options in got.
func recordVoices(got *any) voicesRunners {
	return voicesRunners{
		list:     func(o *voicesListOptions) error { *got = o; return nil },
		info:     func(o *voicesInfoOptions) error { *got = o; return nil },
		add:      func(o *voicesAddOptions) error { *got = o; return nil },
		download: func(o *voicesDownloadOptions) error { *got = o; return nil },
	}
}
