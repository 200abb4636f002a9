// Package atomicfile writes files so that a reader, a crash or a full disk never sees a partial one: the content goes
// to a temporary file beside the target, which is synced and renamed over it.
//
// A temporary file is named after the process that writes it (TempPrefix, the pid, the pid's namespace, a random
// part), so that leftovers of a killed process can be told from the files another live process is writing right now:
// RemoveStale deletes only the former. The namespace matters because output folders are shared: shards of one job on
// other machines or in other containers write into the same folder, and their pids mean nothing here.
package atomicfile

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// TempPrefix starts the name of every temporary file Write creates: TempPrefix + pid + "-" + pid namespace + "-" +
// random digits.
const TempPrefix = ".ttsgen-tmp-"

// ForeignStaleAfter is how long a temporary file written from another pid namespace (another machine or container)
// must have stayed unchanged before RemoveStale takes it for a dead writer's: its owner cannot be asked from here, and
// a live writer adds to its file far more often than that.
const ForeignStaleAfter = 24 * time.Hour

// Write creates or replaces path with what fn writes. fn gets the temporary *os.File (an io.WriteSeeker: WAV
// encoders seek back to fill in their header) and must not close it. Then the file is synced, closed and renamed over
// path, and the folder is synced. A new file gets mode 0666 less the umask, as the shell's `>` gives it; a file that
// is replaced keeps its permissions. On any failure, a panic in fn included, the temporary file is removed and path
// is left as it was; the error names the file as name (path when "") and what failed, e.g.
// "writing out/x.wav: no space left on device", with errors.Is still seeing the cause (syscall.ENOSPC).
// track, when not nil, is told each temporary file's name when it is created (true) and gone (false).
func Write(path, name string, track func(tmp string, writing bool), fn func(*os.File) error) error {
	if name == "" {
		name = path
	}
	folder := filepath.Dir(path)
	f, err := createTemp(folder)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) { // the temp file's random name means nothing to the user; its folder does
			err = pe.Err
		}
		return fmt.Errorf("writing %s: creating a file in %s: %w", name, folder, err)
	}
	tmp := f.Name()
	if track != nil {
		track(tmp, true)
	}
	renamed := false
	defer func() {
		if !renamed {
			f.Close()
			os.Remove(tmp)
		}
		if track != nil {
			track(tmp, false)
		}
	}()
	if err := fn(f); err != nil {
		return fmt.Errorf("writing %s: %w", name, withoutTempName(err, tmp))
	}
	steps := []struct {
		what string
		do   func() error
	}{
		{"keeping the replaced file's permissions", func() error { return keepMode(f, path) }},
		{"syncing", f.Sync},
		{"closing", f.Close},
		{"renaming into place", func() error { return os.Rename(tmp, path) }},
	}
	for _, s := range steps {
		if err := s.do(); err != nil {
			return fmt.Errorf("writing %s: %s: %w", name, s.what, withoutTempName(err, tmp))
		}
	}
	renamed = true
	if err := syncDir(folder); err != nil {
		return fmt.Errorf("writing %s: syncing its folder: %w", name, err)
	}
	return nil
}

// createTemp makes a new temporary file in folder with mode 0666, which the umask then narrows.
func createTemp(folder string) (*os.File, error) {
	prefix := TempName(os.Getpid())
	for {
		name := filepath.Join(folder, prefix+strconv.FormatUint(rand.Uint64(), 10))
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return f, err
	}
}

// keepMode gives f the permissions of the regular file at path, if there is one.
func keepMode(f *os.File, path string) error {
	info, err := os.Stat(path)
	if err != nil || !info.Mode().IsRegular() {
		return nil
	}
	return f.Chmod(info.Mode().Perm())
}

// TempName is how the temporary files of the process pid, of this pid namespace, begin; a random part follows.
func TempName(pid int) string { return TempPrefix + strconv.Itoa(pid) + "-" + pidSpace() + "-" }

// Owner is the process id in a temporary file's name and whether that id is one of this pid namespace's (local),
// which a process here can check; ok is false for a name Write did not make (an older ttsgen's included).
func Owner(name string) (pid int, local, ok bool) {
	rest, found := strings.CutPrefix(filepath.Base(name), TempPrefix)
	if !found {
		return 0, false, false
	}
	parts := strings.Split(rest, "-")
	if len(parts) != 3 || parts[1] == "" {
		return 0, false, false
	}
	pid, err := strconv.Atoi(parts[0])
	if err != nil || pid <= 0 {
		return 0, false, false
	}
	return pid, parts[1] == pidSpace(), true
}

// pidSpace names the pid namespace this process lives in, in 12 hex digits: on Linux its boot's id and the
// namespace's inode (processes in one container, or in the host's namespace, share it; another machine or
// container has another), elsewhere the host's name.
func pidSpace() string {
	boot, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	ns, nsErr := os.Readlink("/proc/self/ns/pid")
	key := string(boot) + ns
	if err != nil || nsErr != nil {
		host, _ := os.Hostname()
		key = "host " + host
	}
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:6])
}

// RemoveStale deletes, anywhere under root, the temporary files whose writer is gone: those of this pid namespace
// whose process has ended, and those of another (a shard on another machine) unchanged for ForeignStaleAfter. A file
// that a live process (this one included) is writing stays, and so does a name Write did not make. Folders that
// cannot be read are reported to warn and skipped. It returns how many files it removed.
func RemoveStale(root string, warn func(error)) (int, error) {
	removed := 0
	err := filepath.WalkDir(root, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			if path == root {
				return err
			}
			warn(fmt.Errorf("looking for stale temp files: %w", err))
			return nil
		}
		if !e.Type().IsRegular() {
			return nil
		}
		if !writerGone(e) {
			return nil
		}
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("removing stale temp file: %w", err)
		}
		removed++
		return nil
	})
	return removed, err
}

// writerGone reports whether the temporary file e was left by a writer that has ended.
func writerGone(e fs.DirEntry) bool {
	pid, local, ok := Owner(e.Name())
	switch {
	case !ok:
		return false
	case local:
		return processGone(pid)
	}
	info, err := e.Info()
	return err == nil && time.Since(info.ModTime()) > ForeignStaleAfter
}

// withoutTempName drops the temp file's name from an *os.PathError or *os.LinkError about it: the user knows the
// file by its final name, which the caller adds.
func withoutTempName(err error, tmp string) error {
	var pe *os.PathError
	if errors.As(err, &pe) && pe.Path == tmp && err == error(pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) && le.Old == tmp && err == error(le) {
		return le.Err
	}
	return err
}

func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := f.Sync(); err != nil && !errors.Is(err, syscall.EINVAL) { // some filesystems cannot sync folders
		return err
	}
	return nil
}
