package openai_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/ttsgen/ttsgen/internal/engine"
	"github.com/ttsgen/ttsgen/internal/server"
	"github.com/ttsgen/ttsgen/internal/server/openai"
	"github.com/ttsgen/ttsgen/internal/server/servertest"
)

// voices maps one OpenAI name to the three-speaker voice's third speaker; the others speak with the default.
var voices = openai.Voices{"echo": {Voice: "tiny-vits-3speakers", Speaker: "speaker2"}}

// start serves the tiny voice (the default) and the three-speaker one through both APIs, over a fake engine, and
// returns an OpenAI client for it.
func start(t *testing.T, opts server.Options, eng *servertest.Engine) (sdk.Client, *httptest.Server) {
	t.Helper()
	s := server.New(opts)
	if err := s.Ready(servertest.Backend(t, eng, servertest.TinyVoice, servertest.ThreeSpeakerVoice)); err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler(openai.Routes(s, voices)))
	t.Cleanup(ts.Close)
	client := sdk.NewClient(option.WithBaseURL(ts.URL+"/v1/"), option.WithAPIKey(cmpOr(opts.APIKey, "unused")),
		option.WithMaxRetries(0))
	return client, ts
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func speech(input, voice string, format sdk.AudioSpeechNewParamsResponseFormat) sdk.AudioSpeechNewParams {
	return sdk.AudioSpeechNewParams{Model: sdk.SpeechModelTTS1, Input: input, ResponseFormat: format,
		Voice: sdk.AudioSpeechNewParamsVoiceUnion{OfString: sdk.String(voice)}}
}

func nativeSpeech(t *testing.T, ts *httptest.Server, req string) []byte {
	t.Helper()
	resp, err := http.Post(ts.URL+"/api/speech", "application/json", strings.NewReader(req))
	if resp != nil && resp.StatusCode != 200 {
		t.Fatalf("native: status %d", resp.StatusCode)
	}
	return servertest.ReadBody(t, resp, err)
}

func TestSpeechIsTheNativeAudio(t *testing.T) {
	client, ts := start(t, server.Options{}, servertest.NewEngine(64, false))
	const text = "Hello there. A second sentence."
	for _, format := range []sdk.AudioSpeechNewParamsResponseFormat{"wav", "pcm"} {
		resp, err := client.Audio.Speech.New(t.Context(), speech(text, "alloy", format))
		got := servertest.ReadBody(t, resp, err)
		if want := "audio/" + string(format); resp.Header.Get("Content-Type") != want {
			t.Errorf("%s: content type %q", format, resp.Header.Get("Content-Type"))
		}
		want := nativeSpeech(t, ts, `{"text": "`+text+`", "format": "`+string(format)+`"}`)
		if len(want) < 1000 || !bytes.Equal(got, want) {
			t.Errorf("%s: %d bytes through OpenAI's API, %d through the native one; want the same audio", format, len(got), len(want))
		}
	}
}

