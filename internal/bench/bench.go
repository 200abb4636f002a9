// Package bench drives a synthesis function with a closed- or open-loop load
// and summarises latency and throughput.
//
// It knows nothing about voices or devices: the caller hands it a SynthFunc.
// Time comes from the standard time package; tests run inside a
// testing/synctest bubble, where that clock is virtual and advances only when
// every goroutine is blocked, so exact durations can be asserted without
// injecting a clock interface.
package bench

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultMaxOutstanding caps the requests in flight at once in open-loop mode
// when Load.MaxOutstanding is 0. It is large enough never to bind on a healthy
// system; it exists so that a stalled one cannot grow goroutines without limit.
const DefaultMaxOutstanding = 4096

// Report.Mode values.
const (
	ClosedLoop = "closed-loop"
	OpenLoop   = "open-loop"
)

// Outcome is what one request produced.
type Outcome struct {
	AudioSeconds float64
	Sentences    int
	// Phonemes is the request's phoneme ids, all sentences together; reported per request only (shapes a
	// GPU provider has not seen before cost it a compile: this says which requests brought new ones).
	Phonemes int
	// FirstAudio is how long after the request was sent its first audio was
	// ready (a streamed chunk, where the engine streams); 0 means unknown, and
	// the request's latency is used instead.
	FirstAudio time.Duration
	// Uncounted says Sentences and Phonemes are unknown, not zero: a speech
	// server sends audio, not how it split or phonemized the text. A report
	// with such requests gives no sentence count rather than a wrong one.
	Uncounted bool
}

// SynthFunc synthesises one request (a text) and reports what it produced.
// It is called from several goroutines at once and must honour ctx.
type SynthFunc func(ctx context.Context, text string) (Outcome, error)

// Load describes how requests are offered.
type Load struct {
	// Concurrency is the number of closed-loop submitters, each sending its
	// next request when the previous one finishes. 0 means 1 unless Rate is set.
	Concurrency int
	// Rate, when > 0, selects open loop: requests are sent Rate per second on
	// a fixed schedule, whether or not earlier ones have finished.
	Rate float64
	// Requests is the number of measured requests; 0 means len(texts). Texts
	// are reused in order when Requests exceeds them.
	Requests int
	// Warmup requests run one at a time before measuring and are excluded
	// from every statistic.
	Warmup int
	// MaxOutstanding caps open-loop requests in flight; 0 means
	// DefaultMaxOutstanding. An arrival that finds the cap reached is counted
	// as an error rather than delayed, so the schedule never slips.
	MaxOutstanding int
}

// Percentiles of a set of samples, in milliseconds.
type Percentiles struct {
	P50 float64 `json:"p50"`
	P90 float64 `json:"p90"`
	P99 float64 `json:"p99"`
}

