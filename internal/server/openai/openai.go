// Package openai serves OpenAI's text-to-speech API over ttsgen's native server, as a thin layer: it decodes
// OpenAI's request, resolves what only OpenAI's API has (its voice names, stream_format), rewrites the request
// into the native one, and turns the native response back into OpenAI's shape: the audio stream as it is, or
// server-sent events carrying it; errors with OpenAI's field names.
package openai

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"unicode/utf8"

	"github.com/ttsgen/ttsgen/internal/server"
)

// Models are the model names listed by GET /v1/models beside the served voices' names. A request may name any
// model: only a served voice's name changes anything (it picks that voice for OpenAI's voice names).
var Models = []string{"tts-1", "tts-1-hd", "gpt-4o-mini-tts"}

// Routes adds OpenAI's routes to a server's mux (server.Handler's mount): POST /v1/audio/speech over native's
// speech handler, GET /v1/models, GET /v1/audio/models and GET /v1/audio/voices. voices may be filled in until the
// server is ready: the routes read it only once it is.
func Routes(native *server.Server, voices Voices) func(*http.ServeMux) {
	return func(mux *http.ServeMux) {
		mux.Handle("POST /v1/audio/speech", Speech(native, voices, http.HandlerFunc(native.Speech)))
		mux.HandleFunc("GET /v1/models", func(w http.ResponseWriter, _ *http.Request) {
			type model struct {
				ID      string `json:"id"`
				Object  string `json:"object"`
				Created int64  `json:"created"`
				OwnedBy string `json:"owned_by"`
			}
			var data []model
			for _, id := range modelIDs(native) {
				data = append(data, model{ID: id, Object: "model", OwnedBy: "ttsgen"})
			}
			writeJSON(w, map[string]any{"object": "list", "data": data})
		})
		mux.HandleFunc("GET /v1/audio/models", func(w http.ResponseWriter, _ *http.Request) {
			type model struct {
				ID string `json:"id"`
			}
			var models []model
			for _, id := range modelIDs(native) {
				models = append(models, model{ID: id})
			}
			writeJSON(w, map[string]any{"models": models})
		})
		mux.HandleFunc("GET /v1/audio/voices", func(w http.ResponseWriter, _ *http.Request) {
			served := native.Voices()
			if served == nil { // loading: an empty list would read as a server without voices
				server.WriteError(w, server.ErrNotReady)
				return
			}
			writeJSON(w, map[string]any{"voices": voiceList(served, voices)})
		})
	}
}

func modelIDs(native *server.Server) []string {
	return append(append([]string(nil), Models...), server.VoiceNames(native.Voices())...)
}

// voice is one entry of GET /v1/audio/voices: the served voices (with what the native API says of them), then
// OpenAI's names with the voice each speaks with.
type voice struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	*server.VoiceInfo
	Voice   string `json:"voice,omitempty"` // for OpenAI's names: the served voice it speaks with
	Speaker string `json:"speaker,omitempty"`
}

func voiceList(served []server.VoiceInfo, voices Voices) []voice {
	list := []voice{}
	for i := range served {
		list = append(list, voice{ID: served[i].Name, Name: served[i].Name, VoiceInfo: &served[i]})
	}
	if len(served) == 0 {
		return list
	}
	for _, name := range Names {
		t, ok := voices[name]
		if !ok {
			t.Voice = served[0].Name
		}
		list = append(list, voice{ID: name, Name: name, Voice: t.Voice, Speaker: t.Speaker})
	}
	return list
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// Speech is the translation middleware over next, the native speech handler: it reads OpenAI's request, rewrites
// it into the native one and hands it on, with a response writer that turns the native answer into OpenAI's.
func Speech(native *server.Server, voices Voices, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		served := native.Voices()
		if served == nil {
			next.ServeHTTP(w, r) // not ready: the native handler says so
			return
		}
		body, e := native.ReadBody(w, r)
		if e != nil {
			server.WriteError(w, e)
			return
		}
		t, e := decode(body, voices, served)
		if e != nil {
			server.WriteError(w, e)
			return
		}
		nativeBody, err := json.Marshal(t.native)
		if err != nil {
			server.WriteError(w, server.BadRequest("", "invalid_value", "the request cannot be passed on: %v", err))
			return
		}
		r = r.Clone(r.Context())
		r.Body = io.NopCloser(bytes.NewReader(nativeBody))
		r.ContentLength = int64(len(nativeBody))
		out := &responseWriter{ResponseWriter: w, sse: t.sse, inputChars: utf8.RuneCountInString(t.native.Text)}
		next.ServeHTTP(out, r)
		out.finish()
	})
}

// responseWriter turns the native speech response into OpenAI's: an error is rewritten with OpenAI's field names;
// with sse, each write of audio becomes a speech.audio.delta event and the end a speech.audio.done event.
type responseWriter struct {
	http.ResponseWriter
	sse        bool
	inputChars int
	status     int
	errBody    bytes.Buffer // the native error, held to be rewritten
}

func (w *responseWriter) WriteHeader(code int) {
	if w.status != 0 {
		return
	}
	w.status = code
	if code >= http.StatusBadRequest {
		return // finish writes it, renamed
	}
	if w.sse {
		h := w.Header()
		h.Set("Content-Type", "text/event-stream")
		h.Set("Cache-Control", "no-cache")
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *responseWriter) Write(p []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	switch {
	case w.status >= http.StatusBadRequest:
		return w.errBody.Write(p)
	case !w.sse:
		return w.ResponseWriter.Write(p)
	}
	if err := w.event(audioDelta{Type: "speech.audio.delta", Audio: base64.StdEncoding.EncodeToString(p)}); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Unwrap lets http.ResponseController flush the connection and set its deadlines.
func (w *responseWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// finish runs once the native handler has returned without cutting the response short.
func (w *responseWriter) finish() {
	switch {
	case w.status >= http.StatusBadRequest:
		e := server.DecodeError(w.status, w.errBody.Bytes())
		if e == nil {
			e = &server.Error{Status: w.status, Type: server.TypeServer, Code: "internal_error", Message: w.errBody.String()}
		}
		server.WriteError(w.ResponseWriter, renamed(e))
	case w.sse && w.status != 0:
		_ = w.event(audioDone{Type: "speech.audio.done",
			Usage: usage{InputTokens: w.inputChars, TotalTokens: w.inputChars}})
		_ = http.NewResponseController(w.ResponseWriter).Flush()
	}
}

// event writes one server-sent event.
func (w *responseWriter) event(v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = w.ResponseWriter.Write(append(append([]byte("data: "), data...), '\n', '\n'))
	return err
}

// SSE events, as OpenAI streams speech.
type audioDelta struct {
	Type  string `json:"type"`
	Audio string `json:"audio"` // base64 of the next bytes of the audio, in the response format
}

type audioDone struct {
	Type  string `json:"type"`
	Usage usage  `json:"usage"`
}

// usage counts the input's characters as its tokens (what OpenAI bills its tts models by); ttsgen makes no output
// tokens.
type usage struct {
	InputTokens  int `json:"input_tokens"`
	OutputTokens int `json:"output_tokens"`
	TotalTokens  int `json:"total_tokens"`
}
