package results

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/ttsgen/ttsgen/internal/atomicfile"
)

// Resolve returns the absolute final path for out, a "/"-separated path
// relative to the output directory, and creates its parent folders. It
// refuses empty and absolute paths, any ".." component, names with the
// reserved ".ttsgen-" prefix, a results file (results.jsonl,
// results.K-of-N.jsonl) in the directory itself, existing symlinks (in
// any component) that lead outside the directory, and an existing target
// that is not a regular file (a FIFO or a device is never replaced).
func (d *Dir) Resolve(out string) (string, error) {
	return d.resolve(out, true)
}

func (d *Dir) resolve(out string, create bool) (string, error) {
	rel, err := cleanRel(out)
	if err != nil {
		return "", fmt.Errorf("output %q: %w", out, err)
	}
	final := filepath.Join(d.abs, rel)
	parts := strings.Split(rel, string(filepath.Separator))
	cur := d.abs
	for i, part := range parts {
		cur = filepath.Join(cur, part)
		shown := filepath.ToSlash(filepath.Join(parts[:i+1]...))
		info, err := os.Lstat(cur)
		if errors.Is(err, fs.ErrNotExist) {
			break // the rest will be created by us, inside the directory
		}
		if err != nil {
			return "", fmt.Errorf("output %q: %w", out, err)
		}
		if info.Mode()&fs.ModeSymlink != 0 {
			target, err := filepath.EvalSymlinks(cur)
			if err != nil {
				return "", fmt.Errorf("output %q: %s is a symlink that cannot be followed: %w", out, shown, err)
			}
			if !within(d.real, target) {
				return "", fmt.Errorf("output %q: %s is a symlink to %s, outside the output directory", out, shown, target)
			}
			if info, err = os.Stat(cur); err != nil {
				return "", fmt.Errorf("output %q: %w", out, err)
			}
		}
		last := i == len(parts)-1
		if !last && !info.IsDir() {
			return "", fmt.Errorf("output %q: %s exists and is not a folder", out, shown)
		}
		if last && info.IsDir() {
			return "", fmt.Errorf("output %q is an existing folder", out)
		}
		if last && !info.Mode().IsRegular() { // a FIFO, a device, a socket: renaming over it would replace it
			return "", fmt.Errorf("output %q exists and is not a regular file (%v); outputs are only written as files", out, info.Mode().Type())
		}
	}
	if create {
		if err := os.MkdirAll(filepath.Dir(final), 0o777); err != nil {
			return "", fmt.Errorf("creating folder for output %q: %w", out, err)
		}
	}
	return final, nil
}

// cleanRel checks a relative output path and returns it cleaned, in the
// platform's separators.
func cleanRel(out string) (string, error) {
	switch {
	case out == "":
		return "", errors.New("empty path")
	case strings.ContainsRune(out, 0):
		return "", errors.New("contains a NUL byte")
	case strings.HasPrefix(out, "/") || filepath.IsAbs(out) || filepath.VolumeName(out) != "":
		return "", errors.New("must be a relative path")
	}
	p := filepath.FromSlash(out)
	for _, part := range strings.Split(p, string(filepath.Separator)) {
		if part == ".." {
			return "", errors.New(`must not contain ".."`)
		}
		if strings.HasPrefix(part, reservedPrefix) {
			return "", fmt.Errorf("must not use the reserved prefix %q", reservedPrefix)
		}
	}
	p = filepath.Clean(p)
	if p == "." {
		return "", errors.New("names the output directory itself")
	}
	if _, ok := shardOfFile(p); ok {
		return "", fmt.Errorf("would overwrite the results file %s", p)
	}
	return p, nil
}

// within reports whether path is root or lies beneath it (lexically).
func within(root, path string) bool {
	rel, err := filepath.Rel(root, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// WriteFile writes path (from Resolve) atomically. fn receives the temp file;
// w is always an *os.File, so it is also an io.WriteSeeker (WAV encoders seek
// back to fill in the header); fn must not close it. After fn returns, the
// file is fsynced, renamed over path and its folder fsynced. If anything
// fails (a full disk included) the temp file is removed, path is left as it
// was, and the error says what failed, e.g. "writing out/x.wav: no space left
// on device"; errors.Is still sees the cause (syscall.ENOSPC).
func (d *Dir) WriteFile(path string, fn func(w io.Writer) error) error {
	if !filepath.IsAbs(path) || !within(d.abs, path) || filepath.Clean(path) == d.abs {
		return fmt.Errorf("writing %s: not a file inside the output directory %s (use Resolve)", path, d.name)
	}
	d.mu.Lock()
	closed := d.closed
	d.mu.Unlock()
	if closed {
		return errClosed
	}
	return d.writeAtomic(path, fn)
}

func (d *Dir) writeAtomic(path string, fn func(w io.Writer) error) error {
	return atomicfile.Write(path, d.display(path), d.trackTemp, func(f *os.File) error { return fn(f) })
}

func (d *Dir) trackTemp(tmp string, writing bool) {
	d.tempMu.Lock()
	defer d.tempMu.Unlock()
	if writing {
		d.temps[tmp] = true
	} else {
		delete(d.temps, tmp)
	}
}

// display names path for messages: relative to the directory as the user
// gave it ("out/x.wav"), not the absolute path.
func (d *Dir) display(path string) string {
	rel, err := filepath.Rel(d.abs, path)
	if err != nil || !within(d.abs, path) {
		return path
	}
	return filepath.Join(d.name, rel)
}
