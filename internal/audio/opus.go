package audio

/*
#cgo pkg-config: libopusenc opus
#include <stdlib.h>
#include <opusenc.h>

// ope_encoder_ctl is variadic, which cgo cannot call: one wrapper per request used.
static int ttsgen_ope_set_int(OggOpusEnc *enc, int request, opus_int32 value) {
	return ope_encoder_ctl(enc, request, value);
}
*/
import "C"

import (
	"fmt"
	"io"
	"unsafe"
)

// opusEncoder writes Opus in Ogg through libopusenc (Xiph's reference muxer over libopus, Debian's libopusenc0).
// It uses the library's pull interface: pages are taken from the encoder after each Write and written to out, so
// no C code calls back into Go. libopusenc resamples any input rate to Opus's 48 kHz and records the input rate in
// the header; its end-of-stream granule position trims the last frame's padding, so decoders give back exactly the
// samples written.
type opusEncoder struct {
	enc    *C.OggOpusEnc
	out    io.Writer
	closed bool
}

// opusDecisionDelay is how many samples (at 48 kHz) libopusenc may hold back to choose frame sizes: its default of
// two seconds delays a stream's audio by as much; 20 ms frames need no look-ahead.
const opusDecisionDelay = 0

func newOpusEncoder(w io.Writer, sampleRate, bitrate int) (*opusEncoder, error) {
	comments := C.ope_comments_create()
	if comments == nil {
		return nil, fmt.Errorf("libopusenc: out of memory")
	}
	defer C.ope_comments_destroy(comments)
	vendor := C.CString("ENCODER=ttsgen")
	defer C.free(unsafe.Pointer(vendor))
	C.ope_comments_add_string(comments, vendor)
	var cerr C.int
	enc := C.ope_encoder_create_pull(comments, C.opus_int32(sampleRate), 1, 0, &cerr)
	if enc == nil {
		return nil, fmt.Errorf("libopusenc: %s", C.GoString(C.ope_strerror(cerr)))
	}
	e := &opusEncoder{enc: enc, out: w}
	for _, set := range []struct {
		name    string
		request C.int
		value   int
	}{
		{"bitrate", C.OPUS_SET_BITRATE_REQUEST, bitrate},
		{"signal", C.OPUS_SET_SIGNAL_REQUEST, C.OPUS_SIGNAL_VOICE},
		{"decision delay", C.OPE_SET_DECISION_DELAY_REQUEST, opusDecisionDelay},
	} {
		if rc := C.ttsgen_ope_set_int(enc, set.request, C.opus_int32(set.value)); rc != C.OPE_OK {
			C.ope_encoder_destroy(enc)
			return nil, fmt.Errorf("libopusenc: setting %s %d: %s", set.name, set.value, C.GoString(C.ope_strerror(rc)))
		}
	}
	return e, nil
}

func (e *opusEncoder) Write(pcm []int16) error {
	if e.closed {
		return fmt.Errorf("opus: %w", errClosed)
	}
	if len(pcm) == 0 {
		return nil
	}
	if rc := C.ope_encoder_write(e.enc, (*C.opus_int16)(unsafe.Pointer(&pcm[0])), C.int(len(pcm))); rc != C.OPE_OK {
		return fmt.Errorf("opus: encoding: %s", C.GoString(C.ope_strerror(rc)))
	}
	return e.pages(false)
}

// pages writes out the pages the encoder has completed; with flush, also a last page of what it has encoded.
func (e *opusEncoder) pages(flush bool) error {
	f := C.int(0)
	if flush {
		f = 1
	}
	for {
		var page *C.uchar
		var n C.opus_int32
		switch rc := C.ope_encoder_get_page(e.enc, &page, &n, f); {
		case rc == 0:
			return nil
		case rc < 0:
			return fmt.Errorf("opus: %s", C.GoString(C.ope_strerror(rc)))
		}
		// The page stays valid until the next call into the encoder; Write does not keep it.
		if _, err := e.out.Write(unsafe.Slice((*byte)(unsafe.Pointer(page)), int(n))); err != nil {
			return fmt.Errorf("writing Ogg page: %w", err)
		}
	}
}

func (e *opusEncoder) Flush() error {
	if e.closed {
		return nil
	}
	return e.pages(true)
}

// Close encodes the rest (with the padding libopusenc needs to end on a whole frame), writes the final pages, the
// last one marked end of stream, and frees the encoder.
func (e *opusEncoder) Close() error {
	if e.closed {
		return nil
	}
	e.closed = true
	defer C.ope_encoder_destroy(e.enc)
	if rc := C.ope_encoder_drain(e.enc); rc != C.OPE_OK {
		return fmt.Errorf("opus: finishing the stream: %s", C.GoString(C.ope_strerror(rc)))
	}
	return e.pages(true)
}
