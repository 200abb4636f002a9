package engine

import "github.com/ttsgen/ttsgen/internal/ort"

// Options configure an Engine: what a user chooses. Zero values pick the documented defaults for the device in use.
type Options struct {
	Device  ort.Device
	Threads int // CPU threads to use in total (0 = runtime.NumCPU())
	// Precision is the arithmetic of split voices' frame-rate parts on a GPU, the flow and the decoder: "fp16"
	// rewrites them at Load to compute in float16 (onnxgraph.HalfPrecision; their inputs and outputs stay float32),
	// for a GPU whose provider has float16 kernels, such as WebGPU with shader-f16 ("" = fp32). A graph the rewrite
	// refuses stays float32, with a Logf note. Ignored on the CPU, whose provider lacks float16 kernels, and
	// wherever voices run whole sentences (decoder windows off).
	Precision Precision
	// QueueSize bounds the sentences the engine holds, queued and running: Submit blocks (backpressure) when it is
	// full, until ctx is done (0 = 4 x workers x the batch size, at least 64).
	QueueSize int
	Logf      func(format string, args ...any) // warnings (e.g. GPU fallback); nil = silent

	// Tuning changes the engine's defaults, to measure something else (`ttsgen bench --tune`).
	Tuning Tuning
}

// Tuning is the engine's knobs beyond Options. Zero values pick the documented defaults for the device in use.
type Tuning struct {
	// MaxBatch caps the sentences per device batch (0 = DefaultCPUMaxBatch on cpu, DefaultGPUMaxBatch on a GPU,
	// DefaultSplitGPUMaxBatch there for split voices' acoustic batches run on the CPU).
	MaxBatch int
	// ThreadsPerSession is the intra-op thread count of each CPU session; the engine runs
	// Threads/ThreadsPerSession sessions side by side (0 = DefaultThreadsPerSession).
	ThreadsPerSession int
	// InFlight is how many batches a GPU engine keeps running at once, so packing and unpacking one batch
	// overlaps the device running another (0 = DefaultInFlight). Ignored on cpu.
	InFlight int
	// MaxBatchPhonemes caps batch size x longest phoneme sequence in a batch: the padded input, and so (roughly)
	// the audio and activation memory one run needs (0 = DefaultCPUMaxBatchPhonemes, DefaultGPUMaxBatchPhonemes,
	// or DefaultSplitGPUMaxBatchPhonemes on a GPU engine for split voices' acoustic batches run on the CPU). A
	// single sentence longer than the cap still runs, alone.
	MaxBatchPhonemes int

	// DecoderWindow turns on continuous batching for voices that can be split at the decoder's latent (see
	// doc.go): the decoder runs on windows of this many frames drawn from many sentences at once (0 = the
	// device's default, DefaultDecoderWindow; < 0 = off).
	DecoderWindow int
	// DecoderMargin is the frames of context each window reads on either side, and the frames of silence between
	// two sentences in a strip; it must cover the decoder's receptive field, or seams show and a sentence's end
	// hears the next one's start (0 = each voice's own, worked out from its graph at Load (vits.DecoderReach), or
	// DefaultDecoderMargin when the graph has layers that cannot be read).
	DecoderMargin int
	// DecoderBatch is the most windows per decoder run (0 = DefaultDecoderFrames, or DefaultHalfDecoderFrames for
	// Precision fp16, divided by the window; fewer for short windows, whose margins weigh more: see
	// defaultDecoderBatch).
	DecoderBatch int

	// Upsampling chooses how the decoder's ConvTranspose layers run: as they are, or rewritten at Load as
	// polyphase Convs (onnxgraph.RewriteUpsampling), the same sums through the provider's fast Conv kernel ("" =
	// the device's default).
	Upsampling Upsampling
	// ProviderOptions are passed to the GPU execution provider (see ort.Sessions).
	ProviderOptions map[string]string
	// AcousticDevice is where split voices run their acoustic part: "cpu" on a GPU engine runs it on CPU sessions
	// (one per worker, one thread each, with as many workers as Threads) and only the decoder windows on the GPU.
	// The acoustic part is small, sequential work with shape computations that a GPU provider runs slowly and
	// with round trips to the host, while the CPU cores would otherwise idle ("" = DefaultAcousticDevice).
	AcousticDevice ort.Device
	// TextDevice is where split voices with the acoustic part on the CPU run its token-rate part, the text encoder
	// and duration predictor (vits.CutText): "cpu" keeps the whole acoustic part on the CPU; the engine's GPU
	// device cuts the acoustic part at the durations, runs the text part there on whole batches and the rest
	// (expanding to frames) on the CPU; "auto" runs a batch's text part on the GPU when the GPU is free at that
	// moment and on the worker's CPU session otherwise, so that whichever of the two has time to spare takes it
	// ("" = DefaultTextDevice).
	TextDevice ort.Device
	// AcousticGPUWorkers, with the acoustic part on the CPU, adds this many workers that run it on the GPU (a
	// session each), taking batches as the CPU workers do: for a voice whose acoustic part keeps every core busy
	// while the GPU has time to spare (0 = none).
	AcousticGPUWorkers int
	// NoPaddingMasks runs voices' decoders as exported, without the padding masks that Load adds to decoders that
	// do not mask themselves, such as Piper's (vits.MaskWholeGraph): in a batch or a window, what lies beyond a
	// sentence then leaks into its first and last samples, as in Piper's own batches. For measuring what the
	// masks cost, and for a baseline run the way Piper runs.
	NoPaddingMasks bool
	// TailTile is how a CPU engine running one sentence at a time (MaxBatch 1, whole sentences: its default) runs
	// a voice's decoder: its last two upsampling stages on tiles of this many samples of their input, one tile
	// after another, so that their tensors stay in the core's cache (tail.go; 0 = DefaultTailTile, -1 = the whole
	// sentence in one run, as Piper runs it). Ignored elsewhere.
	TailTile int
	// NoStrips cuts decoder windows from each sentence alone rather than from strips of an acoustic batch's
	// sentences laid end to end (window.go): for measuring what strips save.
	NoStrips bool
	// TextPiece, with TextDevice auto, is how many sentences a worker's CPU session runs of a batch's text part at
	// a time when the GPU was busy: between pieces the worker hands the rest of the batch to the GPU if the GPU has
	// gone idle meanwhile (text.go). A whole batch's text part can take a CPU core long enough for the GPU to run
	// dry while every worker is in one, and a piece costs no more per sentence: the text part's work scales with
	// its sentences (0 = DefaultTextPiece; < 0 = the whole batch at once).
	TextPiece int
	// SessionArenas gives each CPU session its own memory arena, as ONNX Runtime does by default, rather than one
	// arena shared by all (ort.Sessions.OwnArenas): for measuring what sharing costs or saves.
	SessionArenas bool
	// ProfilePrefix, when set, turns on ONNX Runtime's profiler for every session (ort.Sessions.ProfilePrefix).
	ProfilePrefix string
}

