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
)

// Device names where a voice runs.
type Device string

const (
	DeviceAuto   Device = "auto"   // cuda, then webgpu, then cpu: the first that starts
	DeviceCPU    Device = "cpu"    // ONNX Runtime's CPU provider
	DeviceWebGPU Device = "webgpu" // ONNX Runtime's WebGPU provider (Vulkan/Metal/D3D12 underneath)
	DeviceCUDA   Device = "cuda"   // ONNX Runtime's CUDA provider (needs a CUDA build of the library)
)

// ErrClosed is the error of requests submitted to, or still queued in, an engine that has been closed.
var ErrClosed = errors.New("gpu: engine closed")

// Options configure an Engine. Zero values pick the documented defaults for the device in use.
type Options struct {
	Device    Device
	Threads   int                              // CPU threads to use in total (0 = runtime.NumCPU())
	MaxBatch  int                              // cap on items per device batch (0 = DefaultCPUMaxBatch on cpu, DefaultGPUMaxBatch on a GPU, DefaultSplitGPUMaxBatch there for split voices' acoustic batches run on the CPU)
	QueueSize int                              // bounded queue; Submit blocks (backpressure) when full, until ctx is done (0 = 4 x workers x MaxBatch, at least 64)
	Logf      func(format string, args ...any) // warnings (e.g. GPU fallback); nil = silent

	// ThreadsPerSession is the intra-op thread count of each CPU session; the engine runs
	// Threads/ThreadsPerSession sessions side by side (0 = DefaultThreadsPerSession).
	ThreadsPerSession int
	// InFlight is how many batches a GPU engine keeps running at once, so packing and unpacking one batch
	// overlaps the device running another (0 = DefaultInFlight). Ignored on cpu.
	InFlight int
	// MaxBatchPhonemes caps batch size x longest phoneme sequence in a batch: the padded input, and so
	// (roughly) the audio and activation memory one run needs (0 = DefaultCPUMaxBatchPhonemes,
	// DefaultGPUMaxBatchPhonemes, or DefaultSplitGPUMaxBatchPhonemes on a GPU engine for split voices' acoustic
	// batches run on the CPU).
	// A single sentence longer than the cap still runs, alone.
	MaxBatchPhonemes int

	// DecoderWindow turns on continuous batching for voices that can be split at the decoder's latent (see
	// doc.go): the decoder runs on windows of this many frames drawn from many sentences at once. 0 = the
	// device's default (DefaultDecoderWindow: on for WebGPU, where it measured fastest; off on the CPU, where whole
	// sentences did); < 0 = off.
	DecoderWindow int
	// DecoderMargin is the frames of context each window reads on either side, and the frames of silence between
	// two sentences in a strip; it must cover the decoder's receptive field, or seams show and a sentence's end
	// hears the next one's start (0 = each voice's own, worked out from its graph at Load (reach.go), or
	// DefaultDecoderMargin when the graph has layers that cannot be read).
	DecoderMargin int
	// DecoderBatch is the most windows per decoder run (0 = DefaultDecoderFrames, or DefaultHalfDecoderFrames for
	// Precision fp16, divided by the window; fewer for short windows, whose margins weigh more: see
	// defaultDecoderBatch).
	DecoderBatch int

	// Upsampling chooses how the decoder's ConvTranspose layers run (see upsample.go): as they are, or rewritten
	// at Load as polyphase Convs, the same sums through the provider's fast Conv kernel ("" = the device's default).
	Upsampling Upsampling
	// ProviderOptions are passed to the GPU execution provider on top of the engine's own (not to CPU sessions).
	// Keys spelled as ONNX Runtime session configuration go there instead: "ep.webgpuexecutionprovider.*" (where
	// ORT 1.30's WebGPU provider reads its options) for the GPU sessions, "session.*" (such as
	// "session.set_denormal_as_zero") for every session, a CPU engine's included.
	ProviderOptions map[string]string
	// AcousticDevice is where split voices run their acoustic part: "cpu" on a GPU engine runs it on CPU sessions
	// (one per worker, one thread each, with as many workers as Threads) and only the decoder windows on the GPU.
	// The acoustic part is small, sequential work with shape computations that a GPU provider runs slowly and
	// with round trips to the host, while the CPU cores would otherwise idle ("" = DefaultAcousticDevice).
	AcousticDevice Device
	// TextDevice is where split voices with the acoustic part on the CPU run its token-rate part, the text encoder
	// and duration predictor (text.go): "cpu" keeps the whole acoustic part on the CPU; the engine's GPU device
	// cuts the acoustic part at the durations, runs the text part there on whole batches and the rest (expanding
	// to frames) on the CPU; "auto" runs a batch's text part on the GPU when the GPU is free at that moment and on
	// the worker's CPU session otherwise, so that whichever of the two has time to spare takes it ("" =
	// DefaultTextDevice).
	TextDevice Device
	// Precision is the arithmetic of split voices' frame-rate parts on a GPU, the flow and the decoder: "fp16"
	// rewrites them at Load to compute in float16 (half.go; their inputs and outputs stay float32), for a GPU
	// whose provider has float16 kernels, such as WebGPU with shader-f16 ("" = fp32). A graph the rewrite refuses
	// stays float32, with a Logf note. Ignored on the CPU, whose provider lacks float16 kernels, and wherever
	// voices run whole sentences (decoder windows off: DecoderWindow -1, or CUDA's default).
	Precision Precision
	// AcousticGPUWorkers, with the acoustic part on the CPU, adds this many workers that run it on the GPU
	// (a session each), taking batches as the CPU workers do: for a voice whose acoustic part keeps every core
	// busy while the GPU has time to spare (0 = none).
	AcousticGPUWorkers int
	// NoPaddingMasks runs voices' decoders as exported, without the padding masks that Load adds to decoders
	// that do not mask themselves, such as Piper's (mask.go): in a batch or a window, what lies beyond a sentence
	// then leaks into its first and last samples, as in Piper's own batches. For measuring what the masks cost,
	// and for a baseline run the way Piper runs.
	NoPaddingMasks bool
	// TailTile is how a CPU engine running one sentence at a time (MaxBatch 1, whole sentences: its default) runs a
	// voice's decoder: its last two upsampling stages on tiles of this many samples of their input, one tile
	// after another, so that their tensors stay in the core's cache (tail.go; 0 = DefaultTailTile, -1 = the
	// whole sentence in one run, as Piper runs it). Ignored elsewhere.
	TailTile int
	// NoStrips cuts decoder windows from each sentence alone rather than from strips of an acoustic batch's
	// sentences laid end to end (window.go): for measuring what strips save.
	NoStrips bool
	// TextPiece, with TextDevice auto, is how many sentences a worker's CPU session runs of a batch's text part at
	// a time when the GPU was busy: between pieces the worker hands the rest of the batch to the GPU if the GPU has
	// gone idle meanwhile (text.go). A whole batch's text part takes a CPU core over a second with a Piper medium
	// voice, long enough for the GPU to run dry while every worker is in one (0 = DefaultTextPiece; < 0 = the
	// whole batch at once). A piece costs no more per sentence than the whole batch: the text part's work scales
	// with its sentences (BENCHMARKS.md, ninth session).
	TextPiece int
	// SessionArenas gives each CPU session its own memory arena, as ONNX Runtime does by default, rather than one
	// arena shared by all (see registerSharedArena): for measuring what sharing costs or saves.
	SessionArenas bool
	// ProfilePrefix, when set, turns on ONNX Runtime's profiler for every session: each writes a Chrome-trace
	// JSON file named PREFIX_<date>.json, with every node's time and provider, when the engine closes.
	ProfilePrefix string
}

