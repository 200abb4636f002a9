package cmd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/ttsgen/ttsgen/internal/manifest"
	"github.com/ttsgen/ttsgen/internal/pipeline"
	"github.com/ttsgen/ttsgen/internal/plural"
	"github.com/ttsgen/ttsgen/internal/results"
	"github.com/ttsgen/ttsgen/internal/shard"
	"github.com/ttsgen/ttsgen/internal/timestamps"
	"github.com/ttsgen/ttsgen/internal/voices"
)

type batchOptions struct {
	outDir     string
	force      bool
	jobs       int
	timestamps string
	voice      voiceFlags
	audio      audioFlags
	shard      string // --shard K/N
	shardCount int    // --shard-count N, for Kubernetes' JOB_COMPLETION_INDEX
	getenv     func(string) string
}

// newBatchCmd builds the command; runF, when set, replaces runBatch (tests check the parsed options and inputs).
func newBatchCmd(s *settings, streams IO, runF func(*batchOptions, []string) error) *cobra.Command {
	var o batchOptions
	cmd := &cobra.Command{
		Use:   "batch INPUT... -o DIR",
		Short: "Speak manifests, text files and folders of text files into audio files",
		Long: `Speak every item of every INPUT through one shared engine, writing DIR/<id>.wav (or .flac, .opus, ...
with --format) and DIR/results.jsonl.

An INPUT is:
  - a JSONL manifest (.jsonl, .json or .ndjson): one JSON object per line,
      {"id": "intro", "text": "Welcome!", "out": "part1/intro.wav", "format": "wav", "voice": "en_US-ttsgen-medium",
       "speaker": 0, "length_scale": 1.0, "noise_scale": 0.667, "noise_w": 0.8}
    where only "text" is required: "id" defaults to the manifest's file name without its extension and the line
    number ("prompts-3" for line 3 of prompts.jsonl), "out" to <id>.wav inside DIR (<id>.flac etc. in another
    format; an item's format is its "format", else its "out"'s extension, else --format), and a relative "voice"
    path is taken from the manifest's folder;
  - - (standard input), a FIFO or <(...): a JSONL manifest read as it comes (generate | ttsgen batch - -o out/);
    default ids start with "stdin" for standard input, else with the path's file name: "63-1" for line 1 of
    <(...) read as /dev/fd/63, a number the shell may change, so give such items their own "id";
  - a .txt file: one WAV for the whole document, named after the file;
  - a folder: each .txt file in it (not in subfolders).
Manifests and .txt files are read as UTF-8 (a byte-order mark is skipped), or as UTF-16 where they start with a
byte-order mark (Windows Notepad's "Unicode"); a .txt file that is neither (Windows-1252, a binary file) gets an
error row naming its line.

results.jsonl gets one row per item: {"id", "line", "source", "out", "status": "ok"|"error", "error",
"retry_error", "sentences", "audio_seconds", "settings", "format", "bytes", "timestamps_out", "shard", "finished"}
(bytes: the encoded size; timestamps_out: the --timestamps file beside out; settings.text_sha256: the first 128
bits of the SHA-256 of the item's text, in hex, not a whole SHA-256; error: what was being done to what, then why,
as in "choosing its speaker: ..." or "writing out/a.wav: ..."). A bad line (invalid JSON, missing
text, unknown voice, an "out" outside DIR, an audio file that an earlier item of the run writes, ...) gets an
error row naming its line, is reported on stderr as an error (even with -q), and every good item is still spoken;
the exit status is then 1.

Nothing is lost and nothing is overwritten without a word:
  - Outputs are atomic (a temporary file, renamed when complete). A batch removes only the temporary files of
    processes that are gone, never those of another batch running now, even into a subfolder or from another
    machine (shards into a shared folder).
  - Re-running the same command resumes, like make: an item is skipped when its audio (of the size its row
    records, and its --timestamps file) and "ok" row exist and the row's settings (the text, the voice and its
    files, speaker, scales, sentence silence, normalisation, format, sample rate, timestamps) are those asked for
    now; otherwise it is done again.
    --force redoes every item, and every row stays until its item is redone, so a forced run that stops early
    loses nothing.
  - A failed retry of an item that has a good WAV keeps that WAV and its "ok" row, which records the failure in
    "retry_error" (the run exits 1); an error row stands only where there is no good WAV.
  - An item whose id another input recorded in DIR with other text or settings, or whose "out" (or --timestamps
    file) another item recorded, is refused with an error (and no row) instead of overwriting it: give it its own
    "id" or "out", or write into another folder (--force replaces another input's item of the same id).
    Standard input and <(...) are another input in every run: an item of theirs that an earlier run recorded is
    skipped if its line is the same, and refused if it differs.
  - Lines of results.jsonl that ttsgen cannot read as its rows are kept byte for byte, with a warning.
Ctrl-C (or SIGTERM) stops cleanly at any point, a wait for more input included (exit status 130); run the command
again to finish.

Many machines on one corpus: --shard K/N makes only the items whose id hashes to shard K of N (the same item always
lands in the same shard, whatever the order of the inputs; an item without an id by its input and line), and the
others are passed over before any work. Without --shard, the shard comes from the scheduler: a Kubernetes Indexed
Job's JOB_COMPLETION_INDEX (0-based) with --shard-count N (or TTSGEN_SHARD_COUNT), or a Slurm job array's
SLURM_ARRAY_TASK_ID, SLURM_ARRAY_TASK_COUNT, _MIN, _MAX and _STEP (an evenly spaced --array=A-B or A-B:S). The
shards of a job write into one DIR side by side, each into DIR/results.K-of-N.jsonl (rows record "shard": "K/N"),
and each resumes on its own; items that DIR's results.jsonl records as done are not done again. "ttsgen results
merge DIR" then folds the shards' rows into results.jsonl; deploy/ has a Kubernetes Job, a Slurm script and a GNU
parallel script. A DIR holds the shards of
one count: a shard is refused (exit status 2) where results files of shards of another count are, since the counts
split the items differently; merge those first (ttsgen results merge DIR --remove-shards), write into another
folder, or give --force to start over (it removes the other count's results files, once none of their shards runs).
`,
		Example: `  ttsgen batch prompts.jsonl -o out/
  generate-prompts | ttsgen batch - -o out/
  ttsgen batch book.txt chapters/ -o audiobook/ --voice en_GB-alan-medium --sentence-silence 0.4
  ttsgen batch prompts.jsonl -o out/ --format flac
  ttsgen batch chapters/ -o audiobook/ --format opus --bitrate 24 --timestamps vtt
  ttsgen batch prompts.jsonl -o out/ --force --device webgpu
  ttsgen batch prompts.jsonl -o /shared/out/ --shard 2/4      # one of 4 workers, then: ttsgen results merge /shared/out/`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageErrorf("batch needs at least one INPUT (a .jsonl manifest, a .txt file or a folder)")
			}
			if o.outDir == "" {
				return usageErrorf("-o DIR is required: the folder for the WAV files and results.jsonl")
			}
			if o.jobs < 0 {
				return usageErrorf("--jobs %d: want a positive number of items, or 0 for the default", o.jobs)
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(&o, args)
			}
			return runBatch(cmd.Context(), s, streams, &o, args)
		},
	}
	cmd.Flags().StringVarP(&o.outDir, "output", "o", "", "output folder (created if needed)")
	cmd.Flags().BoolVar(&o.force, "force", false, "redo every item, even those a previous run finished with the same settings")
	cmd.Flags().IntVar(&o.jobs, "jobs", 0, fmt.Sprintf(
		"items in flight at once (default: as many as the engine's queue holds sentences, at least %d)",
		pipeline.MinItemConcurrency))
	cmd.Flags().StringVar(&o.shard, "shard", "", "make only shard K of N of the items: "+shard.Forms+
		" (default: from JOB_COMPLETION_INDEX or SLURM_ARRAY_TASK_ID, if set)")
	cmd.Flags().IntVar(&o.shardCount, "shard-count", 0, "the number of shards, for a Kubernetes Indexed Job's "+
		"JOB_COMPLETION_INDEX (the Job's completions)")
	o.voice.add(cmd.Flags())
	o.audio.add(cmd.Flags(), "wav, or what an item's \"format\" or \"out\" says")
	cmd.Flags().StringVar(&o.timestamps, "timestamps", "", "also write each item's word times in `FORMAT` (json, srt or vtt) beside its audio file, named after it (a.wav: a.json); "+
		"two items whose audio files differ only by their extension are refused before any work (exit status 2), "+
		"and an item whose timestamps file DIR records for another item is refused as one whose \"out\" is (exit status 1)")
	return cmd
}

