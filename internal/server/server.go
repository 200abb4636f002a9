// Package server serves speech over HTTP from one shared engine: a native API that streams a text's audio as its
// sentences are spoken, the voices, health and Prometheus metrics, with bounded admission and a graceful drain.
//
// Every request's sentences go to the same engine, so requests arriving at any time join the device's batches
// in flight. Other APIs (the OpenAI one, in package openai) are layers that translate their requests into the
// native one and its responses back; this package knows nothing of them.
package server

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/ttsgen/ttsgen/internal/pipeline"
)

// Defaults for Options' zero values.
const (
	// DefaultMaxInput is the most characters of text one request may have: OpenAI's limit.
	DefaultMaxInput = 4096
	// DefaultMaxQueue is how many speech requests may be admitted at once (spoken or waiting for the engine):
	// enough that a burst many times the engine's speed queues rather than fails, few enough that a client hears
	// "busy" (429) rather than waits minutes.
	DefaultMaxQueue = 256
	// DefaultSentencesInFlight is how many of one request's sentences are in the engine at once: enough to keep a
	// device's batches full with one request, few enough that a long text does not hold up the requests that
	// come after it by more than a few sentences (the engine serves its queue in order).
	DefaultSentencesInFlight = 16
	DefaultMaxBodyBytes      = 1 << 20
	DefaultBodyTimeout       = 30 * time.Second
	// DefaultRequestTimeout bounds one request from arrival to its last audio.
	DefaultRequestTimeout = 10 * time.Minute
	// DefaultWriteTimeout drops a stream whose client has read nothing for this long.
	DefaultWriteTimeout = time.Minute
	// DefaultIdleTimeout closes a kept-alive connection idle for this long.
	DefaultIdleTimeout = 2 * time.Minute
	DefaultGrace       = 10 * time.Second
	readHeaderTimeout  = 10 * time.Second
	// shutdownTimeout is how long Serve waits, once the grace is over and the speech requests left are cancelled,
	// for the handlers to return.
	shutdownTimeout = 5 * time.Second
)

// Options configure a Server. Zero values pick the defaults above.
type Options struct {
	APIKey            string // when set, every route but /health needs "Authorization: Bearer APIKey"
	MaxInput          int    // characters
	MaxQueue          int    // speech requests admitted at once; past it a request gets 429
	SentencesInFlight int    // per request
	MaxBodyBytes      int64
	BodyTimeout       time.Duration
	RequestTimeout    time.Duration
	WriteTimeout      time.Duration
	IdleTimeout       time.Duration
	// AllowOrigins are the origins whose web pages may call the server from a browser (CORS): each "*" (any
	// origin) or SCHEME://HOST[:PORT], as CheckOrigin has it. None: no CORS headers at all.
	AllowOrigins []string
	// SentenceSilence is the seconds of silence between sentences for requests that do not say (nil =
	// DefaultSentenceSilence).
	SentenceSilence *float64
	// Grace is how long a drain lets admitted requests finish before it cancels them.
	Grace  time.Duration
	Logger *slog.Logger // nil = silent
}

func (o Options) withDefaults() Options {
	o.MaxInput = cmp.Or(o.MaxInput, DefaultMaxInput)
	o.MaxQueue = cmp.Or(o.MaxQueue, DefaultMaxQueue)
	o.SentencesInFlight = cmp.Or(o.SentencesInFlight, DefaultSentencesInFlight)
	o.MaxBodyBytes = cmp.Or(o.MaxBodyBytes, DefaultMaxBodyBytes)
	o.BodyTimeout = cmp.Or(o.BodyTimeout, DefaultBodyTimeout)
	o.RequestTimeout = cmp.Or(o.RequestTimeout, DefaultRequestTimeout)
	o.WriteTimeout = cmp.Or(o.WriteTimeout, DefaultWriteTimeout)
	o.IdleTimeout = cmp.Or(o.IdleTimeout, DefaultIdleTimeout)
	o.Grace = cmp.Or(o.Grace, DefaultGrace)
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return o
}