// Precision is the arithmetic of a voice's frame-rate parts on a GPU; see Options.Precision.
type Precision string

const (
	PrecisionFloat32 Precision = "fp32"
	PrecisionFloat16 Precision = "fp16"
)

// Upsampling is how a voice's decoder upsamples; see Options.Upsampling.
type Upsampling string

const (
	UpsamplingDefault       Upsampling = ""              // the device's default (DefaultUpsampling)
	UpsamplingConvTranspose Upsampling = "convtranspose" // the voice's own ConvTranspose nodes
	UpsamplingPolyphase     Upsampling = "polyphase"     // ConvTranspose rewritten as Conv + interleave
)

// DefaultDecoderWindow is the decoder window each device runs unless told otherwise; 0 = whole sentences.
// WebGPU: decoder windows with the acoustic part on the CPU measured 876-1,093x real time on the H200 against
// 733-760x for the best whole-sentence batches (BENCHMARKS.md). CPU: whole sentences measured faster. CUDA: not
// measured, so the simplest path.
func DefaultDecoderWindow(d Device) int {
	if d == DeviceWebGPU {
		return DefaultGPUDecoderWindow
	}
	return 0
}

// DefaultAcousticDevice is where split voices run their acoustic part on device d unless told otherwise: on the
// CPU beside WebGPU (see Options.AcousticDevice), on d itself elsewhere.
func DefaultAcousticDevice(d Device) Device {
	if d == DeviceWebGPU {
		return DeviceCPU
	}
	return d
}

