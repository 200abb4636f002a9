package vits

import (
	"errors"
	"fmt"

	"github.com/advancedclimatesystems/gonnx/onnx"
	"github.com/ttsgen/ttsgen/internal/onnxgraph"
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

// TailCut is a voice graph cut for tiled tails.
type TailCut struct {
	Head, Tail *onnx.ModelProto // head: the voice's inputs -> TailInput [1,C,L], the durations, extras; tail: TailInput, extras -> audio
	PerFrame   int              // tail input samples per latent frame: tiles and margins are whole frames of it
	Rate       int              // output samples per tail input sample
	Reach      int              // tail input samples on either side that can change an output sample, in whole frames
	// extras are the other tensors the tail reads from the head, by their tail input names: a decoder that masks
	// itself (ttsgen's voices) reads its frame mask at each stage's rate. Each must run along the sentence at a
	// whole number of samples per frame; a tile reads the same frames of it.
	Extras []string
}

// TailInput is the tail graph's input (the head graph's first output).
const TailInput = "tail_in"

// CutTail cuts a prepared voice graph (with its duration output) at the input of its decoder's second-to-last
// ConvTranspose, or fails when the decoder has fewer than two or its receptive field cannot be worked out.
func CutTail(model *onnx.ModelProto) (*TailCut, error) {
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
	tc := &TailCut{PerFrame: 1, Rate: 1}
	for i, up := range ups {
		_, stride, _, _, _ := convGeometry(up)
		if i < len(ups)-2 {
			tc.PerFrame *= stride
		} else {
			tc.Rate *= stride
		}
	}
	reach, err := reachFrom(g, cut)
	if err != nil {
		return nil, fmt.Errorf("the tail's receptive field: %w", err)
	}
	tc.Reach = (reach + tc.PerFrame - 1) / tc.PerFrame * tc.PerFrame // whole frames
	if DurationCeil(g) == "" {
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
	headOut := map[string]string{cut: TailInput, OutputFrames: OutputFrames}
	sources := map[string]string{cut: TailInput}
	err = walkDecoder(g, cut, func(node *onnx.NodeProto, _ int) error {
		for _, in := range node.GetInput() {
			if _, seen := sources[in]; !seen && fromInputs[in] && !fromCut[in] {
				name := fmt.Sprintf("%s_extra%d", TailInput, len(tc.Extras))
				tc.Extras = append(tc.Extras, name)
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
	tc.Head = onnxgraph.Cut(model, headOut, nil, onnxgraph.Declared{})
	tc.Tail = onnxgraph.Cut(model, map[string]string{OutputAudio: OutputAudio}, sources,
		onnxgraph.Declared{Ranks: map[string]int{cut: 3}})
	if in := tc.Tail.GetGraph().InputNames(); len(in) != 1+len(tc.Extras) {
		return nil, fmt.Errorf("the tail reads %v, more than the cut ort.Tensor and %v", in, tc.Extras)
	}
	return tc, nil
}

// HeadOutputs are the head graph's outputs, in order.
func (tc *TailCut) HeadOutputs() []string {
	return append([]string{TailInput, OutputFrames}, tc.Extras...)
}

// TailInputs are the tail graph's inputs, in order.
func (tc *TailCut) TailInputs() []string {
	return append([]string{TailInput}, tc.Extras...)
}
