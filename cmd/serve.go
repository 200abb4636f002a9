package cmd

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"math"
	"net"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ttsgen/ttsgen/internal/pipeline"
	"github.com/ttsgen/ttsgen/internal/server"
	"github.com/ttsgen/ttsgen/internal/server/openai"
	"github.com/ttsgen/ttsgen/internal/voices"
)

type serveOptions struct {
	addr            string
	voices          []string          // the first is the default; none = the built-in voice
	openAIVoices    map[string]string // OpenAI's voice name -> VOICE[:SPEAKER]
	apiKey          string
	allowOrigins    []string // origins whose web pages may call the server from a browser (CORS)
	maxInput        int
	maxQueue        int
	grace           time.Duration
	requestTimeout  time.Duration
	sentenceSilence float64

	listen func(network, addr string) (net.Listener, error)
}

// errDrained ends a serve that a signal stopped and that drained cleanly: what was asked is done (exit 0).
var errDrained = errors.New("served until told to stop")

func newServeCmd(s *settings, streams IO) *cobra.Command {
	o := serveOptions{listen: net.Listen}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve speech over HTTP: OpenAI's /v1/audio/speech and ttsgen's own API, on one shared engine",
		Long: `Serve speech over HTTP until SIGINT/SIGTERM. The voices and the engine load once; every request's sentences
go to the same engine, so requests arriving at any time join the device's batches in flight.

Routes:
  POST /v1/audio/speech   OpenAI's speech API: model (any; a served voice's name picks that voice), input (at most
                          --max-input characters), voice (a served voice, or one of OpenAI's names: alloy ash ballad
                          coral echo fable onyx nova sage shimmer verse marin cedar, which speak with the default
                          voice unless --openai-voice maps them), response_format (wav, pcm: raw 16-bit
                          little-endian mono at the voice's rate, in X-Sample-Rate; mp3, opus, aac and flac where
                          the build has them; OpenAI's default is mp3), speed 0.25-4 (divides the length scale),
                          stream_format audio|sse, instructions (accepted and ignored); and ttsgen's speaker,
                          length_scale, noise_scale, noise_w, sentence_silence, normalize (false: the model's own
                          level, as synth --no-normalize-audio).
  POST /api/speech        ttsgen's own: text, voice, speaker, speed, length_scale, noise_scale, noise_w,
                          sentence_silence, normalize, format (default wav).
  GET  /v1/models, /v1/audio/models, /v1/audio/voices, /api/voices    what is served
  GET  /health            200 once the voices are loaded; 503 while loading or draining
  GET  /metrics           Prometheus: requests by status, in flight, engine queue depth, first-audio and total
                          latency, audio seconds

The audio streams as it is made: each sentence goes out as soon as it and those before it are spoken; with
normalize false (the model's own level: the default speech level needs a sentence's every sample), a sentence the
engine decodes in windows (on webgpu) goes out window by window, in every format but flac. The same text and settings give exactly the audio of
ttsgen synth -o - (wav) or its samples (pcm), streamed or not. Errors are OpenAI's shape,
{"error":{"message","type","param","code"}}: 400 for a bad request, 401 without the API key, 413 for a body over
1 MiB, 429 when --max-queue requests are already admitted, 503 while loading or draining.

On SIGINT/SIGTERM the server drains: new requests get 503 while those admitted finish, for up to --grace; those
still running are then cut off; it exits 0. A second signal quits at once. It binds to loopback unless --addr says
otherwise. A voice that is not there at all is refused before it listens (exit status 2); one that is there but
fails to load ends the server, which has admitted no request, with exit status 1.

A web page may call the server from a browser only if --allow-origin names the page's origin (or is *): its
browser's preflights (OPTIONS) are then answered without the API key, which the requests themselves still need, and
its script may read X-Sample-Rate and Retry-After. Without --allow-origin, no CORS headers are sent.`,
		Example: `  ttsgen serve
  ttsgen serve --addr 0.0.0.0:8880 --voice en_GB-alan-medium --voice default --api-key "$KEY"
  ttsgen serve --openai-voice alloy=en_US-libritts-high:p225 --openai-voice onyx=en_GB-alan-medium
  ttsgen serve --allow-origin https://app.example.com --allow-origin http://localhost:3000 --api-key "$KEY"

  curl -s localhost:8880/v1/audio/speech -d '{"input": "Hello there.", "voice": "alloy", "response_format": "wav"}' -o hello.wav
  curl -sN localhost:8880/v1/audio/speech -d '{"input": "Streamed.", "voice": "alloy", "response_format": "pcm"}' | aplay -r 22050 -f S16_LE

  # The load test used for LLM-based speech served by vLLM: 80 requests of three sentences, 0.3 s apart.
  ttsgen bench --url http://127.0.0.1:8880 --rate 3.333 --requests 80 --texts samples/three-sentences.txt`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageErrorf("serve takes no arguments, only flags (got %q)", args)
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := s.v.BindPFlag("api_key", cmd.Flags().Lookup("api-key")); err != nil {
				return err
			}
			o.apiKey = s.v.GetString("api_key")
			mapped := s.v.GetStringMapString("openai_voices") // the config file's table; flags override it
			for name, target := range o.openAIVoices {
				mapped[name] = target
			}
			o.openAIVoices = mapped
			if err := o.validate(); err != nil {
				return err
			}
			return runServe(cmd.Context(), s, streams, &o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.addr, "addr", "127.0.0.1:8880", "`HOST:PORT` to listen on (0.0.0.0:8880 to take requests from other machines)")
	f.StringArrayVar(&o.voices, "voice", nil, "voice `NAME|PATH` to serve (repeatable; the first is the default; default: the built-in voice)")
	f.StringToStringVar(&o.openAIVoices, "openai-voice", nil, "map one of OpenAI's voice names to a voice: `NAME=VOICE[:SPEAKER]` (repeatable; also openai_voices in the config file; unmapped names speak with the default voice)")
	f.String("api-key", "", "require \"Authorization: Bearer KEY\" on every route but /health"+envHint("api_key"))
	f.StringArrayVar(&o.allowOrigins, "allow-origin", nil, "let web pages from `ORIGIN` (SCHEME://HOST[:PORT], or '*' for any) call the server from a browser (CORS) (repeatable; default: none)")
	f.IntVar(&o.maxInput, "max-input", server.DefaultMaxInput, "most characters of text in one request")
	f.IntVar(&o.maxQueue, "max-queue", server.DefaultMaxQueue, "most speech requests admitted at once, spoken or waiting; past it a request gets 429")
	f.DurationVar(&o.grace, "grace", server.DefaultGrace, "on SIGINT/SIGTERM, how long admitted requests may take to finish")
	f.DurationVar(&o.requestTimeout, "request-timeout", server.DefaultRequestTimeout, "most time one request may take, from arrival to its last audio")
	f.Float64Var(&o.sentenceSilence, "sentence-silence", server.DefaultSentenceSilence, "seconds of silence between sentences, for requests that do not say")
	return cmd
}

