// Package cmd is ttsgen's command line: it reads flags and settings and wires the pipeline's stages together.
package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
	"golang.org/x/term"
)

// Exit statuses, named so scripts can rely on them.
const (
	ExitOK          = 0
	ExitFailure     = 1   // an error, or some items of a batch failed
	ExitUsage       = 2   // bad flags or arguments
	ExitInterrupted = 130 // stopped by SIGINT/SIGTERM (128 + SIGINT), as shells report it
)

// usageError marks errors in how the command was called, so they exit with ExitUsage.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usageErrorf(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

// exitError carries a specific exit status for an error already reported (e.g. a batch with failed items).
type exitError struct {
	code int
	err  error
}

func (e exitError) Error() string { return e.err.Error() }
func (e exitError) Unwrap() error { return e.err }

// IO is where a command reads and writes, and whether each stream is a terminal (progress bars, prompts and the
// default output depend on it); tests replace it.
type IO struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer

	InTTY, OutTTY, ErrTTY bool
}

// SystemIO is the process's own standard streams.
func SystemIO() IO {
	tty := func(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }
	return IO{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr, InTTY: tty(os.Stdin), OutTTY: tty(os.Stdout), ErrTTY: tty(os.Stderr)}
}

// Execute runs ttsgen with os.Args and returns the process exit status. The first SIGINT/SIGTERM cancels the
// command's context (commands stop taking work, clean up and report); a second one exits at once.
func Execute() int {
	ctx, stop := context.WithCancelCause(context.Background())
	defer stop(nil)
	signals := make(chan os.Signal, 2)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
	go func() {
		sig := <-signals
		fmt.Fprintf(os.Stderr, "\nttsgen: %v: finishing up (press Ctrl-C again to quit at once)\n", sig)
		stop(errInterrupted)
		<-signals
		fmt.Fprintln(os.Stderr, "ttsgen: quitting now")
		os.Exit(ExitInterrupted)
	}()
	streams := SystemIO()
	root := NewRootCmd(streams)
	err := root.ExecuteContext(ctx)
	return exitCode(ctx, streams.ErrOut, err)
}

var errInterrupted = errors.New("interrupted")

func exitCode(ctx context.Context, errOut io.Writer, err error) int {
	if errors.Is(err, errDrained) {
		return ExitOK // a server stopped by a signal, as asked
	}
	if errors.Is(context.Cause(ctx), errInterrupted) {
		if err != nil && !errors.Is(err, context.Canceled) {
			fmt.Fprintln(errOut, "ttsgen:", err)
		}
		return ExitInterrupted
	}
	if err == nil {
		return ExitOK
	}
	var ee exitError
	if errors.As(err, &ee) {
		if ee.err != nil && ee.err.Error() != "" {
			fmt.Fprintln(errOut, "ttsgen:", ee.err)
		}
		return ee.code
	}
	fmt.Fprintln(errOut, "ttsgen:", err)
	var ue usageError
	if errors.As(err, &ue) {
		return ExitUsage
	}
	return ExitFailure
}

// NewRootCmd builds the whole command tree.
func NewRootCmd(streams IO) *cobra.Command {
	settings := newSettings()
	root := &cobra.Command{
		Use:   "ttsgen",
		Short: "Batch neural text-to-speech with Piper voices",
		Long: `ttsgen turns text into speech with Piper-format neural voices (X.onnx + X.onnx.json), from one
sentence to whole books. Every sentence of a job goes through one shared engine that batches work for the
device (CPU, or a GPU through WebGPU or CUDA), so a corpus finishes together.

A default English voice is built in, so the first command works with nothing downloaded.`,
		Example: `  ttsgen synth "Hello there." -o hello.wav
  echo "Read from standard input." | ttsgen synth -o - | aplay
  ttsgen batch book.txt chapters/ prompts.jsonl -o out/
  ttsgen voices add ~/Downloads/en_GB-alan-medium.onnx
  ttsgen phonemize --json 'Dr. Smith paid $5.'
  ttsgen bench --texts samples/bench.txt --compare sequential
  ttsgen serve --addr 127.0.0.1:8880   # OpenAI's /v1/audio/speech`,
		SilenceUsage:  true, // runtime errors are not usage errors: don't bury them under the help text
		SilenceErrors: true, // Execute prints errors once, with the right exit status
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			return settings.load(cmd)
		},
	}
	root.SetIn(streams.In)
	root.SetOut(streams.Out)
	root.SetErr(streams.ErrOut)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	settings.addPersistentFlags(root)

	root.AddCommand(
		newSynthCmd(settings, streams, nil),
		newBatchCmd(settings, streams, nil),
		newResultsCmd(settings, streams),
		newVoicesCmd(settings, streams, voicesRunners{}),
		newPhonemizeCmd(settings, streams, nil),
		newBenchCmd(settings, streams, nil),
		newServeCmd(settings, streams),
	)
	root.Version = versionLine()
	root.SetVersionTemplate("{{.Version}}\n")
	root.SetHelpTemplate(root.HelpTemplate() + exitStatusHelp)
	strictArgs(root)
	return root
}

const exitStatusHelp = `
Exit status: 0 all done; 1 a runtime error, or some items of a batch failed; 2 a usage error (unknown command or
flag, bad value, bad config file, an output folder of shards of another count); 130 interrupted (SIGINT/SIGTERM).
`

// strictArgs makes every argument error a usage error (exit status 2), and a command that only groups others
// (ttsgen voices) refuse an unknown subcommand with a suggestion instead of printing its help and exiting 0.
func strictArgs(c *cobra.Command) {
	for _, sub := range c.Commands() {
		strictArgs(sub)
	}
	if c.HasSubCommands() && c.Run == nil && c.RunE == nil {
		c.SuggestionsMinimumDistance = 2
		c.Args = func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return nil
			}
			msg := fmt.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath())
			if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
				msg += fmt.Sprintf("; did you mean %q?", s[0])
			}
			return usageErrorf("%s (see %s --help)", msg, cmd.CommandPath())
		}
		c.RunE = func(cmd *cobra.Command, args []string) error { return cmd.Help() }
		return
	}
	if c.Args == nil {
		return
	}
	check := c.Args
	c.Args = func(cmd *cobra.Command, args []string) error {
		if err := check(cmd, args); err != nil {
			return usageErrorf("%w (see %s --help)", err, cmd.CommandPath())
		}
		return nil
	}
}
