package cmd

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"
)

// readingSignal closes reading when the first Read starts, then reads r.
type readingSignal struct {
	r       io.Reader
	once    sync.Once
	reading chan struct{}
}

func (s *readingSignal) Read(p []byte) (int, error) {
	s.once.Do(func() { close(s.reading) })
	return s.r.Read(p)
}

// interruptSynth runs synth with args and stdin in-process, cancels its context as Execute does on the first SIGINT
// once started is closed, and returns the exit status; a synth that does not end after the interrupt fails the test
// (the bound is a hang detector, far above what ending takes).
func interruptSynth(t *testing.T, stdin io.Reader, started <-chan struct{}, args ...string) (code int, errOut string) {
	t.Helper()
	var out, errBuf bytes.Buffer
	root := NewRootCmd(IO{In: stdin, Out: &out, ErrOut: &errBuf})
	root.SetArgs(append([]string{"synth"}, args...))
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	done := make(chan int, 1)
	go func() { done <- exitCode(ctx, &errBuf, root.ExecuteContext(ctx)) }()
	const hang = 20 * time.Second
	select {
	case <-started:
	case c := <-done:
		t.Fatalf("synth ended with %d before the interrupt: %s", c, errBuf.String())
	case <-time.After(hang):
		t.Fatal("synth never started reading")
	}
	cancel(errInterrupted)
	select {
	case c := <-done:
		return c, errBuf.String()
	case <-time.After(hang):
		t.Fatal("synth still waits for its text after the first interrupt")
	}
	return 0, ""
}

// The first Ctrl-C ends a synth that waits for its text: on a standard input that never gets any (a pipe whose
// writer stays open), or for a writer of the FIFO given to --file. It exits 130 and writes nothing.
func TestSynthStopsWaitingForTextOnTheFirstInterrupt(t *testing.T) {
	t.Run("stdin", func(t *testing.T) {
		dir := isolate(t)
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { w.Close(); r.Close() }) // the abandoned read ends here
		stdin := &readingSignal{r: r, reading: make(chan struct{})}
		wav := filepath.Join(dir, "x.wav")
		if code, errOut := interruptSynth(t, stdin, stdin.reading, "-o", wav); code != ExitInterrupted || errOut != "" {
			t.Errorf("exit %d, stderr %q; want %d and nothing said (Execute says it was interrupted)", code, errOut, ExitInterrupted)
		}
		if _, err := os.Stat(wav); err == nil {
			t.Error("an interrupted synth wrote its output")
		}
	})
	t.Run("--file FIFO", func(t *testing.T) {
		dir := isolate(t)
		fifo := filepath.Join(dir, "text.fifo")
		if err := syscall.Mkfifo(fifo, 0o600); err != nil {
			t.Skipf("no FIFO here: %v", err)
		}
		// Opening a FIFO without a writer waits in the kernel: the interrupt comes while or before it waits, and
		// either way must end the wait.
		started := make(chan struct{})
		close(started)
		t.Cleanup(func() { // let the abandoned open return
			if w, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
				w.Close()
			}
		})
		if code, errOut := interruptSynth(t, bytes.NewReader(nil), started, "--file", fifo, "-o", filepath.Join(dir, "x.wav")); code != ExitInterrupted || errOut != "" {
			t.Errorf("exit %d, stderr %q; want %d", code, errOut, ExitInterrupted)
		}
	})
}