// DefaultTextDevice is where split voices run their text part (see Options.TextDevice) on device d unless told
// otherwise.
func DefaultTextDevice(d Device) Device {
	// auto measured fastest on the H200 for a Piper medium graph (float16, 32-sentence acoustic batches): 865x
	// against 750x with the text part on the CPU and 836x on the GPU; for the default voice, whose text part is
	// small, 1,317x against 1,347x on the CPU, within the noise of one run.
	if d == DeviceWebGPU {
		return DeviceAuto
	}
	return DeviceCPU
}

// convChannelsLast says whether ONNX Runtime runs Conv on device d with channels last ([N,T,C]), the layout the
// polyphase interleave is then written for (upsample.go): WebGPU does; the CPU, and CUDA unless told prefer_nhwc,
// run [N,C,T].
func convChannelsLast(d Device) bool { return d == DeviceWebGPU }

// DefaultUpsampling is the upsampling each device runs unless told otherwise: polyphase everywhere, measured faster
// with the default voice (BENCHMARKS.md): 2-core CPU 28.3x and 28.8x against 24.5x and 26.3x; H200, 16 CPU
// sessions 123x against 111x; H200 WebGPU 504x against 479x.
func DefaultUpsampling(Device) Upsampling {
	return UpsamplingPolyphase
}

// Defaults. The CPU ones were measured with BenchmarkEngine on a 2-core machine (see doc.go); the GPU ones on the
// H200 through WebGPU (BENCHMARKS.md). ONNX Runtime's WebGPU provider keeps freed GPU buffers of at most 160 MiB
// and allocates anything larger afresh for every layer of every run: a run whose largest tensor passes that
// (the default voice: 32 KiB per latent frame, so about 5,000 frames) falls off a cliff (0.11 s per run became
// 0.82 s). 2,048 phonemes is ~6 long sentences, ~4,100 frames: 733x, against 504x at 1,024 and 163x at 4,096.
const (
	DefaultThreadsPerSession   = 1
	DefaultCPUMaxBatch         = 1
	DefaultCPUMaxBatchPhonemes = 2048
	DefaultGPUMaxBatch         = 16
	DefaultGPUMaxBatchPhonemes = 2048
	// A split voice's acoustic batches on a GPU engine hold no decoder, so they stay far from the provider's
	// buffer limit at twice the whole-sentence budget, and fewer, larger batches mean fewer flow and text runs on
	// the serialised device. Measured on the H200 (Piper medium graph, float16): 920-1,031x against 877x.
	DefaultSplitGPUMaxBatch         = 32
	DefaultSplitGPUMaxBatchPhonemes = 4096
	// DefaultTextPiece: a batch's text part on the CPU two sentences at a time. H200, Piper medium graph, 3,000
	// requests: 1,106x and 1,145x against 1,013x and 1,014x for whole batches (pieces of 4: 1,021x and 1,146x),
	// the device held 97-98% of the time against 89-90%; default voice 1,528x against 1,483x.
	DefaultTextPiece = 2
	DefaultInFlight  = 2

	// Continuous batching on WebGPU (H200): 24 windows of 128 frames, each reading 12 frames of margin on both
	// sides, 3,648 frames per decoder run (114 MiB at the largest tensor, inside the provider's buffer cache):
	// 974x and 934x real time at 64 concurrent requests, 1,093x at 256; 16 frames of margin 894x and 989x; 32
	// windows of 64 frames with 16 of margin (a third of the work on margins) 876x; 64 and 128 such windows per
	// run 837x and 766x. The margin a voice needs is worked out from its graph (the default voice: 13 frames, an
	// upper bound: 10 measured enough, 5e-7 from the whole sentence; Piper's decoders about 15); the default
	// margin is for a graph whose layers cannot be read. 256-frame windows, half the margin frames now that strips
	// fill a sentence's last window, measured no faster at first (Piper medium graph: 843x against 865x in
	// float16, 808x against 825x in float32, BENCHMARKS.md fifth session); once WebGPU's layout Transposes were
	// gone from the decoder (upsample.go), faster: 1,001x and 1,048x against 914x and 968x in float16, 822x and
	// 870x against 786x and 856x in float32 (two calls, sixth session). 512-frame windows (margins 5% of the
	// work instead of 9%, and half the padding past a strip's end) against 256 in one call of the seventh session:
	// 927x against 849x in float32 (decoder device time -5%), 1,019x against 1,016x in float16; first audio 31 / 40
	// ms (p50 / p99).
	DefaultGPUDecoderWindow = 512
	DefaultDecoderMargin    = 12
	// DefaultDecoderFrames is how many latent frames of windows (margins aside) a decoder run takes: 8 windows of
	// 512 frames, 16 of 256. Against 6 of 512 (3,072 frames) on the H200, Piper medium graph, float32: 938x
	// against 899x and 860x (1,000 requests), 985x against 957x (3,000), decoder device time -2%; 9 windows 903x
	// (BENCHMARKS.md, eighth session). The largest tensor of a float32 Piper medium decoder, 32 KiB per frame
	// with margins, then stays inside the provider's 160 MiB buffer cache (above); maxDecoderSpanFrames keeps
	// it there for short windows, whose margins are a larger share.
	DefaultDecoderFrames = 4096
	// DefaultHalfDecoderFrames is DefaultDecoderFrames for a float16 decoder (Precision fp16), whose activations take
	// half the bytes: 16 windows of 512 frames, 32 of 256 (near 141 MiB at the largest tensor). Measured on the
	// H200 (Piper medium graph, float16, 128-frame windows): 64 per run 959x and 1,031x against 948x and 920x for
	// 48; 48 against 24, 765x against 703x; 96 per run fell off the cliff (470x against 914x).
	DefaultHalfDecoderFrames = 8192
	// maxDecoderSpanFrames bounds a default decoder run's frames with the margins (DefaultDecoderMargin on each
	// side of each window): 144 MiB at the largest tensor of a float32 Piper medium decoder, twice the frames in
	// float16.
	maxDecoderSpanFrames = 4608
)

