package engine

import (
	"fmt"
	"math"

	"github.com/ttsgen/ttsgen/internal/ort"
	"github.com/ttsgen/ttsgen/internal/vits"
)

// backend creates what runs on a device. The ONNX Runtime one is ortBackend; tests swap in fakes so the scheduler
// can be tested deterministically without the library.
type backend interface {
	// probe checks that the device's provider starts: it builds a session for a tiny graph and runs it once. auto:
	// the device is a candidate of --device auto, which wants a real GPU (not one emulated on the CPU) or nothing.
	probe(d ort.Device, auto bool) error
	// newRunner creates a session for a prepared voice graph on device d.
	newRunner(graph []byte, io vits.ModelIO, d ort.Device, threads int) (runner, error)
	// newGraphRunner creates a session for one part of a split voice, with inputs and outputs in that order.
	newGraphRunner(graph []byte, inputs, outputs []string, d ort.Device, threads int) (graphRunner, error)
}

// runner runs padded batches of one voice. It must be safe to call run from several goroutines at once (a GPU
// engine shares one runner between its in-flight workers).
type runner interface {
	run(in batchInput) (batchOutput, error)
	Close() error
}

// ortBackend makes ONNX Runtime sessions (package ort).
type ortBackend struct{ sessions ort.Sessions }

func (b ortBackend) probe(d ort.Device, auto bool) error { return b.sessions.Probe(d, auto) }

func (b ortBackend) newRunner(graph []byte, io vits.ModelIO, d ort.Device, threads int) (runner, error) {
	// A whole voice's audio is as long as its durations say: no output plans.
	session, err := b.sessions.NewRunner(graph, io.InputNames(), io.OutputNames(), d, threads, false)
	if err != nil {
		return nil, err
	}
	return &wholeRunner{session: session, io: io}, nil
}

func (b ortBackend) newGraphRunner(graph []byte, inputs, outputs []string, d ort.Device, threads int) (graphRunner, error) {
	r, err := b.sessions.NewRunner(graph, inputs, outputs, d, threads, true)
	if err != nil {
		return nil, err
	}
	return r, nil
}

// wholeRunner runs a whole voice graph on padded batches.
type wholeRunner struct {
	session *ort.Runner
	io      vits.ModelIO
}

func (r *wholeRunner) run(in batchInput) (batchOutput, error) {
	outputs, err := r.session.Run(acousticInputs(in, r.io))
	if err != nil {
		return batchOutput{}, fmt.Errorf("running batch of %d x %d phonemes: %w", in.size, in.width, err)
	}
	audio := outputs[0]
	if audio.F32 == nil {
		return batchOutput{}, fmt.Errorf("output %q is int64, want float32", vits.OutputAudio)
	}
	if len(audio.Shape) == 0 || audio.Shape[0] != int64(in.size) {
		return batchOutput{}, fmt.Errorf("output %q has shape %v, want batch %d first", vits.OutputAudio, audio.Shape, in.size)
	}
	out := batchOutput{audio: audio.F32}
	if r.io.HasFrames {
		if outputs[1].F32 == nil {
			return batchOutput{}, fmt.Errorf("output %q is int64, want float32", vits.OutputFrames)
		}
		out.frames = outputs[1].F32
	}
	return out, nil
}

func (r *wholeRunner) Close() error { return r.session.Close() }

// batchInput is one device batch: size sequences of phoneme ids, zero-padded to width.
type batchInput struct {
	size, width int
	ids         []int64 // size x width, row-major
	lengths     []int64 // size: each item's own phoneme count
	speakers    []int64 // size; nil when the voice has a single speaker
	scales      Scales
}

// batchOutput is what the voice returned for a batch.
type batchOutput struct {
	audio  []float32 // size x samples, row-major: the graph's [B,1,1,T] flattened
	frames []float32 // size x width output frames per phoneme (w_ceil), zero on padding; nil if the graph has none
}

// packBatch lays a batch's requests out as the voice graph's padded input tensors.
func packBatch(batch []*item, withSpeakers bool) batchInput {
	in := batchInput{size: len(batch), scales: batch[0].req.Scales}
	for _, it := range batch {
		in.width = max(in.width, len(it.req.IDs))
	}
	in.ids = make([]int64, in.size*in.width)
	in.lengths = make([]int64, in.size)
	if withSpeakers {
		in.speakers = make([]int64, in.size)
	}
	for b, it := range batch {
		copy(in.ids[b*in.width:], it.req.IDs)
		in.lengths[b] = int64(len(it.req.IDs))
		if withSpeakers {
			in.speakers[b] = it.req.Speaker
		}
	}
	return in
}

// splitAudio cuts a batch's output back into each item's own samples. Padded items are longer than their own audio
// in the output and the graph pads them with near-silence, so each item's length comes from its durations:
// frames_b = sum(w_ceil[b]), samples_b = frames_b x hop, where hop = T / max_b(frames_b) (256 for Piper voices).
func splitAudio(in batchInput, out batchOutput) ([][]float32, error) {
	if in.size == 0 || len(out.audio)%in.size != 0 {
		return nil, fmt.Errorf("output has %d samples, not a whole number per item of a batch of %d", len(out.audio), in.size)
	}
	samples := len(out.audio) / in.size
	items := make([][]float32, in.size)
	if out.frames == nil {
		if in.size != 1 {
			return nil, fmt.Errorf("batch of %d without a duration output to split it", in.size)
		}
		items[0] = append([]float32(nil), out.audio...)
		return items, nil
	}
	if len(out.frames) != in.size*in.width {
		return nil, fmt.Errorf("duration output has %d values, want %d (batch %d x %d phonemes)",
			len(out.frames), in.size*in.width, in.size, in.width)
	}
	frames := make([]int, in.size)
	maxFrames := 0
	for b := range in.size {
		var sum float64
		for _, f := range out.frames[b*in.width : (b+1)*in.width] {
			sum += float64(f)
		}
		frames[b] = int(math.Round(sum))
		maxFrames = max(maxFrames, frames[b])
	}
	if maxFrames == 0 {
		// Every item predicted no frames; the graph still emits its minimum of one frame each, which is silence.
		for b := range items {
			items[b] = []float32{}
		}
		return items, nil
	}
	if samples%maxFrames != 0 {
		return nil, fmt.Errorf("output of %d samples per item is not a whole number of %d frames", samples, maxFrames)
	}
	hop := samples / maxFrames
	for b := range in.size {
		row := out.audio[b*samples : (b+1)*samples]
		items[b] = append([]float32(nil), row[:frames[b]*hop]...)
	}
	return items, nil
}
