// Package decodetest decodes and measures audio (and subtitle) files with the real ffmpeg and ffprobe, for tests
// of what ttsgen encodes (scripts/setup.sh installs Debian's ffmpeg). A missing tool fails the test: an encoder checked by
// nothing but itself is not checked.
package decodetest

import (
	"encoding/binary"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Tool is the path of ffmpeg or ffprobe.
func Tool(t testing.TB, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		t.Fatalf("%s is needed to check encoded audio (scripts/setup.sh installs Debian's ffmpeg): %v", name, err)
	}
	return p
}

// Decode decodes a file with ffmpeg into 16-bit mono samples at the file's own rate.
func Decode(t testing.TB, path string) (samples []int16, rate int) {
	t.Helper()
	rate = ProbeInt(t, path, "stream=sample_rate")
	out, err := exec.Command(Tool(t, "ffmpeg"), "-hide_banner", "-loglevel", "error", "-i", path,
		"-f", "s16le", "-ac", "1", "-ar", strconv.Itoa(rate), "pipe:1").Output()
	if err != nil {
		t.Fatalf("ffmpeg could not decode %s: %v", filepath.Base(path), stderrOf(err))
	}
	return Samples(out), rate
}

// DecodeRaw reads headerless 16-bit little-endian mono PCM at rate through ffmpeg (which must be told what it
// is), as a consumer of `--format pcm` would.
func DecodeRaw(t testing.TB, path string, rate int) []int16 {
	t.Helper()
	out, err := exec.Command(Tool(t, "ffmpeg"), "-hide_banner", "-loglevel", "error", "-f", "s16le",
		"-ar", strconv.Itoa(rate), "-ac", "1", "-i", path, "-f", "s16le", "pipe:1").Output()
	if err != nil {
		t.Fatalf("ffmpeg could not read raw PCM %s: %v", filepath.Base(path), stderrOf(err))
	}
	return Samples(out)
}

// Samples reads 16-bit little-endian samples.
func Samples(b []byte) []int16 {
	s := make([]int16, len(b)/2)
	for i := range s {
		s[i] = int16(binary.LittleEndian.Uint16(b[2*i:]))
	}
	return s
}

// Probe asks ffprobe for one entry of a file ("format=duration", "stream=sample_rate").
func Probe(t testing.TB, path, entry string) string {
	t.Helper()
	return ProbeAll(t, path, entry)[0]
}

// ProbeAll is every value ffprobe gives for an entry ("packet=pts_time": one per packet, or subtitle cue).
func ProbeAll(t testing.TB, path, entry string) []string {
	t.Helper()
	out, err := exec.Command(Tool(t, "ffprobe"), "-v", "error", "-show_entries", entry,
		"-of", "default=noprint_wrappers=1:nokey=1", path).Output()
	if err != nil {
		t.Fatalf("ffprobe could not read %s: %v", filepath.Base(path), stderrOf(err))
	}
	return strings.Split(strings.TrimSpace(string(out)), "\n")
}

// ProbeInt is an integer entry of Probe.
func ProbeInt(t testing.TB, path, entry string) int {
	t.Helper()
	v, err := strconv.Atoi(Probe(t, path, entry))
	if err != nil {
		t.Fatalf("ffprobe %s of %s: %v", entry, filepath.Base(path), err)
	}
	return v
}

// Seconds is ffprobe's duration of a file.
func Seconds(t testing.TB, path string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(Probe(t, path, "format=duration"), 64)
	if err != nil {
		t.Fatalf("ffprobe duration of %s: %v", filepath.Base(path), err)
	}
	return v
}

func stderrOf(err error) string {
	if ee, ok := err.(*exec.ExitError); ok {
		return err.Error() + ": " + strings.TrimSpace(string(ee.Stderr))
	}
	return err.Error()
}
