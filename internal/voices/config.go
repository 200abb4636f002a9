package voices

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// Config is a Piper voice config (the X.onnx.json beside a voice model). Only the fields ttsgen uses are decoded;
// the rest of the file is ignored, as Piper itself does.
type Config struct {
	Audio struct {
		SampleRate int    `json:"sample_rate"`
		Quality    string `json:"quality,omitempty"`
	} `json:"audio"`
	Espeak struct {
		Voice string `json:"voice"`
	} `json:"espeak"`
	Inference    Inference          `json:"inference"`
	PhonemeType  string             `json:"phoneme_type"`
	PhonemeIDMap map[string][]int64 `json:"phoneme_id_map"`
	NumSpeakers  int                `json:"num_speakers"`
	SpeakerIDMap map[string]int64   `json:"speaker_id_map"`
	Language     struct {
		Code        string `json:"code"`
		NameEnglish string `json:"name_english,omitempty"`
	} `json:"language"`
	Dataset string `json:"dataset,omitempty"`
}

// Inference holds a voice's default synthesis scales, as named in Piper configs.
type Inference struct {
	NoiseScale  float32 `json:"noise_scale"`
	LengthScale float32 `json:"length_scale"`
	NoiseW      float32 `json:"noise_w"`
}

// Phoneme types a Piper voice may declare.
const (
	PhonemeTypeEspeak = "espeak"
	PhonemeTypeText   = "text"
)

// The phonemes Piper's id layout needs in every phoneme_id_map: padding, beginning and end of a sentence.
var requiredPhonemes = []string{"_", "^", "$"}

// ParseConfig decodes and validates a Piper voice config. Missing optional fields get Piper's defaults.
func ParseConfig(data []byte) (*Config, error) {
	// Piper's own scales, for each one a config leaves out (those written before the "inference" block existed
	// have none): decoding keeps what the JSON does not set.
	c := Config{Inference: Inference{NoiseScale: 0.667, LengthScale: 1, NoiseW: 0.8}}
	if err := json.Unmarshal(data, &c); err != nil {
		return nil, fmt.Errorf("not a Piper voice config (invalid JSON): %w", err)
	}
	if c.PhonemeType == "" {
		c.PhonemeType = PhonemeTypeEspeak
	}
	if c.NumSpeakers == 0 {
		c.NumSpeakers = 1
	}
	if err := c.validate(); err != nil {
		return nil, err
	}
	return &c, nil
}

func (c *Config) validate() error {
	if c.Audio.SampleRate < 1000 || c.Audio.SampleRate > 192000 {
		return fmt.Errorf("audio.sample_rate %d is not a usable sample rate", c.Audio.SampleRate)
	}
	switch c.PhonemeType {
	case PhonemeTypeEspeak:
		if c.Espeak.Voice == "" {
			return fmt.Errorf(`phoneme_type is "espeak" but espeak.voice is empty`)
		}
	case PhonemeTypeText:
	default:
		return fmt.Errorf("phoneme_type %q is not supported (want %q or %q)", c.PhonemeType, PhonemeTypeEspeak, PhonemeTypeText)
	}
	if len(c.PhonemeIDMap) == 0 {
		return fmt.Errorf("phoneme_id_map is missing or empty")
	}
	for _, p := range requiredPhonemes {
		if len(c.PhonemeIDMap[p]) == 0 {
			return fmt.Errorf("phoneme_id_map has no id for %q (Piper's pad/begin/end phonemes are required)", p)
		}
	}
	for p, ids := range c.PhonemeIDMap {
		for _, id := range ids {
			if id < 0 {
				return fmt.Errorf("phoneme_id_map[%q] has negative id %d", p, id)
			}
		}
	}
	if c.NumSpeakers < 1 {
		return fmt.Errorf("num_speakers %d must be at least 1", c.NumSpeakers)
	}
	for name, id := range c.SpeakerIDMap {
		if id < 0 || id >= int64(c.NumSpeakers) {
			return fmt.Errorf("speaker_id_map[%q] = %d is outside 0..%d", name, id, c.NumSpeakers-1)
		}
	}
	for _, s := range []float32{c.Inference.NoiseScale, c.Inference.LengthScale, c.Inference.NoiseW} {
		if math.IsNaN(float64(s)) || s < 0 {
			return fmt.Errorf("inference scales must be non-negative numbers, got %+v", c.Inference)
		}
	}
	return nil
}

// MaxPhonemeID is the largest id in the phoneme map: a model must accept every id up to it.
func (c *Config) MaxPhonemeID() int64 {
	var max int64
	for _, ids := range c.PhonemeIDMap {
		for _, id := range ids {
			if id > max {
				max = id
			}
		}
	}
	return max
}

// SpeakerID resolves a speaker given as a number (its id, as Piper's --speaker takes it) or as a name from
// speaker_id_map. "" is speaker 0. A number is always an id, even where some speaker's name is that number
// (LibriTTS voices name theirs "3922", "40", ...): the same words never pick two speakers.
func (c *Config) SpeakerID(speaker string) (int64, error) {
	speaker = strings.TrimSpace(speaker)
	if speaker == "" {
		return 0, nil
	}
	if n, err := strconv.ParseInt(speaker, 10, 64); err == nil {
		if n < 0 || n >= int64(c.NumSpeakers) {
			msg := fmt.Sprintf("speaker %d is out of range: this voice has %s", n, c.speakersDescription())
			if id, named := c.SpeakerIDMap[speaker]; named {
				msg += fmt.Sprintf(" (a number is a speaker's id; the speaker named %q is %d)", speaker, id)
			}
			return 0, errors.New(msg)
		}
		return n, nil
	}
	if id, ok := c.SpeakerIDMap[speaker]; ok {
		return id, nil
	}
	return 0, fmt.Errorf("unknown speaker %q: this voice has %s", speaker, c.speakersDescription())
}

func (c *Config) speakersDescription() string {
	if c.NumSpeakers == 1 {
		return "one speaker (0)"
	}
	names := c.SpeakerNames()
	if len(names) > 8 {
		names = append(names[:8], "...")
	}
	desc := fmt.Sprintf("%d speakers (0..%d)", c.NumSpeakers, c.NumSpeakers-1)
	if len(names) > 0 {
		desc += " named " + strings.Join(names, ", ")
	}
	return desc
}

// SpeakerNames lists the named speakers in id order.
func (c *Config) SpeakerNames() []string {
	names := make([]string, 0, len(c.SpeakerIDMap))
	for n := range c.SpeakerIDMap {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool {
		a, b := c.SpeakerIDMap[names[i]], c.SpeakerIDMap[names[j]]
		if a != b {
			return a < b
		}
		return names[i] < names[j]
	})
	return names
}

// LanguageCode is the voice's language, from the config's language block or else its espeak voice.
func (c *Config) LanguageCode() string {
	if c.Language.Code != "" {
		return c.Language.Code
	}
	return c.Espeak.Voice
}
