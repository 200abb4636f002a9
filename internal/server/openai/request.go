package openai

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"strings"

	"github.com/ttsgen/ttsgen/internal/server"
)

// SpeechRequest is the body of OpenAI's POST /v1/audio/speech, with ttsgen's own settings beside OpenAI's.
// Fields that neither has are ignored, as OpenAI's clients may send more than this.
type SpeechRequest struct {
	Model          string   `json:"model"` // any; a served voice's name also picks that voice (see Voices)
	Input          string   `json:"input"`
	Voice          VoiceRef `json:"voice"`
	Instructions   string   `json:"instructions"` // accepted and ignored: Piper voices take no instructions
	ResponseFormat string   `json:"response_format"`
	Speed          *float64 `json:"speed"`
	StreamFormat   string   `json:"stream_format"`

	Speaker         server.SpeakerRef `json:"speaker"`
	LengthScale     *float32          `json:"length_scale"`
	NoiseScale      *float32          `json:"noise_scale"`
	NoiseW          *float32          `json:"noise_w"`
	SentenceSilence *float64          `json:"sentence_silence"`
	Normalize       *bool             `json:"normalize"`
}

// VoiceRef is OpenAI's voice: a name, or an object {"id": NAME} (its custom voices).
type VoiceRef string

func (v *VoiceRef) UnmarshalJSON(data []byte) error {
	var name string
	if err := json.Unmarshal(data, &name); err == nil {
		*v = VoiceRef(name)
		return nil
	}
	var obj struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(data, &obj); err != nil {
		return server.NotAString(data)
	}
	*v = VoiceRef(obj.ID)
	return nil
}

// Stream formats.
const (
	StreamAudio = "audio" // the audio itself, as it is made
	StreamSSE   = "sse"   // server-sent events: speech.audio.delta events, then speech.audio.done
)

// DefaultResponseFormat is OpenAI's format when a request names none.
const DefaultResponseFormat = "mp3"

// names the native API gives fields whose OpenAI names differ, for errors about them.
var nativeToOpenAI = map[string]string{"text": "input", "format": "response_format"}

// translation is a decoded OpenAI request as the native API takes it.
type translation struct {
	native server.SpeechRequest
	sse    bool
}

// decode reads an OpenAI request body and translates it: the voice resolved through voices among the served ones,
// the rest passed on for the native API to check.
func decode(body []byte, voices Voices, served []server.VoiceInfo) (translation, *server.Error) {
	var req SpeechRequest
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&req); err != nil {
		return translation{}, renamed(server.JSONError(err))
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return translation{}, server.BadRequest("", "invalid_json", "the body holds more than one JSON object; send exactly one")
	}
	var t translation
	switch req.StreamFormat {
	case "", StreamAudio:
	case StreamSSE:
		t.sse = true
	default:
		return t, server.BadRequest("stream_format", "invalid_value", "unknown stream format %q: ask for %q (the audio "+
			"itself, the default) or %q (server-sent events)", req.StreamFormat, StreamAudio, StreamSSE)
	}
	target, e := voices.resolve(string(req.Voice), req.Model, served)
	if e != nil {
		return t, e
	}
	if req.Speaker != "" {
		target.Speaker = string(req.Speaker)
	}
	t.native = server.SpeechRequest{
		Text: req.Input, Voice: target.Voice, Speaker: server.SpeakerRef(target.Speaker), Speed: req.Speed,
		LengthScale: req.LengthScale, NoiseScale: req.NoiseScale, NoiseW: req.NoiseW,
		SentenceSilence: req.SentenceSilence, Normalize: req.Normalize,
		Format: cmp.Or(req.ResponseFormat, DefaultResponseFormat),
	}
	return t, nil
}

// renamed is e with its param named as OpenAI's API names it.
func renamed(e *server.Error) *server.Error {
	if e.Param != nil {
		if name, ok := nativeToOpenAI[*e.Param]; ok {
			e.Param = &name
		}
	}
	return e
}

// Target is a served voice and one of its speakers ("" = its first).
type Target struct{ Voice, Speaker string }

// Names are OpenAI's voice names.
var Names = []string{"alloy", "ash", "ballad", "coral", "echo", "fable", "onyx", "nova", "sage", "shimmer", "verse",
	"marin", "cedar"}

// Voices maps OpenAI's voice names to served voices. A name it lacks speaks with the model's voice, where the
// request's model is a served voice's name, else with the server's default voice.
type Voices map[string]Target

// resolve finds the served voice a request asks for: by its name; by an OpenAI name, through v; none = the
// default.
func (v Voices) resolve(voice, model string, served []server.VoiceInfo) (Target, *server.Error) {
	isServed := func(name string) bool {
		return slices.ContainsFunc(served, func(s server.VoiceInfo) bool { return s.Name == name })
	}
	voice = strings.TrimSpace(voice)
	switch {
	case isServed(voice):
		return Target{Voice: voice}, nil
	case voice == "" || slices.Contains(Names, strings.ToLower(voice)):
		if t, ok := v[strings.ToLower(voice)]; ok {
			return t, nil
		}
		if isServed(model) {
			return Target{Voice: model}, nil
		}
		return Target{}, nil // the native API's default voice
	}
	return Target{}, server.BadRequest("voice", "unknown_voice", "voice %q is neither a voice served here (%s) nor "+
		"one of OpenAI's (%s, which speak with the default voice unless the server maps them)", voice,
		strings.Join(server.VoiceNames(served), ", "), strings.Join(Names, ", "))
}
