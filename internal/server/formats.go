package server

import (
	"slices"
	"strings"

	"github.com/ttsgen/ttsgen/internal/audio"
)

// Format is a response format: what the response says it is, and the audio format it is encoded in.
type Format struct {
	Name        string
	ContentType string
	Audio       audio.Format
	// StreamsByWindow says whether audio of the model's own level streams window by window (as the engine decodes a
	// sentence) rather than sentence by sentence: whether a flush after every piece costs the encoder nothing
	// (Opus only ends an Ogg page, MP3 and AAC send what they have coded). A FLAC flush ends a frame, whose size
	// it chooses for compression, so FLAC goes a sentence at a time.
	StreamsByWindow bool
}

// formats are the response formats a request may ask for, OpenAI's six, each through the encoder synth and batch
// use. wav is a stream whose header gives the length as unknown, byte for byte what `ttsgen synth -o -` writes; pcm
// is the same samples without the header (16-bit little-endian mono at the voice's sample rate); opus is Ogg Opus.
var formats = []Format{
	{Name: "wav", ContentType: "audio/wav", Audio: audio.WAV, StreamsByWindow: true},
	{Name: "pcm", ContentType: "audio/pcm", Audio: audio.PCM, StreamsByWindow: true},
	{Name: "mp3", ContentType: "audio/mpeg", Audio: audio.MP3, StreamsByWindow: true},
	{Name: "opus", ContentType: "audio/ogg", Audio: audio.Opus, StreamsByWindow: true},
	{Name: "aac", ContentType: "audio/aac", Audio: audio.AAC, StreamsByWindow: true},
	{Name: "flac", ContentType: "audio/flac", Audio: audio.FLAC},
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

// formatNames lists the formats a request may name.
func formatNames() []string {
	names := make([]string, len(formats))
	for i, f := range formats {
		names[i] = f.Name
	}
	return names
}
