// Package engine runs Piper-format voices for many concurrent requests, batching by what the device likes: callers
// Submit sentences (phoneme ids) from any goroutine and each gets a channel that receives exactly one Result. It
// decides what runs together and where; package vits cuts a voice's graph, package onnxgraph rewrites it for the
// device, and package ort runs it.
//
// # Queue and workers
//
// Submit takes a place in a bounded queue (it blocks while the queue is full: backpressure, so a corpus of any size
// runs in bounded memory), sized to fill every worker's batch four times over so that a worker picks its batch's
// lengths from many. Workers sleep on a condition variable while there is nothing to do; nothing polls. A request
// whose context ends while it waits leaves the queue at once (context.AfterFunc) and gets ctx.Err(); Close fails
// what is still queued with ErrClosed, lets running batches finish, then frees the sessions.
//
// # Which requests share a batch
//
// The oldest queued request always runs next, so none starves. It takes with it the queued requests of the same
// voice and scales (one tensor per run) whose phoneme counts are nearest to its own, up to a batch cap and a budget
// on sentences x longest sentence: near lengths keep padding, which is wasted work, small; the budget bounds one
// run's tensors. The engine never waits for a batch to fill. A padded sentence's audio is cut back to its own
// length with the durations (vits.PrepareGraph exposes them as "w_ceil"); a voice without them runs one sentence
// per batch. When a batch of several fails, each sentence is retried alone, so that only a bad one fails.
//
// # Devices
//
// On the CPU, parallelism comes from sessions side by side, one thread each, each running one sentence at a time:
// one VITS run does not scale across threads while independent runs do, and a CPU batch saves little but adds
// padding. Their decoder's last two stages run on tiles that stay in a core's cache (tail.go). On a GPU, one
// session is shared by a few workers so that packing and unpacking overlap the device's work; "auto" tries cuda,
// then webgpu, then cpu. WebGPU runs one session at a time per process, so its runs are serialised
// (ort.RunLock).
//
// # Continuous batching (decoder windows)
//
// Whole-sentence batches make a GPU wait for the longest sentence and change shape every run. So, on WebGPU, Load
// cuts a VITS voice at its decoder's latent (vits.SplitGraph): a worker runs the acoustic part (on CPU sessions)
// on a batch of sentences, lays their latents end to end in a strip, margin frames of silence apart, and queues the
// strip as fixed windows that read the decoder's receptive field as margin on both sides (window.go). Any worker
// then decodes windows from whatever sentences are waiting, in runs padded to a few shapes, keeps each window's
// middle, and a sentence is delivered when its last window is in. Workers prefer a full run of windows, so that
// sentences already holding a place finish first. The flow and the text encoder, cut out too, run on the GPU
// (the text encoder whenever the GPU is idle, else on the worker's CPU session). Decoders that do not mask their
// padding, such as Piper's, get masks at Load (masks.go), so that batched and windowed audio equal a sentence's
// audio alone. A Request with a Stream gets the sentence's audio in order while its windows are decoded, without
// ever blocking the engine.
//
// Options are what a user chooses; Tuning holds the knobs the benchmarks measure.
package engine
