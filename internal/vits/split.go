package vits

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/advancedclimatesystems/gonnx/onnx"
	"github.com/ttsgen/ttsgen/internal/onnxgraph"
)

// DecoderEntry is the node whose first input is the latent that the VITS-family decoder (the "dec" module,
// HiFi-GAN) reads: everything before it depends on the whole sentence, everything after it only on nearby frames.
const DecoderEntry = "/dec/conv_pre/Conv"

// ErrNoDecoder: the graph has no VITS decoder that ttsgen knows how to find (not split, nothing to mask).
var ErrNoDecoder = fmt.Errorf("no decoder node %q", DecoderEntry)

// decoderLatent returns the tensor the graph's decoder reads: DecoderEntry's first input.
func decoderLatent(g *onnx.GraphProto) (string, error) {
	for _, node := range g.GetNode() {
		if node.GetName() == DecoderEntry && len(node.GetInput()) > 0 {
			return node.GetInput()[0], nil
		}
	}
	return "", ErrNoDecoder
}

// Tensor names of the split graphs.
const (
	OutputLatent = "latent" // acoustic graph output and decoder graph input: [B, channels, frames]
)

// SplitVoice is a voice graph cut at the latent: the acoustic part (text encoder, durations, frame decoder) runs once
// per sentence; the decoder part can run on fixed windows of frames drawn from many sentences.
type SplitVoice struct {
	Acoustic *onnx.ModelProto // inputs as the voice; outputs AcousticOutputs(): "latent" [B,C,F] (or the flow's inputs) and "w_ceil" [B,1,L]
	Decoder  *onnx.ModelProto // input "latent" [B,C,F] (plus "sid" when the decoder is speaker-conditioned); output "output"
	IO       ModelIO
	// Flow, when the voice was cut before its normalising flow too (SplitGraph's withFlow): inputs FlowInputs
	// (what the acoustic part computes for it: Piper's z_p [B,C,F] and frame mask [B,1,F]), output "latent". It
	// runs on whole sentences, like the acoustic part, but at the frame rate: the part worth a GPU.
	Flow       *onnx.ModelProto
	FlowInputs []string
	// Text, when the acoustic graph was cut at the durations too (text.go): acoustic is then the expansion, whose
	// inputs are Text.ExpandInput.
	Text *TextCut
	// DecoderSpeaker: the decoder graph also reads "sid" (Piper's multi-speaker VITS conditions its decoder).
	DecoderSpeaker bool
	// DecoderMasked: the decoder graph also reads "frame_mask" [B,1,frames] (see mask.go).
	DecoderMasked bool
}

// AcousticOutputs are the acoustic graph's outputs, in order: what the next part reads, then the durations.
func (sv *SplitVoice) AcousticOutputs() []string {
	if sv.Flow != nil {
		return append(slices.Clone(sv.FlowInputs), OutputFrames)
	}
	return []string{OutputLatent, OutputFrames}
}

// AcousticInputNames are the acoustic graph's inputs: the voice's, or the expansion's after a text cut.
func (sv *SplitVoice) AcousticInputNames() []string {
	if sv.Text != nil {
		return sv.Text.ExpandInput
	}
	return sv.IO.InputNames()
}

// DecoderInputNames are the decoder graph's inputs, in the order decoderInputs gives their tensors.
func (sv *SplitVoice) DecoderInputNames() []string {
	names := []string{OutputLatent}
	if sv.DecoderMasked {
		names = append(names, InputFrameMask)
	}
	if sv.DecoderSpeaker {
		names = append(names, InputSpeaker)
	}
	return names
}

// flowPrefix names the nodes of a VITS voice's normalising flow ("/flow/flows.3/enc/in_layers.0/Conv" in Piper's
// export): they run between the acoustic part and the decoder, at the frame rate.
const flowPrefix = "/flow/"