// Precision is the arithmetic of a voice's frame-rate parts on a GPU; see Options.Precision.
type Precision string

const (
	PrecisionFloat32 Precision = "fp32"
	PrecisionFloat16 Precision = "fp16"
)

// Upsampling is how a voice's decoder upsamples; see Tuning.Upsampling.
type Upsampling string

const (
	UpsamplingDefault       Upsampling = ""              // the device's default (DefaultUpsampling)
	UpsamplingConvTranspose Upsampling = "convtranspose" // the voice's own ConvTranspose nodes
	UpsamplingPolyphase     Upsampling = "polyphase"     // ConvTranspose rewritten as Conv + interleave
)

// DefaultDecoderWindow is the decoder window each device runs unless told otherwise; 0 = whole sentences. Decoder
// windows with the acoustic part on the CPU measured fastest on WebGPU, whole sentences on the CPU; CUDA is
// unmeasured, so it takes the simplest path.
func DefaultDecoderWindow(d ort.Device) int {
	if d == ort.DeviceWebGPU {
		return DefaultGPUDecoderWindow
	}
	return 0
}

// DefaultAcousticDevice is where split voices run their acoustic part on device d unless told otherwise: on the
// CPU beside WebGPU (see Tuning.AcousticDevice), on d itself elsewhere.
func DefaultAcousticDevice(d ort.Device) ort.Device {
	if d == ort.DeviceWebGPU {
		return ort.DeviceCPU
	}
	return d
}

