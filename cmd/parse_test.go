package cmd

import (
	"bytes"
	"context"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
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