func (o *serveOptions) validate() error {
	if _, _, err := net.SplitHostPort(o.addr); err != nil {
		return usageErrorf("--addr %q: want HOST:PORT, such as 127.0.0.1:8880", o.addr)
	}
	for _, c := range []struct {
		flag string
		bad  bool
	}{
		{"--max-input", o.maxInput < 1},
		{"--max-queue", o.maxQueue < 1},
		{"--grace", o.grace <= 0},
		{"--request-timeout", o.requestTimeout <= 0},
		{"--sentence-silence", math.IsNaN(o.sentenceSilence) || o.sentenceSilence < 0 || o.sentenceSilence > 60},
	} {
		if c.bad {
			return usageErrorf("%s must be positive (--sentence-silence: 0 to 60 seconds)", c.flag)
		}
	}
	for name, target := range o.openAIVoices {
		if !slices.Contains(openai.Names, name) {
			return usageErrorf("--openai-voice %s=%s: %s is not one of OpenAI's voice names (%s)", name, target, name,
				strings.Join(openai.Names, ", "))
		}
		if voice, _ := splitVoiceTarget(target); voice == "" {
			return usageErrorf("--openai-voice %s=%s: want NAME=VOICE or NAME=VOICE:SPEAKER", name, target)
		}
	}
	for _, origin := range o.allowOrigins {
		if err := server.CheckOrigin(origin); err != nil {
			return usageErrorf("--allow-origin %q: %v", origin, err)
		}
	}
	return nil
}

// splitVoiceTarget reads VOICE[:SPEAKER]; a colon followed by a path separator belongs to the voice.
func splitVoiceTarget(target string) (voice, speaker string) {
	i := strings.LastIndex(target, ":")
	if i < 0 || strings.ContainsRune(target[i+1:], '/') {
		return target, ""
	}
	return target[:i], target[i+1:]
}

