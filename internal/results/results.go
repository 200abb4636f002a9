package results

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ttsgen/ttsgen/internal/atomicfile"
	"github.com/ttsgen/ttsgen/internal/plural"
	"github.com/ttsgen/ttsgen/internal/shard"
)

const (
	// FileName is the results file inside the output directory, of a run without shards and of a merge; shard K/N
	// writes results.K-of-N.jsonl (FileFor).
	FileName = "results.jsonl"
	// TempPrefix starts the name of every temporary file this package
	// creates; Open deletes those whose writer is gone anywhere under the
	// directory.
	TempPrefix = atomicfile.TempPrefix
	// lockName shares the reserved ".ttsgen-" prefix so that no output can
	// be named like it. A run without shards (and a merge) holds it
	// exclusively; each shard holds it shared, and its own
	// lockName.K-of-N exclusively.
	lockName = ".ttsgen-lock"
	// startOverLockName is held, waiting, by a shard that removes another count's results files (--force).
	startOverLockName = lockName + ".start-over"
	// reservedPrefix may not start any component of an output path.
	reservedPrefix = ".ttsgen-"
	// maxLineWarnings bounds the warnings about kept lines, for a file that
	// is not a results file at all.
	maxLineWarnings = 5
)

// Row statuses.
const (
	StatusOK    = "ok"
	StatusError = "error"
)

// Settings are what determine an item's audio (its text's digest, the voice
// and its model, the scales, the format...), as names and values. An item
// whose recorded settings differ from the ones asked for now is done again.
type Settings map[string]string

// Row is one line of results.jsonl: the outcome of one item.
type Row struct {
	ID     string `json:"id"`
	Line   int    `json:"line"`
	Source string `json:"source,omitempty"` // the input, as an absolute path ("-" for standard input)
	Out    string `json:"out"`              // relative to the output directory, "/"-separated
	Status string `json:"status"`           // StatusOK or StatusError
	Error  string `json:"error,omitempty"`
	// RetryError is set on an "ok" row when a later attempt at the item
	// failed: the output and the row still describe the earlier, good run.
	RetryError   string   `json:"retry_error,omitempty"`
	Sentences    int      `json:"sentences"`
	AudioSeconds float64  `json:"audio_seconds"`
	Settings     Settings `json:"settings,omitempty"`
	Format       string   `json:"format,omitempty"` // the audio format of Out ("wav", "flac", ...)
	Bytes        int64    `json:"bytes,omitempty"`  // Out's size as encoded
	// TimestampsOut is the item's word timestamps file beside Out, named as Out is ("" without timestamps): an
	// output of the item too, which no other item may overwrite.
	TimestampsOut string `json:"timestamps_out,omitempty"`
	// Shard is the shard that recorded the row ("2/4"), empty for a run without shards.
	Shard string `json:"shard,omitempty"`
	// Finished is when the row was recorded (Append sets it): across results files, the latest row of an item wins.
	// Rows of older versions have none and count as the oldest.
	Finished time.Time `json:"finished,omitzero"`
}

// Failed reports whether the row records a failure: an error row, or a good
// output whose retry failed.
func (r Row) Failed() bool { return r.Status != StatusOK || r.RetryError != "" }

// ShardKey is what decides the shard of the row's item (shard.Spec.Owns): its id, or for an item without one (a
// manifest line too broken to have one), its input and line.
func (r Row) ShardKey() string {
	if r.ID != "" {
		return r.ID
	}
	return r.Source + ":" + strconv.Itoa(r.Line)
}

// key identifies the item a row is about: its id, or for rows without one
// (manifest lines too broken to have an id), its source and line.
func (r Row) key() string {
	if r.ID != "" {
		return "id\x00" + r.ID
	}
	return "at\x00" + r.Source + "\x00" + strconv.Itoa(r.Line)
}

// lineKey is, for a row of an item with an id, the key its line's row had while the line could not be read as an
// item (key's "at" form): the row that this one makes the past once the line is fixed. "" for other rows.
func (r Row) lineKey() string {
	if r.ID == "" || r.Line == 0 {
		return ""
	}
	return Row{Source: r.Source, Line: r.Line}.key()
}