func TestVoiceNamesPickServedVoicesAndSpeakers(t *testing.T) {
	eng := servertest.NewEngine(64, false)
	client, ts := start(t, server.Options{}, eng)
	for _, tt := range []struct {
		name    string
		params  sdk.AudioSpeechNewParams
		opts    []option.RequestOption
		speaker int64
	}{
		{"mapped OpenAI name", speech("Hi.", "echo", "pcm"), nil, 2},
		{"unmapped OpenAI name speaks with the default voice", speech("Hi.", "nova", "pcm"), nil, 0},
		{"a served voice by name, with a speaker", speech("Hi.", "tiny-vits-3speakers", "pcm"),
			[]option.RequestOption{option.WithJSONSet("speaker", "speaker1")}, 1},
		{"a speaker id as a number", speech("Hi.", "tiny-vits-3speakers", "pcm"),
			[]option.RequestOption{option.WithJSONSet("speaker", 2)}, 2},
		{"the model names the voice for OpenAI's names", func() sdk.AudioSpeechNewParams {
			p := speech("Hi.", "alloy", "pcm")
			p.Model = "tiny-vits-3speakers"
			return p
		}(), []option.RequestOption{option.WithJSONSet("speaker", "speaker1")}, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := client.Audio.Speech.New(t.Context(), tt.params, tt.opts...)
			servertest.ReadBody(t, resp, err)
			if req := <-eng.Submitted; req.Speaker != tt.speaker {
				t.Errorf("speaker %d; want %d", req.Speaker, tt.speaker)
			}
		})
	}
	// OpenAI's custom voice object: {"id": NAME}.
	resp, err := http.Post(ts.URL+"/v1/audio/speech", "application/json",
		strings.NewReader(`{"model": "tts-1", "input": "Hi.", "voice": {"id": "tiny-vits-3speakers"}, "speaker": 1, "response_format": "wav"}`))
	servertest.ReadBody(t, resp, err)
	if req := <-eng.Submitted; resp.StatusCode != 200 || req.Speaker != 1 {
		t.Errorf("voice object: status %d, speaker %d", resp.StatusCode, req.Speaker)
	}
}

func TestSpeedAndSettingsReachTheEngine(t *testing.T) {
	eng := servertest.NewEngine(64, false)
	client, _ := start(t, server.Options{}, eng)
	p := speech("Quickly now.", "alloy", "wav")
	p.Speed = sdk.Float(2)
	p.Instructions = sdk.String("Speak like a pirate.") // accepted, ignored
	resp, err := client.Audio.Speech.New(t.Context(), p, option.WithJSONSet("noise_scale", 0), option.WithJSONSet("noise_w", 0))
	servertest.ReadBody(t, resp, err)
	if req := <-eng.Submitted; req.Scales != (engine.Scales{Noise: 0, Length: 0.5, NoiseW: 0}) || req.Stream != nil {
		t.Errorf("scales %+v, stream %v; want length 1/2 (speed 2), no noise, the sentence whole", req.Scales, req.Stream != nil)
	}
	// normalize false (synth's --no-normalize-audio) asks the engine for the audio as it is decoded.
	resp, err = client.Audio.Speech.New(t.Context(), p, option.WithJSONSet("normalize", false))
	servertest.ReadBody(t, resp, err)
	if req := <-eng.Submitted; req.Stream == nil {
		t.Error("normalize false: the engine was not asked to stream")
	}
}

