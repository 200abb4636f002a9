package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"
)

// SpeechRequest is the body of the native speech API, POST /api/speech. Unset fields take the voice's own settings,
// or synth's defaults: the same text and settings give the audio `ttsgen synth` gives.
type SpeechRequest struct {
	Text  string `json:"text"`
	Voice string `json:"voice,omitempty"` // a served voice's name; "" = the server's default voice
	// Speaker is a speaker's name or id in a multi-speaker voice ("" = its first); a JSON number is read as an id.
	Speaker SpeakerRef `json:"speaker,omitempty"`
	// Speed is the speaking rate, from 0.25 to 4: the length scale is divided by it.
	Speed           *float64 `json:"speed,omitempty"`
	LengthScale     *float32 `json:"length_scale,omitempty"`
	NoiseScale      *float32 `json:"noise_scale,omitempty"`
	NoiseW          *float32 `json:"noise_w,omitempty"`
	SentenceSilence *float64 `json:"sentence_silence,omitempty"` // seconds between sentences (DefaultSentenceSilence)
	Format          string   `json:"format,omitempty"`           // a response format's name ("" = DefaultFormat)
	// Normalize false keeps the model's own level, as synth's --no-normalize-audio does, instead of bringing each
	// sentence to speech level (audio.SpeechLevel; nil = true). Then a sentence that the engine decodes in windows streams
	// window by window in the formats that allow it (Format.StreamsByWindow), since no sample waits for the sentence's
	// peak.
	Normalize *bool `json:"normalize,omitempty"`
}

// SpeakerRef is a speaker's name or id, written in JSON as a string or a number.
type SpeakerRef string

func (s *SpeakerRef) UnmarshalJSON(data []byte) error {
	var n json.Number
	if err := json.Unmarshal(data, &n); err == nil {
		*s = SpeakerRef(n)
		return nil
	}
	var str string
	if err := json.Unmarshal(data, &str); err != nil {
		return NotAString(data)
	}
	*s = SpeakerRef(str)
	return nil
}

// DefaultSentenceSilence is the silence between sentences unless a request says otherwise: synth's default.
const DefaultSentenceSilence = 0.2

// Ranges of the settings, as synth's flags check them.
const (
	MinSpeed, MaxSpeed       = 0.25, 4.0
	maxLengthScale           = 20
	maxNoise                 = 10
	maxSentenceSilence       = 60
	paramText, paramFormat   = "text", "format"
	paramVoice, paramSpeaker = "voice", "speaker"
)

// DecodeSpeechRequest reads a native request body: one JSON object with no unknown fields. Its errors are 400s
// that say which field is wrong and how.
func DecodeSpeechRequest(body []byte) (SpeechRequest, *Error) {
	var req SpeechRequest
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		return req, JSONError(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return req, BadRequest("", "invalid_json", "the body holds more than one JSON object; send exactly one")
	}
	return req, nil
}

// JSONError turns a JSON decoding error into a 400 that names the field at fault, where there is one.
func JSONError(err error) *Error {
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	switch {
	case errors.As(err, &typeErr):
		what := typeErr.Field
		if what == "" {
			what = "the body"
		}
		return BadRequest(typeErr.Field, "invalid_type", "%s must be %s, not a JSON %s", what, jsonKind(typeErr.Type),
			typeErr.Value)
	case errors.As(err, &syntaxErr):
		return BadRequest("", "invalid_json", "the body is not valid JSON (at byte %d: %v)", syntaxErr.Offset, err)
	case errors.Is(err, io.EOF):
		return BadRequest("", "invalid_json", `the body is empty: send a JSON object such as {"input": "Hello."}`)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return BadRequest("", "invalid_json", "the body ends in the middle of its JSON")
	}
	if field, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		field, _ = strconv.Unquote(field)
		return BadRequest(field, "unknown_parameter", "unknown field %q: check its spelling", field)
	}
	return BadRequest("", "invalid_json", "the body is not the JSON object this route takes: %v", err)
}

// jsonKind names what a Go type is in JSON, for a type error.
func jsonKind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Float32, reflect.Float64, reflect.Int, reflect.Int64:
		return "a number"
	case reflect.Struct, reflect.Map:
		return "an object"
	}
	return "a " + t.String()
}

// checkText rejects a text with nothing to say or more than maxInput characters.
func checkText(text string, maxInput int) *Error {
	if strings.TrimSpace(text) == "" {
		return BadRequest(paramText, "empty_input", "there is no text to speak: send at least one word")
	}
	if n := utf8.RuneCountInString(text); n > maxInput {
		return BadRequest(paramText, "input_too_long", "the text has %d characters, more than the %d this server takes "+
			"in one request: send it in parts (or start ttsgen serve with a larger --max-input)", n, maxInput)
	}
	return nil
}

// checkRange rejects a setting outside [lo, hi], or (lo, hi] when loOpen.
func checkRange(param string, v *float64, lo, hi float64, loOpen bool) *Error {
	if v == nil {
		return nil
	}
	x := *v
	if math.IsNaN(x) || x > hi || x < lo || (loOpen && x == lo) {
		open := "["
		if loOpen {
			open = "("
		}
		return BadRequest(param, "invalid_value", "%v is outside the range %s%g, %g]", x, open, lo, hi)
	}
	return nil
}

// checkSettings checks every numeric setting of req against its range.
func checkSettings(req SpeechRequest) *Error {
	f64 := func(v *float32) *float64 {
		if v == nil {
			return nil
		}
		x := float64(*v)
		return &x
	}
	for _, c := range []struct {
		param  string
		v      *float64
		lo, hi float64
		loOpen bool
	}{
		{"speed", req.Speed, MinSpeed, MaxSpeed, false},
		{"length_scale", f64(req.LengthScale), 0, maxLengthScale, true},
		{"noise_scale", f64(req.NoiseScale), 0, maxNoise, false},
		{"noise_w", f64(req.NoiseW), 0, maxNoise, false},
		{"sentence_silence", req.SentenceSilence, 0, maxSentenceSilence, false},
	} {
		if err := checkRange(c.param, c.v, c.lo, c.hi, c.loOpen); err != nil {
			return err
		}
	}
	return nil
}

// checkFormat finds the format a request names, with an error that lists the choices if it is unknown.
func checkFormat(name string) (Format, *Error) {
	if name == "" {
		name = DefaultFormat
	}
	f, ok := lookupFormat(name)
	if !ok {
		return f, BadRequest(paramFormat, "unknown_response_format", "unknown response format %q: ask for one of %s",
			name, strings.Join(formatNames(), ", "))
	}
	return f, nil
}

// NotAString is the error of a custom UnmarshalJSON given data where it wants a string (the decoder adds the
// field's name).
func NotAString(data []byte) error {
	return &json.UnmarshalTypeError{Value: jsonValueKind(data), Type: reflect.TypeFor[string]()}
}

// jsonValueKind names the kind of a JSON value, as json.UnmarshalTypeError does.
func jsonValueKind(data []byte) string {
	b := bytes.TrimSpace(data)
	if len(b) == 0 {
		return "value"
	}
	switch b[0] {
	case '{':
		return "object"
	case '[':
		return "array"
	case 't', 'f':
		return "bool"
	case '"':
		return "string"
	case 'n':
		return "null"
	}
	return "number"
}
