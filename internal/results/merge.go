package results

import (
	"bufio"
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/ttsgen/ttsgen/internal/atomicfile"
	"github.com/ttsgen/ttsgen/internal/plural"
	"github.com/ttsgen/ttsgen/internal/shard"
)

// Tally counts the items of a corpus, or of one shard of it, by what their latest row says.
type Tally struct {
	Items   int `json:"items"` // ok + error + missing
	OK      int `json:"ok"`
	Error   int `json:"error"`
	Missing int `json:"missing"` // items of the inputs without a row; counted only when the inputs are known
	// RetryErrors counts the ok items whose good output stays after a later attempt failed (Row.RetryError).
	RetryErrors  int     `json:"retry_errors"`
	AudioSeconds float64 `json:"audio_seconds"`
	AudioHours   float64 `json:"audio_hours"`
}

func (t *Tally) add(r Row) {
	t.Items++
	if r.Status != StatusOK {
		t.Error++
		return
	}
	t.OK++
	t.AudioSeconds += r.AudioSeconds
	t.AudioHours = t.AudioSeconds / 3600
	if r.RetryError != "" {
		t.RetryErrors++
	}
}

func (t *Tally) miss() { t.Items++; t.Missing++ }

// ShardTally is one shard's share of a corpus: the items it owns (shard.Spec.Owns).
type ShardTally struct {
	Shard string `json:"shard"` // "2/4"
	File  string `json:"file"`  // its results file's name
	Ran   bool   `json:"ran"`   // its results file exists: the shard has started at least once
	Tally
}

// Report is what an output folder's results files say: every item's latest row, counted in all and per shard.
type Report struct {
	Dir    string `json:"dir"`
	Shards int    `json:"shards"` // the shard count of the folder's shard files (0: no shards)
	// InputsChecked says that the inputs were read, so that Missing counts their items that have no row.
	InputsChecked bool `json:"inputs_checked"`
	Tally
	PerShard []ShardTally `json:"per_shard,omitempty"`
	// Removed lists the shard files a merge removed (MergeOptions.RemoveShards).
	Removed  []string `json:"removed,omitempty"`
	Warnings []string `json:"warnings"`
}

// Complete reports whether every item is done: none failed, none missing, and, where the inputs are not known to
// count the missing ones, every shard has run.
func (r Report) Complete() bool {
	if r.Error > 0 || r.Missing > 0 {
		return false
	}
	if r.InputsChecked {
		return true // an item of a shard that has not run is missing
	}
	for _, s := range r.PerShard {
		if !s.Ran {
			return false
		}
	}
	return true
}

// latestRow is an item's latest row across a folder's results files.
type latestRow struct {
	row  Row    // Settings is nil
	line []byte // the row as it stands in its file, without surrounding space
}

// folder is what a folder's results files hold, read once.
type folder struct {
	name, abs string
	merging   bool // read for Merge, which says so of the lines it leaves out
	files     []resultsFile
	rows      map[string]latestRow
	kept      [][]byte // lines of results.jsonl that are not rows, in order, each ending with "\n"
	// unmergeable counts, per shard file, the lines that are not rows: they stay in that file.
	unmergeable map[string]int
	warnings    []string
}

// readFolder reads every results file of dir: the latest row per item wins, by Row.Finished, and between rows of
// the same time, the later file (results.jsonl, then the shard files by count and index) and the later line.
func readFolder(dir string, merging bool) (*folder, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("finding output directory %s: %w", dir, err)
	}
	files, err := resultsFiles(abs)
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, noResultsError{dir}
	}
	f := &folder{name: dir, abs: abs, merging: merging, files: files, rows: map[string]latestRow{}, unmergeable: map[string]int{}}
	for _, file := range files {
		if err := f.read(file); err != nil {
			return nil, err
		}
	}
	f.forgetFixedLines()
	return f, nil
}

// forgetFixedLines drops the rows of lines that could not be read as items (keyed by input and line) where a later
// row holds the item that line is now: it was fixed, and its item made since. (A Dir does the same within its own
// file; here the two rows may be in two shards' files, since a line's shard depends on whether it has an id.)
func (f *folder) forgetFixedLines() {
	for _, r := range f.rows {
		if at := r.row.lineKey(); at != "" {
			if old, had := f.rows[at]; had && old.row.Finished.Before(r.row.Finished) {
				delete(f.rows, at)
			}
		}
	}
}