// outputs are the files an "ok" row records: Out, and TimestampsOut when the item has one.
func (r Row) outputs() []string {
	if r.TimestampsOut == "" {
		return []string{r.Out}
	}
	return []string{r.Out, r.TimestampsOut}
}

func (r Row) check() error {
	switch r.Status {
	case StatusOK:
		if r.ID == "" || r.Out == "" {
			return errors.New(`an "ok" row needs an id and an out path`)
		}
	case StatusError:
		if r.ID == "" && r.Source == "" {
			return errors.New("a row needs an id or a source")
		}
	default:
		return fmt.Errorf("unknown status %q (want %q or %q)", r.Status, StatusOK, StatusError)
	}
	return nil
}

// where names the row's item for messages: "a.jsonl line 3".
func (r Row) where() string {
	switch {
	case r.Source == "":
		return "an unknown input"
	case r.Line > 0:
		return fmt.Sprintf("%s line %d", r.Source, r.Line)
	}
	return r.Source
}

// entry is the effective row of one item, without its settings, which are
// kept in their JSON encoding (a map per row would cost a kilobyte each).
type entry struct {
	row      Row    // Settings is nil
	settings []byte // canonical JSON of row.Settings; nil when the row has none
	line     int    // the row's line in the Dir's results file, 1-based; 0 for a row of another results file
	file     string // the other results file that holds the row, as shown in messages; "" for the Dir's own
}

// Dir is an output directory opened for one batch run. Its methods are safe
// for concurrent use.
type Dir struct {
	name     string // as given to Open, for messages
	abs      string // absolute path
	real     string // abs with symlinks resolved: the boundary Resolve enforces
	spec     shard.Spec
	fileName string // the results file's name in abs: FileFor(spec)
	locks    []*heldLock
	force    bool
	now      func() time.Time

	mu          sync.Mutex
	file        rowFile           // results.jsonl, opened for appending
	size        int64             // bytes of complete lines in file
	lines       int               // lines in file
	needNewline bool              // the file's last line has no "\n": the next append starts with one
	broken      error             // set when a failed append could not be cut off again
	rows        map[string]entry  // the rows of the Dir's own results file
	prior       map[string]entry  // the latest rows of the items spec owns in the folder's other results files
	outs        map[string]string // output path (audio or timestamps) -> key of the "ok" row that records it
	kept        []int             // lines that are not rows ttsgen can read, kept as they are
	dirty       bool              // the file holds superseded rows: compact on Close
	closed      bool
	warnings    []string

	tempMu sync.Mutex
	temps  map[string]bool // temp files being written now
}

var errClosed = errors.New("results: output directory already closed")

// rowFile is what Append needs of results.jsonl (an *os.File); tests replace
// it to simulate a disk that fills up mid-row.
type rowFile interface {
	io.WriteCloser
	Sync() error
	Truncate(size int64) error
}

// Open prepares dir (creating it) for a run without shards, which writes
// results.jsonl; see OpenShard.
func Open(dir string, force bool) (*Dir, error) { return OpenShard(dir, shard.Spec{}, force) }

// OpenShard prepares dir (creating it) for a run of shard s (the zero Spec:
// no sharding), takes its lock, deletes the temp files of writers that are
// gone, and reads the results files to know which items are done: its own,
// FileFor(s), and read-only, the rows of the items s owns in the folder's
// other results files (those of a run without shards or of a merge; shards
// of s's count own other items). Shards of one job run side by side; a
// second process of the same shard, a run without shards beside shards, and
// a shard where the results files of shards of another count are (unless
// force: see claimShardCount) are refused. A results file holding
// superseded rows is compacted right away; lines that are not rows ttsgen
// can read stay as they are. With force, Check reports no item as done, but
// every row stays until its item is done again.
func OpenShard(dir string, s shard.Spec, force bool) (*Dir, error) {
	if dir == "" {
		return nil, errors.New("results: no output directory given")
	}
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return nil, fmt.Errorf("creating output directory: %w", err)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("finding output directory %s: %w", dir, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("finding output directory %s: %w", dir, err)
	}
	d := &Dir{
		name:     dir,
		abs:      abs,
		real:     real,
		spec:     s,
		fileName: FileFor(s),
		force:    force,
		now:      time.Now,
		rows:     map[string]entry{},
		prior:    map[string]entry{},
		outs:     map[string]string{},
		temps:    map[string]bool{},
	}
	if d.locks, err = lockDir(abs, dir, s); err != nil {
		return nil, err
	}
	for _, step := range []func() error{d.claimShardCount, d.removeStaleTemps, d.readPrior, d.openResults} {
		if err := step(); err != nil {
			releaseLocks(d.locks, true) // refused: the lock files it created go too
			return nil, err
		}
	}
	return d, nil
}

