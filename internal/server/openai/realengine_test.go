package openai_test

import (
	"math"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/ttsgen/ttsgen/internal/audio"
	"github.com/ttsgen/ttsgen/internal/audio/decodetest"
	"github.com/ttsgen/ttsgen/internal/engine"
	"github.com/ttsgen/ttsgen/internal/server"
	"github.com/ttsgen/ttsgen/internal/server/openai"
	"github.com/ttsgen/ttsgen/internal/server/servertest"
)

// startReal serves the tiny voice through OpenAI's API over a real CPU engine, and returns a client for it and the
// backend (to speak the same text without the server).
func startReal(t *testing.T) (sdk.Client, server.Backend) {
	t.Helper()
	b, _ := servertest.RealBackend(t, engine.Options{Threads: 1}, servertest.TinyVoice)
	s := server.New(server.Options{})
	if err := s.Ready(b); err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler(openai.Routes(s, nil)))
	t.Cleanup(ts.Close)
	return sdk.NewClient(option.WithBaseURL(ts.URL+"/v1/"), option.WithAPIKey("unused"), option.WithMaxRetries(0)), b
}

// noNoise makes the audio depend only on the text: the same text has the same length however it is asked for.
var noNoise = []option.RequestOption{option.WithJSONSet("noise_scale", 0), option.WithJSONSet("noise_w", 0)}

// pipelineSeconds is how long the pipeline's audio of text is (what `ttsgen synth` writes), at the voice's own
// settings without noise and the server's default silence between sentences.
func pipelineSeconds(t *testing.T, b server.Backend, text string) float64 {
	pcm := servertest.SynthAudio(t, b, text, audio.Level{}, audio.PCM)
	return float64(len(pcm)/2) / float64(b.Voices[0].Voice.Config.Audio.SampleRate)
}

// decodedSeconds writes body to a file and decodes it with the real ffmpeg: how many seconds of audio it holds.
// pcm is raw samples at rate, which ffmpeg must be told.
func decodedSeconds(t *testing.T, body []byte, format string, rate int) float64 {
	t.Helper()
	path := filepath.Join(t.TempDir(), "speech."+format)
	if err := os.WriteFile(path, body, 0o644); err != nil {
		t.Fatal(err)
	}
	if format == "pcm" {
		return float64(len(decodetest.DecodeRaw(t, path, rate))) / float64(rate)
	}
	samples, decodedRate := decodetest.Decode(t, path)
	return float64(len(samples)) / float64(decodedRate)
}

// Every response format, through OpenAI's own client from a real engine, is a stream that the real ffmpeg
// decodes, of the codec and container it says, as long as the pipeline's audio of the same text.
func TestEveryResponseFormatDecodes(t *testing.T) {
	client, b := startReal(t)
	const text = "Every format decodes. Each one is as long as the same text spoken by synth."
	rate := b.Voices[0].Voice.Config.Audio.SampleRate
	want := pipelineSeconds(t, b, text)
	if want < 2 {
		t.Fatalf("the pipeline's audio is %.2f s: too short to tell durations apart", want)
	}
	for _, tt := range []struct {
		format, contentType string
		codec, container    string // as ffprobe names them; "" for raw pcm, which has neither
	}{
		{"mp3", "audio/mpeg", "mp3", "mp3"},
		{"opus", "audio/ogg", "opus", "ogg"},
		{"aac", "audio/aac", "aac", "aac"},
		{"flac", "audio/flac", "flac", "flac"},
		{"wav", "audio/wav", "pcm_s16le", "wav"},
		{"pcm", "audio/pcm", "", ""},
	} {
		t.Run(tt.format, func(t *testing.T) {
			resp, err := client.Audio.Speech.New(t.Context(), speech(text, "alloy", sdk.AudioSpeechNewParamsResponseFormat(tt.format)), noNoise...)
			body := servertest.ReadBody(t, resp, err)
			if ct := resp.Header.Get("Content-Type"); ct != tt.contentType {
				t.Errorf("content type %q; want %q", ct, tt.contentType)
			}
			if tt.codec != "" {
				path := filepath.Join(t.TempDir(), "probe."+tt.format)
				if err := os.WriteFile(path, body, 0o644); err != nil {
					t.Fatal(err)
				}
				if codec, container := decodetest.Probe(t, path, "stream=codec_name"), decodetest.Probe(t, path, "format=format_name"); codec != tt.codec || container != tt.container {
					t.Errorf("ffprobe says codec %s in %s; want %s in %s", codec, container, tt.codec, tt.container)
				}
			}
			// Lossy encoders add a frame or two of priming and padding: 0.1 s is several frames of each.
			got := decodedSeconds(t, body, tt.format, rate)
			t.Logf("%.3f s decoded, %.3f s from the pipeline", got, want)
			if math.Abs(got-want) > 0.1 {
				t.Errorf("%.3f s of audio decoded; the pipeline makes %.3f s of the same text", got, want)
			}
		})
	}
}

// Speed 2 halves the length scale, so the audio takes about half as long as at speed 1 (a little more: each
// phoneme's frames are rounded up).
func TestSpeedTwoIsAboutHalfTheDuration(t *testing.T) {
	client, b := startReal(t)
	const text = "The same words, spoken at two speeds, take different times."
	rate := b.Voices[0].Voice.Config.Audio.SampleRate
	seconds := map[float64]float64{}
	for _, speed := range []float64{1, 2} {
		p := speech(text, "alloy", "wav")
		p.Speed = sdk.Float(speed)
		resp, err := client.Audio.Speech.New(t.Context(), p, noNoise...)
		seconds[speed] = decodedSeconds(t, servertest.ReadBody(t, resp, err), "wav", rate)
	}
	t.Logf("speed 1: %.3f s, speed 2: %.3f s", seconds[1], seconds[2])
	if ratio := seconds[2] / seconds[1]; ratio < 0.45 || ratio > 0.6 {
		t.Errorf("speed 2 gives %.3f s, speed 1 %.3f s: a ratio of %.2f; want about one half", seconds[2], seconds[1], ratio)
	}
}