func (f *folder) read(file resultsFile) error {
	show := filepath.Join(f.name, file.name)
	target := !file.spec.Enabled() // results.jsonl, the merge's target: its lines that are not rows stay in it
	unreadable := 0
	err := eachLine(filepath.Join(f.abs, file.name), show, func(n int, line []byte) {
		r, _, err := parseRow(line)
		if err == nil {
			k := r.key()
			if old, had := f.rows[k]; !had || !r.Finished.Before(old.row.Finished) {
				f.rows[k] = latestRow{row: r, line: bytes.TrimSpace(line)}
			}
			return
		}
		blank := len(bytes.TrimSpace(line)) == 0
		switch {
		case target:
			f.kept = append(f.kept, withNewline(line))
		case !blank:
			f.unmergeable[file.name]++
		}
		if blank {
			return
		}
		if unreadable++; unreadable > maxLineWarnings {
			return
		}
		what := "a line that is not a ttsgen row"
		switch {
		case !f.merging:
			what = "passed over " + what
		case target:
			what = "kept " + what
		default:
			what = "not merged: " + what + " (it stays in " + file.name + ")"
		}
		cut := line[len(line)-1] != '\n'
		f.warnings = append(f.warnings, fmt.Sprintf("%s line %d: %s: %v", show, n, what, unreadableLine(err, cut)))
	})
	if unreadable > maxLineWarnings {
		f.warnings = append(f.warnings, fmt.Sprintf("%s: %s that are not ttsgen rows", show,
			plural.Count(unreadable-maxLineWarnings, "more line")))
	}
	return err
}

func withNewline(line []byte) []byte {
	if line[len(line)-1] == '\n' {
		return line
	}
	return append(slices.Clip(line), '\n')
}

// sorted is the latest rows in a fixed order: by input, line and id.
func (f *folder) sorted() []latestRow {
	rows := make([]latestRow, 0, len(f.rows))
	for _, r := range f.rows {
		rows = append(rows, r)
	}
	slices.SortFunc(rows, func(a, b latestRow) int {
		return cmp.Or(cmp.Compare(a.row.Source, b.row.Source), cmp.Compare(a.row.Line, b.row.Line),
			cmp.Compare(a.row.ID, b.row.ID))
	})
	return rows
}

// report counts rows (f's latest, sorted) in all and per shard of the folder's shard count, and as missing the items
// of expected (the inputs' items; nil when the inputs are not known) that have no row.
func (f *folder) report(rows []latestRow, expected []Row) Report {
	rep := Report{Dir: f.name, InputsChecked: expected != nil, Warnings: slices.Clone(f.warnings)}
	var counts []int
	ran := map[string]bool{}
	for _, file := range f.files {
		ran[file.name] = true
		if file.spec.Enabled() && !slices.Contains(counts, file.spec.Count) {
			counts = append(counts, file.spec.Count)
		}
	}
	if len(counts) > 0 {
		rep.Shards = slices.Max(counts)
	}
	if len(counts) > 1 {
		rep.Warnings = append(rep.Warnings, fmt.Sprintf("%s holds results files of shards of several counts (%v): "+
			"items are counted in the shards of %d", f.name, counts, rep.Shards))
	}
	recorded := map[string]bool{} // shards with rows: merged into results.jsonl, a shard's file since removed
	for _, r := range rows {
		recorded[r.row.Shard] = true
	}
	for k := 1; k <= rep.Shards; k++ {
		spec := shard.Spec{Index: k, Count: rep.Shards}
		name := FileFor(spec)
		rep.PerShard = append(rep.PerShard, ShardTally{Shard: spec.String(), File: name,
			Ran: ran[name] || recorded[spec.String()]})
	}
	shardOf := func(r Row) *Tally {
		if rep.Shards == 0 {
			return &Tally{} // counted nowhere but in the total
		}
		return &rep.PerShard[shard.Of(r.ShardKey(), rep.Shards)-1].Tally
	}
	seen := map[string]bool{}
	for _, r := range expected {
		if k := r.key(); !seen[k] {
			seen[k] = true
			if _, ok := f.rows[k]; !ok {
				rep.miss()
				shardOf(r).miss()
			}
		}
	}
	others := 0
	for _, r := range rows {
		if expected != nil && !seen[r.row.key()] {
			others++ // the report is about the inputs' items
			continue
		}
		rep.add(r.row)
		shardOf(r.row).add(r.row)
	}
	if others > 0 {
		rep.Warnings = append(rep.Warnings, fmt.Sprintf("%s: %s of items that are not in the inputs (another "+
			"input's, or a line since removed) not counted", f.name, plural.Count(others, "row")))
	}
	return rep
}

// ErrNoResults marks a folder without results files (results.jsonl, or results.K-of-N.jsonl of shards): no batch
// has started there (each creates its results file first), so there is nothing to report or merge.
var ErrNoResults = errors.New("no results files")

type noResultsError struct{ dir string }

func (e noResultsError) Error() string {
	return fmt.Sprintf("%s is not a batch's output folder: it has no results files (%s, or results.K-of-N.jsonl of "+
		"shards)", e.dir, FileName)
}

func (e noResultsError) Is(target error) bool { return target == ErrNoResults }

// Summarize reads dir's results files (results.jsonl and every shard's results.K-of-N.jsonl), without locking or
// changing anything, and counts its items by their latest rows: in all and per shard. expected are the inputs'
// items (their ID, Source and Line, as a batch records them), to count those without a row as missing; nil when the
// inputs are not known.
func Summarize(dir string, expected []Row) (Report, error) {
	f, err := readFolder(dir, false)
	if err != nil {
		return Report{}, err
	}
	return f.report(f.sorted(), expected), nil
}

