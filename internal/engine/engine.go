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

	"github.com/advancedclimatesystems/gonnx/onnx"
	"github.com/ttsgen/ttsgen/internal/onnxgraph"
	"github.com/ttsgen/ttsgen/internal/ort"
	"github.com/ttsgen/ttsgen/internal/vits"
	"google.golang.org/protobuf/proto"
)

// ErrClosed is the error of requests submitted to, or still queued in, an engine that has been closed.
var ErrClosed = errors.New("gpu: engine closed")

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
	Streamed                  int
	Err                       error
	Queued, Started, Finished time.Time
}

// Model is a voice loaded into an engine.
type Model struct {
	engine   *Engine
	name     string
	cfg      ModelConfig
	io       vits.ModelIO
	maxBatch int
	// maxBatchPhonemes caps a batch's sentences x longest sentence (Options.MaxBatchPhonemes, or its default for
	// whole sentences or a split voice's acoustic batches).
	maxBatchPhonemes int
	runners          []runner // one per CPU worker; one shared by all workers on a GPU
	split            *splitModel
}

// splitModel is a voice run in two parts: acoustic batches of whole sentences, then decoder windows.
type splitModel struct {
	voice    *vits.SplitVoice
	window   windowing     // the engine's window size, with this voice's margin
	acoustic []graphRunner // like Model.runners
	text     []graphRunner // none, or like decoder: the text part, when voice.Text is set
	textCPU  []graphRunner // with TextDevice auto: the text part on the CPU, one per CPU acoustic worker
	// textPerRow: for each of the text part's outputs, whether it holds a row per sentence (else the batch
	// shares it), when the text part can be run on a batch in pieces (textPieceOutputs); nil when it cannot.
	textPerRow []bool
	flow       []graphRunner // none, or like decoder
	// warmUpDeviceTimes: deviceTimes after Load's warm-up, which Stats leaves out as it does the warm-up's runs.
	warmUpDeviceTimes map[string]time.Duration
	decoder           []graphRunner
}

func (s *splitModel) close() error {
	return closeGraphRunners(slices.Concat(s.acoustic, s.text, s.textCPU, s.flow, s.decoder))
}

// Name is the name the model was loaded under.
func (m *Model) Name() string { return m.name }

// Config is the configuration the model was loaded with.
func (m *Model) Config() ModelConfig { return m.cfg }

// MaxBatch is the most items this model runs at once: 1 when its graph has no duration output to cut a
// padded batch back into sentences.
func (m *Model) MaxBatch() int { return m.maxBatch }

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
	text              ort.Device // with acousticOnCPU: where split voices' text part runs (text.go): cpu (not cut apart), the GPU, or auto
	half              bool       // split voices' flow and decoder compute in float16 (half.go)
	paddingMasks      bool       // Load masks decoders' padding (mask.go)
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
			return nil, fmt.Errorf("gpu: option %s is %d; want 0 (default) or more", name, v)
		}
	}

	if t.TailTile < -1 || t.TailTile > maxTailTile {
		return nil, fmt.Errorf("gpu: option TailTile is %d; want -1 (off), 0 (default) or up to %d", t.TailTile, maxTailTile)
	}
	switch opts.Precision {
	case "", PrecisionFloat32, PrecisionFloat16:
	default:
		return nil, fmt.Errorf("gpu: unknown precision %q (want %s or %s)", opts.Precision, PrecisionFloat32, PrecisionFloat16)
	}
	switch t.Upsampling {
	case UpsamplingDefault, UpsamplingConvTranspose, UpsamplingPolyphase:
	default:
		return nil, fmt.Errorf("gpu: unknown upsampling %q (want %s or %s)", t.Upsampling, UpsamplingConvTranspose, UpsamplingPolyphase)
	}
	device, err := selectDevice(opts.Device, b, logf)
	if err != nil {
		return nil, err
	}
	// Compared with the device in use, so that "auto" that found WebGPU takes "webgpu" parts.
	if t.AcousticDevice != "" && t.AcousticDevice != ort.DeviceCPU && t.AcousticDevice != device {
		return nil, fmt.Errorf("gpu: acoustic device %q: it runs on the engine's device (%s) or on cpu", t.AcousticDevice, device)
	}
	if t.TextDevice != "" && t.TextDevice != ort.DeviceCPU && t.TextDevice != ort.DeviceAuto && t.TextDevice != device {
		return nil, fmt.Errorf("gpu: text device %q: it runs on the engine's device (%s), on cpu, or auto", t.TextDevice, device)
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
			return "", fmt.Errorf("gpu: device %s does not start: %w", want, err)
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
			logf("gpu: no GPU provider started, using cpu (%s)", strings.Join(failures, "; "))
		}
		return ort.DeviceCPU, nil
	default:
		return "", fmt.Errorf("gpu: unknown device %q (want auto, cpu, webgpu or cuda)", want)
	}
}

