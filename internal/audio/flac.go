package audio

import (
	"bufio"
	"fmt"
	"io"

	"github.com/mewkiz/flac"
	"github.com/mewkiz/flac/frame"
	"github.com/mewkiz/flac/meta"
)

// flacBlockSize is the samples per FLAC frame: libFLAC's default, a good trade of compression against latency.
const flacBlockSize = 4096

// flacEncoder writes FLAC through github.com/mewkiz/flac, a maintained pure-Go encoder: lossless, so decoding
// gives back exactly the samples written. Samples collect into frames of flacBlockSize; Flush writes the ones
// collected as a shorter frame.
type flacEncoder struct {
	enc     *flac.Encoder
	out     *bufio.Writer
	pending []int32 // samples of the frame being filled
	closed  bool
	err     error // the first failure: a FLAC stream cut mid-frame cannot go on
}

func newFLACEncoder(w io.Writer, sampleRate int) (*flacEncoder, error) {
	// The encoder writes its bit stream a few bytes at a time: buffered, and, into a file, with a Seek that lands
	// relative to where the stream starts, so that Close can fill in the length and MD5 of the samples.
	buf := bufio.NewWriterSize(w, 64<<10)
	var out io.Writer = bufferedStream{buf}
	if ws, base, ok := position(w); ok {
		out = &bufferedFile{bufferedStream{buf}, ws, base}
	}
	info := &meta.StreamInfo{
		BlockSizeMin:  16,
		BlockSizeMax:  flacBlockSize,
		SampleRate:    uint32(sampleRate),
		NChannels:     1,
		BitsPerSample: 16,
	}
	enc, err := flac.NewEncoder(out, info)
	if err != nil {
		return nil, err
	}
	return &flacEncoder{enc: enc, out: buf, pending: make([]int32, 0, flacBlockSize)}, nil
}

func (e *flacEncoder) Write(pcm []int16) error {
	if e.closed {
		return fmt.Errorf("flac: %w", errClosed)
	}
	for len(pcm) > 0 && e.err == nil {
		n := min(len(pcm), flacBlockSize-len(e.pending))
		for _, s := range pcm[:n] {
			e.pending = append(e.pending, int32(s))
		}
		pcm = pcm[n:]
		if len(e.pending) == flacBlockSize {
			e.writeFrame()
		}
	}
	return e.err
}

// writeFrame encodes the pending samples as one frame.
func (e *flacEncoder) writeFrame() {
	if len(e.pending) == 0 || e.err != nil {
		return
	}
	f := &frame.Frame{
		Header: frame.Header{
			HasFixedBlockSize: false, // Flush makes frames of any length
			BlockSize:         uint16(len(e.pending)),
			SampleRate:        e.enc.Info.SampleRate,
			Channels:          frame.ChannelsMono,
			BitsPerSample:     16,
		},
		Subframes: []*frame.Subframe{{
			SubHeader: frame.SubHeader{Pred: frame.PredVerbatim}, // the encoder picks the best fixed predictor
			Samples:   e.pending,
			NSamples:  len(e.pending),
		}},
	}
	if err := e.enc.WriteFrame(f); err != nil {
		e.err = fmt.Errorf("writing FLAC frame: %w", err)
	}
	e.pending = e.pending[:0]
}

func (e *flacEncoder) Flush() error {
	// A frame shorter than 16 samples is allowed only at the end of the stream: such a tail waits for more.
	if len(e.pending) >= 16 {
		e.writeFrame()
	}
	if e.err == nil {
		if err := e.out.Flush(); err != nil {
			e.err = fmt.Errorf("writing FLAC: %w", err)
		}
	}
	return e.err
}

func (e *flacEncoder) Close() error {
	if e.closed {
		return nil
	}
	e.closed = true
	e.writeFrame()
	if e.err != nil {
		return e.err
	}
	if err := e.out.Flush(); err != nil {
		return fmt.Errorf("writing FLAC: %w", err)
	}
	if err := e.enc.Close(); err != nil { // into a file: seeks back to complete the stream info
		return fmt.Errorf("completing FLAC stream info: %w", err)
	}
	if err := e.out.Flush(); err != nil {
		return fmt.Errorf("completing FLAC stream info: %w", err)
	}
	return nil
}

// bufferedStream is a buffered writer with no Close (so that an encoder that closes what it writes to leaves the
// caller's file open) and no Seek (so that it knows not to seek back).
type bufferedStream struct{ buf *bufio.Writer }

func (b bufferedStream) Write(p []byte) (int, error) { return b.buf.Write(p) }

// bufferedFile is a bufferedStream into a file: Seek flushes, and counts offsets from base, where the stream
// starts in the file.
type bufferedFile struct {
	bufferedStream
	file io.Seeker
	base int64
}

func (b *bufferedFile) Seek(offset int64, whence int) (int64, error) {
	if err := b.buf.Flush(); err != nil {
		return 0, err
	}
	if whence == io.SeekStart {
		offset += b.base
	}
	pos, err := b.file.Seek(offset, whence)
	return pos - b.base, err
}
