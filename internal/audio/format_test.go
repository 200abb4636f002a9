package audio

import (
	"bytes"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ttsgen/ttsgen/internal/audio/decodetest"
)

// speechLike is a second and a bit of something with speech's spread of frequencies and loudness: a few
// harmonics of a gliding pitch under a syllable-rate envelope, with quiet gaps.
func speechLike(rate int, seconds float64) []int16 {
	n := int(seconds * float64(rate))
	out := make([]int16, n)
	phase := 0.0
	for i := range out {
		t := float64(i) / float64(rate)
		f0 := 120 + 40*math.Sin(2*math.Pi*0.7*t)
		phase += 2 * math.Pi * f0 / float64(rate)
		env := math.Max(0, math.Sin(2*math.Pi*3*t))
		v := 0.0
		for h := 1; h <= 12; h++ {
			v += math.Sin(float64(h)*phase) / float64(h)
		}
		out[i] = int16(9000 * env * v)
	}
	return out
}

// encode encodes samples into w a piece at a time (as sentences arrive), flushing after each, and closes.
func encode(t *testing.T, f Format, w io.Writer, samples []int16, rate int, opt Options) {
	t.Helper()
	enc, err := NewEncoder(f, w, rate, opt)
	if err != nil {
		t.Fatal(err)
	}
	for piece := range slices.Chunk(samples, 3000) {
		if err := enc.Write(piece); err != nil {
			t.Fatal(err)
		}
		if err := enc.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
}

// encodeFile encodes samples into a file, as the batch writes them.
func encodeFile(t *testing.T, f Format, path string, samples []int16, rate int, opt Options) {
	t.Helper()
	file, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	encode(t, f, file, samples, rate, opt)
}

// rms is the root mean square of samples.
func rms(s []int16) float64 {
	var sum float64
	for _, v := range s {
		sum += float64(v) * float64(v)
	}
	return math.Sqrt(sum / float64(max(1, len(s))))
}

// Every format round-trips through the real ffmpeg: ffprobe's duration and the decoded length match the input's
// to 60 ms (lossy codecs pad to whole frames and trim by their headers), the lossless ones give back exactly the
// samples, and the lossy ones keep the level.
func TestFormatsRoundTripThroughFFmpeg(t *testing.T) {
	const rate = 22050
	in := speechLike(rate, 1.37)
	want := float64(len(in)) / rate
	for _, f := range Formats {
		t.Run(string(f), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "x"+f.Ext())
			encodeFile(t, f, path, in, rate, Options{})
			if f == PCM { // no header: ffmpeg must be told what it is
				if got := decodetest.DecodeRaw(t, path, rate); !slices.Equal(got, in) {
					t.Errorf("raw PCM read by ffmpeg gives %d samples that differ from the %d written", len(got), len(in))
				}
				return
			}
			if got := decodetest.Seconds(t, path); f != AAC && math.Abs(got-want) > 0.060 { // ADTS: estimated from the bitrate
				t.Errorf("ffprobe duration %.3f s, want %.3f s within 60 ms", got, want)
			}
			got, gotRate := decodetest.Decode(t, path)
			if d := float64(len(got))/float64(gotRate) - want; math.Abs(d) > 0.060 {
				t.Errorf("decoded %d samples at %d Hz: %.3f s, want %.3f s within 60 ms", len(got), gotRate, float64(len(got))/float64(gotRate), want)
			}
			if !f.Lossy() {
				if gotRate != rate || !slices.Equal(got, in) {
					t.Errorf("lossless %s decoded to %d samples at %d Hz that differ from the %d written", f, len(got), gotRate, len(in))
				}
				return
			}
			if ratio := rms(got) / rms(in); ratio < 0.7 || ratio > 1.4 {
				t.Errorf("decoded level %.0f against %.0f written", rms(got), rms(in))
			}
		})
	}
}

// pipe is what a pipe offers an encoder: Write, no Seek.
type pipe struct{ bytes.Buffer }

