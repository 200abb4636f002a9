// Package results writes a batch's outputs atomically and remembers which
// items are done, so that an interrupted batch can resume where it stopped
// and a re-run redoes exactly what changed.
//
// An output directory holds the outputs, results.jsonl (one JSON Row per
// item) and a lock file, .ttsgen-lock. Shards of one job (OpenShard) write
// into one directory side by side, each into its own results file,
// results.K-of-N.jsonl, under its own lock, .ttsgen-lock.K-of-N; Merge folds
// their rows into results.jsonl and Summarize counts them. The guarantees:
//
//   - No torn outputs. WriteFile writes into a temporary file in the target's
//     folder (".ttsgen-tmp-<pid>-*"), fsyncs it, renames it over the target
//     and fsyncs the folder. A crash leaves either the old file, the new file,
//     or a stray temp file, which the next Open deletes once its writer is
//     gone; the temp files of a live process (another batch writing into a
//     subfolder, say) are never touched. On failure (a full disk included)
//     the temp file is removed and the error names the output.
//   - No row is lost. Append writes each row as one line and fsyncs it
//     before returning; a failed write is cut off again, so the next row
//     starts on a line of its own. A row is only ever replaced by a later row
//     for the same item: Open with force keeps every row, and a forced run
//     that is killed leaves the old rows of the items it had not redone yet.
//     Open and Close compact the file to one row per item; lines that are not
//     rows ttsgen can read (hand-written, another tool's, cut off by a
//     crash) are kept byte for byte, in place, with a warning.
//   - The folder says one thing. A failed retry of an item whose output is
//     good keeps that output and its "ok" row, noting the failure in the
//     row's retry_error (KeepGood); an error row only stands where there is
//     no good output.
//   - Resume is like make. Each "ok" row records the Settings that made its
//     output; Check reports an item as done only if its latest row is "ok",
//     with the same out path and settings, and its output still exists and is
//     not empty. Anything else is redone; with force, everything is.
//   - No silent overwrite. Check refuses an item whose id another input
//     recorded with other settings (unless force), and one whose out path,
//     or timestamps file (Row.TimestampsOut), an item of another id recorded
//     as either of its own.
//   - Outputs stay inside the directory. Resolve refuses absolute paths, ".."
//     and symlinks (in any existing component) that lead outside it. This
//     protects against mistakes in a manifest, not against someone racing the
//     batch by swapping folders for symlinks while it runs.
//   - One batch per directory, or one per shard. Open takes an exclusive
//     lock (flock) on .ttsgen-lock, so a second batch in the same directory
//     fails at once instead of interleaving rows; a shard takes it shared
//     (shards of a job run side by side, never beside a batch without
//     shards or a merge) and its own .ttsgen-lock.K-of-N exclusively. The
//     files stay; the locks die with the process, so a killed batch leaves
//     no stale lock. A refused run (or merge) takes away the lock files it
//     created, and a merge with RemoveShards those of the shards whose
//     results file is gone; a lock file is only removed by a process that
//     holds it exclusively, and one who locked a file since removed opens
//     the new one again, so no lock a live process holds is ever lost.
//   - A shard does its share once. Each shard owns the items whose
//     Row.ShardKey hashes to it (shard.Spec.Owns), takes as done what
//     results.jsonl records of them (a run without shards, a merge:
//     read-only), and resumes from its own file like a run without shards.
//   - One shard count per folder. Shards of different counts split the items
//     differently: a shard is refused where another count's results files
//     are, and so is a merge of a folder that holds two counts
//     (ErrShardCounts). A shard opened with force starts over instead: it
//     removes the other count's files once none of their shards runs.
//   - Merging loses nothing and settles. Every row records when it was made
//     (Row.Finished): across files the latest row of an item wins. Merge
//     writes results.jsonl atomically, keeps its lines that are not rows,
//     never merges a shard file's unreadable line (a last line cut off by a
//     killed writer included: it is reported, and stays in its file), and a
//     second merge gives the same bytes.
//
// Rows without an id (manifest lines too broken to have one) are kept per
// source and line instead.
//
// A Dir is safe for use by several goroutines.
package results
