package engine

import (
	"errors"
	"fmt"
	"time"

	"github.com/advancedclimatesystems/gonnx/onnx"
	"github.com/ttsgen/ttsgen/internal/onnxgraph"
	"github.com/ttsgen/ttsgen/internal/ort"
)

// Tiled decoder tails, for one sentence at a time on the CPU. A HiFi-GAN decoder's last two upsampling stages hold
// its largest tensors (Piper medium: 64 and 32 channels at 64 and 256 samples per frame, 11 and 22 MiB for an
// 8-second sentence), which a whole-sentence run streams through memory layer after layer; with every core busy,
// cores slow each other down far more on such tensors than on tensors that stay in a core's cache (see
// BenchmarkMachineScaling in internal/ort). So the voice is cut at the input of its second-to-last upsampling layer: the head (text
// encoder, durations, flow, the decoder's first stage) runs on the whole sentence as before, and the tail runs on
// tiles of that tensor, one after another, each with a margin of the tail's receptive field on both sides where
// the sentence has one. Every tile's middle is then what the whole-sentence tail computes: each output sample
// reads the same inputs, and at the sentence's own ends the tail's zero padding is the whole run's.

// maxTailTile bounds Options.TailTile (a tile of it is hours of audio: one tile for any sentence).
const maxTailTile = 1 << 24

// DefaultTailTile is the cut tensor's samples per tile (Piper medium: 32 frames, 8,192 output samples, 1 MiB at the
// last stage's 32 channels).
const DefaultTailTile = 256

// tailCut is a voice graph cut for tiled tails.
type tailCut struct {
	head, tail *onnx.ModelProto // head: the voice's inputs -> tailInput [1,C,L], the durations, extras; tail: tailInput, extras -> audio
	perFrame   int              // tail input samples per latent frame: tiles and margins are whole frames of it
	rate       int              // output samples per tail input sample
	reach      int              // tail input samples on either side that can change an output sample, in whole frames
	// extras are the other tensors the tail reads from the head, by their tail input names: a decoder that masks
	// itself (ttsgen's voices) reads its frame mask at each stage's rate. Each must run along the sentence at a
	// whole number of samples per frame; a tile reads the same frames of it.
	extras []string
}

// tailInput is the tail graph's input (the head graph's first output).
const tailInput = "tail_in"

// cutTail cuts a prepared voice graph (with its duration output) at the input of its decoder's second-to-last
// ConvTranspose, or fails when the decoder has fewer than two or its receptive field cannot be worked out.
func cutTail(model *onnx.ModelProto) (*tailCut, error) {
	g := model.GetGraph()
	latent, err := decoderLatent(g)
	if err != nil {
		return nil, err
	}
	var ups []*onnx.NodeProto
	err = walkDecoder(g, latent, func(node *onnx.NodeProto, _ int) error {
		if node.GetOpType() == "ConvTranspose" {
			ups = append(ups, node)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(ups) < 2 {
		return nil, fmt.Errorf("the decoder has %d upsampling layers; a tail needs two", len(ups))
	}
	cut := ups[len(ups)-2].GetInput()[0]
	tc := &tailCut{perFrame: 1, rate: 1}
	for i, up := range ups {
		_, stride, _, _, _ := convGeometry(up)
		if i < len(ups)-2 {
			tc.perFrame *= stride
		} else {
			tc.rate *= stride
		}
	}
	reach, err := reachFrom(g, cut)
	if err != nil {
		return nil, fmt.Errorf("the tail's receptive field: %w", err)
	}
	tc.reach = roundUp(reach, tc.perFrame)
	if durationCeil(g) == "" {
		return nil, errors.New("no duration Ceil node")
	}
	// What the tail reads from the head besides the cut: tensors computed from the voice's inputs (constants stay
	// in the tail) but not from the cut, read by the tail's nodes.
	fromInputs := map[string]bool{}
	for _, in := range g.GetInput() {
		fromInputs[in.GetName()] = true
	}
	for _, node := range g.GetNode() {
		for _, in := range node.GetInput() {
			if fromInputs[in] {
				for _, out := range node.GetOutput() {
					fromInputs[out] = true
				}
				break
			}
		}
	}
	fromCut := map[string]bool{cut: true}
	headOut := map[string]string{cut: tailInput, outputFrames: outputFrames}
	sources := map[string]string{cut: tailInput}
	err = walkDecoder(g, cut, func(node *onnx.NodeProto, _ int) error {
		for _, in := range node.GetInput() {
			if _, seen := sources[in]; !seen && fromInputs[in] && !fromCut[in] {
				name := fmt.Sprintf("%s_extra%d", tailInput, len(tc.extras))
				tc.extras = append(tc.extras, name)
				sources[in], headOut[in] = name, name
			}
		}
		for _, out := range node.GetOutput() {
			fromCut[out] = true
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	tc.head = onnxgraph.Cut(model, headOut, nil, onnxgraph.Declared{})
	tc.tail = onnxgraph.Cut(model, map[string]string{outputAudio: outputAudio}, sources,
		onnxgraph.Declared{Ranks: map[string]int{cut: 3}})
	if in := tc.tail.GetGraph().InputNames(); len(in) != 1+len(tc.extras) {
		return nil, fmt.Errorf("the tail reads %v, more than the cut ort.Tensor and %v", in, tc.extras)
	}
	return tc, nil
}

// headOutputs are the head graph's outputs, in order.
func (tc *tailCut) headOutputs() []string {
	return append([]string{tailInput, outputFrames}, tc.extras...)
}

// tailInputs are the tail graph's inputs, in order.
func (tc *tailCut) tailInputs() []string {
	return append([]string{tailInput}, tc.extras...)
}

// tiledRunner runs one sentence at a time: the head on the whole sentence, then the tail tile by tile.
type tiledRunner struct {
	head, tail graphRunner
	io         modelIO
	cut        *tailCut
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
	pf := r.cut.perFrame
	if length%pf != 0 {
		return batchOutput{}, fmt.Errorf("head gave %d tail input samples, not whole frames of %d", length, pf)
	}
	for i, e := range extras {
		if n := len(e.Shape); n == 0 || e.F32 == nil || int(e.Shape[n-1]) < length/pf || int(e.Shape[n-1])%(length/pf) != 0 {
			return batchOutput{}, fmt.Errorf("head gave %s of shape %v, not a float ort.Tensor along the sentence's %d frames", r.cut.extras[i], e.Shape, length/pf)
		}
	}
	audio := make([]float32, 0, length*r.cut.rate)
	tiles, read := 0, 0 // tiles run, and the tail input samples they read, margins included
	for start := 0; start < length; start += r.tile {
		end := min(start+r.tile, length)
		lo, hi := max(start-r.cut.reach, 0), min(end+r.cut.reach, length)
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
		if len(samples) != (hi-lo)*r.cut.rate {
			return batchOutput{}, fmt.Errorf("tail gave %d samples for %d inputs; want %d", len(samples), hi-lo, (hi-lo)*r.cut.rate)
		}
		audio = append(audio, samples[(start-lo)*r.cut.rate:(end-lo)*r.cut.rate]...)
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

func (r *tiledRunner) close() error {
	return errors.Join(r.head.Close(), r.tail.Close())
}
