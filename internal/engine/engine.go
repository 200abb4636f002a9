package engine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ttsgen/ttsgen/internal/ort"
)

// ErrClosed is the error of requests submitted to, or still queued in, an engine that has been closed.
var ErrClosed = errors.New("engine: engine closed")

// ModelConfig is what the voice's JSON config says about the model.
type ModelConfig struct {
	SampleRate  int
	NumSpeakers int
}

// Scales are VITS's synthesis knobs. They are one tensor per run, so only requests with equal scales share a batch.
type Scales struct{ Noise, Length, NoiseW float32 }

// Request is one sentence as phoneme ids.
type Request struct {
	IDs     []int64
	Speaker int64
	Scales  Scales
	// Stream, when set, gets the sentence's audio in order while it is decoded, in continuous-batching mode (a
	// voice running decoder windows): each time the windows done reach further into the sentence, the samples not
	// yet sent go, so that a long sentence's first audio comes out long before its last. The engine never blocks
	// on it: what finds it full goes with a later send, and the Result says how much went (Result.Streamed). The
	// chunks are the Result's own samples, not to be written. The engine does not close it.
	Stream chan<- []float32
}

// Result is one sentence's audio, or why there is none.
type Result struct {
	Audio []float32 // this item's own samples only, at the model's sample rate
	// Streamed is how many of Audio's first samples went to Request.Stream: the rest came only here.
	Streamed int
	// Durations are the voice's frames for each of the request's ids (its duration predictor's rounded output):
	// Audio is their sum times the hop length. Nil for a voice whose graph gives none.
	Durations                 []float32
	Err                       error
	Queued, Started, Finished time.Time
}

// Engine runs voice models for many concurrent requests. All methods are safe from any goroutine.
type Engine struct {
	backend           backend
	device            ort.Device
	workers           int
	sessionsPerModel  int
	threadsPerSession int
	maxBatch          int
	maxBatchPhonemes  int
	splitMaxBatch     int // maxBatch and maxBatchPhonemes for split voices' acoustic batches
	splitMaxBatchPh   int
	window            windowing // frames == 0: whole sentences only; margin: the default for voices whose reach is unknown
	marginSet         bool      // Options.DecoderMargin was given: every voice uses it
	decoderBatch      int
	upsampling        Upsampling
	acousticOnCPU     bool       // split voices run their acoustic part on CPU sessions, one per worker
	acousticCPU       int        // with acousticOnCPU: workers (the first ones) whose acoustic session is on the CPU; the rest use the GPU
	text              ort.Device // with acousticOnCPU: where split voices' text part runs (vits.CutText): cpu (not cut apart), the GPU, or auto
	half              bool       // split voices' flow and decoder compute in float16 (onnxgraph.HalfPrecision)
	paddingMasks      bool       // Load masks decoders' padding (masks.go)
	noStrips          bool       // Options.NoStrips
	tailTile          int        // tail input samples per tile of a CPU engine's one-sentence runs (tail.go); 0: whole sentences
	textPiece         int        // Options.TextPiece resolved: sentences per CPU text run, 0 = the whole batch
	logf              func(format string, args ...any)
	stats             stageStats
	now               func() time.Time

	slots chan struct{} // one token per admitted, unfinished request: the bounded queue
	done  chan struct{} // closed by Close; releases Submit calls blocked on a full queue

	mu      sync.Mutex
	work    *sync.Cond // signalled when pending or windows gain items, or the engine closes
	pending []*item    // queued requests, oldest first
	windows []window   // decoder windows of running sentences, oldest first
	models  []*Model
	closed  bool

	workersDone sync.WaitGroup
	closeOnce   sync.Once
	closeErr    error
}

type itemState int

const (
	statePending itemState = iota
	stateRunning
	stateDone
)

// item is one submitted request on its way through the engine.
type item struct {
	ctx         context.Context
	model       *Model
	req         Request
	result      chan Result // buffered: delivering never blocks a worker
	queued      time.Time
	state       itemState // guarded by Engine.mu
	stopWatcher func() bool

	durations []float32 // Result.Durations, once read

	// Set while a split voice's sentence waits for its decoder windows; guarded by Engine.mu.
	started   time.Time
	audio     []float32
	remaining int // windows not yet decoded
	// With Request.Stream: the sentence's first window in its strip, which of its windows are decoded, how many
	// of them are decoded from the first on, and how many samples went to the stream.
	firstWindow int
	decoded     []bool
	prefix      int
	streamed    int
}