// Device is the device actually in use, after auto selection.
func (e *Engine) Device() ort.Device { return e.device }

// Workers is how many batches the engine runs at once.
func (e *Engine) Workers() int { return e.workers }

// QueueSize is how many sentences the engine takes (queued and running) before Submit blocks: what a caller with
// many sentences keeps in flight so that every worker and device batch is fed.
func (e *Engine) QueueSize() int { return cap(e.slots) }

// Load prepares a voice model (ONNX bytes of a Piper-format voice) for this engine: it adds the duration output
// that batching needs (see prepareGraph) and creates the engine's sessions for it.
func (e *Engine) Load(name string, onnxModel []byte, cfg ModelConfig) (*Model, error) {
	graph, io, err := vits.PrepareGraph(onnxModel)
	if err != nil {
		return nil, fmt.Errorf("engine: loading voice %q: %w", name, err)
	}
	if cfg.NumSpeakers > 1 && !io.HasSpeaker {
		return nil, fmt.Errorf("engine: loading voice %q: config says %d speakers but the graph has no %q input",
			name, cfg.NumSpeakers, vits.InputSpeaker)
	}
	m := &Model{engine: e, name: name, cfg: cfg, io: io, maxBatch: e.maxBatch, maxBatchPhonemes: e.maxBatchPhonemes}
	masks := e.needsPaddingMasks(name, graph, io)
	if e.window.frames > 0 {
		split, err := e.loadSplit(name, graph, masks)
		if err == nil {
			m.split = split
			m.maxBatch, m.maxBatchPhonemes = e.splitMaxBatch, e.splitMaxBatchPh
			split.window = e.window
			if !e.marginSet {
				if reach, err := vits.DecoderReach(graph); err == nil {
					split.window.margin = reach
				} else {
					e.logf("engine: voice %q: decoder windows read %d frames of margin (the default): its receptive field is unknown: %v",
						name, e.window.margin, err)
				}
			}
			if e.device != ort.DeviceCPU {
				if err := e.warmUp(m); err != nil {
					m.close()
					return nil, fmt.Errorf("engine: loading voice %q: warming up on %s: %w", name, e.device, err)
				}
			}
			split.warmUpDeviceTimes = split.deviceTimes()
			return e.register(m)
		}
		e.logf("engine: voice %q runs whole sentences, not decoder windows: %v", name, err)
	}
	if !io.HasFrames {
		m.maxBatch = 1
		e.logf("engine: voice %q has no duration Ceil node; running it one sentence at a time (correct, slower)", name)
	}
	if masks {
		if masked, _, err := vits.MaskWholeGraph(graph); err == nil {
			graph = masked
		} else {
			e.logf("engine: voice %q: no padding masks for its decoder (%v); in a batch, the ends of its shorter sentences may differ slightly from running them alone", name, err)
		}
	}
	if e.tailTile > 0 && e.window.frames == 0 && io.HasFrames {
		tiled, err := e.loadTiled(name, graph, io)
		if err == nil {
			m.runners = tiled
			return e.register(m)
		}
		if !errors.Is(err, vits.ErrNoDecoder) { // not a VITS voice: nothing to tile, nothing to say
			e.logf("engine: voice %q: its decoder runs whole sentences, not tiles: %v", name, err)
		}
	}
	e.rewriteUpsampling(name, graph, e.device)
	if e.device != ort.DeviceCPU {
		gpuGraph(graph)
	}
	encoded, err := onnxgraph.Encode(graph)
	if err != nil {
		return nil, fmt.Errorf("engine: loading voice %q: %w", name, err)
	}
	for i := range e.sessionsPerModel {
		r, err := e.backend.newRunner(encoded, io, e.device, e.threadsPerSession)
		if err != nil {
			closeRunners(m.runners)
			return nil, fmt.Errorf("engine: loading voice %q: session %d of %d on %s: %w",
				name, i+1, e.sessionsPerModel, e.device, err)
		}
		m.runners = append(m.runners, r)
	}
	return e.register(m)
}

