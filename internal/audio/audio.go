// Package audio turns model output into 16-bit PCM at a normalised level and streams it into WAV files.
package audio

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"

	"github.com/go-audio/wav"
)

// Normalisation is how each sentence's level is set, before Volume.
type Normalisation int

const (
	// SpeechLevel scales each sentence to an RMS of -20 dBFS, with no sample above -3 dBFS. That is the level of
	// LJSpeech's recordings, inside the range audiobook distributors ask for (ACX: RMS -23 to -18 dB, peaks at
	// most -3 dB), and the headroom keeps resampling and lossy encoders from clipping. Every sentence comes out
	// equally loud, which peak normalisation does not give: one loud plosive makes its whole sentence quieter.
	SpeechLevel Normalisation = iota
	// PeakLevel is Piper's: each sentence's loudest sample raised to full scale (unless the peak is below 0.01).
	PeakLevel
	// ModelLevel keeps the model's own level.
	ModelLevel
)

const (
	speechRMS     = 0.1       // -20 dBFS
	speechCeiling = 0.7079458 // -3 dBFS
	// minPeak keeps near-silent sentences from being amplified into noise: Piper divides by max(0.01, peak).
	minPeak = 0.01
	// minRMS does the same for SpeechLevel: at most 40 dB of gain, as with Piper's floor.
	minRMS = speechRMS / 100
)

// String names the normalisation as results rows record it.
func (n Normalisation) String() string {
	switch n {
	case SpeechLevel:
		return "speech"
	case PeakLevel:
		return "peak"
	case ModelLevel:
		return "model"
	}
	return fmt.Sprintf("Normalisation(%d)", int(n))
}

// Level is how model output becomes 16-bit samples, one sentence at a time. The zero value is SpeechLevel at
// volume 1.
type Level struct {
	Normalisation Normalisation
	// Volume multiplies the samples after the normalisation (piper1-gpl's --volume); 0 means 1.
	Volume float32
}

// KeepsModelLevel reports whether the samples need no look at the whole sentence first, so that a sentence can
// be written window by window as the engine decodes it.
func (l Level) KeepsModelLevel() bool { return l.Normalisation == ModelLevel }

// PCM16 converts one sentence of model output to 16-bit samples at Level{} (SpeechLevel).
func PCM16(samples []float32) []int16 { return Level{}.PCM16(samples) }

// PCM16 converts one sentence of model output to 16-bit samples at this level, clipping what goes past full scale.
func (l Level) PCM16(samples []float32) []int16 {
	scale := float32(32767) * l.gain(samples)
	if l.Volume != 0 {
		scale *= l.Volume
	}
	out := make([]int16, len(samples))
	for i, s := range samples {
		v := s * scale
		if v != v { // NaN from a broken model: silence rather than noise
			v = 0
		}
		out[i] = int16(max(-32768, min(32767, v)))
	}
	return out
}

// gain is the factor that takes the sentence to its normalised level, full scale being 1.
func (l Level) gain(samples []float32) float32 {
	if l.Normalisation == ModelLevel {
		return 1
	}
	var peak float32
	var energy float64
	for _, s := range samples {
		if s != s {
			continue
		}
		peak = max(peak, float32(math.Abs(float64(s))))
		energy += float64(s) * float64(s)
	}
	if l.Normalisation == PeakLevel {
		return 1 / max(peak, minPeak)
	}
	rms := minRMS
	if len(samples) > 0 {
		rms = max(rms, math.Sqrt(energy/float64(len(samples))))
	}
	g := float32(speechRMS / rms)
	if peak*g > speechCeiling {
		g = speechCeiling / peak
	}
	return g
}

// SilenceSamples is the number of samples in seconds of silence at rate (never negative).
func SilenceSamples(seconds float64, rate int) int {
	if seconds <= 0 || math.IsNaN(seconds) {
		return 0
	}
	return int(math.Round(seconds * float64(rate)))
}