// defaultDecoderBatch is the windows per decoder run unless told otherwise: DefaultDecoderFrames (or
// DefaultHalfDecoderFrames) of windows, at most maxDecoderSpanFrames (twice that in float16) with their margins.
func defaultDecoderBatch(window int, half bool) int {
	frames, span := DefaultDecoderFrames, maxDecoderSpanFrames
	if half {
		frames, span = DefaultHalfDecoderFrames, 2*maxDecoderSpanFrames
	}
	return max(1, min(frames/window, span/(window+2*DefaultDecoderMargin)))
}

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

// Model is a voice loaded into an engine.
type Model struct {
	engine   *Engine
	name     string
	cfg      ModelConfig
	io       modelIO
	maxBatch int
	// maxBatchPhonemes caps a batch's sentences x longest sentence (Options.MaxBatchPhonemes, or its default for
	// whole sentences or a split voice's acoustic batches).
	maxBatchPhonemes int
	runners          []runner // one per CPU worker; one shared by all workers on a GPU
	split            *splitModel
}

// splitModel is a voice run in two parts: acoustic batches of whole sentences, then decoder windows.
type splitModel struct {
	voice    *splitVoice
	window   windowing     // the engine's window size, with this voice's margin
	acoustic []graphRunner // like Model.runners
	text     []graphRunner // none, or like decoder: the text part, when voice.text is set
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
	device            Device
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
	acousticOnCPU     bool   // split voices run their acoustic part on CPU sessions, one per worker
	acousticCPU       int    // with acousticOnCPU: workers (the first ones) whose acoustic session is on the CPU; the rest use the GPU
	text              Device // with acousticOnCPU: where split voices' text part runs (text.go): cpu (not cut apart), the GPU, or auto
	half              bool   // split voices' flow and decoder compute in float16 (half.go)
	paddingMasks      bool   // Load masks decoders' padding (mask.go)
	noStrips          bool   // Options.NoStrips
	tailTile          int    // tail input samples per tile of a CPU engine's one-sentence runs (tail.go); 0: whole sentences
	textPiece         int    // Options.TextPiece resolved: sentences per CPU text run, 0 = the whole batch
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
	if !ortReady() {
		return nil, errors.New("gpu: NewEngine before Init: the ONNX Runtime library is not loaded")
	}
	return newEngine(opts, ortBackend{providerOptions: opts.ProviderOptions, profilePrefix: opts.ProfilePrefix,
		sessionArenas: opts.SessionArenas})
}

