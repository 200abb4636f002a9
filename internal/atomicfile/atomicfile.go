// Package atomicfile writes files so that a reader, a crash or a full disk never sees a partial one: the content goes
// to a temporary file beside the target, which is synced and renamed over it.
package atomicfile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// TempPrefix starts the name of every temporary file Write creates, so leftovers of a killed process can be found.
const TempPrefix = ".ttsgen-tmp-"

// Write creates or replaces path with what fn writes. fn gets the temporary *os.File (an io.WriteSeeker: WAV
// encoders seek back to fill in their header) and must not close it. Then the file is made 0644, synced, closed and
// renamed over path, and the folder is synced. On any failure, a panic in fn included, the temporary file is removed
// and path is left as it was; the error names the file as name (path when "") and what failed, e.g.
// "writing out/x.wav: no space left on device", with errors.Is still seeing the cause (syscall.ENOSPC).
// track, when not nil, is told each temporary file's name when it is created (true) and gone (false).
func Write(path, name string, track func(tmp string, writing bool), fn func(*os.File) error) error {
	if name == "" {
		name = path
	}
	folder := filepath.Dir(path)
	f, err := os.CreateTemp(folder, TempPrefix+"*")
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
		{"setting permissions", func() error { return f.Chmod(0o644) }}, // CreateTemp makes 0600
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