// claimShardCount keeps the folder to shards of one count. A shard is refused where the results files of shards of
// another count are (ErrShardCounts), unless force, which starts over: it removes those files and their locks, once
// it holds each one's lock (none of their shards runs). The shard's own file is created before the folder is
// listed, so that of two shards of different counts that start together, one at least sees the other's file.
func (d *Dir) claimShardCount() (err error) {
	if !d.spec.Enabled() {
		return nil
	}
	f, err := os.OpenFile(d.resultsPath(), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
	if err == nil {
		f.Close()
		defer func() {
			if err != nil {
				os.Remove(d.resultsPath()) // empty: a refused shard leaves nothing behind
			}
		}()
	} else if !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("creating results file: %w", err)
	}
	files, err := resultsFiles(d.abs)
	if err != nil {
		return err
	}
	other := otherCounts(files, d.spec.Count)
	if len(other) == 0 {
		return nil
	}
	if d.force {
		// The shards of a new count start together (a Job, an array): one at a time starts over, the others then
		// find nothing left to remove. Without this, a shard holding the old locks while it removes the old files
		// would look to its siblings like an old shard that still runs.
		startOver, err := waitLockAt(filepath.Join(d.abs, startOverLockName))
		if err != nil {
			return fmt.Errorf("starting over (--force) in output directory %s: %w", d.name, err)
		}
		defer startOver.release(false)
		if files, err = resultsFiles(d.abs); err != nil {
			return err
		}
		if other = otherCounts(files, d.spec.Count); len(other) == 0 {
			return nil
		}
	} else {
		old := other[0].spec.Count
		return fmt.Errorf("output directory %s holds %s (of shards of %d) and shard %s would write %s beside it: %w; "+
			"write into another folder, fold the shards of %d into %s first (ttsgen results merge %s --remove-shards), "+
			"or give --force to start over (it removes the results files of the shards of %d)",
			d.name, other[0].name, old, d.spec, d.fileName, ErrShardCounts, old, FileName, d.name, old)
	}
	// Every lock first: a shard that runs stops the start-over before anything is removed.
	for _, f := range other {
		lock, err := lockAt(filepath.Join(d.abs, shardLockName(f.spec)), false)
		if errors.Is(err, errLocked) {
			return fmt.Errorf("output directory %s: shard %s runs there, so its %s cannot be removed to start over (--force): "+
				"wait for it or stop it", d.name, f.spec, f.name)
		}
		if err != nil {
			return fmt.Errorf("locking shard %s of output directory %s: %w", f.spec, d.name, err)
		}
		defer lock.release(false)
	}
	var removed []string
	for _, f := range other {
		err := os.Remove(filepath.Join(d.abs, f.name))
		if err == nil || errors.Is(err, fs.ErrNotExist) { // another shard starting over may have been first
			err = os.Remove(filepath.Join(d.abs, shardLockName(f.spec)))
		}
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("starting over (--force): removing %s: %w", f.name, err)
		}
		removed = append(removed, f.name)
	}
	d.warnings = append(d.warnings, fmt.Sprintf("%s: removed %s of shards of another count, to start over (--force)",
		d.name, strings.Join(removed, ", ")))
	return nil
}

