package audio

/*
#cgo LDFLAGS: -lmp3lame
#include <lame/lame.h>
*/
import "C"

import (
	"fmt"
	"io"
	"slices"
	"unsafe"
)

// mp3Encoder writes MP3 through LAME (Debian's libmp3lame0), at a constant bitrate. Into a file it completes the
// LAME tag at Close: the first frame then says how many frames follow and how much encoder delay and padding to
// trim, so players and ffmpeg give the exact length. A stream (a pipe) has no tag, and decodes with LAME's delay
// of about 50 ms more at its start.
type mp3Encoder struct {
	lame   *C.lame_global_flags
	out    io.Writer
	file   io.WriteSeeker // nil for a stream
	base   int64          // where the stream starts in file, where the LAME tag frame goes
	buf    []byte
	closed bool
}

// mp3Rates are the sample rates MPEG audio layer III codes (MPEG-1, -2 and 2.5), lowest first. LAME would
// resample any other to the nearest of them; NewEncoder gives it only these (Format.CheckSampleRate, codingRate).
var mp3Rates = []int{8000, 11025, 12000, 16000, 22050, 24000, 32000, 44100, 48000}

// mp3Chunk is the most samples given to LAME at once, which bounds the output buffer (LAME's rule: 1.25 x samples
// + 7200 bytes).
const mp3Chunk = 8192

func newMP3Encoder(w io.Writer, sampleRate, bitrate int) (*mp3Encoder, error) {
	gfp := C.lame_init()
	if gfp == nil {
		return nil, fmt.Errorf("lame: out of memory")
	}
	e := &mp3Encoder{lame: gfp, out: w, buf: make([]byte, mp3Chunk*5/4+7200)}
	ws, base, seekable := position(w)
	if seekable {
		e.file, e.base = ws, base
	}
	tag := C.int(0)
	if seekable {
		tag = 1
	}
	if !slices.Contains(mp3Rates, sampleRate) {
		C.lame_close(gfp)
		return nil, fmt.Errorf("lame: MP3 has no sample rate of %d Hz", sampleRate)
	}
	C.lame_set_in_samplerate(gfp, C.int(sampleRate))
	C.lame_set_out_samplerate(gfp, C.int(sampleRate))
	C.lame_set_num_channels(gfp, 1)
	C.lame_set_mode(gfp, C.MONO)
	C.lame_set_brate(gfp, C.int(bitrate/1000))
	C.lame_set_quality(gfp, 2) // LAME's "high quality" noise shaping: speech-length files encode in milliseconds anyway
	C.lame_set_bWriteVbrTag(gfp, tag)
	if rc := C.lame_init_params(gfp); rc < 0 {
		C.lame_close(gfp)
		return nil, fmt.Errorf("lame: bad parameters (rate %d Hz, %d bit/s): error %d", sampleRate, bitrate, int(rc))
	}
	return e, nil
}

func (e *mp3Encoder) Write(pcm []int16) error {
	if e.closed {
		return fmt.Errorf("mp3: %w", errClosed)
	}
	for len(pcm) > 0 {
		n := min(len(pcm), mp3Chunk)
		rc := C.lame_encode_buffer(e.lame, (*C.short)(unsafe.Pointer(&pcm[0])), nil, C.int(n),
			(*C.uchar)(unsafe.Pointer(&e.buf[0])), C.int(len(e.buf)))
		if err := e.emit(rc); err != nil {
			return err
		}
		pcm = pcm[n:]
	}
	return nil
}

// emit writes the n bytes LAME just put in buf (n < 0 is LAME's error code).
func (e *mp3Encoder) emit(n C.int) error {
	if n < 0 {
		return fmt.Errorf("mp3: encoding: LAME error %d", int(n))
	}
	if _, err := e.out.Write(e.buf[:n]); err != nil {
		return fmt.Errorf("writing MP3: %w", err)
	}
	return nil
}

// Flush does nothing: LAME hands out each frame as soon as the bit reservoir lets it, and holding on to the last
// partial frame is what keeps the stream gapless.
func (e *mp3Encoder) Flush() error { return nil }

func (e *mp3Encoder) Close() error {
	if e.closed {
		return nil
	}
	e.closed = true
	defer C.lame_close(e.lame)
	if err := e.emit(C.lame_encode_flush(e.lame, (*C.uchar)(unsafe.Pointer(&e.buf[0])), C.int(len(e.buf)))); err != nil {
		return err
	}
	if e.file == nil {
		return nil
	}
	n := C.lame_get_lametag_frame(e.lame, (*C.uchar)(unsafe.Pointer(&e.buf[0])), C.size_t(len(e.buf)))
	if n == 0 || int(n) > len(e.buf) {
		return nil
	}
	// The tag replaces the empty frame LAME put first.
	if _, err := e.file.Seek(e.base, io.SeekStart); err != nil {
		return fmt.Errorf("writing the LAME tag: %w", err)
	}
	if _, err := e.file.Write(e.buf[:n]); err != nil {
		return fmt.Errorf("writing the LAME tag: %w", err)
	}
	if _, err := e.file.Seek(0, io.SeekEnd); err != nil {
		return fmt.Errorf("writing the LAME tag: %w", err)
	}
	return nil
}