func newEngine(opts Options, b backend) (*Engine, error) {
	logf := opts.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	for name, v := range map[string]int{"Threads": opts.Threads, "MaxBatch": opts.MaxBatch, "QueueSize": opts.QueueSize,
		"ThreadsPerSession": opts.ThreadsPerSession, "InFlight": opts.InFlight, "MaxBatchPhonemes": opts.MaxBatchPhonemes,
		"DecoderMargin": opts.DecoderMargin, "DecoderBatch": opts.DecoderBatch, "AcousticGPUWorkers": opts.AcousticGPUWorkers} {
		if v < 0 {
			return nil, fmt.Errorf("gpu: option %s is %d; want 0 (default) or more", name, v)
		}
	}

	if opts.TailTile < -1 || opts.TailTile > maxTailTile {
		return nil, fmt.Errorf("gpu: option TailTile is %d; want -1 (off), 0 (default) or up to %d", opts.TailTile, maxTailTile)
	}
	switch opts.Precision {
	case "", PrecisionFloat32, PrecisionFloat16:
	default:
		return nil, fmt.Errorf("gpu: unknown precision %q (want %s or %s)", opts.Precision, PrecisionFloat32, PrecisionFloat16)
	}
	switch opts.Upsampling {
	case UpsamplingDefault, UpsamplingConvTranspose, UpsamplingPolyphase:
	default:
		return nil, fmt.Errorf("gpu: unknown upsampling %q (want %s or %s)", opts.Upsampling, UpsamplingConvTranspose, UpsamplingPolyphase)
	}
	device, err := selectDevice(opts.Device, b, logf)
	if err != nil {
		return nil, err
	}
	// Compared with the device in use, so that "auto" that found WebGPU takes "webgpu" parts.
	if opts.AcousticDevice != "" && opts.AcousticDevice != DeviceCPU && opts.AcousticDevice != device {
		return nil, fmt.Errorf("gpu: acoustic device %q: it runs on the engine's device (%s) or on cpu", opts.AcousticDevice, device)
	}
	if opts.TextDevice != "" && opts.TextDevice != DeviceCPU && opts.TextDevice != DeviceAuto && opts.TextDevice != device {
		return nil, fmt.Errorf("gpu: text device %q: it runs on the engine's device (%s), on cpu, or auto", opts.TextDevice, device)
	}
	e := &Engine{
		backend: b,
		device:  device,
		logf:    logf,
		now:     time.Now,
		done:    make(chan struct{}),
		// Masks are on unless turned off: an option's zero value is the default.
		paddingMasks: !opts.NoPaddingMasks,
		noStrips:     opts.NoStrips,
		textPiece:    max(0, cmp.Or(opts.TextPiece, DefaultTextPiece)),
	}
	e.work = sync.NewCond(&e.mu)
	e.half = opts.Precision == PrecisionFloat16 && device != DeviceCPU
	e.upsampling = cmp.Or(opts.Upsampling, DefaultUpsampling(device))
	threads := cmp.Or(opts.Threads, runtime.NumCPU())
	if device == DeviceCPU {
		e.threadsPerSession = min(cmp.Or(opts.ThreadsPerSession, DefaultThreadsPerSession), threads)
		e.workers = max(1, threads/e.threadsPerSession)
		e.sessionsPerModel = e.workers
		e.maxBatch = cmp.Or(opts.MaxBatch, DefaultCPUMaxBatch)
		e.maxBatchPhonemes = cmp.Or(opts.MaxBatchPhonemes, DefaultCPUMaxBatchPhonemes)
		if e.maxBatch == 1 && opts.TailTile >= 0 {
			e.tailTile = cmp.Or(opts.TailTile, DefaultTailTile)
		}
	} else {
		// One session on the device, shared by InFlight workers: ORT sessions may be run concurrently, and a
		// second copy of the weights on the device would buy nothing.
		e.threadsPerSession = threads
		e.workers = cmp.Or(opts.InFlight, DefaultInFlight)
		e.sessionsPerModel = 1
		e.maxBatch = cmp.Or(opts.MaxBatch, DefaultGPUMaxBatch)
		e.maxBatchPhonemes = cmp.Or(opts.MaxBatchPhonemes, DefaultGPUMaxBatchPhonemes)
	}
	if window := cmp.Or(opts.DecoderWindow, DefaultDecoderWindow(device)); window > 0 {
		e.window = windowing{frames: window, margin: cmp.Or(opts.DecoderMargin, DefaultDecoderMargin)}
		e.marginSet = opts.DecoderMargin > 0
		e.decoderBatch = cmp.Or(opts.DecoderBatch, defaultDecoderBatch(window, e.half))
		if cmp.Or(opts.AcousticDevice, DefaultAcousticDevice(device)) == DeviceCPU && device != DeviceCPU {
			e.acousticOnCPU = true
			e.workers = max(e.workers, threads)
			e.acousticCPU = e.workers
			e.workers += opts.AcousticGPUWorkers
			e.text = cmp.Or(opts.TextDevice, DefaultTextDevice(device))
			e.splitMaxBatch = cmp.Or(opts.MaxBatch, DefaultSplitGPUMaxBatch)
			e.splitMaxBatchPh = cmp.Or(opts.MaxBatchPhonemes, DefaultSplitGPUMaxBatchPhonemes)
		}
	}
	if e.splitMaxBatch == 0 {
		e.splitMaxBatch, e.splitMaxBatchPh = e.maxBatch, e.maxBatchPhonemes
	}
	// Four batches for every worker (1,024 sentences on the H200 with a split voice), so that the batch each
	// worker takes is picked from many lengths: measured there against 256, 512 and 2,048 (BENCHMARKS.md, eleventh
	// session), short sentences padded 4% against 28% with just every worker's batch queued, and 5,000 prompts ran
	// at 1,084x against 853x in 1.7 GiB against 1.4 GiB. (The 6.9 GiB such a prompt set once held was WAV
	// encoders', not the engine's.) On a CPU, batch 1, it is the floor of 64.
	e.slots = make(chan struct{}, cmp.Or(opts.QueueSize, max(64, 4*e.workers*e.maxBatch)))
	e.workersDone.Add(e.workers)
	for w := range e.workers {
		go e.runWorker(w)
	}
	return e, nil
}