// Into a pipe (standard output), every format still decodes once closed: the Ogg stream ends with its last
// page, FLAC and WAV say their length is unknown, MP3 goes without its LAME tag.
func TestFormatsStreamIntoAPipe(t *testing.T) {
	const rate = 16000
	in := speechLike(rate, 1.1)
	want := float64(len(in)) / rate
	for _, f := range Formats {
		t.Run(string(f), func(t *testing.T) {
			var p pipe
			encode(t, f, &p, in, rate, Options{})
			path := filepath.Join(t.TempDir(), "x"+f.Ext())
			if err := os.WriteFile(path, p.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			if f == PCM {
				if !bytes.Equal(p.Bytes(), appendLE16(nil, in)) {
					t.Fatal("pcm stream is not the samples as 16-bit little-endian")
				}
				return
			}
			got, gotRate := decodetest.Decode(t, path)
			slack := 0.060
			if f == MP3 || f == AAC {
				slack = 0.120 // no header to trim the encoder's delay by
			}
			if d := float64(len(got))/float64(gotRate) - want; d < -0.060 || d > slack {
				t.Errorf("stream decoded to %.3f s, want %.3f s", float64(len(got))/float64(gotRate), want)
			}
			if !f.Lossy() && !slices.Equal(got, in) {
				t.Errorf("lossless %s stream decoded to other samples", f)
			}
		})
	}
}

// Opus over a pipe: what a Flush has sent is whole Ogg pages a player decodes already, before Close.
func TestOpusFlushSendsPagesAPlayerDecodes(t *testing.T) {
	const rate = 22050
	in := speechLike(rate, 1.0)
	var p pipe
	enc, err := NewEncoder(Opus, &p, rate, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Close()
	if err := enc.Write(in); err != nil {
		t.Fatal(err)
	}
	if err := enc.Flush(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "cut.opus")
	if err := os.WriteFile(path, p.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	got, gotRate := decodetest.Decode(t, path)
	if secs := float64(len(got)) / float64(gotRate); secs < 0.9 {
		t.Errorf("after Flush the stream decodes to %.3f s of the 1 s written", secs)
	}
}

func TestFormatNamesAndExtensions(t *testing.T) {
	for _, c := range []struct {
		path string
		want Format
		ok   bool
	}{{"a.wav", WAV, true}, {"B.FLAC", FLAC, true}, {"book.opus", Opus, true}, {"x.ogg", Opus, true},
		{"x.mp3", MP3, true}, {"x.aac", AAC, true}, {"x.raw", PCM, true}, {"x.pcm", PCM, true}, {"x.txt", "", false}, {"-", "", false}} {
		if got, ok := FormatOf(c.path); got != c.want || ok != c.ok {
			t.Errorf("FormatOf(%q) = %q, %v; want %q, %v", c.path, got, ok, c.want, c.ok)
		}
	}
	for _, f := range Formats {
		if got, err := ParseFormat(strings.ToUpper(string(f))); err != nil || got != f {
			t.Errorf("ParseFormat(%q) = %q, %v", strings.ToUpper(string(f)), got, err)
		}
		if back, ok := FormatOf("x" + f.Ext()); !ok || back != f {
			t.Errorf("%s's extension %s reads back as %q", f, f.Ext(), back)
		}
	}
	if _, err := ParseFormat("ogg-vorbis"); err == nil || !strings.Contains(err.Error(), "flac") {
		t.Errorf("unknown format: %v, want an error listing the formats", err)
	}
}

func TestNewEncoderRejectsBadOptions(t *testing.T) {
	for _, opt := range []Options{{Bitrate: 100}, {Bitrate: 10_000_000}, {SampleRate: -1}, {SampleRate: 1_000_000}} {
		if enc, err := NewEncoder(Opus, &pipe{}, 22050, opt); err == nil {
			enc.Close()
			t.Errorf("options %+v accepted", opt)
		}
	}
}

// The bitrate reaches the lossy encoders: twice the bits, about twice the bytes.
func TestBitrateSetsTheSize(t *testing.T) {
	in := speechLike(22050, 2)
	for _, f := range []Format{Opus, MP3, AAC} {
		size := func(bitrate int) int {
			var p pipe
			encode(t, f, &p, in, 22050, Options{Bitrate: bitrate})
			return p.Len()
		}
		lo, hi := size(24_000), size(96_000)
		if r := float64(hi) / float64(lo); r < 2.5 || r > 5 {
			t.Errorf("%s: 96 kbit/s gave %d bytes against %d at 24 kbit/s (ratio %.2f, want about 4)", f, hi, lo, r)
		}
	}
}