// sentenceStrip is a strip (window.go) of running sentences: one acoustic batch's, of one voice and, when the
// voice's decoder is speaker-conditioned, one speaker. Its latent is written before its windows are queued and
// only read after.
type sentenceStrip struct {
	*strip
	items   []*item // the sentences, in strip order
	speaker int64
}

// window is one decoder window of a strip of running sentences.
type window struct {
	strip *sentenceStrip
	k     int
}

// NewEngine picks the device, checks that it starts, and starts the workers. Init must have been called.
func NewEngine(opts Options) (*Engine, error) {
	if !ort.Ready() {
		return nil, errors.New("engine: NewEngine before ort.Init: the ONNX Runtime library is not loaded")
	}
	t := opts.Tuning
	return newEngine(opts, ortBackend{sessions: ort.Sessions{ProviderOptions: t.ProviderOptions,
		ProfilePrefix: t.ProfilePrefix, OwnArenas: t.SessionArenas}})
}

func newEngine(opts Options, b backend) (*Engine, error) {
	t := opts.Tuning
	logf := opts.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	for name, v := range map[string]int{"Threads": opts.Threads, "MaxBatch": t.MaxBatch, "QueueSize": opts.QueueSize,
		"ThreadsPerSession": t.ThreadsPerSession, "InFlight": t.InFlight, "MaxBatchPhonemes": t.MaxBatchPhonemes,
		"DecoderMargin": t.DecoderMargin, "DecoderBatch": t.DecoderBatch, "AcousticGPUWorkers": t.AcousticGPUWorkers} {
		if v < 0 {
			return nil, fmt.Errorf("engine: option %s is %d; want 0 (default) or more", name, v)
		}
	}

	if t.TailTile < -1 || t.TailTile > maxTailTile {
		return nil, fmt.Errorf("engine: option TailTile is %d; want -1 (off), 0 (default) or up to %d", t.TailTile, maxTailTile)
	}
	switch opts.Precision {
	case "", PrecisionFloat32, PrecisionFloat16:
	default:
		return nil, fmt.Errorf("engine: unknown precision %q (want %s or %s)", opts.Precision, PrecisionFloat32, PrecisionFloat16)
	}
	switch t.Upsampling {
	case UpsamplingDefault, UpsamplingConvTranspose, UpsamplingPolyphase:
	default:
		return nil, fmt.Errorf("engine: unknown upsampling %q (want %s or %s)", t.Upsampling, UpsamplingConvTranspose, UpsamplingPolyphase)
	}
	device, err := selectDevice(opts.Device, b, logf)
	if err != nil {
		return nil, err
	}
	// Compared with the device in use, so that "auto" that found WebGPU takes "webgpu" parts.
	if t.AcousticDevice != "" && t.AcousticDevice != ort.DeviceCPU && t.AcousticDevice != device {
		return nil, fmt.Errorf("engine: acoustic device %q: it runs on the engine's device (%s) or on cpu", t.AcousticDevice, device)
	}
	if t.TextDevice != "" && t.TextDevice != ort.DeviceCPU && t.TextDevice != ort.DeviceAuto && t.TextDevice != device {
		return nil, fmt.Errorf("engine: text device %q: it runs on the engine's device (%s), on cpu, or auto", t.TextDevice, device)
	}
	e := &Engine{
		backend: b,
		device:  device,
		logf:    logf,
		now:     time.Now,
		done:    make(chan struct{}),
		// Masks are on unless turned off: an option's zero value is the default.
		paddingMasks: !t.NoPaddingMasks,
		noStrips:     t.NoStrips,
		textPiece:    max(0, cmp.Or(t.TextPiece, DefaultTextPiece)),
	}
	e.work = sync.NewCond(&e.mu)
	e.half = opts.Precision == PrecisionFloat16 && device != ort.DeviceCPU
	e.upsampling = cmp.Or(t.Upsampling, DefaultUpsampling(device))
	threads := cmp.Or(opts.Threads, runtime.NumCPU())
	if device == ort.DeviceCPU {
		e.threadsPerSession = min(cmp.Or(t.ThreadsPerSession, DefaultThreadsPerSession), threads)
		e.workers = max(1, threads/e.threadsPerSession)
		e.sessionsPerModel = e.workers
		e.maxBatch = cmp.Or(t.MaxBatch, DefaultCPUMaxBatch)
		e.maxBatchPhonemes = cmp.Or(t.MaxBatchPhonemes, DefaultCPUMaxBatchPhonemes)
		if e.maxBatch == 1 && t.TailTile >= 0 {
			e.tailTile = cmp.Or(t.TailTile, DefaultTailTile)
		}
	} else {
		// One session on the device, shared by InFlight workers: ORT sessions may be run concurrently, and a
		// second copy of the weights on the device would buy nothing.
		e.threadsPerSession = threads
		e.workers = cmp.Or(t.InFlight, DefaultInFlight)
		e.sessionsPerModel = 1
		e.maxBatch = cmp.Or(t.MaxBatch, DefaultGPUMaxBatch)
		e.maxBatchPhonemes = cmp.Or(t.MaxBatchPhonemes, DefaultGPUMaxBatchPhonemes)
	}
	if window := cmp.Or(t.DecoderWindow, DefaultDecoderWindow(device)); window > 0 {
		e.window = windowing{frames: window, margin: cmp.Or(t.DecoderMargin, DefaultDecoderMargin)}
		e.marginSet = t.DecoderMargin > 0
		e.decoderBatch = cmp.Or(t.DecoderBatch, defaultDecoderBatch(window, e.half))
		if cmp.Or(t.AcousticDevice, DefaultAcousticDevice(device)) == ort.DeviceCPU && device != ort.DeviceCPU {
			e.acousticOnCPU = true
			e.workers = max(e.workers, threads)
			e.acousticCPU = e.workers
			e.workers += t.AcousticGPUWorkers
			e.text = cmp.Or(t.TextDevice, DefaultTextDevice(device))
			e.splitMaxBatch = cmp.Or(t.MaxBatch, DefaultSplitGPUMaxBatch)
			e.splitMaxBatchPh = cmp.Or(t.MaxBatchPhonemes, DefaultSplitGPUMaxBatchPhonemes)
		}
	}
	if e.splitMaxBatch == 0 {
		e.splitMaxBatch, e.splitMaxBatchPh = e.maxBatch, e.maxBatchPhonemes
	}
	// Four batches for every worker, so that the batch each worker takes is picked from many lengths, and short
	// sentences are padded little; on a CPU, batch 1, it is the floor of 64.
	e.slots = make(chan struct{}, cmp.Or(opts.QueueSize, max(64, 4*e.workers*e.maxBatch)))
	e.workersDone.Add(e.workers)
	for w := range e.workers {
		go e.runWorker(w)
	}
	return e, nil
}

