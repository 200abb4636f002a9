package openai

import (
	"net/http"
	"slices"
	"testing"

	"github.com/ttsgen/ttsgen/internal/server"
)

// FuzzDecode: whatever a client sends, the OpenAI layer either answers a 400 that says what to change, or passes
// on a native request for a served voice.
func FuzzDecode(f *testing.F) {
	for _, seed := range []string{
		`{"model": "tts-1", "input": "Hello.", "voice": "alloy"}`,
		`{"model": "b", "input": "Hi.", "voice": "echo", "response_format": "wav", "speed": 1.5, "stream_format": "sse"}`,
		`{"input": "Hi.", "voice": {"id": "a"}, "speaker": 2, "instructions": "x", "noise_w": 0}`,
		`{"input": "Hi.", "voice": {"id": 5}}`, `{"voice": "ALLOY", "extra": [1, {}]}`, `{"input": 1}`, `"x"`, ``,
	} {
		f.Add([]byte(seed))
	}
	served := []server.VoiceInfo{{Name: "a", Default: true}, {Name: "b", NumSpeakers: 3}}
	voices := Voices{"echo": {Voice: "b", Speaker: "1"}}
	f.Fuzz(func(t *testing.T, body []byte) {
		tr, e := decode(body, voices, served)
		if e != nil {
			if e.Status != http.StatusBadRequest || e.Message == "" || e.Code == "" || (e.Param != nil && *e.Param == "text") {
				t.Fatalf("error %+v", e)
			}
			return
		}
		if n := tr.native; n.Format == "" || (n.Voice != "" && !slices.ContainsFunc(served, func(v server.VoiceInfo) bool { return v.Name == n.Voice })) {
			t.Fatalf("passed on %+v", n)
		}
	})
}
