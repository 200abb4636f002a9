package cmd

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// built is the ttsgen binary for tests that need a real process (signals, SIGKILL, shell redirection cannot be
// tested in-process), built once per test run; TestMain removes it.
var built struct {
	once      sync.Once
	dir, path string
	err       error
}

func buildBinary(t *testing.T) string {
	t.Helper()
	built.once.Do(func() {
		if built.dir, built.err = os.MkdirTemp("", "ttsgen-test-bin-"); built.err != nil {
			return
		}
		built.path = filepath.Join(built.dir, "ttsgen")
		out, err := exec.Command("go", "build", "-o", built.path, "github.com/ttsgen/ttsgen").CombinedOutput()
		if err != nil {
			built.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	return built.path
}

func countLines(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	return strings.Count(string(b), "\n")
}

// TestBatchInterruptedThenResumed is the promise of `ttsgen batch` on long jobs: Ctrl-C leaves only complete WAVs
// and no temporary files, exits 130, and running the same command again finishes the job with exactly one WAV and
// one ok row per item.
func TestBatchInterruptedThenResumed(t *testing.T) {
	dir := isolate(t)
	needORT(t)
	start := time.Now()
	bin := buildBinary(t)
	t.Logf("build took %v", time.Since(start))
	var manifest strings.Builder
	const items = 60
	for i := range items {
		fmt.Fprintf(&manifest, `{"id":"item%02d","text":"This is item number %d of the interrupted batch, long enough to take a little while to speak, and then some more words for good measure."}`+"\n", i, i)
	}
	in := writeFile(t, filepath.Join(dir, "in.jsonl"), manifest.String())
	out := filepath.Join(dir, "out")
	args := []string{"batch", in, "-o", out, "--voice", tinyVoice, "--jobs", "1", "--threads", "1"}

	cmd := exec.Command(bin, args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	results := filepath.Join(out, "results.jsonl")
	deadline := time.Now().Add(60 * time.Second)
	for countLines(results) < 3 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	signalled := time.Now()
	err := cmd.Wait()
	t.Logf("interrupted run exited %v after the signal", time.Since(signalled))
	var exitErr *exec.ExitError
	if !errors.As(err, &exitErr) || exitErr.ExitCode() != ExitInterrupted {
		t.Fatalf("interrupted run: %v, want exit %d; stderr:\n%s", err, ExitInterrupted, stderr.String())
	}
	first := readRows(t, out)
	if len(first) == 0 || len(first) >= items {
		t.Fatalf("interrupted run recorded %d rows; the test needs it stopped part-way", len(first))
	}
	checkOutputFolder(t, out, len(first))

	again := exec.Command(bin, args...)
	resumed := time.Now()
	msg, err := again.CombinedOutput()
	t.Logf("resumed run took %v", time.Since(resumed))
	if err != nil {
		t.Fatalf("resumed run: %v\n%s", err, msg)
	}
	if want := fmt.Sprintf("%d skipped", len(first)); !strings.Contains(string(msg), want) {
		t.Errorf("resumed run should skip the %d finished items:\n%s", len(first), msg)
	}
	rows := readRows(t, out)
	okPerID := map[string]int{}
	for _, r := range rows {
		if r.Status == "ok" {
			okPerID[r.ID]++
		}
	}
	if len(okPerID) != items {
		t.Errorf("%d items have an ok row, want %d", len(okPerID), items)
	}
	for id, n := range okPerID {
		if n != 1 {
			t.Errorf("item %s has %d ok rows", id, n)
		}
	}
	checkOutputFolder(t, out, items)
}

// checkOutputFolder asserts that out holds exactly wavs complete WAV files and no temporary files.
func checkOutputFolder(t *testing.T, out string, wavs int) {
	t.Helper()
	checkOutputFolderAllowing(t, out, wavs, 0)
}

// checkWAVHeader asserts that path is a whole 16-bit mono WAV of at least a second: its header's sizes match the
// file's (a file cut short would not), without decoding every sample.
func checkWAVHeader(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	le := binary.LittleEndian
	if len(b) < 44 || string(b[0:4]) != "RIFF" || string(b[8:12]) != "WAVE" || string(b[36:40]) != "data" {
		t.Errorf("%s: not a WAV file", path)
		return
	}
	if riff, data := int(le.Uint32(b[4:])), int(le.Uint32(b[40:])); riff != len(b)-8 || data != len(b)-44 {
		t.Errorf("%s: header sizes %d/%d do not match the file's %d bytes (incomplete file)", path, riff, data, len(b))
	}
	if rate, bits := le.Uint32(b[24:]), le.Uint16(b[34:]); len(b)-44 < int(rate)*int(bits)/8 {
		t.Errorf("%s: less than a second of audio", path)
	}
}