// selectDevice resolves "auto" to the first device that starts and checks that an explicit GPU device starts.
func selectDevice(want Device, b backend, logf func(string, ...any)) (Device, error) {
	switch want {
	case DeviceCPU:
		return DeviceCPU, nil
	case DeviceCUDA, DeviceWebGPU:
		if err := b.probe(want, false); err != nil {
			return "", fmt.Errorf("gpu: device %s does not start: %w", want, err)
		}
		return want, nil
	case DeviceAuto, "":
		var failures []string
		for _, candidate := range []Device{DeviceCUDA, DeviceWebGPU} {
			err := b.probe(candidate, true)
			if err == nil {
				return candidate, nil
			}
			if !errors.Is(err, errProviderMissing) { // present but broken: say so; absent: CPU is simply the device
				failures = append(failures, fmt.Sprintf("%s: %v", candidate, err))
			}
		}
		if len(failures) > 0 {
			logf("gpu: no GPU provider started, using cpu (%s)", strings.Join(failures, "; "))
		}
		return DeviceCPU, nil
	default:
		return "", fmt.Errorf("gpu: unknown device %q (want auto, cpu, webgpu or cuda)", want)
	}
}

// Device is the device actually in use, after auto selection.
func (e *Engine) Device() Device { return e.device }

// Workers is how many batches the engine runs at once.
func (e *Engine) Workers() int { return e.workers }

// QueueSize is how many sentences the engine takes (queued and running) before Submit blocks: what a caller with
// many sentences keeps in flight so that every worker and device batch is fed.
func (e *Engine) QueueSize() int { return cap(e.slots) }

// Load prepares a voice model (ONNX bytes of a Piper-format voice) for this engine: it adds the duration output
// that batching needs (see prepareGraph) and creates the engine's sessions for it.
func (e *Engine) Load(name string, onnxModel []byte, cfg ModelConfig) (*Model, error) {
	graph, io, err := prepareGraph(onnxModel)
	if err != nil {
		return nil, fmt.Errorf("gpu: loading voice %q: %w", name, err)
	}
	if cfg.NumSpeakers > 1 && !io.hasSpeaker {
		return nil, fmt.Errorf("gpu: loading voice %q: config says %d speakers but the graph has no %q input",
			name, cfg.NumSpeakers, inputSpeaker)
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
				if reach, err := decoderReach(onnxModel); err == nil {
					split.window.margin = reach
				} else {
					e.logf("gpu: voice %q: decoder windows read %d frames of margin (the default): its receptive field is unknown: %v",
						name, e.window.margin, err)
				}
			}
			if e.device != DeviceCPU {
				if err := e.warmUp(m); err != nil {
					m.close()
					return nil, fmt.Errorf("gpu: loading voice %q: warming up on %s: %w", name, e.device, err)
				}
			}
			split.warmUpDeviceTimes = split.deviceTimes()
			return e.register(m)
		}
		e.logf("gpu: voice %q runs whole sentences, not decoder windows: %v", name, err)
	}
	if !io.hasFrames {
		m.maxBatch = 1
		e.logf("gpu: voice %q has no duration Ceil node; running it one sentence at a time (correct, slower)", name)
	}
	if masks {
		if masked, _, err := maskWholeGraph(graph); err == nil {
			graph = masked
		} else {
			e.logf("gpu: voice %q: no padding masks for its decoder (%v); in a batch, the ends of its shorter sentences may differ slightly from running them alone", name, err)
		}
	}
	if e.tailTile > 0 && e.window.frames == 0 && io.hasFrames {
		tiled, err := e.loadTiled(name, graph, io)
		if err == nil {
			m.runners = tiled
			return e.register(m)
		}
		if !errors.Is(err, errNoDecoder) { // not a VITS voice: nothing to tile, nothing to say
			e.logf("gpu: voice %q: its decoder runs whole sentences, not tiles: %v", name, err)
		}
	}
	if graph, err = e.rewriteUpsampling(name, graph, e.device); err != nil {
		return nil, err
	}
	if e.device != DeviceCPU {
		graph = gpuGraph(graph)
	}
	for i := range e.sessionsPerModel {
		r, err := e.backend.newRunner(graph, io, e.device, e.threadsPerSession)
		if err != nil {
			closeRunners(m.runners)
			return nil, fmt.Errorf("gpu: loading voice %q: session %d of %d on %s: %w",
				name, i+1, e.sessionsPerModel, e.device, err)
		}
		m.runners = append(m.runners, r)
	}
	return e.register(m)
}

