package outfile

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// writeHeaderThenPatch is what a WAV encoder does: a header, the data, then (if it can seek) the header again.
func writeHeaderThenPatch(seeked *bool) func(io.Writer) error {
	return func(w io.Writer) error {
		if _, err := io.WriteString(w, "HEAD-data"); err != nil {
			return err
		}
		ws, ok := w.(io.WriteSeeker)
		*seeked = ok
		if !ok {
			return nil
		}
		if _, err := ws.Seek(0, io.SeekStart); err != nil {
			return err
		}
		if _, err := io.WriteString(ws, "head"); err != nil {
			return err
		}
		_, err := ws.Seek(0, io.SeekEnd)
		return err
	}
}

func mknod(t *testing.T, path string, mode uint32, dev int) {
	t.Helper()
	if err := syscall.Mknod(path, mode, dev); err != nil {
		t.Skipf("mknod %s: %v", path, err)
	}
}

// Regular files and new paths are replaced atomically; a FIFO, a device or a socket is written into as a stream and
// stays what it was; nothing but a regular file is ever replaced.
func TestWriteTargets(t *testing.T) {
	for _, tc := range []struct {
		name     string
		setup    func(t *testing.T, dir string) (target string, read func() string)
		wantType fs.FileMode // of the target afterwards (Lstat)
		seekable bool
		want     string
	}{
		{"a new path", func(t *testing.T, dir string) (string, func() string) {
			p := filepath.Join(dir, "new.wav")
			return p, readFile(p)
		}, 0, true, "head-data"},
		{"a regular file", func(t *testing.T, dir string) (string, func() string) {
			p := filepath.Join(dir, "old.wav")
			os.WriteFile(p, []byte("old content, longer than the new"), 0o600)
			return p, readFile(p)
		}, 0, true, "head-data"},
		{"a symlink to a regular file", func(t *testing.T, dir string) (string, func() string) {
			real := filepath.Join(dir, "real.wav")
			os.WriteFile(real, []byte("old"), 0o644)
			link := filepath.Join(dir, "link.wav")
			os.Symlink("real.wav", link)
			return link, readFile(real)
		}, fs.ModeSymlink, true, "head-data"},
		{"a FIFO", func(t *testing.T, dir string) (string, func() string) {
			p := filepath.Join(dir, "fifo")
			if err := syscall.Mkfifo(p, 0o600); err != nil {
				t.Skip(err)
			}
			got := make(chan string, 1)
			go func() {
				b, _ := os.ReadFile(p) // the reader, waiting on the FIFO
				got <- string(b)
			}()
			return p, func() string { return <-got }
		}, fs.ModeNamedPipe, false, "HEAD-data"},
		{"a character device", func(t *testing.T, dir string) (string, func() string) {
			p := filepath.Join(dir, "null")
			mknod(t, p, syscall.S_IFCHR|0o666, 1<<8|3) // /dev/null's major 1, minor 3
			return p, func() string { return "HEAD-data" }
		}, fs.ModeDevice | fs.ModeCharDevice, false, "HEAD-data"},
		{"a Unix socket", func(t *testing.T, dir string) (string, func() string) {
			p := filepath.Join(dir, "sock")
			l, err := net.Listen("unix", p)
			if err != nil {
				t.Skip(err)
			}
			l.(*net.UnixListener).SetUnlinkOnClose(false)
			got := make(chan string, 1)
			go func() {
				defer l.Close()
				c, err := l.Accept()
				if err != nil {
					got <- err.Error()
					return
				}
				b, _ := io.ReadAll(c)
				got <- string(b)
			}()
			return p, func() string { return <-got }
		}, fs.ModeSocket, false, "HEAD-data"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			target, read := tc.setup(t, dir)
			before, _ := os.Stat(target)
			var seeked bool
			if err := Write(context.Background(), target, nil, writeHeaderThenPatch(&seeked)); err != nil {
				t.Fatal(err)
			}
			if got := read(); got != tc.want || seeked != tc.seekable {
				t.Errorf("got %q (seekable %v), want %q (seekable %v)", got, seeked, tc.want, tc.seekable)
			}
			info, err := os.Lstat(target)
			if err != nil || info.Mode().Type() != tc.wantType {
				t.Errorf("%s is now %v (%v), want type %v", target, info.Mode(), err, tc.wantType)
			}
			if before != nil && before.Mode().IsRegular() {
				if after, _ := os.Stat(target); after.Mode().Perm() != before.Mode().Perm() {
					t.Errorf("mode %v after replacing a %v file", after.Mode().Perm(), before.Mode().Perm())
				}
			}
			if entries, _ := os.ReadDir(dir); len(entries) > 2 {
				t.Errorf("left behind: %v", entries)
			}
		})
	}
}

