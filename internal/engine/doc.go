// Package gpu runs Piper-format voice models on ONNX Runtime for many concurrent requests, batching by what the
// device likes. A whole corpus goes through one Engine: callers Submit sentences (phoneme ids) from any goroutine
// and each gets a channel that receives exactly one Result.
//
// # Flow
//
// Submit takes a place in a bounded queue (it blocks while the queue is full: backpressure, so a 100k-sentence
// corpus runs in bounded memory), and a fixed set of workers takes batches from it. The queue holds enough
// sentences to fill every worker's batch four times over (QueueSize), so a worker picks its batch's lengths from
// many; a caller with many sentences keeps that many in flight, as the pipeline does across all the texts of a
// job. Workers sleep on a condition variable when the queue is empty; nothing polls. A request whose context ends
// while it waits leaves the queue at once (context.AfterFunc) and gets ctx.Err(); Close fails what is still queued
// with ErrClosed, lets running batches finish, then frees the sessions.
//
// # Which requests share a batch
//
// The oldest queued request always runs next, so none starves. It takes with it the queued requests of the same
// voice and the same scales (the graph's scales input is one tensor per run) whose phoneme counts are nearest to
// its own, up to MaxBatch items and a budget of MaxBatchPhonemes on items x longest sequence. Near lengths keep the
// padding, which is wasted work, small; the budget bounds the size of one run's tensors, which is what broke WebGPU
// at batch 64 of 8-second sentences. The engine does not wait for a batch to fill: under load the queue is full
// anyway, and when it is not, waiting would only add latency.
//
// A padded item's audio is cut back to its own length with the durations: Load re-exports the graph with the
// duration predictor's Ceil output as an extra output "w_ceil", and an item's samples are sum(w_ceil) x hop, with
// hop = T / max frames in the batch (256 for Piper). A voice without that node runs one sentence per batch. When a
// batch of several fails (say, one sentence has a phoneme id the voice does not know), each item is retried alone
// so that only the bad one fails.
//
// # Devices
//
// On the CPU, parallelism comes from several sessions side by side, each with few intra-op threads
// (ThreadsPerSession, default 1): one VITS run does not scale across threads (on a 16-core machine 16 threads gave
// 56x real time against 12.7x for one thread), while independent runs do. So Threads/ThreadsPerSession workers
// each run their own session, one sentence at a time (MaxBatch default 1). Measured with BenchmarkEngine on
// 2 cores, default-voice architecture at full size (22.7 M parameters, random weights), 16 sentences of 43..303 ids,
// in x real time: 2 sessions x 1 thread: batch 1 8.6, batch 2 5.8, batch 4 4.2, batch 8 3.4; 1 session x 2
// threads: batch 1 6.8, batch 4 5.3. On the tiny voice: batch 1 342, batch 2 367, batch 4 255. A CPU batch saves
// only per-run overhead, which a full-size voice does not have, while its padding and larger working set cost
// real work.
//
// What keeps 16 sessions from 16 x one is memory traffic: on the H200 machine one ONNX Runtime Conv per core kept
// 86-87% of its lone speed with every core busy on cache-sized tensors and 67% on an 8-second sentence's
// (BenchmarkMachineScaling). So a CPU engine running one sentence at a time cuts each VITS voice at the input of
// its decoder's second-to-last upsampling layer (tail.go): the head runs on the whole sentence, the two largest
// stages on tiles of TailTile samples of that input with their receptive field as margin, one tile after another,
// which gives the whole sentence's audio. 16 sessions of the default voice: 183.5x real time against 151.5x whole,
// 81% of 16 x one session against 67%, a third of the memory (BENCHMARKS.md, seventh session).
//
// On a GPU (webgpu, cuda) one session is shared by InFlight workers (default 2), so that packing one batch and
// unpacking another overlap the device's work; whole-sentence batches are bigger (MaxBatch 16, at most 2,048
// padded phonemes). ONNX Runtime's WebGPU provider runs one Run at a time per process (its context has one command
// stream; two sessions running at once crashed ORT 1.30), so the engine serialises WebGPU runs, and the device
// idles while a run's inputs go up, its kernels are encoded and its output comes back: bigger runs amortise that,
// up to a cliff. The provider keeps freed GPU buffers of at most 160 MiB; a run whose largest tensor is bigger
// allocates GPU memory for every layer (measured on the H200: 2,048 phonemes per run 733x, 4,096 163x).
// "auto" tries cuda, then webgpu, then cpu: each GPU provider is probed by building and running a one-Conv graph,
// and one that does not start is reported through Options.Logf. An explicit GPU device that does not start is an
// error. The CUDA path is thin (provider options only) and unmeasured: no CUDA build of ONNX Runtime is at hand.
//
// Every device runs a voice's ConvTranspose upsampling rewritten at Load as polyphase Convs (upsample.go): the same
// sums through the providers' fast Conv kernels, measured faster on CPU and WebGPU. On WebGPU, which runs Conv
// channels last, the rewrite and the split graphs' declared input ranks let ONNX Runtime cancel the layout
// Transposes it wraps each Conv in (a Piper decoder kept 19, now 6; its flow 30, now 9): decoder device time 8-21%
// lower (BENCHMARKS.md, sixth session). GPU sessions' graphs are also rewritten where ONNX Runtime leaves WebGPU
// work that the CPU provider does not have: Piper's LayerNorms, exported as nine operators each, are fused into
// one (layernorm.go: 300 of a text part's dispatches; its run 17.6 ms instead of 22.3), and a WaveNet's skip sum
// no longer starts from a zero tensor uploaded from the CPU every run (zeros.go: the flow's device time -30%).
//
// # Continuous batching (decoder windows)
//
// Whole-sentence batches make a GPU wait for the longest sentence and change shape every run. For VITS-family
// voices the engine can instead cut the graph in two at Load, in Go: the acoustic part (text encoder, durations,
// frame decoder: everything before the input of "/dec/conv_pre/Conv", the latent [B, C, frames]) and the decoder
// (HiFi-GAN, most of the work). A worker runs the acoustic part on a length-bucketed batch, lays the batch's
// latents end to end in a strip, DecoderMargin frames of silence apart (window.go), and queues the strip as fixed
// windows of DecoderWindow frames, each reading DecoderMargin frames of context on both sides (zeros, with the
// latent's frame mask off, in the gaps and past the strip's ends): a sentence's last window is filled by the next
// sentence rather than by padding. Any worker then decodes up to
// DecoderBatch windows from whatever sentences are waiting, in one run padded with silent windows to a power of
// two (or DecoderBatch), so the device sees a handful of shapes, compiled at Load by a warm-up; it keeps the middle
// of each window, and a sentence is delivered when its last window is in. Workers prefer a full run of windows, so
// sentences that hold a place in the queue finish first. Because every decoder stage of the default voice is masked
// by frame, the stitched audio equals the whole-sentence decoder's when the margin covers the receptive field
// (measured on the tiny voice: 10 frames suffice, 5e-7 difference; 8 frames of margin leave 6e-3, none 0.3).
// Load works the margin out from each voice's graph (reach.go: the kernel spans of its convolutions, divided by
// the upsampling so far, summed along the decoder; 13 frames for the default voice's architecture).
//
// Piper's own decoders are not masked: in a padded batch or a window reaching past a sentence, the padding leaks
// into the sentence's first and last samples. Load probes each decoder on the CPU (a random latent alone and
// padded) and, when it leaks, multiplies every decoder convolution's input by the sentence's mask at that
// convolution's rate (mask.go), so that batched and windowed audio equal batch-1 audio for Piper voices too.
//
// A VITS voice's normalising flow (Piper's: WaveNet couplings over frames, nodes named "/flow/") also runs at the
// frame rate, before the decoder. With the acoustic part on the CPU, Load cuts the flow out as a third graph that
// runs on the GPU over each acoustic batch (frames padded to a multiple of 64, which the flow masks): on the CPU it
// made a Piper medium voice CPU-bound at 322-441x real time on the H200; cut out, 709x (256 concurrent requests).
//
// That left the text encoder (a transformer in Piper's voices, ~98% of what remained on the CPU) keeping every core
// busy. So Load also cuts the acoustic part at the durations (text.go): the token-rate part, whose shapes the
// phoneme ids fix, can run on the GPU over whole batches, and the expansion to frames (a few ms, shapes from the
// durations) stays on the CPU. With TextDevice auto, the default on WebGPU, a worker runs its batch's text part on
// the GPU when no run holds or waits for the device and on its own CPU session otherwise, so that whichever of the
// two has time takes it. A CPU run of a batch's text part takes a core over a second with a Piper medium voice, and
// when every worker was in one the device idled (9-13% of every run on the H200): with TextPiece the CPU runs it
// a few sentences at a time, handing the rest to the GPU as soon as the GPU goes idle between pieces. A split
// voice's WebGPU runs are timed while they hold the device (StageStats.DeviceSeconds): on the H200
// the device's time adds up to the wall time, so the serialised runs are the limit, and within a decoder run the
// GPU's own kernels take 55-70% (their timestamps; the rest is moving the latent up and the audio back, which is
// why runners hand ONNX Runtime ready output tensors, ort.go). Precision fp16 (half.go) runs the flow and decoder in
// float16 there: 20% less device time per decoder window and twice the windows per run; a Piper medium graph
// 1,001-1,080x real time against 822-870x in float32 (BENCHMARKS.md, sixth session).
//
// It is the default on WebGPU, with the acoustic part on CPU sessions (AcousticDevice): on the H200 the acoustic
// part took as much GPU time as the decoder (small sequential operators, host round trips for shapes and noise)
// though it is 8% of the work on a CPU, and beside the decoder windows on the GPU it costs nothing there. Measured
// (default voice, BENCHMARKS.md): 1,093x real time with 256 concurrent requests (934-974x with 64), against
// 733-760x for the best whole-sentence batches; first audio of a one-sentence request 27 ms p50, 46 ms p99. On
// the CPU whole sentences one at a time measured fastest (full-size voice, 2 cores: acoustic batch 4 with 128-frame
// windows 2 per run 7.8x, 64-frame windows 4 per run 5.6x, against 8.6x for whole sentences one at a time and 4.2x
// for whole-sentence batches of 4), so it is off there (DecoderWindow -1 turns it off anywhere). A voice that
// cannot be split runs whole sentences, with a Logf note.
// A Result carries a sentence's whole audio; a Request with a Stream also gets it in order while its windows are
// decoded (each time the decoded windows reach further from the sentence's start), so a long sentence's first
// audio comes out before its last window is decoded. The engine never blocks on a stream: a chunk that finds it
// full goes with a later one, and Result.Streamed says how much went. `ttsgen bench` streams each request's first
// sentence and reports its first chunk as first_audio_ms.
package engine