// loadTiled cuts a voice for tiled decoder tails (tail.go) and makes a runner of a head and a tail session for each
// of the engine's sessions.
func (e *Engine) loadTiled(name string, graph *onnx.ModelProto, io vits.ModelIO) ([]runner, error) {
	tc, err := vits.CutTail(graph)
	if err != nil {
		return nil, err
	}
	e.rewriteUpsampling(name, tc.Head, e.device)
	e.rewriteUpsampling(name, tc.Tail, e.device)
	head, err := onnxgraph.Encode(tc.Head)
	if err != nil {
		return nil, err
	}
	tail, err := onnxgraph.Encode(tc.Tail)
	if err != nil {
		return nil, err
	}
	tile := roundUp(e.tailTile, tc.PerFrame) // tiles and their margins are whole frames (tail.go)
	var runners []runner
	for range e.sessionsPerModel {
		h, err := e.backend.newGraphRunner(head, io.InputNames(), tc.HeadOutputs(), e.device, e.threadsPerSession)
		if err != nil {
			closeRunners(runners)
			return nil, fmt.Errorf("head session: %w", err)
		}
		t, err := e.backend.newGraphRunner(tail, tc.TailInputs(), []string{vits.OutputAudio}, e.device, e.threadsPerSession)
		if err != nil {
			h.Close()
			closeRunners(runners)
			return nil, fmt.Errorf("tail session: %w", err)
		}
		runners = append(runners, &tiledRunner{head: h, tail: t, io: io, cut: tc, tile: tile, stats: &e.stats, now: e.now})
	}
	// Runs of two sentences of different lengths check what the graph alone cannot say: that everything the tail
	// reads from the head runs along the sentence, a whole number of samples per frame (a tail conditioned on the
	// speaker would not; two lengths, so that a size cannot divide both frame counts by chance).
	for _, width := range []int{32, 47} {
		if _, err := runners[0].run(trialBatch(1, width)); err != nil {
			closeRunners(runners)
			return nil, fmt.Errorf("a trial run: %w", err)
		}
	}
	return runners, nil
}

// needsPaddingMasks says whether Load masks a voice's decoder (mask.go): only where there is padding (batches of
// several sentences, decoder windows; one sentence at a time, the CPU's default, runs the voice as it is), and only
// when the probe finds the decoder leaking it, or cannot tell.
func (e *Engine) needsPaddingMasks(name string, graph *onnx.ModelProto, io vits.ModelIO) bool {
	if !e.paddingMasks || !io.HasFrames || (e.maxBatch <= 1 && e.window.frames == 0) {
		return false
	}
	self, err := e.decoderMasksItself(graph)
	switch {
	case errors.Is(err, vits.ErrNoDecoder):
		return false
	case err != nil:
		e.logf("engine: voice %q: masking its decoder's padding, since probing whether it masks it itself failed: %v", name, err)
		return true
	}
	return !self
}

// rewriteUpsampling applies the engine's upsampling choice (see onnxgraph.RewriteUpsampling) to a graph that runs
// on device d.
func (e *Engine) rewriteUpsampling(name string, graph *onnx.ModelProto, d ort.Device) {
	if e.upsampling != UpsamplingPolyphase {
		return
	}
	if _, left := onnxgraph.RewriteUpsampling(graph, convChannelsLast(d)); left > 0 {
		e.logf("engine: voice %q: %d ConvTranspose node(s) outside what polyphase upsampling covers run as they are", name, left)
	}
}

// gpuGraph rewrites graph as a GPU session runs it: with its LayerNorms fused and its additions of zeros dropped,
// where either applies. It returns graph.
func gpuGraph(graph *onnx.ModelProto) *onnx.ModelProto {
	onnxgraph.FuseLayerNorms(graph)
	onnxgraph.DropZeroAdds(graph)
	return graph
}