// loadTiled cuts a voice for tiled decoder tails (tail.go) and makes a runner of a head and a tail session for each
// of the engine's sessions.
func (e *Engine) loadTiled(name string, graph []byte, io modelIO) ([]runner, error) {
	tc, err := cutTail(graph)
	if err != nil {
		return nil, err
	}
	head, err := e.rewriteUpsampling(name, tc.head, e.device)
	if err != nil {
		return nil, err
	}
	tail, err := e.rewriteUpsampling(name, tc.tail, e.device)
	if err != nil {
		return nil, err
	}
	tile := roundUp(e.tailTile, tc.perFrame) // tiles and their margins are whole frames (tail.go)
	var runners []runner
	for range e.sessionsPerModel {
		h, err := e.backend.newGraphRunner(head, io.inputNames(), tc.headOutputs(), e.device, e.threadsPerSession)
		if err != nil {
			closeRunners(runners)
			return nil, fmt.Errorf("head session: %w", err)
		}
		t, err := e.backend.newGraphRunner(tail, tc.tailInputs(), []string{outputAudio}, e.device, e.threadsPerSession)
		if err != nil {
			h.close()
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
func (e *Engine) needsPaddingMasks(name string, graph []byte, io modelIO) bool {
	if !e.paddingMasks || !io.hasFrames || (e.maxBatch <= 1 && e.window.frames == 0) {
		return false
	}
	self, err := e.decoderMasksItself(graph)
	switch {
	case errors.Is(err, errNoDecoder):
		return false
	case err != nil:
		e.logf("gpu: voice %q: masking its decoder's padding, since probing whether it masks it itself failed: %v", name, err)
		return true
	}
	return !self
}

// rewriteUpsampling applies the engine's upsampling choice (see upsample.go) to a graph that runs on device d.
func (e *Engine) rewriteUpsampling(name string, graph []byte, d Device) ([]byte, error) {
	if e.upsampling != UpsamplingPolyphase {
		return graph, nil
	}
	rewritten, _, left, err := rewriteUpsampling(graph, convChannelsLast(d))
	if err != nil {
		return nil, fmt.Errorf("gpu: loading voice %q: rewriting its upsampling: %w", name, err)
	}
	if left > 0 {
		e.logf("gpu: voice %q: %d ConvTranspose node(s) outside what polyphase upsampling covers run as they are", name, left)
	}
	return rewritten, nil
}

// gpuGraph is graph as a GPU session runs it: with its LayerNorms fused (layernorm.go) and its additions of zeros
// dropped (zeros.go), where either applies. A graph neither can read is left to the session's creation to report.
func gpuGraph(graph []byte) []byte {
	for _, rewrite := range []func([]byte) ([]byte, int, error){fuseLayerNorms, dropZeroAdds} {
		if rewritten, _, err := rewrite(graph); err == nil {
			graph = rewritten
		}
	}
	return graph
}

// loadSplit cuts a voice at the decoder's latent, masks the decoder's padding if told to (mask.go), and creates
// sessions for the parts. With the acoustic part on the CPU, a voice's flow (a VITS voice's frame-rate layers
// before the decoder) is cut out too and runs on the GPU: on the CPU it took half of a Piper medium voice's
// acoustic time and capped the H200 at 441x real time; cut out, 709x (BENCHMARKS.md).
func (e *Engine) loadSplit(name string, graph []byte, masks bool) (*splitModel, error) {
	voice, err := splitGraph(graph, e.acousticOnCPU)
	if err != nil {
		return nil, err
	}
	if masks {
		if masked, _, err := maskDecoderGraph(voice.decoder); err == nil {
			voice.decoder, voice.decoderMasked = masked, true
		} else {
			e.logf("gpu: voice %q: no padding masks for its decoder (%v); the first and last samples of its sentences may differ slightly from running them alone", name, err)
		}
	}
	// The acoustic part's form follows its CPU sessions, GPU acoustic workers' too (a VITS acoustic part has no
	// ConvTranspose; only its speed on the GPU would differ).
	acousticDevice := e.device
	if e.acousticOnCPU {
		acousticDevice = DeviceCPU
	}
	if voice.acoustic, err = e.rewriteUpsampling(name, voice.acoustic, acousticDevice); err != nil {
		return nil, err
	}
	if voice.decoder, err = e.rewriteUpsampling(name, voice.decoder, e.device); err != nil {
		return nil, err
	}
	if e.half {
		for _, part := range []struct {
			name  string
			graph *[]byte
		}{{"flow", &voice.flow}, {"decoder", &voice.decoder}} {
			if *part.graph == nil {
				continue
			}
			if half, err := halfPrecision(*part.graph); err == nil {
				*part.graph = half
			} else {
				e.logf("gpu: voice %q: its %s stays float32: %v", name, part.name, err)
			}
		}
	}
	s := &splitModel{voice: voice}
	if e.text != "" && e.text != DeviceCPU {
		if err := e.loadText(name, s); err != nil {
			e.logf("gpu: voice %q runs its text encoder on the CPU: %v", name, err)
		}
	}
	decoderInputs := voice.decoderInputNames()
	acousticSessions, acousticDevice, acousticThreads := e.sessionsPerModel, e.device, e.threadsPerSession
	if e.acousticOnCPU {
		acousticSessions, acousticDevice, acousticThreads = e.workers, DeviceCPU, 1
	}
	// The graph for the sessions on a GPU (all of them, or the GPU acoustic workers'), rewritten once.
	acousticOnGPU := voice.acoustic
	if acousticDevice != DeviceCPU || e.acousticOnCPU && e.acousticCPU < acousticSessions {
		acousticOnGPU = gpuGraph(voice.acoustic)
	}
	for i := range acousticSessions {
		device, threads, graph := acousticDevice, acousticThreads, voice.acoustic
		if e.acousticOnCPU && i >= e.acousticCPU { // AcousticGPUWorkers
			device, threads = e.device, e.threadsPerSession
		}
		if device != DeviceCPU {
			graph = acousticOnGPU
		}
		a, err := e.backend.newGraphRunner(graph, voice.acousticInputNames(), voice.acousticOutputs(), device, threads)
		if err != nil {
			s.close()
			return nil, fmt.Errorf("acoustic session on %s: %w", device, err)
		}
		s.acoustic = append(s.acoustic, a)
	}
	if voice.flow != nil {
		// Made at their first run (on a GPU, Load's warm-up), when the acoustic part's outputs say the ranks of the
		// flow's inputs (rankedRunner).
		flow := voice.flow
		if e.device != DeviceCPU {
			flow = gpuGraph(flow)
		}
		for range e.sessionsPerModel {
			s.flow = append(s.flow, newRankedRunner(flow, voice.flowInputs, func(graph []byte) (graphRunner, error) {
				f, err := e.backend.newGraphRunner(graph, voice.flowInputs, []string{outputLatent}, e.device, e.threadsPerSession)
				if err != nil {
					return nil, fmt.Errorf("flow session: %w", err)
				}
				return f, nil
			}))
		}
	}
	for range e.sessionsPerModel {
		d, err := e.backend.newGraphRunner(voice.decoder, decoderInputs, []string{outputAudio}, e.device, e.threadsPerSession)
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
	cut, err := cutText(s.voice.acoustic)
	if err != nil {
		return fmt.Errorf("its acoustic part cannot be cut at the durations: %w", err)
	}
	var gpu, cpu []graphRunner
	fail := func(what string, err error) error {
		closeGraphRunners(slices.Concat(gpu, cpu))
		return fmt.Errorf("%s: %w", what, err)
	}
	onGPU := gpuGraph(cut.text)
	for range e.sessionsPerModel {
		t, err := e.backend.newGraphRunner(onGPU, cut.textInputs, cut.boundary, e.device, e.threadsPerSession)
		if err != nil {
			return fail("text part session on "+string(e.device), err)
		}
		gpu = append(gpu, t)
	}
	if e.text == DeviceAuto && runLock(e.device) != nil {
		for range e.acousticCPU {
			t, err := e.backend.newGraphRunner(cut.text, cut.textInputs, cut.boundary, DeviceCPU, 1)
			if err != nil {
				return fail("text part session on cpu", err)
			}
			cpu = append(cpu, t)
		}
	}
	var perRow []bool
	if len(cpu) > 0 {
		var ok bool
		perRow, ok, err = textPieceOutputs(cpu[0], cut, s.voice.io)
		if err != nil {
			return fail("trying the text part on the cpu", err)
		}
		if !ok {
			e.logf("gpu: voice %q: a text part output has its sentence axis where pieces of a batch cannot be joined: the CPU runs a batch's text part whole", name)
		}
	}
	s.voice.text, s.voice.acoustic, s.text, s.textCPU, s.textPerRow = cut, cut.expand, gpu, cpu, perRow
	return nil
}

func closeGraphRunners(runners []graphRunner) error {
	var errs []error
	for _, r := range runners {
		errs = append(errs, r.close())
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
	in := packBatch(batch, batch[0].model.io.hasSpeaker)
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
				errs = append(errs, fmt.Errorf("gpu: closing voice %q: %w", m.name, err))
			}
		}
		e.closeErr = errors.Join(errs...)
	})
	return e.closeErr
}