// Backend is what speaks: the engine, the frontend that turns text into its sentences, and the voices loaded
// into the engine, the first of them the default.
type Backend struct {
	Engine   pipeline.Engine
	Frontend *pipeline.Frontend
	Voices   []*pipeline.LoadedVoice
}

// Server answers speech requests from one Backend. Its routes answer before the backend is ready (health with
// 503), so that a load balancer can watch it start.
type Server struct {
	opts      Options
	metrics   *metrics
	admission *admission
	backend   atomic.Pointer[backend]
	requestID atomic.Uint64
}

// backend is a Backend ready to serve: its engine counted, its voices by name.
type backend struct {
	Backend
	byName map[string]*pipeline.LoadedVoice
	voices []VoiceInfo
}

// New makes a server that is not ready yet: call Ready once its backend is loaded.
func New(opts Options) *Server {
	opts = opts.withDefaults()
	return &Server{opts: opts, metrics: newMetrics(), admission: newAdmission(opts.MaxQueue)}
}

// Ready starts serving speech from b; GET /health answers 200 from now on.
func (s *Server) Ready(b Backend) error {
	if len(b.Voices) == 0 || b.Engine == nil || b.Frontend == nil {
		return errors.New("server: a backend needs an engine, a frontend and at least one voice")
	}
	ready := &backend{Backend: b, byName: map[string]*pipeline.LoadedVoice{}}
	ready.Engine = countedEngine{Engine: b.Engine, depth: s.metrics.queued}
	for i, v := range b.Voices {
		if _, dup := ready.byName[v.Voice.Name]; dup {
			return fmt.Errorf("server: voice %s is given twice", v.Voice.Name)
		}
		ready.byName[v.Voice.Name] = v
		ready.voices = append(ready.voices, describeVoice(v, i == 0))
	}
	s.backend.Store(ready)
	return nil
}

// health answers 200 when the server takes speech requests, 503 (with why) while it loads or drains.
func (s *Server) health(w http.ResponseWriter, _ *http.Request) {
	switch {
	case s.backend.Load() == nil:
		WriteError(w, ErrNotReady)
	case s.admission.isDraining():
		WriteError(w, errDraining)
	default:
		writeJSON(w, map[string]string{"status": "ok"})
	}
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// errGraceOver is the cause of the cancellation of the requests still running when a drain's grace ends.
var errGraceOver = errors.New("server: the drain's grace period is over")

// Serve answers on l until ctx ends, then drains: speech requests (and /health) get 503 while those admitted
// finish, for up to the grace period; those still running then are cancelled (their clients see the stream cut
// short). The listener stays open during the drain, so that every client gets an answer rather than a refused
// connection. A server that never became ready (Ready was not called: its voices failed to load, or it was stopped
// while loading) admitted no speech request: it closes without a drain, and logs none. Serve returns nil after a
// drain or such a close, or the error that stopped the listener.
func (s *Server) Serve(ctx context.Context, l net.Listener, h http.Handler) error {
	work, cancelWork := context.WithCancelCause(context.WithoutCancel(ctx))
	defer cancelWork(nil)
	hs := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: readHeaderTimeout,
		IdleTimeout:       s.opts.IdleTimeout,
		BaseContext:       func(net.Listener) context.Context { return work },
		ErrorLog:          slog.NewLogLogger(s.opts.Logger.Handler(), slog.LevelWarn),
	}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(l) }()
	select {
	case err := <-served:
		return fmt.Errorf("serving on %s: %w", l.Addr(), err)
	case <-ctx.Done():
	}

	idle := s.admission.drain() // from here on no request is admitted, even if Ready comes now
	if s.backend.Load() != nil {
		log := s.opts.Logger
		log.Info("draining: new requests get 503", "grace", s.opts.Grace)
		grace := time.NewTimer(s.opts.Grace)
		defer grace.Stop()
		select {
		case <-idle:
			log.Info("drained: every admitted request is answered")
		case <-grace.C:
			log.Warn("grace period over: cancelling the requests still being spoken")
			cancelWork(errGraceOver)
		}
	}
	shutdown, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if err := hs.Shutdown(shutdown); err != nil {
		_ = hs.Close()
	}
	<-served
	return nil
}
