package server

import (
	"encoding/binary"
	"io"
	"slices"
	"strings"

	"github.com/ttsgen/ttsgen/internal/audio"
)

// Encoder streams a response's audio, 16-bit mono samples in reading order, into its format. Close ends the stream
// (a container's last page, say); it does not close the writer underneath.
type Encoder interface {
	Write(pcm []int16) error
	WriteSilence(samples int) error
	Close() error
}

// Format is a response format: what the response says it is, and how its audio is written.
type Format struct {
	Name        string
	ContentType string
	// New starts the format's stream into w at sampleRate; nil where this build has no encoder for it.
	New func(w io.Writer, sampleRate int) Encoder
}

// formats are the response formats a request may ask for, OpenAI's six. wav is a stream whose header gives the
// length as unknown, byte for byte what `ttsgen synth -o -` writes; pcm is the same samples without the header
// (16-bit little-endian mono at the voice's sample rate).
var formats = []Format{
	{Name: "wav", ContentType: "audio/wav", New: func(w io.Writer, rate int) Encoder { return audio.NewWAVStream(w, rate) }},
	{Name: "pcm", ContentType: "audio/pcm", New: func(w io.Writer, _ int) Encoder { return &rawPCM{w: w} }},
	{Name: "mp3", ContentType: "audio/mpeg"},
	{Name: "opus", ContentType: "audio/ogg"},
	{Name: "aac", ContentType: "audio/aac"},
	{Name: "flac", ContentType: "audio/flac"},
}

// DefaultFormat is the native API's format when a request names none.
const DefaultFormat = "wav"

// lookupFormat finds a format by name (any case).
func lookupFormat(name string) (Format, bool) {
	i := slices.IndexFunc(formats, func(f Format) bool { return strings.EqualFold(f.Name, name) })
	if i < 0 {
		return Format{}, false
	}
	return formats[i], true
}

// formatNames lists the formats that have an encoder in this build (available) or not.
func formatNames(available bool) []string {
	var names []string
	for _, f := range formats {
		if (f.New != nil) == available {
			names = append(names, f.Name)
		}
	}
	return names
}

// rawPCM writes samples as they are: 16-bit little-endian, no header.
type rawPCM struct {
	w   io.Writer
	buf []byte
}

func (p *rawPCM) Write(pcm []int16) error {
	p.buf = p.buf[:0]
	for _, s := range pcm {
		p.buf = binary.LittleEndian.AppendUint16(p.buf, uint16(s))
	}
	_, err := p.w.Write(p.buf)
	return err
}

func (p *rawPCM) WriteSilence(samples int) error { return p.Write(make([]int16, samples)) }

func (p *rawPCM) Close() error { return nil }
