// Package outfile writes one output where the user named it, without ever replacing what is not a regular file: a
// new path or a regular file is written atomically (atomicfile); a FIFO, a device or a socket is opened and written
// into as a stream; "-" and /dev/stdout are standard output, which is written in place and, when it is a regular
// file (`> out.wav`), can be seeked back into to complete a header.
package outfile

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/ttsgen/ttsgen/internal/atomicfile"
)

// Write writes one output to target, a path or "-" for stdout, through fn. fn gets an io.WriteSeeker when the output
// can seek back (a regular file: the temporary file of an atomic write, or a redirected stdout, whose offsets then
// count from where the output starts), and otherwise a plain io.Writer that cannot seek (a pipe, a FIFO, a device,
// a socket), into which it should stream. A cancelled ctx ends a wait for a FIFO's reader.
func Write(ctx context.Context, target string, stdout io.Writer, fn func(w io.Writer) error) error {
	if fd, ok := descriptor(target); ok {
		switch fd {
		case 1:
			return toDescriptor(stdout, target, fn)
		case 2:
			return toDescriptor(os.Stderr, target, fn)
		}
		return toDescriptor(os.NewFile(uintptr(fd), target), target, fn)
	}
	link, err := os.Lstat(target)
	if errors.Is(err, fs.ErrNotExist) {
		return toFile(target, target, fn)
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", target, err)
	}
	info, err := os.Stat(target)
	if err != nil {
		return fmt.Errorf("writing %s: it is a symlink that cannot be followed: %w", target, err)
	}
	switch mode := info.Mode(); {
	case mode.IsRegular():
		real := target
		if link.Mode()&fs.ModeSymlink != 0 { // replace the file the link points to, keeping the link
			if real, err = filepath.EvalSymlinks(target); err != nil {
				return fmt.Errorf("writing %s: %w", target, err)
			}
		}
		return toFile(real, target, fn)
	case mode.IsDir():
		return fmt.Errorf("writing %s: it is a folder; name a file in it", target)
	case mode&fs.ModeSocket != 0:
		var d net.Dialer
		conn, err := d.DialContext(ctx, "unix", target)
		if err != nil {
			return fmt.Errorf("writing %s: connecting to the socket: %w", target, err)
		}
		return toStream(conn, target, fn)
	default: // a FIFO or a device
		f, err := openForWriting(ctx, target)
		if err != nil {
			return fmt.Errorf("writing %s: %w", target, err)
		}
		return toStream(f, target, fn)
	}
}

// descriptor recognises the names of open descriptors: "-" and /dev/stdout are 1, /dev/stderr 2, /dev/fd/N and
// /proc/self/fd/N are N. Opening such a name anew would give another file offset (or, through rename, replace the
// file), so they are written through the descriptor itself.
func descriptor(target string) (int, bool) {
	switch target {
	case "-", "/dev/stdout":
		return 1, true
	case "/dev/stderr":
		return 2, true
	}
	for _, dir := range []string{"/dev/fd/", "/proc/self/fd/"} {
		if n, found := strings.CutPrefix(target, dir); found {
			if fd, err := strconv.Atoi(n); err == nil && fd >= 0 {
				return fd, true
			}
		}
	}
	return 0, false
}

func toFile(path, name string, fn func(io.Writer) error) error {
	return atomicfile.Write(path, name, nil, func(f *os.File) error { return fn(f) })
}

// toDescriptor writes into an open descriptor: seekably if it is a regular file opened without O_APPEND (offsets
// counting from where it stands now), else as a stream.
func toDescriptor(w io.Writer, name string, fn func(io.Writer) error) error {
	if f, ok := w.(*os.File); ok {
		if info, err := f.Stat(); err == nil && info.Mode().IsRegular() && !appendOnly(f) {
			if base, err := f.Seek(0, io.SeekCurrent); err == nil {
				return wrap(name, fn(&offsetFile{f: f, base: base}))
			}
		}
	}
	return wrap(name, fn(stream{w}))
}

// toStream writes into w, which it closes.
func toStream(w io.WriteCloser, name string, fn func(io.Writer) error) error {
	err := fn(stream{w})
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	return wrap(name, err)
}

func wrap(name string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("writing %s: %w", name, err)
}

// openForWriting opens a FIFO or device for writing. Opening a FIFO waits, in the kernel, until a reader opens it:
// that wait happens in a goroutine, so that a cancelled ctx ends it (a reader that comes later gets the file closed
// at once). A FIFO is then in Go's poller, and a cancelled ctx closes it, which ends a write its reader does not
// take.
func openForWriting(ctx context.Context, path string) (io.WriteCloser, error) {
	type opened struct {
		f   *os.File
		err error
	}
	ch := make(chan opened, 1)
	go func() {
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		ch <- opened{f, err}
	}()
	select {
	case o := <-ch:
		if o.err != nil {
			return nil, o.err
		}
		return &cancelableFile{File: o.f, stop: context.AfterFunc(ctx, func() { o.f.Close() })}, nil
	case <-ctx.Done():
		go func() {
			if o := <-ch; o.f != nil {
				o.f.Close()
			}
		}()
		return nil, ctx.Err()
	}
}

// cancelableFile is a file that a cancelled context has closed, or will.
type cancelableFile struct {
	*os.File
	stop func() bool
}

func (c *cancelableFile) Close() error {
	if !c.stop() {
		return nil // the context closed it
	}
	return c.File.Close()
}

// stream is a writer that cannot seek, whatever it is underneath (an *os.File on a pipe has a Seek that fails).
type stream struct{ io.Writer }

// offsetFile is a regular file written from base on: its offsets count from there, so that a header written first
// is at offset 0 whatever came before it in the file.
type offsetFile struct {
	f    *os.File
	base int64
}

func (o *offsetFile) Write(p []byte) (int, error) { return o.f.Write(p) }

func (o *offsetFile) Seek(offset int64, whence int) (int64, error) {
	if whence == io.SeekStart {
		offset += o.base
	}
	pos, err := o.f.Seek(offset, whence)
	return pos - o.base, err
}
