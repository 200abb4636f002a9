package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestWriteReplacesWholeFileOnly(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.wav")
	if err := os.WriteFile(path, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	var tracked []string
	track := func(tmp string, writing bool) {
		if writing {
			tracked = append(tracked, tmp)
		}
	}
	if err := Write(path, "", track, func(f *os.File) error { _, err := f.WriteString("new"); return err }); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	info, _ := os.Stat(path)
	if string(b) != "new" || info.Mode().Perm() != 0o644 || len(tracked) != 1 || !strings.HasPrefix(filepath.Base(tracked[0]), TempPrefix) {
		t.Errorf("content %q, mode %v, tracked %v", b, info.Mode().Perm(), tracked)
	}

	full := Write(path, "out/a.wav", nil, func(f *os.File) error {
		f.WriteString("partial")
		return syscall.ENOSPC
	})
	if !errors.Is(full, syscall.ENOSPC) || full.Error() != "writing out/a.wav: no space left on device" {
		t.Errorf("err = %v", full)
	}
	b, _ = os.ReadFile(path)
	entries, _ := os.ReadDir(dir)
	if string(b) != "new" || len(entries) != 1 {
		t.Errorf("after a failed write: content %q, %d entries (temp file left?)", b, len(entries))
	}

	func() {
		defer func() { _ = recover() }()
		_ = Write(path, "", nil, func(*os.File) error { panic("encoder bug") })
	}()
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("a panicking writer left %d entries", len(entries))
	}
}

func TestWriteIntoMissingFolder(t *testing.T) {
	folder := filepath.Join(t.TempDir(), "no", "such")
	err := Write(filepath.Join(folder, "x"), "x", nil, func(*os.File) error { return nil })
	if err == nil || err.Error() != "writing x: creating a file in "+folder+": no such file or directory" || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("err = %v", err)
	}
}