// batchShard is the shard a run makes, and where it came from (for the progress line and the summary): --shard,
// else what a scheduler put in the environment (shard.FromEnv); the zero Spec for no sharding. Every mistake is a
// usage error.
func batchShard(o *batchOptions) (s shard.Spec, from string, err error) {
	if o.shard != "" {
		if s, err = shard.Parse(o.shard); err != nil {
			return shard.Spec{}, "", usageError{fmt.Errorf("--shard: %w", err)}
		}
		if o.shardCount != 0 && o.shardCount != s.Count {
			return shard.Spec{}, "", usageErrorf("--shard %s and --shard-count %d disagree about the number of shards", o.shard, o.shardCount)
		}
		return s, "--shard", nil
	}
	getenv := o.getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	if s, from, err = shard.FromEnv(getenv, o.shardCount); err != nil {
		return shard.Spec{}, "", usageError{err}
	}
	if !s.Enabled() && o.shardCount != 0 {
		return shard.Spec{}, "", usageErrorf("--shard-count %d (or TTSGEN_SHARD_COUNT) is given but JOB_COMPLETION_INDEX is not set: "+
			"run in a Kubernetes Indexed Job, or give --shard K/N", o.shardCount)
	}
	return s, from, nil
}

// shardLabel names the shard a run makes for its progress line and summary: "shard 2/4 (JOB_COMPLETION_INDEX=1)".
func shardLabel(s shard.Spec, from string) string {
	if !s.Enabled() {
		return ""
	}
	return fmt.Sprintf("shard %s (%s)", s, from)
}