// loadSplit cuts a voice at the decoder's latent, masks the decoder's padding if told to (mask.go), and creates
// sessions for the parts. With the acoustic part on the CPU, a voice's flow (a VITS voice's frame-rate layers
// before the decoder) is cut out too and runs on the GPU: on the CPU it would take half of a Piper medium voice's
// acoustic time.
func (e *Engine) loadSplit(name string, graph *onnx.ModelProto, masks bool) (*splitModel, error) {
	voice, err := vits.SplitGraph(graph, e.acousticOnCPU)
	if err != nil {
		return nil, err
	}
	if masks {
		if _, err := vits.MaskDecoderGraph(voice.Decoder); err == nil {
			voice.DecoderMasked = true
		} else {
			e.logf("engine: voice %q: no padding masks for its decoder (%v); the first and last samples of its sentences may differ slightly from running them alone", name, err)
		}
	}
	// The acoustic part's form follows its CPU sessions, GPU acoustic workers' too (a VITS acoustic part has no
	// ConvTranspose; only its speed on the GPU would differ).
	acousticDevice := e.device
	if e.acousticOnCPU {
		acousticDevice = ort.DeviceCPU
	}
	e.rewriteUpsampling(name, voice.Acoustic, acousticDevice)
	e.rewriteUpsampling(name, voice.Decoder, e.device)
	if e.half {
		for _, part := range []struct {
			name  string
			graph **onnx.ModelProto
		}{{"flow", &voice.Flow}, {"decoder", &voice.Decoder}} {
			if *part.graph == nil {
				continue
			}
			if half, err := onnxgraph.HalfPrecision(*part.graph); err == nil {
				*part.graph = half
			} else {
				e.logf("engine: voice %q: its %s stays float32: %v", name, part.name, err)
			}
		}
	}
	s := &splitModel{voice: voice}
	if e.text != "" && e.text != ort.DeviceCPU {
		if err := e.loadText(name, s); err != nil {
			e.logf("engine: voice %q runs its text encoder on the CPU: %v", name, err)
		}
	}
	decoderInputs := voice.DecoderInputNames()
	acousticSessions, acousticDevice, acousticThreads := e.sessionsPerModel, e.device, e.threadsPerSession
	if e.acousticOnCPU {
		acousticSessions, acousticDevice, acousticThreads = e.workers, ort.DeviceCPU, 1
	}
	acoustic, err := onnxgraph.Encode(voice.Acoustic)
	if err != nil {
		return nil, err
	}
	// The graph for the sessions on a GPU (all of them, or the GPU acoustic workers'), rewritten once.
	acousticOnGPU := acoustic
	if acousticDevice != ort.DeviceCPU || e.acousticOnCPU && e.acousticCPU < acousticSessions {
		if acousticOnGPU, err = onnxgraph.Encode(gpuGraph(proto.Clone(voice.Acoustic).(*onnx.ModelProto))); err != nil {
			return nil, err
		}
	}
	for i := range acousticSessions {
		device, threads, graph := acousticDevice, acousticThreads, acoustic
		if e.acousticOnCPU && i >= e.acousticCPU { // AcousticGPUWorkers
			device, threads = e.device, e.threadsPerSession
		}
		if device != ort.DeviceCPU {
			graph = acousticOnGPU
		}
		a, err := e.backend.newGraphRunner(graph, voice.AcousticInputNames(), voice.AcousticOutputs(), device, threads)
		if err != nil {
			s.close()
			return nil, fmt.Errorf("acoustic session on %s: %w", device, err)
		}
		s.acoustic = append(s.acoustic, a)
	}
	if voice.Flow != nil {
		// Made at their first run (on a GPU, Load's warm-up), when the acoustic part's outputs say the ranks of the
		// flow's inputs (rankedRunner).
		flow := voice.Flow
		if e.device != ort.DeviceCPU {
			flow = gpuGraph(flow)
		}
		for range e.sessionsPerModel {
			s.flow = append(s.flow, newRankedRunner(flow, voice.FlowInputs, func(graph []byte) (graphRunner, error) {
				f, err := e.backend.newGraphRunner(graph, voice.FlowInputs, []string{vits.OutputLatent}, e.device, e.threadsPerSession)
				if err != nil {
					return nil, fmt.Errorf("flow session: %w", err)
				}
				return f, nil
			}))
		}
	}
	decoder, err := onnxgraph.Encode(voice.Decoder)
	if err != nil {
		s.close()
		return nil, err
	}
	for range e.sessionsPerModel {
		d, err := e.backend.newGraphRunner(decoder, decoderInputs, []string{vits.OutputAudio}, e.device, e.threadsPerSession)
		if err != nil {
			s.close()
			return nil, fmt.Errorf("decoder session: %w", err)
		}
		s.decoder = append(s.decoder, d)
	}
	return s, nil
}

