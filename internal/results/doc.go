// Package results writes a batch's outputs atomically and remembers which
// items are done, so that an interrupted batch can resume where it stopped.
//
// An output directory holds the WAV files, results.jsonl (one JSON Row per
// finished item) and a lock file, .ttsgen-lock. The guarantees:
//
//   - No torn outputs. WriteFile writes into a temporary file in the target's
//     folder (named ".ttsgen-tmp-*"), fsyncs it, renames it over the target
//     and fsyncs the folder. A crash leaves either the old file, the new file,
//     or a stray temp file, which the next Open deletes. On failure (a full
//     disk included) the temp file is removed and the error names the output.
//   - No torn or duplicated rows. Append writes each row as one line and
//     fsyncs it before returning; a failed write is cut off again, so the
//     next row starts on a line of its own. When results.jsonl is read, the
//     last row for an id wins, and a torn final line (a crash mid-write) is
//     dropped. Open (unless force) and Close compact the file, rewriting it
//     atomically to one row per id whenever it holds superseded or broken
//     rows, so after a resume the file itself never shows two rows for one id.
//   - Resume is conservative. Done reports an item as finished only if its
//     latest row is "ok", carries the same hash (the item was not edited) and
//     its WAV still exists and is not empty. Anything else is redone.
//   - Outputs stay inside the directory. Resolve refuses absolute paths, ".."
//     and symlinks (in any existing component) that lead outside it. This
//     protects against mistakes in a manifest, not against someone racing the
//     batch by swapping folders for symlinks while it runs.
//   - One batch per directory. Open takes an exclusive lock (flock) on
//     .ttsgen-lock, so a second batch in the same directory fails at once
//     instead of interleaving rows and deleting the other's temp files. The
//     file stays; the lock dies with the process, so a killed batch leaves
//     no stale lock.
//
// Rows without an id (manifest lines too broken to have one) are kept per
// source and line instead.
//
// A Dir is safe for use by several goroutines.
package results
