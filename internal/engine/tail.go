package engine

import (
	"errors"
	"fmt"
	"time"

	"github.com/ttsgen/ttsgen/internal/ort"
	"github.com/ttsgen/ttsgen/internal/vits"
)

// A CPU engine running one sentence at a time runs a VITS voice's decoder tail (its last two upsampling stages,
// vits.CutTail) on tiles of their input, one after another, so that their tensors stay in a core's cache while
// every core is busy; each tile reads the tail's receptive field as margin, so the tiles' middles are the whole
// sentence's audio.

// maxTailTile bounds Tuning.TailTile (a tile of it is hours of audio: one tile for any sentence).
const maxTailTile = 1 << 24

// DefaultTailTile is the cut tensor's samples per tile (Piper medium: 32 frames, 8,192 output samples, 1 MiB at the
// last stage's 32 channels).
const DefaultTailTile = 256

// tiledRunner runs one sentence at a time: the head on the whole sentence, then the tail tile by tile.
type tiledRunner struct {
	head, tail graphRunner
	io         vits.ModelIO
	cut        *vits.TailCut
	tile       int // tail input samples per tile: whole frames (cut.perFrame)
	// stats, when not nil, gets the head's and the tiles' run times apart (stages "head" and "tail"): where a
	// sentence's time goes, to see which part loses speed when every core is busy.
	stats *stageStats
	now   func() time.Time
}

func (r *tiledRunner) run(in batchInput) (batchOutput, error) {
	if in.size != 1 {
		return batchOutput{}, fmt.Errorf("a tiled decoder runs one sentence at a time, not %d", in.size)
	}
	headStart := r.clock()
	out, err := r.head.Run(acousticInputs(in, r.io))
	if err != nil {
		return batchOutput{}, fmt.Errorf("head: %w", err)
	}
	tailStart := r.clock()
	x, frames, extras := out[0], out[1], out[2:]
	if len(x.Shape) != 3 || x.Shape[0] != 1 || x.F32 == nil {
		return batchOutput{}, fmt.Errorf("head gave a tail input of shape %v; want [1, channels, samples]", x.Shape)
	}
	length := int(x.Shape[2])
	pf := r.cut.PerFrame
	if length%pf != 0 {
		return batchOutput{}, fmt.Errorf("head gave %d tail input samples, not whole frames of %d", length, pf)
	}
	for i, e := range extras {
		if n := len(e.Shape); n == 0 || e.F32 == nil || int(e.Shape[n-1]) < length/pf || int(e.Shape[n-1])%(length/pf) != 0 {
			return batchOutput{}, fmt.Errorf("head gave %s of shape %v, not a float ort.Tensor along the sentence's %d frames", r.cut.Extras[i], e.Shape, length/pf)
		}
	}
	audio := make([]float32, 0, length*r.cut.Rate)
	tiles, read := 0, 0 // tiles run, and the tail input samples they read, margins included
	for start := 0; start < length; start += r.tile {
		end := min(start+r.tile, length)
		lo, hi := max(start-r.cut.Reach, 0), min(end+r.cut.Reach, length)
		tiles, read = tiles+1, read+hi-lo
		inputs := []ort.Tensor{sliceLastAxis(x, lo, hi)}
		for _, e := range extras {
			perFrame := int(e.Shape[len(e.Shape)-1]) / (length / pf)
			inputs = append(inputs, sliceLastAxis(e, lo/pf*perFrame, hi/pf*perFrame))
		}
		y, err := r.tail.Run(inputs)
		if err != nil {
			return batchOutput{}, fmt.Errorf("tail, samples %d-%d of %d: %w", start, end, length, err)
		}
		samples := y[0].F32
		if len(samples) != (hi-lo)*r.cut.Rate {
			return batchOutput{}, fmt.Errorf("tail gave %d samples for %d inputs; want %d", len(samples), hi-lo, (hi-lo)*r.cut.Rate)
		}
		audio = append(audio, samples[(start-lo)*r.cut.Rate:(end-lo)*r.cut.Rate]...)
	}
	if r.stats != nil {
		r.stats.add(stageHead, 1, int(in.lengths[0]), in.width, headStart, tailStart)
		r.stats.add(stageTail, tiles, length/pf, read/pf, tailStart, r.clock())
	}
	return batchOutput{audio: audio, frames: frames.F32}, nil
}

func (r *tiledRunner) clock() time.Time {
	if r.now == nil {
		return time.Time{}
	}
	return r.now()
}

// sliceLastAxis returns t's positions [lo, hi) along its last axis.
func sliceLastAxis(t ort.Tensor, lo, hi int) ort.Tensor {
	n := int(t.Shape[len(t.Shape)-1])
	rows := len(t.F32) / n
	data := make([]float32, 0, rows*(hi-lo))
	for r := range rows {
		data = append(data, t.F32[r*n+lo:r*n+hi]...)
	}
	shape := append([]int64(nil), t.Shape...)
	shape[len(shape)-1] = int64(hi - lo)
	return ort.Tensor{Shape: shape, F32: data}
}

func (r *tiledRunner) Close() error {
	return errors.Join(r.head.Close(), r.tail.Close())
}
