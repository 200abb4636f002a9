package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ttsgen/ttsgen/internal/audio/decodetest"
)

// --sample-rate with a --format that does not code it is a usage error before anything starts, naming the flag,
// the format and the rates it takes: MP3 codes at most 48 kHz, AAC at most 96 kHz, and the codecs would quietly
// code those instead.
func TestSampleRateAFormatCannotCodeIsAUsageError(t *testing.T) {
	dir := isolate(t)
	manifest := writeFile(t, filepath.Join(dir, "in.jsonl"), `{"id": "a", "text": "Hello."}`+"\n")
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"synth", "hi", "--format", "mp3", "--sample-rate", "96000", "-o", "x.mp3"},
			"--sample-rate: mp3 has no sample rate of 96000 Hz: it takes 8000, 11025, 12000, 16000, 22050, 24000, 32000, 44100 and 48000 Hz"},
		{[]string{"synth", "hi", "--format", "aac", "--sample-rate", "192000", "-o", "-"},
			"--sample-rate: aac has no sample rate of 192000 Hz: it takes 8000, 11025, 12000, 16000, 22050, 24000, 32000, 44100, 48000, 64000, 88200 and 96000 Hz"},
		{[]string{"batch", manifest, "-o", filepath.Join(dir, "out"), "--format", "mp3", "--sample-rate", "50000"},
			"--sample-rate: mp3 has no sample rate of 50000 Hz"},
	} {
		r := run(t, "", tt.args...)
		if r.code != ExitUsage || !strings.Contains(r.errOut, tt.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and %q", tt.args, r.code, r.errOut, ExitUsage, tt.want)
		}
	}
}

// A format known only from -o's extension, or from a batch item's "format", with a --sample-rate it does not code:
// no file at another rate, but an error that says which rates the format takes. Rates it codes come out as asked.
func TestSampleRateAFormatCannotCodeWritesNothing(t *testing.T) {
	dir := isolate(t)
	needORT(t)
	synth := func(args ...string) runResult {
		return run(t, "", append(append([]string{"synth", "Hello there."}, deterministic...), args...)...)
	}
	for _, tt := range []struct {
		rate, out, want string
	}{
		{"96000", "r.mp3", "--sample-rate: mp3 has no sample rate of 96000 Hz: it takes 8000,"},
		{"192000", "r.aac", "--sample-rate: aac has no sample rate of 192000 Hz: it takes 8000,"},
	} {
		path := filepath.Join(dir, tt.out)
		r := synth("--sample-rate", tt.rate, "-o", path)
		if r.code != ExitUsage || !strings.Contains(r.errOut, tt.want) {
			t.Errorf("--sample-rate %s -o %s: exit %d, stderr %q; want a failure saying %q", tt.rate, tt.out, r.code, r.errOut, tt.want)
		}
		if _, err := os.Stat(path); !os.IsNotExist(err) {
			t.Errorf("--sample-rate %s -o %s: the file is there (%v)", tt.rate, tt.out, err)
		}
	}
	for _, tt := range []struct {
		rate string
		out  string
		want int
	}{
		{"48000", "ok.mp3", 48000},
		{"88200", "ok.aac", 88200},
	} {
		path := filepath.Join(dir, tt.out)
		if r := synth("--sample-rate", tt.rate, "-o", path); r.code != 0 {
			t.Errorf("--sample-rate %s -o %s: exit %d: %s", tt.rate, tt.out, r.code, r.errOut)
		} else if got := decodetest.ProbeInt(t, path, "stream=sample_rate"); got != tt.want {
			t.Errorf("--sample-rate %s -o %s: ffprobe says %d Hz", tt.rate, tt.out, got)
		}
	}

	// In a batch the format is each item's: the MP3 item fails, the WAV one is made at the rate.
	manifest := writeFile(t, filepath.Join(dir, "in.jsonl"), strings.Join([]string{
		`{"id": "mp3", "text": "Hello there.", "format": "mp3"}`,
		`{"id": "wav", "text": "Hello there."}`,
	}, "\n")+"\n")
	out := filepath.Join(dir, "out")
	r := run(t, "", append(append([]string{"batch", manifest, "-o", out}, deterministic...), "--sample-rate", "96000")...)
	if r.code != ExitFailure {
		t.Errorf("batch: exit %d, want %d for the MP3 item: %s", r.code, ExitFailure, r.errOut)
	}
	rows := lastRows(t, out)
	if row := rows["mp3"]; row.Status != "error" || !strings.Contains(row.Error, "mp3 has no sample rate of 96000 Hz: it takes 8000,") {
		t.Errorf("the MP3 item at 96 kHz: row %+v", row)
	}
	if _, err := os.Stat(filepath.Join(out, "mp3.mp3")); !os.IsNotExist(err) {
		t.Errorf("the MP3 item at 96 kHz: mp3.mp3 is there (%v)", err)
	}
	if row := rows["wav"]; row.Status != "ok" {
		t.Errorf("the WAV item at 96 kHz: row %+v", row)
	} else if got := decodetest.ProbeInt(t, filepath.Join(out, row.Out), "stream=sample_rate"); got != 96000 {
		t.Errorf("the WAV item at 96 kHz: ffprobe says %d Hz", got)
	}
}
