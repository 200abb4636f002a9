package server

import (
	"math"
	"net/http"
	"testing"
	"unicode/utf8"

	"github.com/ttsgen/ttsgen/internal/pipeline"
	"github.com/ttsgen/ttsgen/internal/voices"
)

// FuzzSpeechRequest: whatever a client sends, decoding and checking it either gives a 400 (or 413) that says what
// to change, or a job within every limit.
func FuzzSpeechRequest(f *testing.F) {
	for _, seed := range []string{
		`{"text": "Hello there."}`,
		`{"text": "Hi.", "voice": "tiny", "speaker": 0, "speed": 4, "length_scale": 20, "noise_scale": 0, "noise_w": 10, "sentence_silence": 60, "format": "pcm"}`,
		`{"text": "Hi.", "speed": 0.25, "length_scale": 5}`,
		`{"text": "Hi.", "speaker": "x", "format": "MP3"}`,
		`{"text": "\u0000\ud800", "speed": 1e309}`,
		`{"text": "...", "noise_w": -0}`,
		`[]`, `null`, `{"text": null}`, `{"text": "a"} x`, `{"speaker": {}}`,
	} {
		f.Add([]byte(seed))
	}
	v, err := voices.Open("../../testdata/tiny-voice/tiny.onnx")
	if err != nil {
		f.Fatal(err)
	}
	b := &backend{Backend: Backend{Frontend: &pipeline.Frontend{Normalize: true}, Voices: []*pipeline.LoadedVoice{{Voice: v}}},
		byName: map[string]*pipeline.LoadedVoice{v.Name: {Voice: v}}}
	opts := Options{MaxInput: 200}.withDefaults()
	f.Fuzz(func(t *testing.T, body []byte) {
		req, e := DecodeSpeechRequest(body)
		var j *job
		if e == nil {
			j, e = b.prepare(req, opts)
		}
		if e != nil {
			if e.Status != http.StatusBadRequest || e.Message == "" || e.Code == "" || e.Type != TypeInvalidRequest {
				t.Fatalf("error %+v", e)
			}
			return
		}
		s := j.opt.Scales
		finite := func(x float32) bool { return !math.IsNaN(float64(x)) && !math.IsInf(float64(x), 0) }
		switch {
		case utf8.RuneCountInString(req.Text) > opts.MaxInput || j.text.Estimate() == 0:
			t.Fatalf("text %q taken", req.Text)
		case !finite(s.Length) || s.Length <= 0 || s.Length > maxLengthScale:
			t.Fatalf("length scale %v", s.Length)
		case !finite(s.Noise) || s.Noise < 0 || s.Noise > maxNoise || !finite(s.NoiseW) || s.NoiseW < 0 || s.NoiseW > maxNoise:
			t.Fatalf("noise %v, %v", s.Noise, s.NoiseW)
		case j.opt.SentenceSilence < 0 || j.opt.SentenceSilence > maxSentenceSilence:
			t.Fatalf("silence %v", j.opt.SentenceSilence)
		case j.format.Audio == "":
			t.Fatalf("format %q has no audio format", j.format.Name)
		case j.opt.Speaker != 0:
			t.Fatalf("speaker %d of a one-speaker voice", j.opt.Speaker)
		}
	})
}