// selectDevice resolves "auto" to the first device that starts and checks that an explicit GPU device starts.
func selectDevice(want ort.Device, b backend, logf func(string, ...any)) (ort.Device, error) {
	switch want {
	case ort.DeviceCPU:
		return ort.DeviceCPU, nil
	case ort.DeviceCUDA, ort.DeviceWebGPU:
		if err := b.probe(want, false); err != nil {
			return "", fmt.Errorf("engine: device %s does not start: %w", want, err)
		}
		return want, nil
	case ort.DeviceAuto, "":
		var failures []string
		for _, candidate := range []ort.Device{ort.DeviceCUDA, ort.DeviceWebGPU} {
			err := b.probe(candidate, true)
			if err == nil {
				return candidate, nil
			}
			if !errors.Is(err, ort.ErrProviderMissing) { // present but broken: say so; absent: CPU is simply the device
				failures = append(failures, fmt.Sprintf("%s: %v", candidate, err))
			}
		}
		if len(failures) > 0 {
			logf("engine: no GPU provider started, using cpu (%s)", strings.Join(failures, "; "))
		}
		return ort.DeviceCPU, nil
	default:
		return "", fmt.Errorf("engine: unknown device %q (want auto, cpu, webgpu or cuda)", want)
	}
}

// Device is the device actually in use, after auto selection.
func (e *Engine) Device() ort.Device { return e.device }

// HalfPrecision says whether split voices' frame-rate parts compute in float16: Options.Precision fp16 on a GPU (a
// CPU engine ignores it). Their audio then differs slightly from float32's.
func (e *Engine) HalfPrecision() bool { return e.half }