// removeStaleTemps deletes the temp files that killed writers left anywhere
// under the directory. Those of live processes stay: another batch may be
// writing into a subfolder, or a synth into the folder, right now.
func (d *Dir) removeStaleTemps() error {
	removed, err := atomicfile.RemoveStale(d.abs, func(err error) { d.warnings = append(d.warnings, fmt.Sprintf("%s: %v", d.name, err)) })
	if err != nil {
		return fmt.Errorf("cleaning output directory %s: %w", d.name, err)
	}
	if removed > 0 {
		d.warnings = append(d.warnings, fmt.Sprintf("%s: removed %s left by an interrupted run", d.name, plural.Count(removed, "temp file")))
	}
	return nil
}

// Path returns the results file of the output directory dir, for a run without shards.
func Path(dir string) string { return filepath.Join(dir, FileName) }

// Path is the Dir's results file, as shown in messages ("out/results.2-of-4.jsonl").
func (d *Dir) Path() string { return filepath.Join(d.name, d.fileName) }

// Shard is the shard the Dir was opened for (the zero Spec: no sharding).
func (d *Dir) Shard() shard.Spec { return d.spec }

func (d *Dir) resultsPath() string { return filepath.Join(d.abs, d.fileName) }

func (d *Dir) openResults() error {
	compact, err := d.readRows()
	if err != nil {
		return err
	}
	if compact {
		if err := d.compact(); err != nil {
			return fmt.Errorf("compacting %s: %w", d.display(d.resultsPath()), err)
		}
	}
	f, err := os.OpenFile(d.resultsPath(), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o666)
	if err != nil {
		return fmt.Errorf("opening results file: %w", err)
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return fmt.Errorf("opening results file: %w", err)
	}
	d.file, d.size = f, info.Size()
	return nil
}

// readRows loads the Dir's results file, last row per item winning. Lines
// that are not rows ttsgen can read are kept, with a warning naming each. It
// reports whether the file holds superseded rows, to be compacted.
func (d *Dir) readRows() (compact bool, err error) {
	show := d.display(d.resultsPath())
	unreadable := 0
	err = eachLine(d.resultsPath(), show, func(n int, line []byte) {
		d.lines = n
		d.needNewline = line[len(line)-1] != '\n'
		r, settings, rowErr := parseRow(line)
		switch {
		case rowErr == nil:
			if d.put(r, settings, n) {
				compact = true
			}
		case len(bytes.TrimSpace(line)) == 0:
			d.kept = append(d.kept, n) // a blank line: nobody's row, nothing to say
		default:
			d.kept = append(d.kept, n)
			if unreadable++; unreadable <= maxLineWarnings {
				d.warnings = append(d.warnings, fmt.Sprintf("%s line %d: kept a line that is not a ttsgen row: %v",
					show, n, unreadableLine(rowErr, d.needNewline)))
			}
		}
	})
	if err != nil {
		return false, err
	}
	if unreadable > maxLineWarnings {
		d.warnings = append(d.warnings, fmt.Sprintf("%s: kept %s that are not ttsgen rows", show,
			plural.Count(unreadable-maxLineWarnings, "more line")))
	}
	return compact, nil
}

