package server

import (
	"net/http"
	"strings"

	"github.com/ttsgen/ttsgen/internal/pipeline"
)

// VoiceInfo describes a served voice.
type VoiceInfo struct {
	Name        string   `json:"name"`
	Language    string   `json:"language,omitempty"`
	SampleRate  int      `json:"sample_rate"`
	Speakers    []string `json:"speakers,omitempty"` // names of a multi-speaker voice's speakers, where it names them
	NumSpeakers int      `json:"num_speakers"`
	Default     bool     `json:"default,omitempty"`
}

func describeVoice(v *pipeline.LoadedVoice, isDefault bool) VoiceInfo {
	cfg := v.Voice.Config
	return VoiceInfo{Name: v.Voice.Name, Language: cfg.LanguageCode(), SampleRate: cfg.Audio.SampleRate,
		Speakers: cfg.SpeakerNames(), NumSpeakers: cfg.NumSpeakers, Default: isDefault}
}

// Voices lists the served voices, the default first; none before Ready.
func (s *Server) Voices() []VoiceInfo {
	b := s.backend.Load()
	if b == nil {
		return nil
	}
	return b.voices
}

// listVoices is GET /api/voices: {"voices": [VoiceInfo...]}.
func (s *Server) listVoices(w http.ResponseWriter, _ *http.Request) {
	b := s.backend.Load()
	if b == nil {
		WriteError(w, ErrNotReady)
		return
	}
	writeJSON(w, map[string][]VoiceInfo{"voices": b.voices})
}

// voice finds a served voice by name ("" = the default).
func (b *backend) voice(name string) (*pipeline.LoadedVoice, *Error) {
	if name == "" {
		return b.Voices[0], nil
	}
	if v, ok := b.byName[name]; ok {
		return v, nil
	}
	return nil, BadRequest(paramVoice, "unknown_voice", "voice %q is not served here: choose one of %s (ttsgen serve "+
		"--voice NAME serves more)", name, strings.Join(VoiceNames(b.voices), ", "))
}

// VoiceNames lists the voices' names.
func VoiceNames(voices []VoiceInfo) []string {
	names := make([]string, len(voices))
	for i, v := range voices {
		names[i] = v.Name
	}
	return names
}
