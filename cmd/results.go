package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ttsgen/ttsgen/internal/pipeline"
	"github.com/ttsgen/ttsgen/internal/plural"
	"github.com/ttsgen/ttsgen/internal/results"
)

// resultsOptions is everything `ttsgen results` and `ttsgen results merge` need.
type resultsOptions struct {
	dir    string
	inputs []string // nil: not given, missing items are not counted
	json   bool
	quiet  bool
	merge  bool // fold the rows into DIR/results.jsonl (results merge)
	// removeShards: after the merge, remove the shard files it folded in.
	removeShards bool
	streams      IO

	items     func(ctx context.Context, inputs []string, stdin io.Reader) ([]results.Row, error)
	summarize func(dir string, expected []results.Row) (results.Report, error)
	mergeDir  func(dir string, opt results.MergeOptions) (results.Report, error)
}

func newResultsCmd(s *settings, streams IO) *cobra.Command {
	o := &resultsOptions{streams: streams, items: pipeline.Items, summarize: results.Summarize, mergeDir: results.Merge}
	cmd := &cobra.Command{
		Use:   "results DIR [--inputs INPUT...]",
		Short: "Summarise a batch's results: items ok, failed and missing, audio hours, per shard",
		Long: `Summarise what DIR's results files say: DIR/results.jsonl and the shards' DIR/results.K-of-N.jsonl, the latest
row of each item counting (rows record when they finished). Items ok and failed, hours of audio, and the same per
shard, a shard that has not written its results file yet included. Items that have no row at all are counted only
when the inputs are given (--inputs, the batch's INPUTs): then every item of theirs without a row is missing, and
only their items count (another input's rows, or those of lines since removed, are said in a warning). A line that
once failed to parse and has been fixed counts as the item it now is.
Nothing is changed or locked: it may run while the batch does. A folder without any results file is no batch's
output folder (every batch, and every shard, creates its results file as it starts): nothing to report, a usage
error as for a folder that is not there.

Exit status: 0 every item ok, 1 some failed or are missing (or a shard has not run), 2 usage error (DIR not there,
or without results files).`,
		Example: `  ttsgen results out/
  ttsgen results out/ --inputs prompts.jsonl --json
  ttsgen results merge out/ --inputs prompts.jsonl`,
		Args: resultsArgs(o),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.quiet = s.quiet()
			return runResults(cmd.Context(), o)
		},
	}
	cmd.PersistentFlags().BoolVar(&o.json, "json", false, "print the report as JSON")
	cmd.PersistentFlags().StringArrayVar(&o.inputs, "inputs", nil, "the batch's inputs, to count the items that have no row (more INPUTs may follow DIR)")

	merge := &cobra.Command{
		Use:   "merge DIR [--inputs INPUT...]",
		Short: "Fold the rows of every shard of a batch into DIR/results.jsonl, one per item",
		Long: `Fold every results file of DIR (the shards' results.K-of-N.jsonl and results.jsonl) into one DIR/results.jsonl with
one row per item: its latest (by "finished", so a shard run again, or a run without shards after the shards,
counts), sorted by input and line. Lines of results.jsonl that are not rows are kept; lines of a shard's file that
are not rows (a last line cut off when its writer was killed) are never merged: they are reported and stay in that
file. results.jsonl is replaced atomically, and merging again changes nothing. Then it reports as "ttsgen results"
does: per shard, what is ok, failed and (with --inputs) missing.

The merge waits for nothing: it is refused while a batch or a shard runs in DIR (exit status 1), and where DIR holds
results files of shards of different counts (results.1-of-3.jsonl beside results.1-of-4.jsonl), which split the
items differently, or none at all (exit status 2); a refused merge writes nothing and leaves no lock file behind.
The shard files stay: each is its shard's own record, which a shard run again appends to (and a shard also reads
results.jsonl, so it never redoes what is merged). --remove-shards removes them after a successful merge, with their
lock files and those of shards whose results file is gone (a refused shard's, say), unless a process holds one; a
shard file that holds a line that is not a row stays.

Exit status: 0 every item ok, 1 some failed or are missing (or a shard has not run), 2 usage error, or DIR holds
shards of different counts (or no results files at all).`,
		Example: `  ttsgen results merge out/
  ttsgen results merge out/ --inputs prompts.jsonl --remove-shards`,
		Args: resultsArgs(o),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.quiet, o.merge = s.quiet(), true
			return runResults(cmd.Context(), o)
		},
	}
	merge.Flags().BoolVar(&o.removeShards, "remove-shards", false, "remove the shards' results files once they are merged")
	cmd.AddCommand(merge)
	return cmd
}

