package manifest

import (
	"context"
	"errors"
	"io"
	"os"
	"sync"
)

// OpenInput opens an input for reading: a regular file directly; stdin ("-") and anything else (a FIFO, a device)
// as a stream whose open and reads give way to ctx. Opening a FIFO waits for a writer and a read waits for input, in
// the kernel, where no context reaches: those waits happen in a goroutine of their own, which a cancelled scan
// leaves behind (the process is about to end).
func OpenInput(ctx context.Context, name string, stdin io.Reader) (io.ReadCloser, error) {
	if name == stdinName {
		if stdin == nil {
			return nil, errors.New("standard input is not available")
		}
		return newStream(ctx, func() (io.ReadCloser, error) { return io.NopCloser(stdin), nil }), nil
	}
	info, err := os.Stat(name)
	if err != nil {
		return nil, err
	}
	if !isStream(info) {
		return os.Open(name)
	}
	return newStream(ctx, func() (io.ReadCloser, error) { return os.Open(name) }), nil
}

// stream reads what a goroutine opens and reads, chunk by chunk, so that Read returns as soon as ctx is done.
type stream struct {
	ctx    context.Context
	chunks chan chunk
	stop   chan struct{} // closed by Close: the goroutine stops at its next chunk
	once   sync.Once
	rest   []byte
	err    error
}

type chunk struct {
	data []byte
	err  error
}

const streamChunk = 64 << 10

func newStream(ctx context.Context, open func() (io.ReadCloser, error)) *stream {
	s := &stream{ctx: ctx, chunks: make(chan chunk), stop: make(chan struct{})}
	go s.pump(open)
	return s
}

func (s *stream) pump(open func() (io.ReadCloser, error)) {
	r, err := open()
	if err != nil {
		s.send(chunk{err: err})
		return
	}
	defer r.Close()
	for {
		buf := make([]byte, streamChunk) // handed over to Read: a new one each time
		n, err := r.Read(buf)
		if !s.send(chunk{buf[:n], err}) || err != nil {
			return
		}
	}
}

// send hands c to Read, unless the reader has gone.
func (s *stream) send(c chunk) bool {
	select {
	case s.chunks <- c:
		return true
	case <-s.stop:
	case <-s.ctx.Done():
	}
	return false
}

func (s *stream) Read(p []byte) (int, error) {
	for len(s.rest) == 0 {
		if s.err != nil {
			return 0, s.err
		}
		select {
		case c := <-s.chunks:
			s.rest, s.err = c.data, c.err
		case <-s.ctx.Done():
			return 0, s.ctx.Err()
		}
	}
	n := copy(p, s.rest)
	s.rest = s.rest[n:]
	return n, nil
}

func (s *stream) Close() error {
	s.once.Do(func() { close(s.stop) })
	return nil
}
