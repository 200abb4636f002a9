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
	"path/filepath"
	"slices"
	"strconv"
	"sync"

	"github.com/ttsgen/ttsgen/internal/atomicfile"
)

const (
	// FileName is the results file inside the output directory.
	FileName = "results.jsonl"
	// TempPrefix starts the name of every temporary file this package
	// creates; Open deletes such files anywhere under the directory.
	TempPrefix = atomicfile.TempPrefix
	// lockName shares the reserved ".ttsgen-" prefix so that no output can
	// be named like it.
	lockName = ".ttsgen-lock"
	// reservedPrefix may not start any component of an output path.
	reservedPrefix = ".ttsgen-"
)

// Row statuses.
const (
	StatusOK    = "ok"
	StatusError = "error"
)

// Row is one line of results.jsonl: the outcome of one item.
type Row struct {
	ID           string  `json:"id"`
	Line         int     `json:"line"`
	Source       string  `json:"source,omitempty"`
	Out          string  `json:"out"`    // relative to the output directory, "/"-separated
	Status       string  `json:"status"` // StatusOK or StatusError
	Error        string  `json:"error,omitempty"`
	Sentences    int     `json:"sentences"`
	AudioSeconds float64 `json:"audio_seconds"`
	Format       string  `json:"format,omitempty"` // the audio format of Out ("wav", "flac", ...)
	Bytes        int64   `json:"bytes,omitempty"`  // Out's size as encoded
	Hash         string  `json:"hash,omitempty"`
}

// key identifies the item a row is about: its id, or for rows without one
// (manifest lines too broken to have an id), its source and line.
func (r Row) key() string {
	if r.ID != "" {
		return "id\x00" + r.ID
	}
	return "at\x00" + r.Source + "\x00" + strconv.Itoa(r.Line)
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

// Summary counts the items this run has settled, each item once, by its
// latest outcome. Skipped items are those Done reported as already finished.
type Summary struct {
	OK, Errors, Skipped int
}

const statusSkipped = "skipped"

type entry struct {
	row Row
	seq int // order of the row in the file, for compaction
}

// Dir is an output directory opened for one batch run. Its methods are safe
// for concurrent use.
type Dir struct {
	name string // as given to Open, for messages
	abs  string // absolute path
	real string // abs with symlinks resolved: the boundary Resolve enforces
	lock *os.File

	mu       sync.Mutex
	file     rowFile // results.jsonl, opened for appending
	size     int64   // bytes of complete rows in file
	broken   error   // set when a failed append could not be cut off again
	rows     map[string]entry
	seq      int
	dirty    bool              // the file holds superseded rows: compact on Close
	run      map[string]string // key -> this run's outcome for the item
	summary  Summary
	closed   bool
	warnings []string

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

// Open prepares dir (creating it), takes the batch lock on it, deletes stale
// temp files left by a killed earlier run, and reads an existing
// results.jsonl to know which items are done. Unless force is set, a
// results.jsonl holding superseded or broken rows is compacted right away.
// With force, previous rows are ignored and the file is truncated; existing
// WAV files stay until they are overwritten.
func Open(dir string, force bool) (*Dir, error) {
	if dir == "" {
		return nil, errors.New("results: no output directory given")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
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
		name:  dir,
		abs:   abs,
		real:  real,
		rows:  map[string]entry{},
		run:   map[string]string{},
		temps: map[string]bool{},
	}
	if err := d.acquireLock(); err != nil {
		return nil, err
	}
	if err := d.removeStaleTemps(); err != nil {
		d.lock.Close()
		return nil, err
	}
	if err := d.openResults(force); err != nil {
		d.lock.Close()
		return nil, err
	}
	return d, nil
}

func (d *Dir) acquireLock() error {
	f, err := os.OpenFile(filepath.Join(d.abs, lockName), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("locking output directory %s: %w", d.name, err)
	}
	if err := lockFile(f); err != nil {
		f.Close()
		if errors.Is(err, errLocked) {
			return fmt.Errorf("output directory %s is in use by another ttsgen batch", d.name)
		}
		return fmt.Errorf("locking output directory %s: %w", d.name, err)
	}
	d.lock = f
	return nil
}

// removeStaleTemps deletes temp files anywhere under the directory. The batch
// lock guarantees that no other run is writing them.
func (d *Dir) removeStaleTemps() error {
	removed := 0
	err := filepath.WalkDir(d.abs, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			if path == d.abs {
				return err
			}
			d.warnings = append(d.warnings, fmt.Sprintf("looking for stale temp files: %v", err))
			return nil
		}
		if e.Type().IsRegular() && len(e.Name()) > len(TempPrefix) && e.Name()[:len(TempPrefix)] == TempPrefix {
			if err := os.Remove(path); err != nil {
				return fmt.Errorf("removing stale temp file: %w", err)
			}
			removed++
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("cleaning output directory %s: %w", d.name, err)
	}
	if removed > 0 {
		d.warnings = append(d.warnings, fmt.Sprintf("removed %d temp file(s) left by an interrupted run", removed))
	}
	return nil
}

// Path returns the results file of the output directory dir.
func Path(dir string) string { return filepath.Join(dir, FileName) }

func (d *Dir) resultsPath() string { return filepath.Join(d.abs, FileName) }

func (d *Dir) openResults(force bool) error {
	flags := os.O_WRONLY | os.O_CREATE | os.O_APPEND
	if force {
		flags |= os.O_TRUNC
	} else {
		compact, err := d.readRows()
		if err != nil {
			return err
		}
		if compact {
			if err := d.compact(); err != nil {
				return fmt.Errorf("compacting %s: %w", d.display(d.resultsPath()), err)
			}
		}
	}
	f, err := os.OpenFile(d.resultsPath(), flags, 0o644)
	if err != nil {
		return fmt.Errorf("opening results file: %w", err)
	}
	info, err := f.Stat()
	if err == nil && force {
		err = f.Sync() // make the truncation durable before new rows arrive
	}
	if err != nil {
		f.Close()
		return fmt.Errorf("opening results file: %w", err)
	}
	d.file, d.size = f, info.Size()
	return nil
}

// readRows loads results.jsonl, last row per item winning. It reports
// whether the file should be compacted: it holds superseded rows, rows that
// cannot be read, or a last line without its newline (a crash mid-write).
func (d *Dir) readRows() (compact bool, err error) {
	f, err := os.Open(d.resultsPath())
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("opening results file: %w", err)
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 64<<10)
	for n := 1; ; n++ {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			complete := line[len(line)-1] == '\n'
			var r Row
			rowErr := json.Unmarshal(bytes.TrimSpace(line), &r)
			if rowErr == nil {
				rowErr = r.check()
			}
			switch {
			case rowErr != nil && !complete:
				d.warnings = append(d.warnings, fmt.Sprintf("%s line %d: dropped a row cut off by an interrupted run", FileName, n))
				compact = true
			case rowErr != nil:
				d.warnings = append(d.warnings, fmt.Sprintf("%s line %d: dropped an unreadable row: %v", FileName, n, rowErr))
				compact = true
			default:
				if _, seen := d.rows[r.key()]; seen || !complete {
					compact = true
				}
				d.put(r)
			}
		}
		if errors.Is(err, io.EOF) {
			return compact, nil
		}
		if err != nil {
			return false, fmt.Errorf("reading %s: %w", d.display(d.resultsPath()), err)
		}
	}
}