// WAVWriter streams mono 16-bit PCM into a WAV file, so a whole book never has to sit in memory. Into a file
// (NewWAVWriter) Close completes the header's lengths, which is why it needs an io.WriteSeeker; into a pipe
// (NewWAVStream) the header says the length is unknown. The header goes out with the first samples (or at Close),
// so a failure before any audio leaves w untouched.
//
// It writes WAV itself (44 bytes of header, then the samples) rather than through go-audio/wav's encoder, which
// reserves a minute of audio (2.6 MB at 22,050 Hz) for every file it opens and encodes with an allocation per
// sample, and cannot write into a pipe (it seeks back to fix its lengths). Reading (ReadWAV) uses go-audio/wav.
type WAVWriter struct {
	out     io.Writer
	file    io.WriteSeeker // the output if it can seek back, for Close to complete the lengths; nil for a stream
	base    int64          // where the header starts in file
	rate    int
	started bool   // the header is written
	pcm     []byte // samples as encoded, reused from one Write to the next
	samples int64
	closed  bool
}

// NewWAVWriter starts a WAV file at sampleRate into w, from w's current position.
func NewWAVWriter(w io.WriteSeeker, sampleRate int) *WAVWriter {
	if ws, base, ok := position(w); ok {
		return &WAVWriter{out: w, file: ws, base: base, rate: sampleRate}
	}
	return &WAVWriter{out: w, file: w, rate: sampleRate}
}

// NewWAVStream starts a WAV stream at sampleRate into w, which cannot seek (standard output into a player, say):
// each Write goes straight to w, so the listener hears a sentence as soon as it is written.
func NewWAVStream(w io.Writer, sampleRate int) *WAVWriter {
	return &WAVWriter{out: w, rate: sampleRate}
}

// newWAVEncoder is a WAV file when w can seek, else a stream.
func newWAVEncoder(w io.Writer, sampleRate int) *WAVWriter {
	if ws, base, ok := position(w); ok {
		return &WAVWriter{out: w, file: ws, base: base, rate: sampleRate}
	}
	return NewWAVStream(w, sampleRate)
}

// unknownLength is what a streamed WAV header gives as the RIFF and data chunk sizes: the largest a 32-bit size
// can say, as ffmpeg and sox write for a pipe; players then read samples to the end of the stream.
const unknownLength = 0xFFFFFFFF

// wavHeader is the 44-byte header of mono 16-bit PCM at sampleRate with the given chunk sizes.
func wavHeader(sampleRate int, riffSize, dataSize uint32) []byte {
	h := make([]byte, 0, 44)
	h = append(h, "RIFF"...)
	h = binary.LittleEndian.AppendUint32(h, riffSize)
	h = append(h, "WAVEfmt "...)
	h = binary.LittleEndian.AppendUint32(h, 16)                   // fmt chunk size
	h = binary.LittleEndian.AppendUint16(h, 1)                    // PCM
	h = binary.LittleEndian.AppendUint16(h, 1)                    // mono
	h = binary.LittleEndian.AppendUint32(h, uint32(sampleRate))   // samples per second
	h = binary.LittleEndian.AppendUint32(h, uint32(2*sampleRate)) // bytes per second
	h = binary.LittleEndian.AppendUint16(h, 2)                    // bytes per sample frame
	h = binary.LittleEndian.AppendUint16(h, 16)                   // bits per sample
	h = append(h, "data"...)
	h = binary.LittleEndian.AppendUint32(h, dataSize)
	return h
}

// chunkSizes are the RIFF and data chunk sizes of a file with dataBytes of samples. Past what 32 bits can say
// (about 27 hours at 22,050 Hz) both are unknown, as in a stream, and players read to the end of the file: the
// audio is all there, never cut to fit.
func chunkSizes(dataBytes int64) (riff, data uint32) {
	if dataBytes+36 >= unknownLength {
		return unknownLength, unknownLength
	}
	return uint32(dataBytes + 36), uint32(dataBytes)
}

// start sends the header if it has not gone yet.
func (w *WAVWriter) start() error {
	if w.started {
		return nil
	}
	if _, err := w.out.Write(wavHeader(w.rate, unknownLength, unknownLength)); err != nil {
		return fmt.Errorf("writing WAV header: %w", err)
	}
	w.started = true
	return nil
}