// Standard output ("-", /dev/stdout) is written where it stands: a regular file seekably, its offsets counting from
// where the output starts (`{ echo x; ttsgen synth; } > f`); a pipe, a buffer or a file opened with O_APPEND (`>>`)
// as a stream.
func TestWriteToStdout(t *testing.T) {
	dir := t.TempDir()
	regular := func(flags int) func() (io.Writer, func() string) {
		return func() (io.Writer, func() string) {
			p := filepath.Join(dir, "stdout")
			os.WriteFile(p, []byte("before:"), 0o644)
			f, err := os.OpenFile(p, os.O_WRONLY|flags, 0)
			if err != nil {
				t.Fatal(err)
			}
			f.Seek(0, io.SeekEnd)
			return f, func() string { f.Close(); return string(must(os.ReadFile(p))) }
		}
	}
	for _, tc := range []struct {
		name     string
		target   string
		stdout   func() (io.Writer, func() string)
		seekable bool
		want     string
	}{
		{"- into a regular file", "-", regular(0), true, "before:head-data"},
		{"/dev/stdout into a regular file", "/dev/stdout", regular(0), true, "before:head-data"},
		{"- into a file opened to append", "-", regular(os.O_APPEND), false, "before:HEAD-data"},
		{"- into a buffer", "-", func() (io.Writer, func() string) {
			var b bytes.Buffer
			return &b, b.String
		}, false, "HEAD-data"},
		{"- into a pipe", "-", func() (io.Writer, func() string) {
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			got := make(chan string, 1)
			go func() { got <- string(must(io.ReadAll(r))) }()
			return w, func() string { w.Close(); return <-got }
		}, false, "HEAD-data"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stdout, read := tc.stdout()
			var seeked bool
			if err := Write(context.Background(), tc.target, stdout, writeHeaderThenPatch(&seeked)); err != nil {
				t.Fatal(err)
			}
			if got := read(); got != tc.want || seeked != tc.seekable {
				t.Errorf("got %q (seekable %v), want %q (seekable %v)", got, seeked, tc.want, tc.seekable)
			}
		})
	}
}

func TestWriteRefuses(t *testing.T) {
	dir := t.TempDir()
	os.Symlink(filepath.Join(dir, "missing"), filepath.Join(dir, "dangling"))
	for _, tc := range []struct{ target, want string }{
		{dir, "it is a folder; name a file in it"},
		{filepath.Join(dir, "dangling"), "it is a symlink that cannot be followed"},
	} {
		err := Write(context.Background(), tc.target, nil, func(io.Writer) error { return nil })
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Write(%s) = %v, want %q", tc.target, err, tc.want)
		}
	}
	if _, err := os.Lstat(filepath.Join(dir, "missing")); err == nil {
		t.Error("writing through a dangling symlink created its target")
	}
}

// Waiting for a FIFO's reader ends when the context is cancelled, and the FIFO stays.
func TestWriteToAFIFOWithoutReaderEndsWhenCancelled(t *testing.T) {
	p := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Skip(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Write(ctx, p, nil, func(io.Writer) error { return nil }) }()
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Write = %v, want context.Canceled", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Write still waits for a reader after its context was cancelled")
	}
	if f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK, 0); err == nil { // lets the opener finish
		f.Close()
	}
	if info, err := os.Lstat(p); err != nil || info.Mode().Type() != fs.ModeNamedPipe {
		t.Errorf("the FIFO is now %v, %v", info.Mode(), err)
	}
}

func readFile(p string) func() string { return func() string { return string(must(os.ReadFile(p))) } }

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
