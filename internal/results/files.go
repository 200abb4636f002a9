package results

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ttsgen/ttsgen/internal/shard"
)

// FileFor is the results file a run of shard s writes: results.jsonl without sharding, results.K-of-N.jsonl for
// shard K/N.
func FileFor(s shard.Spec) string {
	if !s.Enabled() {
		return FileName
	}
	return "results." + s.FileTag() + ".jsonl"
}

// shardOfFile reads a results file's name: the shard that writes it (the zero Spec for results.jsonl), and whether
// it is one.
func shardOfFile(name string) (shard.Spec, bool) {
	if name == FileName {
		return shard.Spec{}, true
	}
	tag, ok := strings.CutPrefix(name, "results.")
	if tag, ok = strings.CutSuffix(tag, ".jsonl"); !ok {
		return shard.Spec{}, false
	}
	return parseFileTag(tag) // only the name FileFor gives
}

// parseFileTag reads a shard's part of a file name, as Spec.FileTag writes it ("2-of-4"), and no other spelling.
func parseFileTag(tag string) (shard.Spec, bool) {
	s, err := shard.Parse(tag)
	if err != nil || s.FileTag() != tag {
		return shard.Spec{}, false
	}
	return s, true
}

// resultsFile is a results file of an output directory.
type resultsFile struct {
	name string
	spec shard.Spec
}

// resultsFiles lists the results files in dir, in a fixed order: results.jsonl first, then the shards' by count and
// index.
func resultsFiles(dir string) ([]resultsFile, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("listing results files in %s: %w", dir, err)
	}
	var files []resultsFile
	for _, e := range entries {
		if s, ok := shardOfFile(e.Name()); ok && e.Type().IsRegular() {
			files = append(files, resultsFile{e.Name(), s})
		}
	}
	slices.SortFunc(files, func(a, b resultsFile) int {
		if a.spec.Count != b.spec.Count {
			return a.spec.Count - b.spec.Count
		}
		return a.spec.Index - b.spec.Index
	})
	return files, nil
}

// eachLine calls fn with every line of the file at path, numbered from 1 and with its "\n" when it has one (only the
// last line may lack it); show names the file in errors. A file that does not exist has no lines.
func eachLine(path, show string, fn func(n int, line []byte)) error {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("opening %s: %w", show, err)
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 64<<10)
	for n := 1; ; n++ {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			fn(n, line)
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading %s: %w", show, err)
		}
	}
}

// unreadableLine says why a line is not a row; cut says it is the file's last and has no newline, which is what a
// writer killed mid-line leaves.
func unreadableLine(err error, cut bool) error {
	if cut {
		return fmt.Errorf("%w; it has no newline: cut off by an interrupted run?", err)
	}
	return err
}

// lockDir takes the locks of a run of shard s in the output directory abs (name as the user gave it, for messages):
// without shards, .ttsgen-lock exclusively, so that nothing else writes there; for a shard, .ttsgen-lock shared
// (shards of one job run side by side) and .ttsgen-lock.K-of-N exclusively (never two processes of one shard).
// The lock files stay once a run has started (releaseLocks with remove false); the locks die with the process, so a
// killed run leaves no stale lock. A refused run releases them with remove true, which takes away again the lock
// files it created, unless another process holds one; a refusal here does so itself.
func lockDir(abs, name string, s shard.Spec) ([]*heldLock, error) {
	common, err := lockAt(filepath.Join(abs, lockName), s.Enabled())
	if errors.Is(err, errLocked) {
		if s.Enabled() {
			return nil, fmt.Errorf("output directory %s is in use by another ttsgen batch without --shard (or a results merge): shards run only beside shards", name)
		}
		return nil, fmt.Errorf("output directory %s is in use by another ttsgen batch (or shards of one, or a results merge)", name)
	}
	if err != nil {
		return nil, fmt.Errorf("locking output directory %s: %w", name, err)
	}
	if !s.Enabled() {
		return []*heldLock{common}, nil
	}
	own, err := lockAt(filepath.Join(abs, shardLockName(s)), false)
	if err != nil {
		common.release(true)
		if errors.Is(err, errLocked) {
			return nil, fmt.Errorf("shard %s of output directory %s is in use by another ttsgen batch (of the same shard)", s, name)
		}
		return nil, fmt.Errorf("locking shard %s of output directory %s: %w", s, name, err)
	}
	return []*heldLock{common, own}, nil
}

func shardLockName(s shard.Spec) string { return lockName + "." + s.FileTag() }

