package audio

import (
	"fmt"
	"math"
)

// Sample rates an encoder accepts for --sample-rate.
const (
	MinSampleRate = 8000
	MaxSampleRate = 192000
)

// Resampling is polyphase windowed-sinc interpolation, written here because the Go module proxy serves no
// maintained resampler (the pure-Go ones are unpublished or one-author experiments, and zaf/resample wraps libsoxr
// through cgo for what is forty lines of arithmetic). Each output sample is a weighted sum of the input samples
// within resampleTaps (input samples, more when downsampling) of its instant, weighted by a Kaiser-windowed sinc
// low-pass whose cutoff sits below the lower rate's Nyquist frequency: the passband keeps 91% of that band flat,
// and what lies above it, which would alias, is attenuated by some 80 dB (TestResamplerFrequencyResponse measures
// both). The filter is centred, so output sample n sits exactly at input instant n x from/to: no delay to trim,
// and a stream of N samples becomes round-up(N x to/from).
const (
	resampleTaps   = 32   // filter half-length in samples of the lower rate
	resampleCutoff = 0.91 // cutoff as a fraction of the lower rate's Nyquist frequency
	resampleBeta   = 8.6  // Kaiser window shape: about 86 dB side lobes
)

// resampling converts the samples written to it from one rate to another and writes them to next.
type resampling struct {
	next     Encoder
	up, down int64       // output rate / input rate in lowest terms: output n is at input instant n x down/up
	reach    int64       // input samples each side of an output instant that carry weight
	phases   [][]float32 // per fraction p/up of an input sample: weights of 2 x reach inputs, earliest first
	in       []float32   // input not yet used up; in[0] is input sample number offset
	offset   int64
	received int64 // input samples written
	n        int64 // next output sample
	out      []int16
	closed   bool
}

func newResampling(next Encoder, from, to int) *resampling {
	g := gcd(int64(from), int64(to))
	r := &resampling{next: next, up: int64(to) / g, down: int64(from) / g}
	// The kernel is a low-pass at the lower rate, measured in input samples: wider when downsampling.
	scale := min(1, float64(r.up)/float64(r.down)) // lower rate / input rate
	cutoff := 0.5 * resampleCutoff * scale         // cycles per input sample
	span := float64(resampleTaps) / scale          // kernel half-width in input samples
	r.reach = int64(math.Ceil(span))
	r.phases = make([][]float32, r.up)
	for p := range r.phases {
		w := make([]float32, 2*r.reach)
		var sum float64
		ws := make([]float64, len(w))
		for j := range w {
			// input j of the window is (reach-1-j) + p/up input samples before the output instant
			t := float64(p)/float64(r.up) + float64(r.reach-1-int64(j))
			if math.Abs(t) < span {
				ws[j] = 2 * cutoff * sinc(2*cutoff*t) * kaiser(t/span, resampleBeta)
			}
			sum += ws[j]
		}
		for j := range w {
			w[j] = float32(ws[j] / sum) // each phase's weights sum to 1: a constant passes unchanged
		}
		r.phases[p] = w
	}
	// Inputs before the first are silence.
	r.in = make([]float32, r.reach)
	r.offset = -r.reach
	return r
}

func (r *resampling) Write(pcm []int16) error {
	if r.closed {
		return fmt.Errorf("resampling: %w", errClosed)
	}
	for _, s := range pcm {
		r.in = append(r.in, float32(s))
	}
	r.received += int64(len(pcm))
	return r.emit(math.MaxInt64)
}

// emit computes the outputs whose inputs have all arrived, up to (not including) output limit, and writes them.
func (r *resampling) emit(limit int64) error {
	r.out = r.out[:0]
	for ; r.n < limit; r.n++ {
		pos := r.n * r.down
		first := pos/r.up - r.reach + 1 // earliest input with weight
		if first+2*r.reach > r.offset+int64(len(r.in)) {
			break
		}
		window := r.in[first-r.offset : first-r.offset+2*r.reach]
		var acc float32
		for j, w := range r.phases[pos%r.up] {
			acc += w * window[j]
		}
		r.out = append(r.out, int16(max(-32768, min(32767, math.Round(float64(acc))))))
	}
	// Drop the inputs no later output reaches.
	if drop := (r.n*r.down)/r.up - r.reach + 1 - r.offset; drop > 0 {
		drop = min(drop, int64(len(r.in)))
		r.in = r.in[:copy(r.in, r.in[drop:])]
		r.offset += drop
	}
	if len(r.out) == 0 {
		return nil
	}
	return r.next.Write(r.out)
}

func (r *resampling) Flush() error { return r.next.Flush() }

// Close writes the last outputs, as if silence followed the input, and closes the encoder it feeds.
func (r *resampling) Close() error {
	if r.closed {
		return nil
	}
	r.closed = true
	r.in = append(r.in, make([]float32, 2*r.reach)...)
	err := r.emit((r.received*r.up + r.down - 1) / r.down)
	if cerr := r.next.Close(); err == nil {
		err = cerr
	}
	return err
}

func sinc(x float64) float64 {
	if x == 0 {
		return 1
	}
	return math.Sin(math.Pi*x) / (math.Pi * x)
}

// kaiser is the Kaiser window at x in [-1, 1].
func kaiser(x, beta float64) float64 {
	if x < -1 || x > 1 {
		return 0
	}
	return besselI0(beta*math.Sqrt(1-x*x)) / besselI0(beta)
}

// besselI0 is the modified Bessel function of the first kind, order 0, by its power series.
func besselI0(x float64) float64 {
	sum, term := 1.0, 1.0
	for k := 1; k < 50; k++ {
		term *= (x / 2) / float64(k)
		sum += term * term
		if term*term < sum*1e-17 {
			break
		}
	}
	return sum
}

func gcd(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}
