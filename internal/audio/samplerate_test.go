package audio

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/ttsgen/ttsgen/internal/audio/decodetest"
)

// A rate within [MinSampleRate, MaxSampleRate] that a format does not code is refused, naming the format and the
// rates it takes: LAME and ffmpeg would code the nearest they have (48 kHz for 96 kHz MP3), and the file would
// silently not be what was asked for.
func TestSampleRatesAFormatCannotCodeAreRefused(t *testing.T) {
	for _, tt := range []struct {
		f     Format
		rates []int
		want  string
	}{
		{MP3, []int{9000, 40000, 64000, 88200, 96000, 192000}, "it takes 8000, 11025, 12000, 16000, 22050, 24000, 32000, 44100 and 48000 Hz"},
		{AAC, []int{9000, 50000, 100000, 176400, 192000}, "it takes 8000, 11025, 12000, 16000, 22050, 24000, 32000, 44100, 48000, 64000, 88200 and 96000 Hz"},
	} {
		for _, rate := range tt.rates {
			enc, err := NewEncoder(tt.f, &pipe{}, 22050, Options{SampleRate: rate})
			if err == nil {
				enc.Close()
				t.Errorf("%s at %d Hz: accepted", tt.f, rate)
				continue
			}
			var rateErr *SampleRateError
			prefix := fmt.Sprintf("%s has no sample rate of %d Hz", tt.f, rate)
			if !errors.As(err, &rateErr) || !strings.Contains(err.Error(), prefix) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("%s at %d Hz: %v; want a *SampleRateError saying %q and %q", tt.f, rate, err, prefix, tt.want)
			}
			if err := tt.f.CheckSampleRate(rate); !errors.As(err, &rateErr) {
				t.Errorf("%s.CheckSampleRate(%d) = %v, want a *SampleRateError", tt.f, rate, err)
			}
		}
	}
	for _, f := range Formats {
		for _, rate := range []int{-1, MinSampleRate - 1, MaxSampleRate + 1} {
			if err := f.CheckSampleRate(rate); err == nil || !strings.Contains(err.Error(), "is outside") {
				t.Errorf("%s.CheckSampleRate(%d) = %v, want out of range", f, rate, err)
			}
		}
	}
}

// Every rate a format codes comes out at that rate (as ffprobe reads it), and so does a voice's own rate (no rate
// asked for) that the codec lacks: it is resampled to the rate DecodedRate says, not left to the codec to change.
func TestSampleRatesAFormatCodesAreKept(t *testing.T) {
	dir := t.TempDir()
	probe := func(f Format, voiceRate int, opt Options) int {
		t.Helper()
		path := filepath.Join(dir, fmt.Sprintf("%d-%d%s", voiceRate, opt.SampleRate, f.Ext()))
		encodeFile(t, f, path, speechLike(voiceRate, 0.3), voiceRate, opt)
		return decodetest.ProbeInt(t, path, "stream=sample_rate")
	}
	for _, f := range []Format{MP3, AAC} {
		for _, rate := range f.SampleRates() {
			if err := f.CheckSampleRate(rate); err != nil {
				t.Errorf("%s.CheckSampleRate(%d): %v", f, rate, err)
			}
			if got := probe(f, 22050, Options{SampleRate: rate}); got != rate {
				t.Errorf("%s asked for at %d Hz: ffprobe says %d Hz", f, rate, got)
			}
		}
		for _, voiceRate := range []int{40000, 50000, 192000} {
			want := f.DecodedRate(voiceRate, Options{})
			if !slices.Contains(f.SampleRates(), want) {
				t.Errorf("%s of a %d Hz voice: DecodedRate %d Hz is not one it codes", f, voiceRate, want)
			}
			if got := probe(f, voiceRate, Options{}); got != want {
				t.Errorf("%s of a %d Hz voice: ffprobe says %d Hz, DecodedRate %d Hz", f, voiceRate, got, want)
			}
		}
	}
	// Opus codes at 48 kHz inside whatever the rate and says the input's in its header: any rate is taken.
	for _, rate := range []int{MinSampleRate, 44100, 96000, MaxSampleRate} {
		if err := Opus.CheckSampleRate(rate); err != nil {
			t.Errorf("opus at %d Hz: %v", rate, err)
		}
	}
}

// fullDisk fails every write as a write to /dev/full does.
type fullDisk struct{}

func (fullDisk) Write([]byte) (int, error) {
	return 0, &os.PathError{Op: "write", Path: "/dev/full", Err: syscall.ENOSPC}
}

// A full disk is reported as such by every format. AAC's ffmpeg is killed when its output cannot be written, and
// its "signal: killed" must not stand in for the cause.
func TestEncodersReportAFullDisk(t *testing.T) {
	in := speechLike(22050, 5)
	for _, f := range Formats {
		enc, err := NewEncoder(f, fullDisk{}, 22050, Options{})
		if err != nil {
			t.Fatal(err)
		}
		for piece := range slices.Chunk(in, 3000) {
			if err = enc.Write(piece); err != nil {
				break
			}
		}
		if cerr := enc.Close(); err == nil {
			err = cerr
		}
		if !errors.Is(err, syscall.ENOSPC) || strings.Contains(err.Error(), "killed") {
			t.Errorf("%s into a full disk: %v, want no space left on device", f, err)
		}
	}
}