// shardOfLock reads a lock file's name: the shard whose own lock it is (shardLockName), and whether it is one.
func shardOfLock(name string) (shard.Spec, bool) {
	tag, ok := strings.CutPrefix(name, lockName+".")
	if !ok {
		return shard.Spec{}, false
	}
	return parseFileTag(tag)
}

// heldLock is a lock file this process holds locked.
type heldLock struct {
	f       *os.File
	path    string
	created bool // this process created the file: a refused run takes it away again
}

// lockAt opens (creating) the lock file at path and locks it, shared or exclusively, without waiting.
func lockAt(path string, shared bool) (*heldLock, error) {
	return openLocked(path, func(f *os.File) error { return lockFile(f, shared) })
}

// waitLockAt opens (creating) the lock file at path and locks it exclusively, waiting for it.
func waitLockAt(path string) (*heldLock, error) { return openLocked(path, waitLockFile) }

// openLocked opens (creating) the lock file at path and locks it with lock. A lock file is only ever removed by a
// process that holds it exclusively (removeLockFile); one that was opened before and locked after it was removed
// is no longer the file at path, and locking it would lock nothing: then the file at path is opened again.
func openLocked(path string, lock func(*os.File) error) (*heldLock, error) {
	for range 100 {
		created := true
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
		if errors.Is(err, fs.ErrExist) {
			created = false
			f, err = os.OpenFile(path, os.O_RDWR, 0)
			if errors.Is(err, fs.ErrNotExist) {
				continue // removed in between: create it
			}
		}
		if err != nil {
			return nil, err
		}
		if err := lock(f); err != nil {
			f.Close() // one created here is another process's now: it locked the file first
			return nil, err
		}
		if same, err := isFileAt(f, path); err != nil || !same {
			f.Close()
			if err != nil {
				return nil, err
			}
			continue
		}
		return &heldLock{f: f, path: path, created: created}, nil
	}
	return nil, fmt.Errorf("locking %s: it keeps being removed and created again", path)
}

// isFileAt reports whether f, opened at path, is still the file there.
func isFileAt(f *os.File, path string) (bool, error) {
	held, err := f.Stat()
	if err != nil {
		return false, err
	}
	now, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return os.SameFile(held, now), nil
}

// release unlocks the lock file; with remove, a lock file this process created is taken away first, unless
// another process holds it too (a shard beside this one holding .ttsgen-lock shared): what a refused run does, so
// that it leaves the folder as it found it.
func (l *heldLock) release(remove bool) error {
	if remove && l.created {
		removeHeld(l.f, l.path)
	}
	return l.f.Close() // releases the flock
}

// releaseLocks releases each lock (see heldLock.release), the last taken first.
func releaseLocks(locks []*heldLock, remove bool) error {
	var errs []error
	for i := len(locks) - 1; i >= 0; i-- {
		errs = append(errs, locks[i].release(remove))
	}
	return errors.Join(errs...)
}

// removeHeld removes the lock file f, open at path, if it can lock it exclusively (a lock this process holds
// exclusively already, or shared where no other process holds it): never a lock file another process holds. A lock
// held shared is lost where it cannot be made exclusive, so f is to be closed next. Best effort: where the file
// stays, it is a lock file as any other.
func removeHeld(f *os.File, path string) bool {
	if lockFile(f, false) != nil {
		return false
	}
	if same, err := isFileAt(f, path); err != nil || !same {
		return false
	}
	return os.Remove(path) == nil
}

// removeLockFile removes the lock file at path unless a process holds it (locked, shared or exclusively), and
// reports whether it did; one that is not there is not removed.
func removeLockFile(path string) bool {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	return removeHeld(f, path)
}

// ErrShardCounts marks a folder that holds, or would hold, results files of shards of different counts: the
// counts split the items differently, so their rows cannot be told apart per shard nor merged as one job's.
var ErrShardCounts = errors.New("shards of different counts split the items differently, so their results are not merged together")

// otherCounts lists files' shard files whose count is not count, the first of each count first.
func otherCounts(files []resultsFile, count int) []resultsFile {
	var other []resultsFile
	for _, f := range files {
		if f.spec.Enabled() && f.spec.Count != count {
			other = append(other, f)
		}
	}
	return other
}

// mixedCounts is the first shard file of a second count in files (sorted as resultsFiles sorts them), beside the
// first shard file of the first; ok is false when every shard file has one count.
func mixedCounts(files []resultsFile) (first, second resultsFile, ok bool) {
	for _, f := range files {
		if !f.spec.Enabled() {
			continue
		}
		if !first.spec.Enabled() {
			first = f
		} else if f.spec.Count != first.spec.Count {
			return first, f, true
		}
	}
	return first, second, false
}