// SplitGraph cuts a Piper-format voice at the input of DecoderEntry, and with withFlow also before the nodes
// of its flow, when it has one. It needs the duration Ceil node too, since windows are cut from each sentence's
// own frames.
func SplitGraph(model *onnx.ModelProto, withFlow bool) (*SplitVoice, error) {
	graph := model.GetGraph()
	var latent string
	latentRank := 0 // unknown
	inits := map[string]*onnx.TensorProto{}
	for _, init := range graph.GetInitializer() {
		inits[init.GetName()] = init
	}
	for _, node := range graph.GetNode() {
		if node.GetName() == DecoderEntry && len(node.GetInput()) > 0 {
			latent = node.GetInput()[0]
			if len(node.GetInput()) > 1 && inits[node.GetInput()[1]] != nil {
				latentRank = len(inits[node.GetInput()[1]].GetDims()) // a Conv's input has its weight's rank
			}
		}
		for _, attr := range node.GetAttribute() {
			if attr.GetG() != nil || len(attr.GetGraphs()) > 0 {
				return nil, fmt.Errorf("node %q has a subgraph; splitting such graphs is not supported", node.GetName())
			}
		}
	}
	if latent == "" {
		return nil, ErrNoDecoder
	}
	ceil := DurationCeil(graph)
	if ceil == "" {
		return nil, errors.New("no duration Ceil node")
	}
	inputs := graph.InputNames()
	io := ModelIO{HasSpeaker: slices.Contains(inputs, InputSpeaker), HasFrames: true}

	sv := &SplitVoice{IO: io}
	var flowIn []string
	if withFlow {
		flowIn = flowInputs(graph)
	}
	if len(flowIn) > 0 {
		sources := map[string]string{}
		toFlow := map[string]string{ceil: OutputFrames}
		for i, name := range flowIn {
			sv.FlowInputs = append(sv.FlowInputs, fmt.Sprintf("flow_in%d", i))
			sources[name], toFlow[name] = sv.FlowInputs[i], sv.FlowInputs[i]
		}
		sv.Flow = onnxgraph.Cut(model, map[string]string{latent: OutputLatent}, sources, onnxgraph.Declared{})
		sv.Acoustic = onnxgraph.Cut(model, toFlow, nil, onnxgraph.Declared{})
	} else {
		sv.Acoustic = onnxgraph.Cut(model, map[string]string{latent: OutputLatent, ceil: OutputFrames}, nil, onnxgraph.Declared{})
	}
	decoder := onnxgraph.Cut(model, map[string]string{OutputAudio: OutputAudio}, map[string]string{latent: OutputLatent},
		onnxgraph.Declared{Ranks: map[string]int{latent: latentRank}})
	decoderInputs := decoder.GetGraph().InputNames()
	for _, name := range decoderInputs {
		if name != OutputLatent && name != InputSpeaker {
			return nil, fmt.Errorf("decoder graph reads input %q besides the latent", name)
		}
	}
	sv.Decoder, sv.DecoderSpeaker = decoder, slices.Contains(decoderInputs, InputSpeaker)
	return sv, nil
}

// flowInputs lists the tensors that the nodes named flowPrefix read from the rest of the graph (graph inputs and
// constants aside), in the order the graph first reads them; none when the graph has no flow, or when a graph
// input feeds the flow directly (then cutting there would not leave the acoustic part anything to hand over).
func flowInputs(graph *onnx.GraphProto) []string {
	constant := map[string]bool{}
	for _, init := range graph.GetInitializer() {
		constant[init.GetName()] = true
	}
	for _, in := range graph.GetInput() {
		constant[in.GetName()] = true
	}
	inFlow := map[string]bool{}
	var external []string
	for _, node := range graph.GetNode() {
		if !strings.HasPrefix(node.GetName(), flowPrefix) {
			continue
		}
		for _, in := range node.GetInput() {
			if in == "" || inFlow[in] || slices.Contains(external, in) {
				continue
			}
			if constant[in] {
				if slices.Contains(graph.InputNames(), in) {
					return nil
				}
				continue
			}
			external = append(external, in)
		}
		for _, out := range node.GetOutput() {
			inFlow[out] = true
		}
	}
	return external
}
