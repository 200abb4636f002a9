package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// Speech is an OpenAI-compatible speech endpoint to drive: ttsgen serve, or any server with OpenAI's
// POST /v1/audio/speech (Kokoro-FastAPI, openedai-speech). Requests ask for WAV, whose header says how many
// seconds the bytes after it hold.
type Speech struct {
	URL    string // the server: http://HOST:PORT, with or without /v1
	Model  string // "" = "tts-1"
	Voice  string // "" = "alloy"
	APIKey string // sent as a bearer token when set
	Client *http.Client
}

// StatusError is a request the server answered with an error status.
type StatusError struct {
	Code    int
	Message string // the error body's message, or its first bytes
}

func (e *StatusError) Error() string { return fmt.Sprintf("HTTP %d: %s", e.Code, e.Message) }

// NewSpeechClient is an HTTP client for up to connections requests at once, each on a kept-alive connection.
func NewSpeechClient(connections int) *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = max(connections, 2)
	// A server that takes a request and never answers fails that request, rather than holding the run for ever.
	t.ResponseHeaderTimeout = ResponseTimeout
	return &http.Client{Transport: t}
}

// ResponseTimeout is how long a request may wait for its response to begin (a speech server sends it with the
// first audio).
const ResponseTimeout = time.Minute

// Synth is the SynthFunc that sends each text to the endpoint. Its first audio is when the first bytes of
// samples arrive, after the WAV header. Its outcomes are Uncounted: the response is audio, and says nothing of the
// sentences the server split the text into (nor of their phonemes), so a report of them counts requests and
// seconds of audio, and leaves the sentences unknown.
func (s Speech) Synth() SynthFunc {
	url := strings.TrimSuffix(strings.TrimSuffix(s.URL, "/"), "/v1") + "/v1/audio/speech"
	client := s.Client
	if client == nil {
		client = http.DefaultClient
	}
	return func(ctx context.Context, text string) (Outcome, error) {
		out, err := s.speak(ctx, client, url, text)
		out.Uncounted = true
		return out, err
	}
}

// speak sends one text to url and reads the audio it answers with.
func (s Speech) speak(ctx context.Context, client *http.Client, url, text string) (Outcome, error) {
	body, err := json.Marshal(map[string]string{"model": cmpOr(s.Model, "tts-1"), "voice": cmpOr(s.Voice, "alloy"),
		"input": text, "response_format": "wav"})
	if err != nil {
		return Outcome{}, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return Outcome{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	if s.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+s.APIKey)
	}
	sent := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		return Outcome{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return Outcome{}, statusError(resp)
	}
	return readWAVStream(resp.Body, sent)
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// statusError reads an error response: OpenAI's {"error": {"message": ...}} where it is one.
func statusError(resp *http.Response) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	var e struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	msg := strings.TrimSpace(string(b))
	if json.Unmarshal(b, &e) == nil && e.Error.Message != "" {
		msg = e.Error.Message
	}
	return &StatusError{Code: resp.StatusCode, Message: msg}
}

// readWAVStream reads a WAV response to its end: the seconds of audio its data chunk holds (its length field is
// not trusted, as a stream's says unknown) and when its first samples came, counted from sent.
func readWAVStream(body io.Reader, sent time.Time) (Outcome, error) {
	r := bufio.NewReader(body)
	var riff [12]byte
	if _, err := io.ReadFull(r, riff[:]); err != nil || string(riff[:4]) != "RIFF" || string(riff[8:]) != "WAVE" {
		return Outcome{}, fmt.Errorf("the response is not WAV (%v)", err)
	}
	var bytesPerSecond uint32
	for {
		var head [8]byte
		if _, err := io.ReadFull(r, head[:]); err != nil {
			return Outcome{}, fmt.Errorf("reading the WAV header: %w", err)
		}
		id, size := string(head[:4]), binary.LittleEndian.Uint32(head[4:])
		if id == "data" {
			break
		}
		chunk := make([]byte, size+size%2) // chunks are padded to an even length
		if _, err := io.ReadFull(r, chunk); err != nil {
			return Outcome{}, fmt.Errorf("reading the WAV header's %q chunk: %w", id, err)
		}
		if id == "fmt " && size >= 16 {
			bytesPerSecond = binary.LittleEndian.Uint32(chunk[8:12])
		}
	}
	if bytesPerSecond == 0 {
		return Outcome{}, errors.New("the WAV response has no format chunk before its samples")
	}
	var out Outcome
	if _, err := r.Peek(1); err == nil {
		out.FirstAudio = time.Since(sent)
	}
	n, err := io.Copy(io.Discard, r)
	if err != nil {
		return out, fmt.Errorf("reading the audio: %w", err)
	}
	out.AudioSeconds = float64(n) / float64(bytesPerSecond)
	return out, nil
}