// readPrior loads, read-only, the rows of the items d's shard owns from the
// folder's other results files, so that an item another run finished (one
// without shards, a merge; for a run without shards, any shard) is not done
// again. Shards of d's own count are left out: they own other items. Lines
// that are not rows are those files' business, and their writer may be
// appending to its file right now: they are passed over.
func (d *Dir) readPrior() error {
	files, err := resultsFiles(d.abs)
	if err != nil {
		return err
	}
	for _, f := range files {
		if f.name == d.fileName || (d.spec.Enabled() && f.spec.Count == d.spec.Count) {
			continue
		}
		show := d.display(filepath.Join(d.abs, f.name))
		err := eachLine(filepath.Join(d.abs, f.name), show, func(n int, line []byte) {
			r, settings, err := parseRow(line)
			if err != nil || !d.spec.Owns(r.ShardKey()) {
				return
			}
			k := r.key()
			if old, had := d.prior[k]; had && old.row.Finished.After(r.Finished) {
				return
			}
			d.prior[k] = entry{row: r, settings: settings, file: show}
			if r.Status == StatusOK {
				d.own(r, k)
			}
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// latest is the effective row of the item with key k: the row of the Dir's
// own file, unless another results file holds a later one. Callers hold d.mu
// or own d.
func (d *Dir) latest(k string) (entry, bool) {
	own, hasOwn := d.rows[k]
	other, hasOther := d.prior[k]
	if hasOther && (!hasOwn || other.row.Finished.After(own.row.Finished)) {
		return other, true
	}
	return own, hasOwn
}

// recordedIn names the results file that holds e, for messages.
func (d *Dir) recordedIn(e entry) string {
	if e.file != "" {
		return e.file
	}
	return d.display(d.resultsPath())
}

// parseRow reads one line of results.jsonl as a row, its settings apart in
// canonical JSON.
func parseRow(line []byte) (Row, []byte, error) {
	var r Row
	if err := json.Unmarshal(bytes.TrimSpace(line), &r); err != nil {
		return Row{}, nil, err
	}
	if err := r.check(); err != nil {
		return Row{}, nil, err
	}
	settings, err := encodeSettings(r.Settings)
	r.Settings = nil
	return r, settings, err
}

// encodeSettings is the canonical JSON of s (encoding/json sorts map keys),
// nil for no settings.
func encodeSettings(s Settings) ([]byte, error) {
	if s == nil {
		return nil, nil
	}
	return json.Marshal(s)
}

// put makes r, found on line n, the effective row of its item. It reports
// whether an earlier row was superseded. Callers hold d.mu or own d.
func (d *Dir) put(r Row, settings []byte, n int) (superseded bool) {
	k := r.key()
	if at := r.lineKey(); at != "" { // a line that could not be read as an item has been fixed: its row is this
		if _, was := d.rows[at]; was {
			delete(d.rows, at)
			superseded = true
		}
	}
	old, had := d.rows[k]
	if had && old.row.Status == StatusOK {
		for _, out := range old.row.outputs() {
			if d.outs[outKey(out)] == k {
				delete(d.outs, outKey(out))
			}
		}
	}
	d.rows[k] = entry{row: r, settings: settings, line: n}
	if r.Status == StatusOK {
		d.own(r, k)
	}
	return superseded || had
}

// own records that the item with key k has r's outputs. Callers hold d.mu or own d.
func (d *Dir) own(r Row, k string) {
	for _, out := range r.outputs() {
		d.outs[outKey(out)] = k
	}
}

func outKey(out string) string { return path.Clean(out) }

// compact rewrites results.jsonl atomically to its effective rows, one per
// item, and the lines that are not rows, each byte for byte and in the
// order they had. Callers hold d.mu or own d.
func (d *Dir) compact() error {
	keep := slices.Clone(d.kept)
	for _, e := range d.rows {
		keep = append(keep, e.line)
	}
	slices.Sort(keep)
	src, err := os.Open(d.resultsPath())
	if err != nil {
		return err
	}
	defer src.Close()
	err = d.writeAtomic(d.resultsPath(), func(w io.Writer) error {
		br := bufio.NewReaderSize(src, 64<<10)
		bw := bufio.NewWriter(w)
		next := 0
		for n := 1; next < len(keep); n++ {
			line, err := br.ReadBytes('\n')
			if len(line) == 0 && err != nil {
				return fmt.Errorf("line %d changed while it was compacted: %w", keep[next], io.ErrUnexpectedEOF)
			}
			if n == keep[next] {
				bw.Write(line)
				if line[len(line)-1] != '\n' {
					bw.WriteByte('\n')
				}
				next++
			}
		}
		return bw.Flush()
	})
	if err != nil {
		return err
	}
	renumber := make(map[int]int, len(keep))
	for i, n := range keep {
		renumber[n] = i + 1
	}
	for k, e := range d.rows {
		e.line = renumber[e.line]
		d.rows[k] = e
	}
	for i, n := range d.kept {
		d.kept[i] = renumber[n]
	}
	d.lines, d.needNewline, d.dirty = len(keep), false, false
	return nil
}

// Warnings lists what Open found: temp files of killed runs it removed, and
// lines of its results file that are not rows it can read, which it keeps.
func (d *Dir) Warnings() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.warnings)
}

// Append adds one row to the Dir's results file and fsyncs it before
// returning, stamped with the Dir's shard and the time (Row.Shard,
// Row.Finished). A row for an item replaces any earlier row for it (the file
// is compacted on Close and on the next Open). Write an item's output with
// WriteFile before appending its "ok" row, so that a row never claims a
// missing file; record a failed attempt through KeepGood, so that an error
// row never stands beside a good output.
func (d *Dir) Append(r Row) error {
	r.Shard, r.Finished = d.spec.String(), d.now().UTC()
	if err := r.check(); err != nil {
		return fmt.Errorf("recording result for %q: %w", r.ID, err)
	}
	line, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("recording result for %q: %w", r.ID, err)
	}
	settings, err := encodeSettings(r.Settings)
	if err != nil {
		return fmt.Errorf("recording result for %q: %w", r.ID, err)
	}
	r.Settings = nil
	line = append(line, '\n')

	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return errClosed
	}
	if d.broken != nil {
		return d.broken
	}
	if d.needNewline { // end the unreadable last line, which stays
		line = append([]byte{'\n'}, line...)
	}
	show := d.display(d.resultsPath())
	_, err = d.file.Write(line)
	if err == nil {
		err = d.file.Sync()
	}
	if err != nil {
		// Cut off whatever part of the row reached the file, so that the next
		// row starts on a line of its own.
		if terr := d.file.Truncate(d.size); terr != nil {
			d.broken = fmt.Errorf("%s is damaged: a failed append could not be undone: %w", show, terr)
			return errors.Join(fmt.Errorf("appending to %s: %w", show, err), d.broken)
		}
		return fmt.Errorf("appending to %s: %w", show, err)
	}
	d.size += int64(len(line))
	d.needNewline = false
	d.lines++
	if d.put(r, settings, d.lines) {
		d.dirty = true
	}
	return nil
}