func TestSSEDeltasCarryTheAudio(t *testing.T) {
	client, ts := start(t, server.Options{}, servertest.NewEngine(64, false))
	const text = "Streamed as events. In two sentences."
	p := speech(text, "alloy", "pcm")
	p.StreamFormat = sdk.AudioSpeechNewParamsStreamFormatSSE
	resp, err := client.Audio.Speech.New(t.Context(), p)
	if err != nil {
		t.Fatal(err)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("content type %q", ct)
	}
	type event struct {
		Type  string `json:"type"`
		Audio string `json:"audio"`
		Usage struct {
			InputTokens int `json:"input_tokens"`
		} `json:"usage"`
	}
	stream := ssestream.NewStream[event](ssestream.NewDecoder(resp), nil)
	var audio []byte
	var events []event
	for stream.Next() {
		ev := stream.Current()
		events = append(events, ev)
		chunk, err := base64.StdEncoding.DecodeString(ev.Audio)
		if err != nil {
			t.Fatal(err)
		}
		audio = append(audio, chunk...)
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if len(events) < 3 || events[0].Type != "speech.audio.delta" {
		t.Fatalf("%d events, first %+v", len(events), events[0])
	}
	last := events[len(events)-1]
	if last.Type != "speech.audio.done" || last.Usage.InputTokens != len(text) {
		t.Errorf("last event %+v", last)
	}
	if want := nativeSpeech(t, ts, `{"text": "`+text+`", "format": "pcm"}`); !bytes.Equal(audio, want) {
		t.Errorf("the deltas hold %d bytes; want the %d of the audio", len(audio), len(want))
	}
}

func TestBadRequestsGetOpenAIErrors(t *testing.T) {
	client, ts := start(t, server.Options{MaxInput: 50}, servertest.NewEngine(64, false))
	withFormat := func(p sdk.AudioSpeechNewParams, f string) sdk.AudioSpeechNewParams {
		p.ResponseFormat = sdk.AudioSpeechNewParamsResponseFormat(f)
		return p
	}
	withSpeed := func(p sdk.AudioSpeechNewParams, v float64) sdk.AudioSpeechNewParams { p.Speed = sdk.Float(v); return p }
	withStream := func(p sdk.AudioSpeechNewParams, f string) sdk.AudioSpeechNewParams {
		p.StreamFormat = sdk.AudioSpeechNewParamsStreamFormat(f)
		return p
	}
	for _, tt := range []struct {
		name          string
		params        sdk.AudioSpeechNewParams
		status        int
		param, code   string
		messageSaying string
	}{
		{"empty input", speech("", "alloy", "wav"), 400, "input", "empty_input", "at least one word"},
		{"whitespace input", speech("  \n ", "alloy", "wav"), 400, "input", "empty_input", "at least one word"},
		{"input over the limit", speech(strings.Repeat("la ", 20), "alloy", "wav"), 400, "input", "input_too_long", "60 characters, more than the 50"},
		{"unknown voice", speech("Hi.", "bob", "wav"), 400, "voice", "unknown_voice", "tiny, tiny-vits-3speakers"},
		{"speed too high", withSpeed(speech("Hi.", "alloy", "wav"), 5), 400, "speed", "invalid_value", "[0.25, 4]"},
		{"speed too low", withSpeed(speech("Hi.", "alloy", "wav"), 0.1), 400, "speed", "invalid_value", "[0.25, 4]"},
		{"unknown response format", withFormat(speech("Hi.", "alloy", "wav"), "ogg"), 400, "response_format", "unknown_response_format", "ogg"},
		{"unknown stream format", withStream(speech("Hi.", "alloy", "wav"), "chunks"), 400, "stream_format", "invalid_value", `"sse"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := client.Audio.Speech.New(t.Context(), tt.params)
			var apiErr *sdk.Error
			if !errors.As(err, &apiErr) {
				t.Fatalf("err = %v; want an API error", err)
			}
			if apiErr.StatusCode != tt.status || apiErr.Param != tt.param || apiErr.Code != tt.code ||
				apiErr.Type != "invalid_request_error" || !strings.Contains(apiErr.Message, tt.messageSaying) {
				t.Errorf("%d %+v; want %d, param %s, code %s, a message saying %q", apiErr.StatusCode, apiErr, tt.status,
					tt.param, tt.code, tt.messageSaying)
			}
		})
	}
	for _, tt := range []struct{ name, body, param, code, messageSaying string }{
		{"malformed JSON", `{"input": "Hi.", "voice": `, "", "invalid_json", "middle of its JSON"},
		{"input of the wrong type", `{"input": 5, "voice": "alloy"}`, "input", "invalid_type", "input must be a string"},
		{"speed of the wrong type", `{"input": "Hi.", "voice": "alloy", "speed": "fast"}`, "speed", "invalid_type", "a number"},
		{"voice of the wrong type", `{"input": "Hi.", "voice": 7}`, "voice", "invalid_type", "voice must be a string, not a JSON number"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := http.Post(ts.URL+"/v1/audio/speech", "application/json", strings.NewReader(tt.body))
			b := servertest.ReadBody(t, resp, err)
			var got struct{ Error map[string]any }
			if json.Unmarshal(b, &got) != nil || resp.StatusCode != 400 || got.Error["code"] != tt.code ||
				(tt.param != "" && got.Error["param"] != tt.param) || !strings.Contains(got.Error["message"].(string), tt.messageSaying) {
				t.Errorf("%d %s", resp.StatusCode, b)
			}
		})
	}
	resp, err := client.Audio.Speech.New(t.Context(), speech("Still serving.", "alloy", "wav"))
	if len(servertest.ReadBody(t, resp, err)) < 1000 {
		t.Error("the server stopped serving after the bad requests")
	}
}

func TestAPIKeyAndFullQueueThroughTheClient(t *testing.T) {
	eng := servertest.NewEngine(64, true)
	client, ts := start(t, server.Options{APIKey: "sesame", MaxQueue: 1}, eng)
	wrong := sdk.NewClient(option.WithBaseURL(ts.URL+"/v1/"), option.WithAPIKey("guess"), option.WithMaxRetries(0))
	_, err := wrong.Audio.Speech.New(t.Context(), speech("Hi.", "alloy", "wav"))
	var apiErr *sdk.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 401 || apiErr.Code != "invalid_api_key" {
		t.Errorf("wrong key: %v", err)
	}
	first := make(chan error, 1)
	go func() {
		resp, err := client.Audio.Speech.New(t.Context(), speech("Held in the engine.", "alloy", "wav"))
		if err == nil {
			_, err = io.ReadAll(resp.Body)
			resp.Body.Close()
		}
		first <- err
	}()
	<-eng.Submitted
	_, err = client.Audio.Speech.New(t.Context(), speech("One too many.", "alloy", "wav"))
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 429 || apiErr.Code != "queue_full" {
		t.Errorf("full queue: %v", err)
	}
	eng.Release()
	if err := <-first; err != nil {
		t.Errorf("the admitted request: %v", err)
	}
}

func TestModelsAndVoices(t *testing.T) {
	client, ts := start(t, server.Options{}, servertest.NewEngine(1, false))
	page, err := client.Models.List(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, m := range page.Data {
		ids = append(ids, m.ID)
	}
	if got := strings.Join(ids, " "); got != "tts-1 tts-1-hd gpt-4o-mini-tts tiny tiny-vits-3speakers" {
		t.Errorf("models %s", got)
	}
	resp, err := http.Get(ts.URL + "/v1/audio/voices")
	var list struct {
		Voices []map[string]any `json:"voices"`
	}
	if err := json.Unmarshal(servertest.ReadBody(t, resp, err), &list); err != nil {
		t.Fatal(err)
	}
	if len(list.Voices) != 2+len(openai.Names) {
		t.Fatalf("%d voices: %v", len(list.Voices), list.Voices)
	}
	for i, want := range map[int]map[string]any{
		0: {"id": "tiny", "name": "tiny", "default": true},
		1: {"id": "tiny-vits-3speakers", "num_speakers": 3.0},
		2: {"id": "alloy", "voice": "tiny"},
		6: {"id": "echo", "voice": "tiny-vits-3speakers", "speaker": "speaker2"},
	} {
		for k, v := range want {
			if list.Voices[i][k] != v {
				t.Errorf("voice %d: %s = %v; want %v", i, k, list.Voices[i][k], v)
			}
		}
	}
}

// While the voices load, the voice list is a 503 like the native one's, not an empty list a client would keep.
func TestVoicesWhileLoading(t *testing.T) {
	s := server.New(server.Options{})
	ts := httptest.NewServer(s.Handler(openai.Routes(s, voices)))
	defer ts.Close()
	resp, err := http.Get(ts.URL + "/v1/audio/voices")
	body := servertest.ReadBody(t, resp, err)
	if e := server.DecodeError(resp.StatusCode, body); resp.StatusCode != 503 || e == nil || e.Code != "not_ready" {
		t.Errorf("while loading: %d %s; want 503 not_ready", resp.StatusCode, body)
	}
}