// DefaultTextDevice is where split voices run their text part (see Tuning.TextDevice) on device d unless told
// otherwise: auto beside WebGPU, where it measured fastest.
func DefaultTextDevice(d ort.Device) ort.Device {
	if d == ort.DeviceWebGPU {
		return ort.DeviceAuto
	}
	return ort.DeviceCPU
}

// convChannelsLast says whether ONNX Runtime runs Conv on device d with channels last ([N,T,C]), the layout the
// polyphase interleave is then written for (onnxgraph.RewriteUpsampling): WebGPU does; the CPU, and CUDA unless
// told prefer_nhwc, run [N,C,T].
func convChannelsLast(d ort.Device) bool { return d == ort.DeviceWebGPU }

// DefaultUpsampling is the upsampling each device runs unless told otherwise: polyphase everywhere, where it
// measured faster than the voices' own ConvTranspose.
func DefaultUpsampling(ort.Device) Upsampling {
	return UpsamplingPolyphase
}

// Defaults. The CPU ones were measured with BenchmarkEngine, the GPU ones through WebGPU (BENCHMARKS.md). ONNX
// Runtime's WebGPU provider keeps freed GPU buffers of at most 160 MiB and allocates anything larger afresh for
// every layer of every run, so a run whose largest tensor passes that falls off a cliff: the GPU budgets keep runs
// under it.
const (
	DefaultThreadsPerSession   = 1
	DefaultCPUMaxBatch         = 1
	DefaultCPUMaxBatchPhonemes = 2048
	DefaultGPUMaxBatch         = 16
	DefaultGPUMaxBatchPhonemes = 2048
	// A split voice's acoustic batches on a GPU engine hold no decoder, so they stay far from the provider's
	// buffer limit at twice the whole-sentence budget, and fewer, larger batches mean fewer flow and text runs on
	// the serialised device.
	DefaultSplitGPUMaxBatch         = 32
	DefaultSplitGPUMaxBatchPhonemes = 4096
	// DefaultTextPiece: a batch's text part on the CPU two sentences at a time (Tuning.TextPiece).
	DefaultTextPiece = 2
	DefaultInFlight  = 2

	// DefaultGPUDecoderWindow is the frames each decoder window decodes on WebGPU: long windows keep the margins a
	// small share of the work.
	DefaultGPUDecoderWindow = 512
	// DefaultDecoderMargin is the margin for a graph whose layers cannot be read; a voice's own is worked out from
	// its graph (vits.DecoderReach).
	DefaultDecoderMargin = 12
	// DefaultDecoderFrames is how many latent frames of windows (margins aside) a decoder run takes: 8 windows of
	// 512 frames, 16 of 256. The largest tensor of a float32 Piper medium decoder, 32 KiB per frame with margins,
	// then stays inside the provider's buffer cache (above); maxDecoderSpanFrames keeps it there for short windows,
	// whose margins are a larger share.
	DefaultDecoderFrames = 4096
	// DefaultHalfDecoderFrames is DefaultDecoderFrames for a float16 decoder (Precision fp16), whose activations
	// take half the bytes: 16 windows of 512 frames, 32 of 256.
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
