package cmd

import (
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// runWith executes ttsgen in-process with the given standard output (a file, a pipe), as a shell would hand it.
func runWith(t *testing.T, stdout io.Writer, args ...string) runResult {
	t.Helper()
	var errOut bytes.Buffer
	root := NewRootCmd(IO{In: strings.NewReader(""), Out: stdout, ErrOut: &errOut})
	root.SetArgs(args)
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	code := exitCode(ctx, &errOut, root.ExecuteContext(ctx))
	return runResult{code: code, errOut: errOut.String()}
}

// wavSizes reads the RIFF and data sizes of a WAV header.
func wavSizes(t *testing.T, b []byte) (riff, data uint32) {
	t.Helper()
	if len(b) < 44 || string(b[0:4]) != "RIFF" || string(b[36:40]) != "data" {
		t.Fatalf("not a WAV: %q...", b[:min(len(b), 44)])
	}
	return binary.LittleEndian.Uint32(b[4:]), binary.LittleEndian.Uint32(b[40:])
}

// synth -o writes regular files and new paths atomically and streams into anything else, which stays what it was:
// a FIFO's reader gets the WAV, a device node is never replaced.
func TestSynthOutputIsNeverReplacedUnlessRegular(t *testing.T) {
	dir := isolate(t)
	needORT(t)
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip(err)
	}
	got := make(chan []byte, 1)
	go func() {
		b, _ := os.ReadFile(fifo)
		got <- b
	}()
	if r := run(t, "", "synth", "Into a FIFO.", "-o", fifo, "--voice", tinyVoice); r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.errOut)
	}
	var wav []byte
	select {
	case wav = <-got:
	case <-time.After(time.Minute):
		t.Fatal("the FIFO's reader got nothing: the FIFO was replaced?")
	}
	if riff, data := wavSizes(t, wav); riff != 0xFFFFFFFF || data != 0xFFFFFFFF || len(wav) < 10000 {
		t.Errorf("the FIFO's reader got %d bytes with sizes %x/%x; want a streamed WAV", len(wav), riff, data)
	}
	if info, err := os.Lstat(fifo); err != nil || info.Mode().Type() != fs.ModeNamedPipe {
		t.Errorf("the FIFO is now %v, %v", info.Mode(), err)
	}

	null := filepath.Join(dir, "null")
	if err := syscall.Mknod(null, syscall.S_IFCHR|0o666, 1<<8|3); err != nil { // /dev/null's numbers
		t.Logf("mknod: %v; skipping the device node", err)
	} else {
		if r := run(t, "", "synth", "Into a device.", "-o", null, "--voice", tinyVoice); r.code != 0 {
			t.Fatalf("exit %d: %s", r.code, r.errOut)
		}
		if info, err := os.Lstat(null); err != nil || info.Mode().Type() != fs.ModeDevice|fs.ModeCharDevice {
			t.Errorf("the device node is now %v, %v", info.Mode(), err)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) > 4 { // config, voices, fifo, null
		t.Errorf("left behind: %v", entries)
	}
}

// synth > out.wav completes the WAV header's sizes; synth | player keeps the streaming header.
func TestSynthToStdoutCompletesTheHeaderOfAFile(t *testing.T) {
	dir := isolate(t)
	needORT(t)
	for _, args := range [][]string{{}, {"-o", "-"}, {"-o", "/dev/stdout"}} {
		name := "stdout a file " + strings.Join(args, " ")
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(dir, "redirected.wav")
			f, err := os.Create(path)
			if err != nil {
				t.Fatal(err)
			}
			before, _ := f.Stat()
			r := runWith(t, f, append([]string{"synth", "Redirected to a file.", "--voice", tinyVoice}, args...)...)
			f.Close()
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.errOut)
			}
			checkWAVHeader(t, path) // sizes match the file's
			if after, err := os.Stat(path); err != nil || !os.SameFile(before, after) {
				t.Errorf("the redirected file was replaced, not written into")
			}
		})
	}
	t.Run("stdout a pipe", func(t *testing.T) {
		pr, pw, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		got := make(chan []byte, 1)
		go func() { b, _ := io.ReadAll(pr); got <- b }()
		r := runWith(t, pw, "synth", "Into a pipe.", "--voice", tinyVoice)
		pw.Close()
		if r.code != 0 {
			t.Fatalf("exit %d: %s", r.code, r.errOut)
		}
		if riff, data := wavSizes(t, <-got); riff != 0xFFFFFFFF || data != 0xFFFFFFFF {
			t.Errorf("sizes %x/%x into a pipe; want the streaming header's", riff, data)
		}
	})
}