// MergeOptions are what Merge needs besides the folder.
type MergeOptions struct {
	Expected []Row // as Summarize has them
	// RemoveShards removes the shard files (and their lock files) once results.jsonl holds their rows, and the lock
	// files of shards whose results file is gone (a refused shard's, say); a shard file with lines that are not rows
	// stays, and so does its lock file.
	RemoveShards bool
}

// Merge folds the rows of every results file of dir into one results.jsonl: one row per item, its latest (by
// Row.Finished; between rows of the same time, the later file and line), copied as it stands; sorted by input, line
// and id, after the lines of the old results.jsonl that are not rows, which are kept byte for byte. Lines of the
// shard files that are not rows (a last line cut off by a killed writer among them) are never merged: they are
// reported and stay in their file. results.jsonl is replaced atomically, and merging again changes nothing. It
// holds the folder's lock as a batch without shards does, so it is refused while a batch or a shard runs there. The
// shard files stay (a shard run again appends to its own file) unless opt.RemoveShards. A merge that is refused or
// fails leaves no lock file it created (a folder without results files: ErrNoResults).
func Merge(dir string, opt MergeOptions) (Report, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return Report{}, fmt.Errorf("finding output directory %s: %w", dir, err)
	}
	locks, err := lockDir(abs, dir, shard.Spec{})
	if err != nil {
		return Report{}, err
	}
	merged := false
	defer func() { releaseLocks(locks, !merged) }() // refused, or failed: no lock file of its own stays
	f, err := readFolder(dir, true)
	if err != nil {
		return Report{}, err
	}
	if first, second, mixed := mixedCounts(f.files); mixed {
		return Report{}, fmt.Errorf("%s holds %s and %s: %w; merge one count at a time: move the results files of "+
			"one count into another folder, run ttsgen results merge %s --remove-shards, move them back and merge "+
			"again (results.jsonl keeps the first merge's rows); or run the shards of the count to keep again with "+
			"--force, which speaks their items again and removes the other count's results files",
			dir, first.name, second.name, ErrShardCounts, dir)
	}
	rows := f.sorted()
	err = atomicfile.Write(filepath.Join(abs, FileName), filepath.Join(dir, FileName), nil, func(w *os.File) error {
		bw := bufio.NewWriterSize(w, 64<<10)
		for _, line := range f.kept {
			bw.Write(line)
		}
		for _, r := range rows {
			bw.Write(r.line)
			bw.WriteByte('\n')
		}
		return bw.Flush()
	})
	if err != nil {
		return Report{}, fmt.Errorf("merging results: %w", err)
	}
	merged = true // results.jsonl is written: the folder's lock file stays, as a batch's does
	rep := f.report(rows, opt.Expected)
	if opt.RemoveShards {
		removed, rerr := f.removeShards(&rep.Warnings)
		rep.Removed = removed
		f.removeStaleShardLocks()
		if rerr != nil {
			return rep, rerr
		}
	}
	return rep, nil
}

// removeShards deletes the shard files whose every line is merged (no shard runs: the caller holds the folder's
// lock exclusively, which a shard needs shared before its own); removeStaleShardLocks then takes their lock files.
func (f *folder) removeShards(warnings *[]string) ([]string, error) {
	var removed []string
	for _, file := range f.files {
		if !file.spec.Enabled() {
			continue
		}
		if n := f.unmergeable[file.name]; n > 0 {
			*warnings = append(*warnings, fmt.Sprintf("%s: not removed: it holds %s that ttsgen cannot read as rows",
				filepath.Join(f.name, file.name), plural.Count(n, "line")))
			continue
		}
		if err := os.Remove(filepath.Join(f.abs, file.name)); err != nil {
			return removed, fmt.Errorf("removing merged shard file: %w", err)
		}
		removed = append(removed, file.name)
	}
	return removed, nil
}

// removeStaleShardLocks removes the lock files of the shards whose results file is not in the folder (any more):
// those of the shard files removeShards removed, and those a refused or older run left. A shard's lock file beside
// its results file stays, and so does any a process holds (none should: the caller holds the folder's lock
// exclusively, and a shard takes it shared before its own). With no shard file left, the lock a start-over waits
// on (--force) goes too. Best effort: a lock file that stays is harmless.
func (f *folder) removeStaleShardLocks() {
	entries, err := os.ReadDir(f.abs)
	if err != nil {
		return
	}
	present := map[string]bool{}
	shards := false
	for _, e := range entries {
		present[e.Name()] = true
		if s, ok := shardOfFile(e.Name()); ok && s.Enabled() {
			shards = true
		}
	}
	for _, e := range entries {
		name := e.Name()
		if s, ok := shardOfLock(name); (ok && !present[FileFor(s)]) || (name == startOverLockName && !shards) {
			removeLockFile(filepath.Join(f.abs, name))
		}
	}
}