// Workers is how many batches the engine runs at once.
func (e *Engine) Workers() int { return e.workers }

// QueueSize is how many sentences the engine takes (queued and running) before Submit blocks: what a caller with
// many sentences keeps in flight so that every worker and device batch is fed.
func (e *Engine) QueueSize() int { return cap(e.slots) }

// Submit queues one sentence and returns a channel that receives exactly one Result. It blocks while the queue is
// full, until a place frees up, ctx is done or the engine closes. A request whose ctx ends while it waits in the
// queue leaves it, and its Result carries ctx.Err().
func (e *Engine) Submit(ctx context.Context, m *Model, req Request) <-chan Result {
	out := make(chan Result, 1)
	queued := e.now()
	fail := func(err error) <-chan Result {
		out <- Result{Err: err, Queued: queued, Finished: e.now()}
		return out
	}
	switch {
	case m == nil || m.engine != e:
		return fail(errors.New("engine: model was not loaded by this engine"))
	case ctx.Err() != nil:
		return fail(ctx.Err())
	}
	if err := m.validate(req); err != nil {
		return fail(fmt.Errorf("engine: voice %q: %w", m.name, err))
	}
	select {
	case e.slots <- struct{}{}:
	case <-ctx.Done():
		return fail(ctx.Err())
	case <-e.done:
		return fail(ErrClosed)
	}
	it := &item{ctx: ctx, model: m, req: req, result: out, queued: queued}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		<-e.slots
		return fail(ErrClosed)
	}
	e.pending = append(e.pending, it)
	it.stopWatcher = context.AfterFunc(ctx, func() { e.leaveQueue(it) })
	e.work.Signal()
	return out
}

// leaveQueue runs when a request's ctx ends: a request still waiting leaves the queue at once; one already
// running gets ctx.Err() when its batch finishes.
func (e *Engine) leaveQueue(it *item) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if it.state != statePending {
		return
	}
	e.pending = slices.DeleteFunc(e.pending, func(p *item) bool { return p == it })
	e.finishLocked(it, Result{Err: it.ctx.Err()}, time.Time{})
}

// finishLocked delivers it's one Result and frees its place in the queue. e.mu must be held.
func (e *Engine) finishLocked(it *item, res Result, started time.Time) {
	if it.state == stateDone {
		return
	}
	it.state = stateDone
	if it.stopWatcher != nil {
		it.stopWatcher()
	}
	res.Queued, res.Started, res.Finished = it.queued, started, e.now()
	if res.Err == nil {
		res.Streamed = it.streamed
		res.Durations = it.durations
	}
	it.result <- res
	<-e.slots
}

// runWorker takes batches until the engine closes. It sleeps on the condition variable while the queue is empty.
func (e *Engine) runWorker(worker int) {
	defer e.workersDone.Done()
	for {
		e.mu.Lock()
		for len(e.pending) == 0 && len(e.windows) == 0 && !e.closed {
			e.work.Wait()
		}
		if e.windowsFirstLocked() {
			run := e.takeWindowsLocked()
			e.mu.Unlock()
			e.runWindows(worker, run)
			continue
		}
		if e.closed {
			e.mu.Unlock()
			return
		}
		batch := e.takeBatchLocked()
		e.mu.Unlock()
		if batch[0].model.split != nil {
			e.runAcoustic(worker, batch)
		} else {
			e.runBatch(worker, batch)
		}
	}
}

// windowsFirstLocked says whether a worker looking for work decodes waiting windows before taking a batch. Decoder
// windows come first once a full run of them is ready, or when no sentence waits: they finish sentences that
// already hold a place in the queue. Close drains them, since their sentences are running. (Shorter runs whenever
// the serialised device is idle measured slower.)
func (e *Engine) windowsFirstLocked() bool {
	return len(e.windows) > 0 && (len(e.windows) >= e.decoderBatch || len(e.pending) == 0 || e.closed)
}