// Write appends samples.
func (w *WAVWriter) Write(pcm []int16) error {
	if w.closed {
		return fmt.Errorf("wav: %w", errClosed)
	}
	if len(pcm) == 0 {
		return nil
	}
	if err := w.start(); err != nil {
		return err
	}
	w.pcm = appendLE16(w.pcm[:0], pcm)
	if _, err := w.out.Write(w.pcm); err != nil {
		return fmt.Errorf("writing WAV samples: %w", err)
	}
	w.samples += int64(len(pcm))
	return nil
}

// WriteSilence appends n samples of silence.
func (w *WAVWriter) WriteSilence(n int) error { return WriteSilence(w, n) }

// Flush does nothing: every Write goes straight to the output.
func (w *WAVWriter) Flush() error { return nil }

// Samples is how many samples have been written.
func (w *WAVWriter) Samples() int64 { return w.samples }

// Seconds is how much audio has been written.
func (w *WAVWriter) Seconds() float64 { return float64(w.samples) / float64(w.rate) }

// Close completes the header: a file's lengths (a stream's say unknown). It does not close the underlying writer.
func (w *WAVWriter) Close() error {
	if w.closed {
		return nil
	}
	w.closed = true
	if err := w.start(); err != nil || w.file == nil {
		return err
	}
	riff, data := chunkSizes(2 * w.samples)
	for _, field := range []struct {
		offset int64
		value  uint32
	}{{4, riff}, {40, data}} {
		if _, err := w.file.Seek(w.base+field.offset, io.SeekStart); err != nil {
			return fmt.Errorf("completing WAV header: %w", err)
		}
		if _, err := w.file.Write(binary.LittleEndian.AppendUint32(nil, field.value)); err != nil {
			return fmt.Errorf("completing WAV header: %w", err)
		}
	}
	if _, err := w.file.Seek(0, io.SeekEnd); err != nil {
		return fmt.Errorf("completing WAV header: %w", err)
	}
	return nil
}

// Buffer is an in-memory io.WriteSeeker, for WAV output that goes to a pipe (which cannot seek back to the header).
type Buffer struct {
	data []byte
	pos  int
}

// Bytes returns the written bytes.
func (b *Buffer) Bytes() []byte { return b.data }

func (b *Buffer) Write(p []byte) (int, error) {
	if end := b.pos + len(p); end > len(b.data) {
		b.data = append(b.data, make([]byte, end-len(b.data))...)
	}
	n := copy(b.data[b.pos:], p)
	b.pos += n
	return n, nil
}

func (b *Buffer) Seek(offset int64, whence int) (int64, error) {
	var base int64
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		base = int64(b.pos)
	case io.SeekEnd:
		base = int64(len(b.data))
	default:
		return 0, fmt.Errorf("seek: bad whence %d", whence)
	}
	n := base + offset
	if n < 0 {
		return 0, errors.New("seek: negative position")
	}
	b.pos = int(n)
	return n, nil
}

// ReadWAV decodes a mono 16-bit WAV (for tests and tools): its samples and sample rate. A streamed WAV's unknown
// lengths (NewWAVStream) are read as "to the end".
func ReadWAV(r io.ReadSeeker) ([]int16, int, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, 0, fmt.Errorf("reading WAV: %w", err)
	}
	if len(data) >= 44 && string(data[36:40]) == "data" && binary.LittleEndian.Uint32(data[40:]) == unknownLength {
		data = slices.Clone(data) // go-audio/wav reads no samples from a data chunk of unknown length
		binary.LittleEndian.PutUint32(data[4:], uint32(len(data)-8))
		binary.LittleEndian.PutUint32(data[40:], uint32(len(data)-44))
	}
	d := wav.NewDecoder(bytes.NewReader(data))
	if !d.IsValidFile() {
		return nil, 0, errors.New("not a valid WAV file")
	}
	buf, err := d.FullPCMBuffer()
	if err != nil {
		return nil, 0, fmt.Errorf("reading WAV: %w", err)
	}
	if buf.Format.NumChannels != 1 || d.BitDepth != 16 {
		return nil, 0, fmt.Errorf("want mono 16-bit WAV, got %d channels, %d bits", buf.Format.NumChannels, d.BitDepth)
	}
	out := make([]int16, len(buf.Data))
	for i, s := range buf.Data {
		out[i] = int16(s)
	}
	return out, buf.Format.SampleRate, nil
}