// Check decides about an item about to be made (r carries its id, source,
// out and settings). done: an earlier run (or this one) finished it with the
// same output path and settings, and its output is still there and not
// empty (and its timestamps file is there, when r asks for one); never with
// force. An error means the item must not be made into this directory: it
// would overwrite the output another input's item
// recorded (the same id with other settings, unless force; or the same out
// path under another id), which would then be lost without a word. Its
// timestamps file (Row.TimestampsOut) is an output too: no item may have
// another's audio or timestamps file as either of its own.
func (d *Dir) Check(r Row) (done bool, err error) {
	if r.ID == "" {
		return false, nil
	}
	settings, err := encodeSettings(r.Settings)
	if err != nil {
		return false, err
	}
	k := r.key()
	d.mu.Lock()
	e, had := d.latest(k)
	var (
		takenOut string // the first output of r that another item recorded
		other    entry  // that item's row
	)
	for _, out := range r.outputs() {
		if owner, taken := d.outs[outKey(out)]; taken && owner != k {
			takenOut = out
			other, _ = d.latest(owner)
			break
		}
	}
	d.mu.Unlock()

	if had && e.row.Status == StatusOK {
		same := e.settings != nil && bytes.Equal(e.settings, settings) && outKey(e.row.Out) == outKey(r.Out)
		// an item whose row records no timestamps file (one written before rows did) or whose file has gone is
		// made again, so that a run with --timestamps leaves every item its file
		stamped := r.TimestampsOut == "" ||
			(outKey(e.row.TimestampsOut) == outKey(r.TimestampsOut) && d.fileExists(r.TimestampsOut))
		if same && stamped && !d.force && d.outputIntact(e.row) {
			return true, nil
		}
		if !same && !d.force && !sameInput(e.row.Source, r.Source) {
			return false, fmt.Errorf("item %q is already recorded in %s, from %s, with other text or settings: "+
				"give this item its own \"id\", write into another folder, or use --force to replace it",
				r.ID, d.recordedIn(e), e.row.where())
		}
	}
	if takenOut != "" {
		what := fmt.Sprintf("output %q", r.Out)
		if takenOut != r.Out {
			what = fmt.Sprintf("timestamps file %q (of output %q)", takenOut, r.Out)
		}
		return false, fmt.Errorf("%s is already recorded in %s for item %q, from %s: "+
			"give this item its own \"out\" (or \"id\"), or write into another folder",
			what, d.recordedIn(other), other.row.ID, other.row.where())
	}
	return false, nil
}