// Report summarises one Run. Latencies cover successful requests only.
type Report struct {
	Mode          string  `json:"mode"`            // ClosedLoop or OpenLoop
	Concurrency   int     `json:"concurrency"`     // closed-loop submitters; 0 in open loop
	RatePerSecond float64 `json:"rate_per_second"` // open-loop arrival rate; 0 in closed loop
	Device        string  `json:"device"`          // set by the caller, for the record
	Voice         string  `json:"voice"`           // set by the caller, for the record
	// Server is the URL of the speech server driven over HTTP (bench --url), set by the caller; "" for an engine in
	// this process. With a server, CPUSeconds, SystemCPUSeconds and PeakRSSBytes are the client's, not the server's.
	Server string `json:"server,omitempty"`

	Requests   int    `json:"requests"`    // measured requests, warmup excluded (those completed, if Interrupted)
	Errors     int    `json:"errors"`      // failed requests
	FirstError string `json:"first_error"` // error of the lowest-numbered failed request

	// ErrorsByStatus counts the failed requests by the HTTP status a server answered them with ("other" for those
	// without one: refused connections, engine errors).
	ErrorsByStatus map[string]int `json:"errors_by_status,omitempty"`

	// Interrupted says the run was stopped (its context ended: Ctrl-C) before all RequestsPlanned were
	// answered: every figure is that of the Requests that completed before then, and of no other. A request cut
	// off in flight is in none of them.
	Interrupted     bool `json:"interrupted,omitempty"`
	RequestsPlanned int  `json:"requests_planned,omitempty"` // set only when Interrupted

	// Sentences is nil (JSON null) when a request's sentences could not be counted (Outcome.Uncounted: a speech
	// server driven over HTTP does not say how it split its texts): unknown, which 0 would misstate.
	Sentences    *int    `json:"sentences"`
	AudioSeconds float64 `json:"audio_seconds"`
	WallSeconds  float64 `json:"wall_seconds"` // first send to last completion
	Speed        float64 `json:"speed"`        // audio seconds per wall second ("x real time")
	RTF          float64 `json:"rtf"`          // wall / audio; 0 when no audio was made
	QPS          float64 `json:"qps"`          // successful requests per wall second

	// LatencyMS runs from when a request was due (its scheduled arrival in
	// open loop, so queueing delay is never hidden) to when it finished.
	LatencyMS    Percentiles `json:"latency_ms"`
	FirstAudioMS Percentiles `json:"first_audio_ms"`

	// PeakRSSBytes is the process's peak resident set (VmHWM) after the run,
	// including everything the process did before it; 0 means unknown.
	PeakRSSBytes int64 `json:"peak_rss_bytes"`
	// CPUSeconds is the process's user + system CPU time during the measured
	// requests: divided by WallSeconds, how many cores the run kept busy
	// (not so where Interrupted: it counts the work on the requests cut off).
	CPUSeconds float64 `json:"cpu_seconds"`
	// SystemCPUSeconds is the part of CPUSeconds spent in the kernel (page
	// faults, locks, I/O) on the process's behalf.
	SystemCPUSeconds float64 `json:"system_cpu_seconds"`
	// Stages is set by the caller, for the record: what the engine says about
	// its device runs (warmup included).
	Stages any `json:"stages,omitempty"`

	// PerRequest has one record per measured request, in the order they were sent: for finding what the slow ones
	// have in common. Not part of the JSON report (`ttsgen bench --per-request FILE` writes it as JSON lines).
	PerRequest []RequestRecord `json:"-"`

	Baseline *Report `json:"baseline,omitempty"`
	Speedup  float64 `json:"speedup,omitempty"` // Speed / Baseline.Speed
}

// RequestRecord is what one measured request did.
type RequestRecord struct {
	Request      int     `json:"request"` // 0 is the first measured request; warmup requests are not counted
	Text         string  `json:"text"`
	Phonemes     *int    `json:"phonemes"`  // nil (null) when not known: Outcome.Uncounted
	Sentences    *int    `json:"sentences"` // nil (null) when not known: Outcome.Uncounted
	AudioSeconds float64 `json:"audio_seconds"`
	LatencyMS    float64 `json:"latency_ms"`
	FirstAudioMS float64 `json:"first_audio_ms"`
	Error        string  `json:"error,omitempty"`
}

// CompareTo records baseline (typically the same texts run one at a time)
// and the speedup of r over it.
func (r *Report) CompareTo(baseline Report) {
	baseline.Baseline, baseline.Speedup = nil, 0
	r.Baseline = &baseline
	r.Speedup = 0
	if baseline.Speed > 0 {
		r.Speedup = r.Speed / baseline.Speed
	}
}

// sample is the result of one measured request.
type sample struct {
	index      int // the request's number, 0 the first measured
	text       string
	latency    time.Duration
	firstAudio time.Duration
	out        Outcome
	err        error

	done  bool      // sent and answered (or dropped), rather than never sent
	cut   bool      // failed because ctx ended while it was in flight: an interrupted request, not a failed one
	ended time.Time // when it was answered
}

