package audio

import (
	"math"
	"slices"
	"testing"
)

// collect is an Encoder that keeps what it is given.
type collect struct {
	samples []int16
	closed  bool
}

func (c *collect) Write(pcm []int16) error { c.samples = append(c.samples, pcm...); return nil }
func (c *collect) Flush() error            { return nil }
func (c *collect) Close() error            { c.closed = true; return nil }

func tone(rate int, hz, amplitude float64, n int) []int16 {
	out := make([]int16, n)
	for i := range out {
		out[i] = int16(math.Round(amplitude * math.Sin(2*math.Pi*hz*float64(i)/float64(rate))))
	}
	return out
}

func resampleAll(in []int16, from, to int, piece int) []int16 {
	var c collect
	r := newResampling(&c, from, to)
	for p := range slices.Chunk(in, piece) {
		_ = r.Write(p)
	}
	_ = r.Close()
	return c.samples
}

// fit is the amplitude of the hz component of s (a least-squares fit of a sine and a cosine, away from the
// edges) and the RMS of what is left once that component is taken out.
func fit(s []int16, rate int, hz float64) (amplitude, residual float64) {
	const edge = 400
	body := s[edge : len(s)-edge]
	var ss, cc, sc, ys, yc float64
	for i, v := range body {
		w := 2 * math.Pi * hz * float64(i+edge) / float64(rate)
		sn, cs := math.Sin(w), math.Cos(w)
		ss += sn * sn
		cc += cs * cs
		sc += sn * cs
		ys += float64(v) * sn
		yc += float64(v) * cs
	}
	det := ss*cc - sc*sc
	a := (ys*cc - yc*sc) / det
	b := (yc*ss - ys*sc) / det
	var res float64
	for i, v := range body {
		w := 2 * math.Pi * hz * float64(i+edge) / float64(rate)
		d := float64(v) - a*math.Sin(w) - b*math.Cos(w)
		res += d * d
	}
	return math.Hypot(a, b), math.Sqrt(res / float64(len(body)))
}

func dB(x float64) float64 { return 20 * math.Log10(x) }

// The resampler's frequency response, measured with tones: flat (to 0.1 dB) through the passband, and what would
// alias or image (a tone above the lower rate's Nyquist frequency going down; the mirror images of a tone going
// up) at least 70 dB down.
func TestResamplerFrequencyResponse(t *testing.T) {
	const amplitude = 10000.0
	rms := amplitude / math.Sqrt2
	for _, c := range []struct {
		from, to int
		pass     []float64 // tones that must come through unchanged
		stop     []float64 // tones that must not come through at all (they lie above the output's Nyquist)
	}{
		{22050, 16000, []float64{200, 1000, 3000, 6000}, []float64{9000, 10500}},
		{22050, 48000, []float64{200, 3000, 8000, 9000}, nil},
		{16000, 22050, []float64{500, 6000}, nil},
		{24000, 8000, []float64{300, 3000}, []float64{4500, 8000, 11000}},
	} {
		n := c.from // one second
		for _, hz := range c.pass {
			out := resampleAll(tone(c.from, hz, amplitude, n), c.from, c.to, 1000)
			a, res := fit(out, c.to, hz)
			if math.Abs(dB(a/amplitude)) > 0.1 {
				t.Errorf("%d -> %d Hz: a %g Hz tone came out at %+.2f dB, want within 0.1 dB", c.from, c.to, hz, dB(a/amplitude))
			}
			// Whatever else is there (images of an upsampled tone, aliases, rounding) is noise.
			if dB(res/rms) > -70 {
				t.Errorf("%d -> %d Hz: a %g Hz tone came out with %.1f dB of other content, want below -70 dB", c.from, c.to, hz, dB(res/rms))
			}
		}
		for _, hz := range c.stop {
			out := resampleAll(tone(c.from, hz, amplitude, n), c.from, c.to, 1000)
			body := out[400 : len(out)-400]
			var sum float64
			for _, v := range body {
				sum += float64(v) * float64(v)
			}
			if level := dB(math.Sqrt(sum/float64(len(body))) / rms); level > -70 {
				t.Errorf("%d -> %d Hz: a %g Hz tone (above the output's Nyquist) came out at %.1f dB, want below -70 dB", c.from, c.to, hz, level)
			}
		}
	}
}

// A stream resamples to round-up(N x to/from) samples, the same however it is cut into writes, and keeps time:
// a click at input sample i comes out at output sample i x to/from.
func TestResamplerLengthTimingAndChunking(t *testing.T) {
	in := speechLike(22050, 0.8)
	whole := resampleAll(in, 22050, 16000, len(in))
	if want := (len(in)*16000 + 22049) / 22050; len(whole) != want {
		t.Errorf("%d samples became %d, want %d", len(in), len(whole), want)
	}
	for _, piece := range []int{1, 7, 333} {
		if got := resampleAll(in, 22050, 16000, piece); !slices.Equal(got, whole) {
			t.Errorf("written %d samples at a time, the output differs from one write", piece)
		}
	}
	click := make([]int16, 4410)
	click[2205] = 30000
	out := resampleAll(click, 22050, 48000, 100)
	peak := 0
	for i, v := range out {
		if v > out[peak] {
			peak = i
		}
	}
	if want := 2205 * 48000 / 22050; peak < want-1 || peak > want+1 {
		t.Errorf("a click at input sample 2205 peaks at output %d, want %d", peak, want)
	}
	var c collect
	r := newResampling(&c, 22050, 16000)
	if err := r.Close(); err != nil || !c.closed || len(c.samples) != 0 {
		t.Errorf("an empty stream: %d samples, closed %v (%v)", len(c.samples), c.closed, err)
	}
}

// --sample-rate through NewEncoder: a FLAC at 16 kHz from a 22,050 Hz voice.
func TestNewEncoderResamples(t *testing.T) {
	var p pipe
	enc, err := NewEncoder(PCM, &p, 22050, Options{SampleRate: 16000})
	if err != nil {
		t.Fatal(err)
	}
	if err := enc.Write(tone(22050, 440, 8000, 22050)); err != nil {
		t.Fatal(err)
	}
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
	if p.Len() != 2*16000 {
		t.Errorf("a second at 22,050 Hz resampled to %d bytes of 16 kHz PCM, want %d", p.Len(), 2*16000)
	}
}
