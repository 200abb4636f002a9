package atomicfile

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
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
	if pid, local, ok := Owner(tracked[0]); string(b) != "new" || len(tracked) != 1 || !ok || !local || pid != os.Getpid() {
		t.Errorf("content %q, tracked %v (want one temp file named after this process)", b, tracked)
	}
	if info.Mode().Perm() != 0o600 {
		t.Errorf("mode %v after replacing a 0600 file; a replaced file keeps its permissions", info.Mode().Perm())
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

// A new file gets 0666 less the umask, as `> file` in a shell would.
func TestWriteHonoursTheUmask(t *testing.T) {
	for _, tc := range []struct {
		umask int
		want  os.FileMode
	}{{0o022, 0o644}, {0o077, 0o600}, {0o002, 0o664}} {
		t.Run(fmt.Sprintf("%03o", tc.umask), func(t *testing.T) {
			old := syscall.Umask(tc.umask)
			defer syscall.Umask(old)
			path := filepath.Join(t.TempDir(), "new.wav")
			if err := Write(path, "", nil, func(*os.File) error { return nil }); err != nil {
				t.Fatal(err)
			}
			if info, err := os.Stat(path); err != nil || info.Mode().Perm() != tc.want {
				t.Errorf("mode %v, %v; want %v", info.Mode().Perm(), err, tc.want)
			}
		})
	}
}

func TestWriteIntoMissingFolder(t *testing.T) {
	folder := filepath.Join(t.TempDir(), "no", "such")
	err := Write(filepath.Join(folder, "x"), "x", nil, func(*os.File) error { return nil })
	if err == nil || err.Error() != "writing x: creating a file in "+folder+": no such file or directory" || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("err = %v", err)
	}
}

func TestOwner(t *testing.T) {
	here := pidSpace()
	for _, tc := range []struct {
		name      string
		pid       int
		local, ok bool
	}{
		{TempPrefix + "123-" + here + "-456", 123, true, true},
		{"sub/" + TempPrefix + "7-" + here + "-1", 7, true, true},
		{TempPrefix + "7-0123456789ab-1", 7, false, true}, // written from another machine or container
		{TempPrefix + "123-456", 0, false, false},         // older ttsgens' names: owner unknown
		{TempPrefix + "123", 0, false, false},
		{TempPrefix + "x-" + here + "-1", 0, false, false},
		{TempPrefix + "0-" + here + "-1", 0, false, false},
		{TempPrefix + "5--1", 0, false, false},
		{"a.wav", 0, false, false},
	} {
		if pid, local, ok := Owner(tc.name); pid != tc.pid || local != tc.local || ok != tc.ok {
			t.Errorf("Owner(%q) = %d, %v, %v; want %d, %v, %v", tc.name, pid, local, ok, tc.pid, tc.local, tc.ok)
		}
	}
	if len(here) != 12 || here != pidSpace() {
		t.Errorf("pidSpace() = %q, then %q; want the same 12 hex digits", here, pidSpace())
	}
}

// RemoveStale deletes what dead writers left, in subfolders too, and nothing that a live process is writing: not
// this process's, not another running process's, no file whose owner it cannot tell, and another machine's only once
// it has long stayed unchanged.
func TestRemoveStaleKeepsLiveWritersFiles(t *testing.T) {
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	alive := exec.Command("cat")
	stdin, err := alive.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := alive.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close(); alive.Wait() })

	root := t.TempDir()
	name := func(pid int) string { return TempName(pid) + "42" }
	// Another machine's shard writing into the same folder: its pids mean nothing here (this one is dead here).
	abroad := fmt.Sprintf("%s%d-0123456789ab-42", TempPrefix, dead.Process.Pid)
	files := map[string]bool{ // path -> must survive
		name(dead.Process.Pid):                 false,
		"sub/deeper/" + name(dead.Process.Pid): false,
		name(os.Getpid()):                      true,
		"sub/" + name(alive.Process.Pid):       true,
		abroad:                                 true,
		"old/" + abroad:                        false, // unchanged for longer than a live writer ever leaves its file
		TempPrefix + "12345-1":                 true,
		"a.wav":                                true,
	}
	for p := range files {
		full := filepath.Join(root, p)
		os.MkdirAll(filepath.Dir(full), 0o755)
		if err := os.WriteFile(full, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	long := time.Now().Add(-ForeignStaleAfter - time.Minute)
	if err := os.Chtimes(filepath.Join(root, "old", abroad), long, long); err != nil {
		t.Fatal(err)
	}
	removed, err := RemoveStale(root, func(err error) { t.Errorf("warning: %v", err) })
	if err != nil || removed != 3 {
		t.Errorf("RemoveStale = %d, %v; want 3 removed", removed, err)
	}
	var left []string
	for p, keep := range files {
		_, err := os.Stat(filepath.Join(root, p))
		if (err == nil) != keep {
			left = append(left, fmt.Sprintf("%s exists=%v want %v", p, err == nil, keep))
		}
	}
	slices.Sort(left)
	if len(left) > 0 {
		t.Errorf("after RemoveStale:\n%s", strings.Join(left, "\n"))
	}
}
