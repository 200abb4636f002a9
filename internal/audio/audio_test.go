package audio

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"runtime"
	"slices"
	"strings"
	"testing"
)

func TestPeakLevelNormalisesLikePiper(t *testing.T) {
	tests := []struct {
		name string
		in   []float32
		want []int16
	}{
		{"peak to full scale", []float32{0.5, -0.25, 0}, []int16{32767, -16383, 0}},
		{"negative peak", []float32{-0.2, 0.1}, []int16{-32767, 16383}},
		{"quiet stays quiet (peak floor 0.01)", []float32{0.001, -0.005}, []int16{3276, -16383}},
		{"silence", []float32{0, 0}, []int16{0, 0}},
		{"NaN becomes silence", []float32{float32(math.NaN()), 1}, []int16{0, 32767}},
		{"empty", nil, []int16{}},
	}
	for _, tt := range tests {
		got := Level{Normalisation: PeakLevel}.PCM16(tt.in)
		if len(got) != len(tt.want) {
			t.Fatalf("%s: len %d, want %d", tt.name, len(got), len(tt.want))
		}
		for i := range got {
			if got[i] != tt.want[i] {
				t.Errorf("%s: PCM16(%v) = %v, want %v", tt.name, tt.in, got, tt.want)
				break
			}
		}
	}
}

// The default level gives every sentence the same loudness, RMS -20 dBFS, whatever the model's level, unless
// that would lift a peak above -3 dBFS; near-silence is not lifted into noise.
func TestSpeechLevelGivesEverySentenceOneLoudness(t *testing.T) {
	sine := func(amp float32, n int) []float32 {
		s := make([]float32, n)
		for i := range s {
			s[i] = amp * float32(math.Sin(2*math.Pi*float64(i)*220/22050))
		}
		return s
	}
	db := func(v float64) float64 { return 20 * math.Log10(v/32767) }
	measure := func(pcm []int16) (rmsDB, peakDB float64) {
		var e float64
		var p int
		for _, v := range pcm {
			e += float64(v) * float64(v)
			p = max(p, int(math.Abs(float64(v))))
		}
		return db(math.Sqrt(e / float64(len(pcm)))), db(float64(p))
	}
	for _, amp := range []float32{0.02, 0.3, 1.7} {
		rms, peak := measure(PCM16(sine(amp, 22050)))
		// a sine's peak is 3 dB above its RMS: -17 dBFS, under the ceiling
		if math.Abs(rms+20) > 0.05 || math.Abs(peak+16.99) > 0.05 {
			t.Errorf("sine of amplitude %v: RMS %.2f dBFS, peak %.2f dBFS; want -20 and -17", amp, rms, peak)
		}
	}
	spiky := sine(0.01, 22050)
	spiky[100] = 0.9 // a click: the sentence may not be raised until the click clips
	if rms, peak := measure(PCM16(spiky)); math.Abs(peak+3) > 0.05 || rms > -20 {
		t.Errorf("a quiet sentence with one loud sample: RMS %.2f dBFS, peak %.2f dBFS; want the peak at -3", rms, peak)
	}
	if got := PCM16([]float32{0.0001, -0.0001}); got[0] != 327 || got[1] != -327 {
		t.Errorf("near-silence: %v, want at most 40 dB of gain (327, -327)", got)
	}
	if got := PCM16([]float32{float32(math.NaN()), 0.1, -0.1}); got[0] != 0 || got[1] != 4013 {
		t.Errorf("a NaN sample: %v, want it silent and the rest at speech level (4013: RMS over all three samples)", got)
	}
	if got := PCM16(nil); len(got) != 0 {
		t.Errorf("empty sentence: %v", got)
	}
}

