package audio

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
)

// aacEncoder writes AAC-LC in ADTS through ffmpeg's native AAC encoder, run as a child process found on PATH.
// Debian main has no AAC encoding library to link (FDK AAC is non-free; ffmpeg's encoder lives in libavcodec,
// whose API would cost more code than this pipe), and AAC is the one format here that Go's build does not need:
// without ffmpeg, asking for AAC fails with a clear message and every other format still works. ADTS has no
// place for the encoder's delay, so a decoder gives about 1,024 samples of priming silence first.
type aacEncoder struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	copied chan error // the copy of ffmpeg's output to the caller's writer, once it ends
	stderr *bytes.Buffer
	buf    []byte
	closed bool
}

// aacRates are the sample rates ffmpeg's AAC encoder codes (`ffmpeg -h encoder=aac`) from MinSampleRate up, lowest
// first; given another, ffmpeg would resample to one of them unasked.
var aacRates = []int{8000, 11025, 12000, 16000, 22050, 24000, 32000, 44100, 48000, 64000, 88200, 96000}

// ErrNoFFmpeg is the error for AAC output when ffmpeg is not installed.
var ErrNoFFmpeg = errors.New("AAC output needs ffmpeg on PATH (Debian: apt-get install ffmpeg); flac, opus and mp3 do not")

func newAACEncoder(w io.Writer, sampleRate, bitrate int) (*aacEncoder, error) {
	ffmpeg, err := exec.LookPath("ffmpeg")
	if err != nil {
		return nil, ErrNoFFmpeg
	}
	cmd := exec.Command(ffmpeg, "-hide_banner", "-loglevel", "error", "-nostdin",
		"-f", "s16le", "-ar", strconv.Itoa(sampleRate), "-ac", "1", "-i", "pipe:0",
		"-c:a", "aac", "-b:a", strconv.Itoa(bitrate), "-flush_packets", "1", "-f", "adts", "pipe:1")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	e := &aacEncoder{cmd: cmd, stdin: stdin, copied: make(chan error, 1), stderr: &bytes.Buffer{}}
	cmd.Stderr = e.stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting ffmpeg: %w", err)
	}
	go func() {
		_, err := io.Copy(w, stdout)
		if err != nil {
			// Nothing reads ffmpeg's output any more: stop it, so that the next Write fails rather than blocks.
			_ = cmd.Process.Kill()
			err = fmt.Errorf("writing AAC: %w", err)
		}
		e.copied <- err
	}()
	return e, nil
}

func (e *aacEncoder) Write(pcm []int16) error {
	if e.closed {
		return fmt.Errorf("aac: %w", errClosed)
	}
	e.buf = appendLE16(e.buf[:0], pcm)
	if _, err := e.stdin.Write(e.buf); err != nil {
		// ffmpeg is gone or going: its own error says more than a broken pipe.
		if cerr := e.Close(); cerr != nil {
			return cerr
		}
		return fmt.Errorf("aac: sending samples to ffmpeg: %w", err)
	}
	return nil
}

// Flush does nothing: ffmpeg writes each AAC frame as soon as it has coded it.
func (e *aacEncoder) Flush() error { return nil }

// Close ends ffmpeg's input and waits for it to write the rest and exit. A failed write of its output comes first:
// the copy kills ffmpeg then, and "signal: killed" would hide the cause (a full disk, a closed pipe).
func (e *aacEncoder) Close() error {
	if e.closed {
		return nil
	}
	e.closed = true
	inErr := e.stdin.Close()
	copyErr := <-e.copied // ends when ffmpeg closes its output, at exit
	waitErr := e.cmd.Wait()
	switch {
	case copyErr != nil:
		return copyErr
	case waitErr != nil:
		return fmt.Errorf("aac: ffmpeg: %w%s", waitErr, e.said())
	case inErr != nil:
		return fmt.Errorf("aac: %w", inErr)
	}
	return nil
}

// said is what ffmpeg printed on stderr, for an error message (once it has exited).
func (e *aacEncoder) said() string {
	if s := strings.TrimSpace(e.stderr.String()); s != "" {
		return " (ffmpeg: " + s + ")"
	}
	return ""
}