// loadText cuts a split voice's acoustic part at the durations (text.go) and creates the text part's sessions: on
// the GPU, and with TextDevice auto one on the CPU per CPU acoustic worker too, where the GPU's runs are serialised
// (elsewhere a GPU run never finds the device busy). It leaves s as it was if either fails.
func (e *Engine) loadText(name string, s *splitModel) error {
	cut, err := vits.CutText(s.voice.Acoustic)
	if err != nil {
		return fmt.Errorf("its acoustic part cannot be cut at the durations: %w", err)
	}
	var gpu, cpu []graphRunner
	fail := func(what string, err error) error {
		closeGraphRunners(slices.Concat(gpu, cpu))
		return fmt.Errorf("%s: %w", what, err)
	}
	text, err := onnxgraph.Encode(cut.Text)
	if err != nil {
		return err
	}
	onGPU, err := onnxgraph.Encode(gpuGraph(proto.Clone(cut.Text).(*onnx.ModelProto)))
	if err != nil {
		return err
	}
	for range e.sessionsPerModel {
		t, err := e.backend.newGraphRunner(onGPU, cut.TextInputs, cut.Boundary, e.device, e.threadsPerSession)
		if err != nil {
			return fail("text part session on "+string(e.device), err)
		}
		gpu = append(gpu, t)
	}
	if e.text == ort.DeviceAuto && ort.RunLock(e.device) != nil {
		for range e.acousticCPU {
			t, err := e.backend.newGraphRunner(text, cut.TextInputs, cut.Boundary, ort.DeviceCPU, 1)
			if err != nil {
				return fail("text part session on cpu", err)
			}
			cpu = append(cpu, t)
		}
	}
	var perRow []bool
	if len(cpu) > 0 {
		var ok bool
		perRow, ok, err = textPieceOutputs(cpu[0], cut, s.voice.IO)
		if err != nil {
			return fail("trying the text part on the cpu", err)
		}
		if !ok {
			e.logf("engine: voice %q: a text part output has its sentence axis where pieces of a batch cannot be joined: the CPU runs a batch's text part whole", name)
		}
	}
	s.voice.Text, s.voice.Acoustic, s.text, s.textCPU, s.textPerRow = cut, cut.Expand, gpu, cpu, perRow
	return nil
}

func closeGraphRunners(runners []graphRunner) error {
	var errs []error
	for _, r := range runners {
		errs = append(errs, r.Close())
	}
	return errors.Join(errs...)
}

func (e *Engine) register(m *Model) (*Model, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		m.close()
		return nil, fmt.Errorf("gpu: loading voice %q: %w", m.name, ErrClosed)
	}
	e.models = append(e.models, m)
	return m, nil
}

func (m *Model) close() error {
	err := closeRunners(m.runners)
	if m.split != nil {
		err = errors.Join(err, m.split.close())
	}
	return err
}

// Windowed reports whether the model runs in continuous-batching mode: decoder windows from many sentences.
func (m *Model) Windowed() bool { return m.split != nil }

func closeRunners(runners []runner) error {
	var errs []error
	for _, r := range runners {
		errs = append(errs, r.close())
	}
	return errors.Join(errs...)
}

// validate rejects a request that could only fail on the device, before it takes a place in the queue.
func (m *Model) validate(req Request) error {
	if len(req.IDs) == 0 {
		return errors.New("empty phoneme id sequence")
	}
	speakers := max(1, m.cfg.NumSpeakers)
	if req.Speaker < 0 || req.Speaker >= int64(speakers) {
		return fmt.Errorf("speaker %d out of range: voice %q has %d speaker(s)", req.Speaker, m.name, speakers)
	}
	return nil
}

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
		return fail(errors.New("gpu: model was not loaded by this engine"))
	case ctx.Err() != nil:
		return fail(ctx.Err())
	}
	if err := m.validate(req); err != nil {
		return fail(fmt.Errorf("gpu: voice %q: %w", m.name, err))
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
// the serialised device is idle measured slower on the H200: 1,015x and 970x against 1,059x and 1,052x.)
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
		e.finishLocked(it, Result{Err: fmt.Errorf("gpu: voice %q on %s: %s%w", it.model.name, e.device, stage, err)}, started)
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
	return splitAudio(in, out)
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
				errs = append(errs, fmt.Errorf("gpu: closing voice %q: %w", m.name, err))
			}
		}
		e.closeErr = errors.Join(errs...)
	})
	return e.closeErr
}