// resultsArgs takes DIR and, after --inputs, more inputs, and checks that they exist before any work.
func resultsArgs(o *resultsOptions) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) == 0 {
			return usageErrorf("%s needs DIR, a batch's output folder", cmd.CommandPath())
		}
		o.dir = args[0]
		if len(args) > 1 {
			if !cmd.Flags().Changed("inputs") {
				return usageErrorf("one DIR at a time; give the batch's inputs after --inputs")
			}
			o.inputs = append(o.inputs, args[1:]...)
		}
		if info, err := os.Stat(o.dir); err != nil || !info.IsDir() {
			return usageErrorf("%s is not a batch's output folder: %v", o.dir, statProblem(err))
		}
		for _, in := range o.inputs {
			if in == "-" {
				continue
			}
			if _, err := os.Stat(in); err != nil {
				return usageErrorf("input %s: %v", in, statProblem(err))
			}
		}
		return nil
	}
}

// statProblem is what os.Stat found wrong, without the path the message already names; nil err: not a folder.
func statProblem(err error) error {
	var pe *os.PathError
	switch {
	case err == nil:
		return errors.New("not a folder")
	case errors.As(err, &pe):
		return pe.Err
	}
	return err
}

func runResults(ctx context.Context, o *resultsOptions) error {
	var expected []results.Row
	if o.inputs != nil {
		var err error
		if expected, err = o.items(ctx, o.inputs, o.streams.In); err != nil {
			return err
		}
		if expected == nil {
			expected = []results.Row{} // the inputs are known, and have no items
		}
	}
	var rep results.Report
	var err error
	if o.merge {
		rep, err = o.mergeDir(o.dir, results.MergeOptions{Expected: expected, RemoveShards: o.removeShards})
	} else {
		rep, err = o.summarize(o.dir, expected)
	}
	if errors.Is(err, results.ErrShardCounts) || errors.Is(err, results.ErrNoResults) {
		return usageError{err} // a folder no batch has written to is not an output folder, as one not there
	}
	if err != nil {
		return err
	}
	con := newConsole(o.streams, o.quiet)
	for _, w := range rep.Warnings {
		con.Warnf("%s", w)
	}
	if o.json {
		if err := writeJSON(o.streams.Out, rep); err != nil {
			return err
		}
	} else {
		writeReport(o.streams.Out, rep, o.merge)
	}
	if !rep.Complete() {
		return exitError{code: ExitFailure, err: errors.New(incomplete(rep))}
	}
	return nil
}

// writeReport prints rep for people: the totals, then a line per shard.
func writeReport(w io.Writer, rep results.Report, merged bool) {
	fmt.Fprintf(w, "%s: %s\n", rep.Dir, tallyLine(rep.Tally, rep.InputsChecked))
	for _, s := range rep.PerShard {
		if !s.Ran {
			fmt.Fprintf(w, "  shard %s: has not run (no %s)", s.Shard, s.File)
			if rep.InputsChecked {
				fmt.Fprintf(w, "; %s missing", plural.Count(s.Missing, "item"))
			}
			fmt.Fprintln(w)
			continue
		}
		fmt.Fprintf(w, "  shard %s: %s\n", s.Shard, tallyLine(s.Tally, rep.InputsChecked))
	}
	if !rep.InputsChecked {
		fmt.Fprintln(w, "(items without any row are counted with --inputs INPUT...)")
	}
	if merged {
		fmt.Fprintf(w, "merged into %s", results.Path(rep.Dir))
		if len(rep.Removed) > 0 {
			fmt.Fprintf(w, "; removed %s", strings.Join(rep.Removed, ", "))
		}
		fmt.Fprintln(w)
	}
}

func tallyLine(t results.Tally, inputsChecked bool) string {
	line := fmt.Sprintf("%s: %d ok, %d failed", plural.Count(t.Items, "item"), t.OK, t.Error)
	if inputsChecked {
		line += fmt.Sprintf(", %d missing", t.Missing)
	}
	if t.RetryErrors > 0 {
		line += fmt.Sprintf(" (%d ok with a failed retry)", t.RetryErrors)
	}
	return line + fmt.Sprintf("; %.2f h of audio", t.AudioHours)
}

// incomplete says what keeps rep from being complete, for the exit status.
func incomplete(rep results.Report) string {
	var parts []string
	if rep.Error > 0 {
		parts = append(parts, plural.Count(rep.Error, "item")+" failed")
	}
	if rep.Missing > 0 {
		parts = append(parts, plural.Count(rep.Missing, "item")+" missing")
	}
	var notRun []string
	for _, s := range rep.PerShard {
		if !s.Ran {
			notRun = append(notRun, s.Shard)
		}
	}
	if len(notRun) > 0 {
		parts = append(parts, fmt.Sprintf("%s not run (%s)", plural.Noun(len(notRun), "shard"), strings.Join(notRun, ", ")))
	}
	return rep.Dir + ": " + strings.Join(parts, ", ")
}