// takeBatchLocked removes the next batch from the queue: the oldest request (so none starves) plus the queued
// requests of the same model and scales whose phoneme counts are nearest to its, up to the model's batch cap and
// the phoneme budget (batch size x longest sequence). Near lengths keep padding, the wasted work, small.
func (e *Engine) takeBatchLocked() []*item {
	head := e.pending[0]
	limit := head.model.maxBatch
	var mates []*item
	if limit > 1 {
		for _, it := range e.pending[1:] {
			if it.model == head.model && it.req.Scales == head.req.Scales {
				mates = append(mates, it)
			}
		}
		headLen := len(head.req.IDs)
		slices.SortStableFunc(mates, func(a, b *item) int {
			return cmp.Compare(absInt(len(a.req.IDs)-headLen), absInt(len(b.req.IDs)-headLen))
		})
	}
	batch := []*item{head}
	width := len(head.req.IDs)
	for _, it := range mates {
		if len(batch) == limit {
			break
		}
		w := max(width, len(it.req.IDs))
		if (len(batch)+1)*w > head.model.maxBatchPhonemes {
			continue
		}
		batch = append(batch, it)
		width = w
	}
	taken := make(map[*item]bool, len(batch))
	for _, it := range batch {
		it.state = stateRunning
		taken[it] = true
	}
	e.pending = slices.DeleteFunc(e.pending, func(it *item) bool { return taken[it] })
	return batch
}

func absInt(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// runBatch runs one batch of whole sentences and delivers their audio.
func (e *Engine) runBatch(worker int, batch []*item) {
	m := batch[0].model
	started := e.now()
	audio, err := e.synthesize(m.runners[worker%len(m.runners)], batch)
	e.stats.record(stageWhole, batch, started, e.now())
	if retryAlone(err, batch, func(one []*item) { e.runBatch(worker, one) }) {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	for i, it := range batch {
		if !e.failedLocked(it, err, started, "") {
			e.finishLocked(it, Result{Audio: audio[i]}, started)
		}
	}
}

// retryAlone reruns each item of a failed batch of several by itself, so that one bad request (say, a phoneme id
// the voice does not know) fails alone. It reports whether it did.
func retryAlone(err error, batch []*item, run func([]*item)) bool {
	if err == nil || len(batch) < 2 {
		return false
	}
	for _, it := range batch {
		run([]*item{it})
	}
	return true
}

// failedLocked finishes it with an error when it cannot have a result: its request was cancelled, or its run
// failed (err; stage names the part of a split voice, "" for a whole one). It reports whether it did.
func (e *Engine) failedLocked(it *item, err error, started time.Time, stage string) bool {
	switch {
	case it.ctx.Err() != nil:
		e.finishLocked(it, Result{Err: it.ctx.Err()}, started)
	case err != nil:
		e.finishLocked(it, Result{Err: fmt.Errorf("engine: voice %q on %s: %s%w", it.model.name, e.device, stage, err)}, started)
	default:
		return false
	}
	return true
}

// synthesize runs one padded batch and cuts its output back into each item's own samples.
func (e *Engine) synthesize(r runner, batch []*item) ([][]float32, error) {
	in := packBatch(batch, batch[0].model.io.HasSpeaker)
	out, err := r.run(in)
	if err != nil {
		return nil, err
	}
	keepDurations(batch, out.frames, in.width)
	return splitAudio(in, out)
}

// keepDurations gives each item of a batch its own ids' frames, from the batch's durations output (width values
// an item, nil when the voice has none).
func keepDurations(batch []*item, frames []float32, width int) {
	if len(frames) != len(batch)*width {
		return
	}
	for b, it := range batch {
		it.durations = append([]float32(nil), frames[b*width:b*width+len(it.req.IDs)]...)
	}
}

// Close fails the requests still queued with ErrClosed, lets running batches finish and deliver, then frees every
// model's sessions. It is idempotent; later Submits get ErrClosed.
func (e *Engine) Close() error {
	e.closeOnce.Do(func() {
		e.mu.Lock()
		e.closed = true
		close(e.done)
		for _, it := range e.pending {
			e.finishLocked(it, Result{Err: ErrClosed}, time.Time{})
		}
		e.pending = nil
		e.work.Broadcast()
		models := e.models
		e.mu.Unlock()

		e.workersDone.Wait()
		var errs []error
		for _, m := range models {
			if err := m.close(); err != nil {
				errs = append(errs, fmt.Errorf("engine: closing voice %q: %w", m.name, err))
			}
		}
		e.closeErr = errors.Join(errs...)
	})
	return e.closeErr
}