// completed says whether s is part of the figures: it was answered, and not only because the run was stopped.
func (s sample) completed() bool { return s.done && !s.cut }

// Run sends the requests described by load to synth and summarises them.
// It fails if the load is invalid, a warmup request fails, ctx ends before
// the run does, or every measured request fails (the report, with every
// request counted as an error, is still returned then).
//
// When ctx ends after the measured requests began, the report of those that
// completed before then is returned with the error (wrapping ctx.Err()),
// marked Interrupted; requests cut off in flight or never sent are left out.
func Run(ctx context.Context, texts []string, load Load, synth SynthFunc) (Report, error) {
	if err := validate(texts, load, synth); err != nil {
		return Report{}, err
	}
	n := load.Requests
	if n == 0 {
		n = len(texts)
	}
	textOf := func(i int) string { return texts[i%len(texts)] }

	for i := range load.Warmup {
		if _, err := synth(ctx, textOf(i)); err != nil {
			return Report{}, fmt.Errorf("bench: warmup request %d: %w", i, err)
		}
	}

	rep := Report{Requests: n}
	samples := make([]sample, n) // each request writes only its own slot
	cpuBefore, sysBefore := processCPU()
	start := time.Now()
	if load.Rate > 0 {
		rep.Mode, rep.RatePerSecond = OpenLoop, load.Rate
		maxOut := load.MaxOutstanding
		if maxOut == 0 {
			maxOut = DefaultMaxOutstanding
		}
		runOpen(ctx, start, load.Rate, maxOut, samples, textOf, synth)
	} else {
		rep.Mode, rep.Concurrency = ClosedLoop, max(load.Concurrency, 1)
		runClosed(ctx, rep.Concurrency, samples, textOf, synth)
	}
	wall := time.Since(start)
	cpuAfter, sysAfter := processCPU()
	rep.CPUSeconds, rep.SystemCPUSeconds = (cpuAfter - cpuBefore).Seconds(), (sysAfter - sysBefore).Seconds()
	for i := range samples {
		samples[i].index = i
	}
	if err := ctx.Err(); err != nil {
		if done := slices.DeleteFunc(samples, func(s sample) bool { return !s.completed() }); len(done) < n {
			// Stopped part-way: the figures of what was done, over the time it took (first send to last
			// answer, as in a whole run), and nothing of the requests that were not.
			rep.Interrupted, rep.RequestsPlanned, rep.Requests = true, n, len(done)
			wall = 0
			for _, s := range done {
				wall = max(wall, s.ended.Sub(start))
			}
			summarise(&rep, done, wall)
			rep.PeakRSSBytes = peakRSS()
			return rep, fmt.Errorf("bench: interrupted after %d of %d requests: %w", len(done), n, err)
		}
	}

	summarise(&rep, samples, wall)
	rep.PeakRSSBytes = peakRSS()
	if rep.Errors == n {
		return rep, fmt.Errorf("bench: all %d requests failed; first: %s", n, rep.FirstError)
	}
	return rep, nil
}

func validate(texts []string, load Load, synth SynthFunc) error {
	switch {
	case len(texts) == 0:
		return errors.New("bench: no texts to send")
	case synth == nil:
		return errors.New("bench: no synthesis function")
	case load.Concurrency < 0, load.Rate < 0, load.Requests < 0, load.Warmup < 0, load.MaxOutstanding < 0:
		return fmt.Errorf("bench: negative load setting in %+v", load)
	case load.Rate > 0 && load.Concurrency > 0:
		return errors.New("bench: set either a concurrency (closed loop) or a rate (open loop), not both")
	}
	return nil
}