// --volume scales after the normalisation (so 0.5 is 6 dB below the normalised level, whatever the model's), and
// --no-normalize-audio keeps the model's level: a quiet sentence stays quiet, a loud one clips.
func TestLevelVolumeAndModelLevel(t *testing.T) {
	in := []float32{0.25, -0.125, 0.5}
	for _, tt := range []struct {
		name  string
		level Level
		want  []int16
	}{
		{"Piper's", Level{Normalisation: PeakLevel}, []int16{16383, -8191, 32767}},
		{"half volume", Level{Normalisation: PeakLevel, Volume: 0.5}, []int16{8191, -4095, 16383}},
		{"double volume clips", Level{Normalisation: PeakLevel, Volume: 2}, []int16{32767, -16383, 32767}},
		{"speech level", Level{}, []int16{2476, -1238, 4953}},
		{"speech level, double volume", Level{Volume: 2}, []int16{4953, -2476, 9907}},
		{"model's level", Level{Normalisation: ModelLevel}, []int16{8191, -4095, 16383}},
		{"model's level, louder", Level{Normalisation: ModelLevel, Volume: 4}, []int16{32767, -16383, 32767}},
	} {
		if got := tt.level.PCM16(in); !slices.Equal(got, tt.want) {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestSilenceSamples(t *testing.T) {
	for _, tt := range []struct {
		sec  float64
		rate int
		want int
	}{{0.2, 22050, 4410}, {0, 22050, 0}, {-1, 22050, 0}, {math.NaN(), 16000, 0}, {1.5, 16000, 24000}} {
		if got := SilenceSamples(tt.sec, tt.rate); got != tt.want {
			t.Errorf("SilenceSamples(%v, %d) = %d, want %d", tt.sec, tt.rate, got, tt.want)
		}
	}
}

func TestWAVWriterHeaderAndRoundTrip(t *testing.T) {
	var buf Buffer
	w := NewWAVWriter(&buf, 22050)
	first := []int16{1, -2, 3, 32767, -32768}
	if err := w.Write(first); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteSilence(5000); err != nil {
		t.Fatal(err)
	}
	if err := w.Write([]int16{7}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if w.Samples() != 5006 || math.Abs(w.Seconds()-5006.0/22050) > 1e-12 {
		t.Errorf("samples = %d, seconds = %v", w.Samples(), w.Seconds())
	}
	b := buf.Bytes()
	if len(b) != 44+2*5006 {
		t.Fatalf("file is %d bytes, want 44-byte header + %d", len(b), 2*5006)
	}
	if string(b[0:4]) != "RIFF" || string(b[8:12]) != "WAVE" || string(b[36:40]) != "data" {
		t.Fatalf("bad header %q", b[:44])
	}
	le := binary.LittleEndian
	if le.Uint32(b[4:]) != uint32(len(b)-8) || le.Uint16(b[20:]) != 1 || le.Uint16(b[22:]) != 1 ||
		le.Uint32(b[24:]) != 22050 || le.Uint16(b[34:]) != 16 || le.Uint32(b[40:]) != 2*5006 {
		t.Errorf("header fields wrong: % x", b[:44])
	}
	got, rate, err := ReadWAV(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if rate != 22050 || len(got) != 5006 || got[3] != 32767 || got[4] != -32768 || got[100] != 0 || got[5005] != 7 {
		t.Errorf("round trip: rate %d, %d samples, %v...%v", rate, len(got), got[:5], got[5005])
	}
	if err := w.Write(first); err == nil {
		t.Error("write after close succeeded")
	}
}

func TestReadWAVRejectsNonWAV(t *testing.T) {
	if _, _, err := ReadWAV(bytes.NewReader([]byte("definitely not a wav file, just text"))); err == nil {
		t.Error("ReadWAV accepted text")
	}
}

// TestWAVStreamIsTheFileWithUnknownLengths: into a pipe, the header goes out with the first samples, each Write
// reaches the pipe at once, and the bytes are a file's but for the two lengths, which say "unknown".
func TestWAVStreamIsTheFileWithUnknownLengths(t *testing.T) {
	samples := [][]int16{{1, -2, 3, 32767, -32768}, {7, 8}}
	var file Buffer
	fw := NewWAVWriter(&file, 16000)
	var pipe bytes.Buffer // no Seek: what a pipe offers
	sw := NewWAVStream(&pipe, 16000)
	if pipe.Len() != 0 {
		t.Fatalf("before any sample the pipe holds %d bytes, want none (a failure then leaves nothing)", pipe.Len())
	}
	for i, s := range samples {
		before := pipe.Len()
		if i == 0 {
			before = 44 // the header goes with the first samples
		}
		if err := fw.Write(s); err != nil {
			t.Fatal(err)
		}
		if err := sw.Write(s); err != nil {
			t.Fatal(err)
		}
		if pipe.Len() != before+2*len(s) {
			t.Errorf("a Write of %d samples put %d bytes in the pipe, want %d", len(s), pipe.Len()-before, 2*len(s))
		}
	}
	if err := fw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := sw.Close(); err != nil {
		t.Fatal(err)
	}
	want := slices.Clone(file.Bytes())
	binary.LittleEndian.PutUint32(want[4:], 0xFFFFFFFF)
	binary.LittleEndian.PutUint32(want[40:], 0xFFFFFFFF)
	if !bytes.Equal(pipe.Bytes(), want) {
		t.Errorf("stream\n% x\nwant the file with unknown lengths\n% x", pipe.Bytes(), want)
	}
	if got, rate, err := ReadWAV(bytes.NewReader(pipe.Bytes())); err != nil || rate != 16000 || !slices.Equal(got, slices.Concat(samples...)) {
		t.Errorf("ReadWAV of the stream: %v at %d Hz (%v), want %v", got, rate, err, slices.Concat(samples...))
	}
	if sw.Samples() != 7 {
		t.Errorf("stream counted %d samples, want 7", sw.Samples())
	}
	if err := sw.Write([]int16{1}); err == nil {
		t.Error("write after close succeeded")
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("broken pipe") }

func TestWAVStreamReportsWriteErrors(t *testing.T) {
	if err := NewWAVStream(failingWriter{}, 16000).Write([]int16{1}); err == nil || !strings.Contains(err.Error(), "broken pipe") {
		t.Errorf("samples into a broken pipe: err %v, want it to say broken pipe", err)
	}
	if err := NewWAVStream(failingWriter{}, 16000).Close(); err == nil || !strings.Contains(err.Error(), "broken pipe") {
		t.Errorf("an empty stream's header into a broken pipe: err %v, want it to say broken pipe", err)
	}
	var pipe bytes.Buffer
	if err := NewWAVStream(&pipe, 16000).Close(); err != nil || pipe.Len() != 44 {
		t.Errorf("an empty stream: %d bytes (%v), want the 44-byte header", pipe.Len(), err)
	}
}

// A WAV file's lengths are exact up to what 32 bits can say, and "unknown" (read to the end) past it: the audio
// is never cut to fit.
func TestWAVChunkSizesPastFourGigabytes(t *testing.T) {
	for _, c := range []struct {
		dataBytes  int64
		riff, data uint32
	}{
		{0, 36, 0},
		{10012, 10048, 10012},
		{0xFFFFFFFF - 37, 0xFFFFFFFE, 0xFFFFFFFF - 37},
		{0xFFFFFFFF - 36, 0xFFFFFFFF, 0xFFFFFFFF},
		{5 << 30, 0xFFFFFFFF, 0xFFFFFFFF},
	} {
		if riff, data := chunkSizes(c.dataBytes); riff != c.riff || data != c.data {
			t.Errorf("chunkSizes(%d) = %d, %d; want %d, %d", c.dataBytes, riff, data, c.riff, c.data)
		}
	}
}

// A batch keeps a WAV writer open for every item in flight (1,024 with a GPU engine), most of them waiting for
// their audio: a writer must cost what it writes, not a reserve (go-audio/wav's encoder took 2.6 MB each).
func TestWAVWritersHoldNoReserve(t *testing.T) {
	const writers = 200
	files := make([]Buffer, writers)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for i := range files {
		w := NewWAVWriter(&files[i], 22050)
		if err := w.Write([]int16{1, 2}); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	if perWriter := (after.TotalAlloc - before.TotalAlloc) / writers; perWriter > 4096 {
		t.Errorf("each writer of 2 samples allocated %d bytes; want a few hundred", perWriter)
	}
	if got := files[0].Bytes(); len(got) != 48 || binary.LittleEndian.Uint32(got[40:]) != 4 {
		t.Errorf("file of 2 samples: % x", got)
	}
	var empty Buffer
	if err := NewWAVWriter(&empty, 22050).Close(); err != nil {
		t.Fatal(err)
	}
	if got := empty.Bytes(); len(got) != 44 || binary.LittleEndian.Uint32(got[4:]) != 36 ||
		binary.LittleEndian.Uint32(got[40:]) != 0 {
		t.Errorf("a file closed without samples: % x; want a 44-byte header with lengths 36 and 0", got)
	}
}