// sameInput reports whether two sources name the same input: absolute paths;
// a relative path (from an older ttsgen) is taken from the working directory.
// Standard input ("-") and a shell's <(...) (/dev/fd/N) name no input: what
// came through them in another run is another input's, whatever it says.
func sameInput(a, b string) bool {
	if anonymous(a) || anonymous(b) {
		return false
	}
	abs := func(p string) string {
		if p == "" {
			return p
		}
		if q, err := filepath.Abs(p); err == nil {
			return q
		}
		return p
	}
	return abs(a) == abs(b)
}

// anonymous reports whether source is standard input or a file descriptor's
// name, which stands for something else in every run.
func anonymous(source string) bool {
	return source == "-" || strings.HasPrefix(source, "/dev/fd/") || strings.HasPrefix(source, "/proc/self/fd/")
}

// outputExists reports whether out (relative to the directory) is a regular,
// non-empty file inside it.
func (d *Dir) outputExists(out string) bool {
	info, ok := d.stat(out)
	return ok && info.Size() > 0
}

// outputIntact reports whether the "ok" row r's output is there as it was
// made: of the size r records (rows before sizes were recorded: not empty).
// A file of another size was replaced or cut since (by another batch into a
// folder around this one, by hand), and the row no longer describes it.
func (d *Dir) outputIntact(r Row) bool {
	info, ok := d.stat(r.Out)
	return ok && info.Size() > 0 && (r.Bytes == 0 || info.Size() == r.Bytes)
}

// fileExists reports whether out is a regular file, empty or not (subtitles of a silent item have no cues).
func (d *Dir) fileExists(out string) bool {
	_, ok := d.stat(out)
	return ok
}

func (d *Dir) stat(out string) (os.FileInfo, bool) {
	p, err := d.resolve(out, false)
	if err != nil {
		return nil, false
	}
	info, err := os.Stat(p)
	return info, err == nil && info.Mode().IsRegular()
}

// KeepGood returns the row to record for r, an item's failed attempt: when
// the item's latest row is "ok" and its output is still there, that row with
// RetryError set, so that the good output stays and the folder says one
// thing about it; otherwise r itself.
func (d *Dir) KeepGood(r Row) Row {
	if r.Status != StatusError || r.ID == "" {
		return r
	}
	prev, ok := d.Row(r.ID)
	if !ok || prev.Status != StatusOK || !d.outputExists(prev.Out) {
		return r
	}
	prev.RetryError = r.Error
	return prev
}

// Row returns the latest row recorded for id: by this run or an earlier one, or in another results file of the
// folder (see OpenShard).
func (d *Dir) Row(id string) (Row, bool) {
	d.mu.Lock()
	e, ok := d.latest(Row{ID: id}.key())
	d.mu.Unlock()
	if ok && e.settings != nil {
		json.Unmarshal(e.settings, &e.row.Settings) // cannot fail: it is what parseRow or Append encoded
	}
	return e.row, ok
}

// Close compacts results.jsonl if this run superseded earlier rows, removes
// temp files of writes still in flight, and releases the batch lock. It is
// safe to call more than once; later calls do nothing.
func (d *Dir) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil
	}
	d.closed = true
	var errs []error
	if err := d.file.Close(); err != nil {
		errs = append(errs, fmt.Errorf("closing results file: %w", err))
	}
	if d.dirty && d.broken == nil {
		if err := d.compact(); err != nil {
			errs = append(errs, fmt.Errorf("compacting %s: %w", d.display(d.resultsPath()), err))
		}
	}
	d.tempMu.Lock()
	for tmp := range d.temps {
		os.Remove(tmp)
	}
	d.tempMu.Unlock()
	if err := releaseLocks(d.locks, false); err != nil {
		errs = append(errs, fmt.Errorf("unlocking output directory: %w", err))
	}
	return errors.Join(errs...)
}