// runClosed has each of workers goroutines take the next unsent request
// until none are left or ctx ends.
func runClosed(ctx context.Context, workers int, samples []sample, textOf func(int) string, synth SynthFunc) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for ctx.Err() == nil {
				i := int(next.Add(1) - 1)
				if i >= len(samples) {
					return
				}
				samples[i] = measure(ctx, time.Now(), textOf(i), synth)
			}
		})
	}
	wg.Wait()
}

// runOpen sends request i at start + i/rate from this goroutine's timer and
// waits for each on its own goroutine, so a slow synth never delays arrivals.
func runOpen(ctx context.Context, start time.Time, rate float64, maxOutstanding int,
	samples []sample, textOf func(int) string, synth SynthFunc) {
	slots := make(chan struct{}, maxOutstanding)
	var wg sync.WaitGroup
	defer wg.Wait()
	for i := range samples {
		due := start.Add(time.Duration(float64(i) / rate * float64(time.Second)))
		if !sleepUntil(ctx, due) {
			return
		}
		select {
		case slots <- struct{}{}:
		default:
			samples[i].text, samples[i].done, samples[i].ended = textOf(i), true, time.Now()
			samples[i].err = fmt.Errorf("request %d dropped: %d requests already outstanding", i, maxOutstanding)
			continue
		}
		wg.Go(func() {
			defer func() { <-slots }()
			samples[i] = measure(ctx, due, textOf(i), synth)
		})
	}
}

// sleepUntil waits until t and reports whether ctx is still live.
func sleepUntil(ctx context.Context, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err() == nil
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-timer.C:
		return true
	}
}

// measure runs one request that was due at due.
func measure(ctx context.Context, due time.Time, text string, synth SynthFunc) sample {
	sent := time.Now()
	out, err := synth(ctx, text)
	s := sample{text: text, latency: time.Since(due), out: out, err: err, done: true, ended: time.Now()}
	s.cut = err != nil && ctx.Err() != nil
	s.firstAudio = s.latency
	if out.FirstAudio > 0 {
		s.firstAudio = sent.Sub(due) + out.FirstAudio
	}
	return s
}

// statusOf is the HTTP status an error carries, or "other".
func statusOf(err error) string {
	var se *StatusError
	if errors.As(err, &se) {
		return strconv.Itoa(se.Code)
	}
	return "other"
}

func summarise(rep *Report, samples []sample, wall time.Duration) {
	var latencies, firsts []time.Duration
	var sentences int
	counted := true
	rep.PerRequest = make([]RequestRecord, len(samples))
	for i, s := range samples {
		rep.PerRequest[i] = RequestRecord{Request: s.index, Text: s.text, AudioSeconds: s.out.AudioSeconds,
			LatencyMS: durationMS(s.latency), FirstAudioMS: durationMS(s.firstAudio)}
		if s.out.Uncounted {
			counted = false
		} else {
			rep.PerRequest[i].Phonemes, rep.PerRequest[i].Sentences = new(s.out.Phonemes), new(s.out.Sentences)
		}
		if s.err != nil {
			rep.PerRequest[i].Error = s.err.Error()
			if rep.Errors == 0 {
				rep.FirstError = s.err.Error()
				rep.ErrorsByStatus = map[string]int{}
			}
			rep.Errors++
			rep.ErrorsByStatus[statusOf(s.err)]++
			continue
		}
		sentences += s.out.Sentences
		rep.AudioSeconds += s.out.AudioSeconds
		latencies = append(latencies, s.latency)
		firsts = append(firsts, s.firstAudio)
	}
	if counted {
		rep.Sentences = &sentences
	}
	rep.WallSeconds = wall.Seconds()
	if rep.WallSeconds > 0 {
		rep.Speed = rep.AudioSeconds / rep.WallSeconds
		rep.QPS = float64(len(latencies)) / rep.WallSeconds
	}
	if rep.AudioSeconds > 0 {
		rep.RTF = rep.WallSeconds / rep.AudioSeconds
	}
	rep.LatencyMS = percentiles(latencies)
	rep.FirstAudioMS = percentiles(firsts)
}