func runServe(ctx context.Context, s *settings, streams IO, o *serveOptions) error {
	con := newConsole(streams, s.quiet())
	level := slog.LevelInfo
	if s.quiet() {
		level = slog.LevelError
	}
	log := slog.New(slog.NewTextHandler(streams.ErrOut, &slog.HandlerOptions{Level: level}))
	plan, err := findServed(voices.Catalog{Dir: s.voicesDir()}, o)
	if err != nil {
		return err // before listening: a server that cannot have its voices never opens its port
	}
	silence := o.sentenceSilence
	srv := server.New(server.Options{APIKey: o.apiKey, AllowOrigins: o.allowOrigins, MaxInput: o.maxInput,
		MaxQueue: o.maxQueue, Grace: o.grace, RequestTimeout: o.requestTimeout, SentenceSilence: &silence, Logger: log})
	l, err := o.listen("tcp", o.addr)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", o.addr, err)
	}
	table := openai.Voices{}
	handler := srv.Handler(openai.Routes(srv, table))

	serveCtx, stopServing := context.WithCancel(ctx)
	defer stopServing()
	served := make(chan error, 1)
	go func() { served <- srv.Serve(serveCtx, l, handler) }()
	url := "http://" + l.Addr().String()
	log.Info("listening; /health answers 503 until the voices are loaded", "url", url, "openai_base_url", url+"/v1")

	rt, err := s.newRuntime(con, true)
	if err == nil {
		defer rt.close()
		err = loadServed(rt, plan, table, srv)
	}
	if err != nil {
		// The server never became ready, so it admitted no request: Serve closes the listener without a drain.
		stopServing()
		return errors.Join(err, <-served)
	}
	log.Info("ready", "voices", strings.Join(server.VoiceNames(srv.Voices()), ","), "device", rt.engine.Device())
	if err := <-served; err != nil {
		return err
	}
	if ctx.Err() != nil {
		return errDrained
	}
	return nil
}

// servePlan is what serve loads, found and checked before it listens: each voice as asked for, and the OpenAI
// table's targets as voices of that list with a speaker.
type servePlan struct {
	voices  []servedVoice
	targets map[string]plannedTarget // by OpenAI voice name
}

// servedVoice is one voice to load, by the name or path it was asked for by ("" for the default voice).
type servedVoice struct {
	name  string
	label string // what asked for it, for its errors: "" for a --voice, "--openai-voice NAME: " for a target's own
}

// plannedTarget is an OpenAI voice's target: servePlan.voices[voice], speaking as speaker.
type plannedTarget struct {
	voice   int
	speaker string
}

// findServed finds the voices serve is to load (those named, and those the OpenAI table maps to) before it listens,
// reading only their configs: a voice that is not there at all (no voice of that name, no file at that path) is a
// usage error, as batch has a wrong --voice, and so is a speaker that an --openai-voice's voice does not have. A
// voice found but broken is an error too. Loading the models is left for loadServed, once the listener is open.
func findServed(catalog voices.Catalog, o *serveOptions) (servePlan, error) {
	plan := servePlan{targets: map[string]plannedTarget{}}
	var found []*voices.Voice // found[i] is plan.voices[i]
	add := func(name, label string) error {
		v, err := catalog.Find(name)
		if errors.Is(err, voices.ErrNotFound) || errors.Is(err, fs.ErrNotExist) {
			err = usageError{err}
		}
		if err != nil {
			return err
		}
		found = append(found, v)
		plan.voices = append(plan.voices, servedVoice{name: name, label: label})
		return nil
	}
	names := o.voices
	if len(names) == 0 {
		names = []string{""}
	}
	for _, name := range names {
		if err := add(name, ""); err != nil {
			return servePlan{}, err
		}
	}
	for _, name := range slices.Sorted(maps.Keys(o.openAIVoices)) {
		target := o.openAIVoices[name]
		voice, speaker := splitVoiceTarget(target)
		// A voice already in the plan is found by the name it is served under, else as the target names it.
		i := slices.IndexFunc(found, func(v *voices.Voice) bool { return v.Name == voice })
		if i < 0 {
			label := fmt.Sprintf("--openai-voice %s: ", name)
			if err := add(voice, label); err != nil {
				return servePlan{}, fmt.Errorf("%s%w", label, err)
			}
			i = len(found) - 1
		}
		if _, err := found[i].Config.SpeakerID(speaker); err != nil {
			return servePlan{}, usageErrorf("--openai-voice %s=%s: %v", name, target, err)
		}
		plan.targets[name] = plannedTarget{voice: i, speaker: speaker}
	}
	return plan, nil
}

// loadServed loads plan's voices, fills the table with their loaded names, and makes srv ready.
func loadServed(rt *synthRuntime, plan servePlan, table openai.Voices, srv *server.Server) error {
	planned := make([]*pipeline.LoadedVoice, len(plan.voices))
	var loaded []*pipeline.LoadedVoice // each voice once, for the backend
	for i, sv := range plan.voices {
		lv, err := rt.loadVoice(sv.name)
		if err != nil {
			return fmt.Errorf("%svoice %s failed to load, so nothing is served: %w", sv.label,
				cmp.Or(sv.name, voices.DefaultName), err)
		}
		planned[i] = lv
		if !slices.ContainsFunc(loaded, func(v *pipeline.LoadedVoice) bool { return v.Voice.Name == lv.Voice.Name }) {
			loaded = append(loaded, lv)
		}
	}
	for name, t := range plan.targets {
		table[name] = openai.Target{Voice: planned[t.voice].Voice.Name, Speaker: t.speaker}
	}
	return srv.Ready(server.Backend{Engine: rt.engine, Frontend: rt.frontend, Voices: loaded})
}