func runBatch(ctx context.Context, s *settings, streams IO, o *batchOptions, inputs []string) error {
	defaults, err := o.voice.defaults()
	if err != nil {
		return err
	}
	choice, err := o.audio.parse()
	if err != nil {
		return err
	}
	defaults.Format, defaults.Encoding, defaults.Level = choice.format, choice.encoding, choice.level
	if o.timestamps != "" {
		if defaults.Timestamps, err = timestamps.ParseFormat(o.timestamps); err != nil {
			return usageErrorf("--timestamps: %w", err)
		}
	}
	spec, from, err := batchShard(o)
	if err != nil {
		return err
	}
	if err := manifest.CheckInputs(inputs); err != nil { // a mistyped input is said before anything is created
		return usageError{err}
	}
	if info, err := os.Stat(o.outDir); err == nil && !info.IsDir() {
		return usageErrorf("-o %s is a file: batch writes its audio and results.jsonl into a folder", o.outDir)
	}
	var planned *int
	if defaults.Timestamps != "" { // its names are checked before the folder is opened; the count comes with them
		n, err := pipeline.FirstPass(ctx, inputs, spec, defaults.Timestamps)
		if errors.Is(err, pipeline.ErrTimestampsNames) {
			return usageErrorf("--timestamps %s: %w", defaults.Timestamps, err)
		}
		if err != nil {
			return err
		}
		planned = &n
	}
	// --voice is found and checked here, once: the runtime is given it rather than asked to find it again.
	var voice *voices.Voice
	if defaults.Voice != "" { // a wrong --voice is a usage error, said before the output folder is touched
		if voice, err = findChecked(voices.Catalog{Dir: s.voicesDir()}, defaults.Voice); err != nil {
			return usageError{err}
		}
		if defaults.Timestamps != "" { // items that name another voice are checked as they come
			if err := checkTimestampsVoice(voice); err != nil {
				return err
			}
		}
	}
	con := newConsole(streams, s.quiet())
	out, err := results.OpenShard(o.outDir, spec, o.force)
	if errors.Is(err, results.ErrShardCounts) {
		return usageError{err} // said before anything is started, like a wrong -o
	}
	if err != nil {
		return fmt.Errorf("opening output folder: %w", err)
	}
	defer out.Close()
	for _, w := range out.Warnings() { // e.g. temp files of a killed run removed, a line of results.jsonl kept
		con.Warnf("%s", w)
	}
	rt, err := s.newRuntime(con, !o.voice.noNormalize)
	if err != nil {
		return err
	}
	defer rt.close()
	if voice != nil {
		rt.remember(defaults.Voice, voice)
	}

	label := shardLabel(spec, from)
	prog := con.startLabelledProgress(label)
	b := &pipeline.Batch{
		Engine:        rt.engine,
		Frontend:      rt.frontend,
		FindVoice:     rt.findVoice,
		LoadVoice:     rt.loadVoice,
		Stdin:         streams.In,
		Out:           out,
		Defaults:      defaults,
		Progress:      prog,
		Warnf:         con.Warnf,
		Errorf:        con.Errorf,
		Concurrency:   o.jobs,
		Shard:         spec,
		HalfPrecision: rt.engine.HalfPrecision(),
		Planned:       planned,
	}
	start := time.Now()
	sum, runErr := b.Run(ctx, inputs)
	prog.finish()
	if cerr := out.Close(); cerr != nil && runErr == nil {
		runErr = cerr
	}
	wall := time.Since(start).Seconds()
	if label != "" {
		label += ": "
	}
	con.Printf("%s%s: %d ok, %d failed, %d skipped (already done); %s, %.1f s of audio in %.1f s (%.1fx real time); results in %s\n",
		label, plural.Count(sum.Items, "item"), sum.OK, sum.Failed, sum.Skipped, plural.Count(sum.Sentences, "sentence"),
		sum.AudioSeconds, wall, ratio(sum.AudioSeconds, wall), out.Path())
	if runErr != nil {
		return runErr // an interruption is reported by Execute, with its own exit status
	}
	if sum.Failed > 0 {
		return exitError{code: ExitFailure, err: fmt.Errorf("%d of %s failed (see stderr, and the error and retry_error rows in %s)",
			sum.Failed, plural.Count(sum.Items, "item"), out.Path())}
	}
	return nil
}

func ratio(a, b float64) float64 {
	if b <= 0 {
		return 0
	}
	return a / b
}
