package server

import (
	"context"
	"net/http"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/ttsgen/ttsgen/internal/engine"
	"github.com/ttsgen/ttsgen/internal/pipeline"
)

// metrics are what GET /metrics reports, in a registry of the server's own.
type metrics struct {
	registry   *prometheus.Registry
	requests   *prometheus.CounterVec // by route and status
	inFlight   prometheus.Gauge
	queued     prometheus.Gauge // sentences in the engine for this server: queued, or running
	firstAudio prometheus.Histogram
	duration   prometheus.Histogram
	audio      prometheus.Counter
}

func newMetrics() *metrics {
	m := &metrics{
		registry: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ttsgen_http_requests_total",
			Help: "HTTP requests answered, by route and status code.",
		}, []string{"route", "code"}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "ttsgen_speech_requests_in_flight",
			Help: "Speech requests admitted and not yet answered: being spoken, or waiting for the engine.",
		}),
		queued: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "ttsgen_engine_queue_depth",
			Help: "Sentences submitted to the engine and not yet back from it: waiting for a batch, or in one.",
		}),
		firstAudio: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "ttsgen_speech_first_audio_seconds",
			Help:    "From a speech request's arrival to its first audio sent.",
			Buckets: prometheus.ExponentialBuckets(0.01, 2, 12), // 10 ms to 20 s
		}),
		duration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "ttsgen_speech_duration_seconds",
			Help:    "From a speech request's arrival to its last audio sent (answered requests only).",
			Buckets: prometheus.ExponentialBuckets(0.05, 2, 12), // 50 ms to 100 s
		}),
		audio: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "ttsgen_speech_audio_seconds_total",
			Help: "Seconds of audio sent, silence between sentences included.",
		}),
	}
	m.registry.MustRegister(m.requests, m.inFlight, m.queued, m.firstAudio, m.duration, m.audio,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

func (m *metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{})
}

// countRequest counts one answered request.
func (m *metrics) countRequest(route string, status int) {
	m.requests.WithLabelValues(route, strconv.Itoa(status)).Inc()
}

// countedEngine is the engine as the server uses it: each sentence counts in the queue-depth gauge from its
// submission until its result is back (spoken, failed, or gone from the queue because its request ended).
type countedEngine struct {
	pipeline.Engine
	depth prometheus.Gauge
}

func (c countedEngine) Submit(ctx context.Context, m *engine.Model, req engine.Request) <-chan engine.Result {
	c.depth.Inc()
	in := c.Engine.Submit(ctx, m, req)
	out := make(chan engine.Result, 1)
	go func() {
		res := <-in
		c.depth.Dec()
		out <- res
	}()
	return out
}
