// Package audio turns model output into 16-bit PCM the way Piper does and streams it into WAV files.
package audio

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"

	goaudio "github.com/go-audio/audio"
	"github.com/go-audio/wav"
)

// minPeak keeps near-silent sentences from being amplified into noise: Piper divides by max(0.01, peak).
const minPeak = 0.01

// PCM16 converts one sentence of model output to 16-bit samples, peak-normalised exactly as Piper does: scaled so
// the loudest sample reaches full scale (unless the peak is below 0.01), then clipped.
func PCM16(samples []float32) []int16 {
	peak := float32(minPeak)
	for _, s := range samples {
		if a := float32(math.Abs(float64(s))); a > peak {
			peak = a
		}
	}
	scale := 32767 / peak
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

// SilenceSamples is the number of samples in seconds of silence at rate (never negative).
func SilenceSamples(seconds float64, rate int) int {
	if seconds <= 0 || math.IsNaN(seconds) {
		return 0
	}
	return int(math.Round(seconds * float64(rate)))
}

// WAVWriter streams mono 16-bit PCM into a WAV file, so a whole book never has to sit in memory. Into a file
// (NewWAVWriter) the header is completed by Close, which is why it needs an io.WriteSeeker; into a pipe
// (NewWAVStream) the header says the length is unknown.
type WAVWriter struct {
	enc     *wav.Encoder // nil for a stream
	buf     goaudio.IntBuffer
	stream  io.Writer // the pipe, for a stream
	header  []byte    // a stream's header, until it is written
	pcm     []byte    // a stream's samples, encoded
	rate    int
	samples int64
	closed  bool
}

// NewWAVWriter starts a WAV stream at sampleRate.
func NewWAVWriter(w io.WriteSeeker, sampleRate int) *WAVWriter {
	return &WAVWriter{
		enc:  wav.NewEncoder(w, sampleRate, 16, 1, 1),
		buf:  goaudio.IntBuffer{Format: &goaudio.Format{NumChannels: 1, SampleRate: sampleRate}, SourceBitDepth: 16},
		rate: sampleRate,
	}
}

// unknownLength is what a streamed WAV header gives as the RIFF and data chunk sizes: the largest a 32-bit size
// can say, as ffmpeg and sox write for a pipe; players then read samples to the end of the stream.
const unknownLength = 0xFFFFFFFF

// NewWAVStream starts a WAV stream at sampleRate into w, which cannot seek (standard output into a player, say):
// the header, with the lengths unknown, goes out with the first samples (or at Close), and each Write goes straight
// to w, so the listener hears a sentence as soon as it is written; a failure before any audio leaves w untouched.
// go-audio/wav cannot do this (it writes placeholder lengths of 42 bytes and seeks back to fix them at Close),
// hence the 44 bytes of header made here.
func NewWAVStream(w io.Writer, sampleRate int) *WAVWriter {
	header := make([]byte, 0, 44)
	header = append(header, "RIFF"...)
	header = binary.LittleEndian.AppendUint32(header, unknownLength)
	header = append(header, "WAVEfmt "...)
	header = binary.LittleEndian.AppendUint32(header, 16)                   // fmt chunk size
	header = binary.LittleEndian.AppendUint16(header, 1)                    // PCM
	header = binary.LittleEndian.AppendUint16(header, 1)                    // mono
	header = binary.LittleEndian.AppendUint32(header, uint32(sampleRate))   // samples per second
	header = binary.LittleEndian.AppendUint32(header, uint32(2*sampleRate)) // bytes per second
	header = binary.LittleEndian.AppendUint16(header, 2)                    // bytes per sample frame
	header = binary.LittleEndian.AppendUint16(header, 16)                   // bits per sample
	header = append(header, "data"...)
	header = binary.LittleEndian.AppendUint32(header, unknownLength)
	return &WAVWriter{stream: w, header: header, rate: sampleRate}
}

// writeStreamHeader sends a stream's header if it has not gone yet.
func (w *WAVWriter) writeStreamHeader() error {
	if w.header == nil {
		return nil
	}
	if _, err := w.stream.Write(w.header); err != nil {
		return fmt.Errorf("writing WAV header: %w", err)
	}
	w.header = nil
	return nil
}

// Write appends samples.
func (w *WAVWriter) Write(pcm []int16) error {
	if w.closed {
		return errors.New("wav: write after close")
	}
	if len(pcm) == 0 {
		return nil
	}
	if w.stream != nil {
		if err := w.writeStreamHeader(); err != nil {
			return err
		}
		w.pcm = w.pcm[:0]
		for _, s := range pcm {
			w.pcm = binary.LittleEndian.AppendUint16(w.pcm, uint16(s))
		}
		if _, err := w.stream.Write(w.pcm); err != nil {
			return fmt.Errorf("writing WAV samples: %w", err)
		}
		w.samples += int64(len(pcm))
		return nil
	}
	w.buf.Data = w.buf.Data[:0]
	for _, s := range pcm {
		w.buf.Data = append(w.buf.Data, int(s))
	}
	if err := w.enc.Write(&w.buf); err != nil {
		return fmt.Errorf("writing WAV samples: %w", err)
	}
	w.samples += int64(len(pcm))
	return nil
}

// WriteSilence appends n samples of silence.
func (w *WAVWriter) WriteSilence(n int) error {
	const chunk = 4096
	zeros := make([]int16, min(n, chunk))
	for n > 0 {
		k := min(n, chunk)
		if err := w.Write(zeros[:k]); err != nil {
			return err
		}
		n -= k
	}
	return nil
}

// Samples is how many samples have been written.
func (w *WAVWriter) Samples() int64 { return w.samples }

// Seconds is how much audio has been written.
func (w *WAVWriter) Seconds() float64 { return float64(w.samples) / float64(w.rate) }

// Close completes the WAV header (a stream's has nothing to complete). It does not close the underlying writer.
func (w *WAVWriter) Close() error {
	if w.closed {
		return nil
	}
	w.closed = true
	if w.stream != nil {
		return w.writeStreamHeader()
	}
	if err := w.enc.Close(); err != nil {
		return fmt.Errorf("finishing WAV header: %w", err)
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