func (d *Dir) put(r Row) {
	d.seq++
	d.rows[r.key()] = entry{row: r, seq: d.seq}
}

// compact rewrites results.jsonl atomically to the effective rows, one per
// item, in the order they were last written. Callers hold d.mu or own d.
func (d *Dir) compact() error {
	entries := make([]entry, 0, len(d.rows))
	for _, e := range d.rows {
		entries = append(entries, e)
	}
	slices.SortFunc(entries, func(a, b entry) int { return a.seq - b.seq })
	return d.writeAtomic(d.resultsPath(), func(w io.Writer) error {
		bw := bufio.NewWriter(w)
		for _, e := range entries {
			line, err := json.Marshal(e.row)
			if err != nil {
				return err
			}
			bw.Write(line)
			bw.WriteByte('\n')
		}
		return bw.Flush()
	})
}

// Warnings lists what Open found and repaired: stale temp files, rows cut
// off by a crash, unreadable rows. Each repair is safe (at worst an item is
// synthesised again), but a user may want to know.
func (d *Dir) Warnings() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.warnings)
}

// Append adds one row to results.jsonl and fsyncs it before returning. A
// row for an id replaces any earlier row for that id (the file is compacted
// on Close and on the next Open). Write an item's output with WriteFile
// before appending its "ok" row, so that a row never claims a missing file.
func (d *Dir) Append(r Row) error {
	if err := r.check(); err != nil {
		return fmt.Errorf("recording result for %q: %w", r.ID, err)
	}
	line, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("recording result for %q: %w", r.ID, err)
	}
	line = append(line, '\n')

	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return errClosed
	}
	if d.broken != nil {
		return d.broken
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
	if _, had := d.rows[r.key()]; had {
		d.dirty = true
	}
	d.put(r)
	d.setOutcome(r.key(), r.Status)
	return nil
}

// setOutcome records this run's outcome for an item, counting each item once.
func (d *Dir) setOutcome(key, status string) {
	counter := func(s string) *int {
		switch s {
		case StatusOK:
			return &d.summary.OK
		case StatusError:
			return &d.summary.Errors
		case statusSkipped:
			return &d.summary.Skipped
		}
		return nil
	}
	if old := counter(d.run[key]); old != nil {
		*old--
	}
	d.run[key] = status
	*counter(status)++
}

// Done reports whether the item id was finished by an earlier run (or this
// one) with the same hash: its latest row is "ok", the hash matches and its
// WAV file still exists and is not empty. The first time Done reports true
// for an item it counts as skipped in Summary.
func (d *Dir) Done(id, hash string) bool {
	if id == "" {
		return false
	}
	key := Row{ID: id}.key()
	d.mu.Lock()
	e, ok := d.rows[key]
	d.mu.Unlock()
	if !ok || e.row.Status != StatusOK || e.row.Hash != hash {
		return false
	}
	path, err := d.resolve(e.row.Out, false)
	if err != nil {
		return false
	}
	info, err := os.Stat(path)
	if err != nil || !info.Mode().IsRegular() || info.Size() == 0 {
		return false
	}
	d.mu.Lock()
	if _, settled := d.run[key]; !settled {
		d.setOutcome(key, statusSkipped)
	}
	d.mu.Unlock()
	return true
}

// Row returns the latest row recorded for id, from this run or an earlier one.
func (d *Dir) Row(id string) (Row, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	e, ok := d.rows[Row{ID: id}.key()]
	return e.row, ok
}

// Summary counts this run's outcomes so far.
func (d *Dir) Summary() Summary {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.summary
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
	if err := d.lock.Close(); err != nil { // releases the flock
		errs = append(errs, fmt.Errorf("unlocking output directory: %w", err))
	}
	return errors.Join(errs...)
}
