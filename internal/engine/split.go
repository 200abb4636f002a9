package engine

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/advancedclimatesystems/gonnx/onnx"
	"github.com/ttsgen/ttsgen/internal/onnxgraph"
	"github.com/ttsgen/ttsgen/internal/ort"
)

// decoderEntry is the node whose first input is the latent that the VITS-family decoder (the "dec" module,
// HiFi-GAN) reads: everything before it depends on the whole sentence, everything after it only on nearby frames.
const decoderEntry = "/dec/conv_pre/Conv"

// errNoDecoder: the graph has no VITS decoder that ttsgen knows how to find (not split, nothing to mask).
var errNoDecoder = fmt.Errorf("no decoder node %q", decoderEntry)

// decoderLatent returns the tensor the graph's decoder reads: decoderEntry's first input.
func decoderLatent(g *onnx.GraphProto) (string, error) {
	for _, node := range g.GetNode() {
		if node.GetName() == decoderEntry && len(node.GetInput()) > 0 {
			return node.GetInput()[0], nil
		}
	}
	return "", errNoDecoder
}

// Tensor names of the split graphs.
const (
	outputLatent = "latent" // acoustic graph output and decoder graph input: [B, channels, frames]
)

// splitVoice is a voice graph cut at the latent: the acoustic part (text encoder, durations, frame decoder) runs once
// per sentence; the decoder part can run on fixed windows of frames drawn from many sentences.
type splitVoice struct {
	acoustic *onnx.ModelProto // inputs as the voice; outputs acousticOutputs(): "latent" [B,C,F] (or the flow's inputs) and "w_ceil" [B,1,L]
	decoder  *onnx.ModelProto // input "latent" [B,C,F] (plus "sid" when the decoder is speaker-conditioned); output "output"
	io       modelIO
	// flow, when the voice was cut before its normalising flow too (splitGraph's withFlow): inputs flowInputs
	// (what the acoustic part computes for it: Piper's z_p [B,C,F] and frame mask [B,1,F]), output "latent". It
	// runs on whole sentences, like the acoustic part, but at the frame rate: the part worth a GPU.
	flow       *onnx.ModelProto
	flowInputs []string
	// text, when the acoustic graph was cut at the durations too (text.go): acoustic is then the expansion, whose
	// inputs are text.expandInput.
	text *textCut
	// decoderSpeaker: the decoder graph also reads "sid" (Piper's multi-speaker VITS conditions its decoder).
	decoderSpeaker bool
	// decoderMasked: the decoder graph also reads "frame_mask" [B,1,frames] (see mask.go).
	decoderMasked bool
}

// acousticOutputs are the acoustic graph's outputs, in order: what the next part reads, then the durations.
func (sv *splitVoice) acousticOutputs() []string {
	if sv.flow != nil {
		return append(slices.Clone(sv.flowInputs), outputFrames)
	}
	return []string{outputLatent, outputFrames}
}

// acousticInputNames are the acoustic graph's inputs: the voice's, or the expansion's after a text cut.
func (sv *splitVoice) acousticInputNames() []string {
	if sv.text != nil {
		return sv.text.expandInput
	}
	return sv.io.inputNames()
}

// decoderInputNames are the decoder graph's inputs, in the order decoderInputs gives their tensors.
func (sv *splitVoice) decoderInputNames() []string {
	names := []string{outputLatent}
	if sv.decoderMasked {
		names = append(names, inputFrameMask)
	}
	if sv.decoderSpeaker {
		names = append(names, inputSpeaker)
	}
	return names
}

// decoderInputs packs a decoder run of rows windows of span frames: latent rows x channels x span, mask rows x span
// (read when the decoder is masked), speakers rows (read when it is speaker-conditioned).
func (sv *splitVoice) decoderInputs(latent, mask []float32, speakers []int64, rows, channels, span int) []ort.Tensor {
	inputs := []ort.Tensor{{Shape: []int64{int64(rows), int64(channels), int64(span)}, F32: latent}}
	if sv.decoderMasked {
		inputs = append(inputs, ort.Tensor{Shape: []int64{int64(rows), 1, int64(span)}, F32: mask})
	}
	if sv.decoderSpeaker {
		inputs = append(inputs, ort.Tensor{Shape: []int64{int64(rows)}, I64: speakers})
	}
	return inputs
}

// flowPrefix names the nodes of a VITS voice's normalising flow ("/flow/flows.3/enc/in_layers.0/Conv" in Piper's
// export): they run between the acoustic part and the decoder, at the frame rate.
const flowPrefix = "/flow/"

// splitGraph cuts a Piper-format voice at the input of decoderEntry, and with withFlow also before the nodes
// of its flow, when it has one. It needs the duration Ceil node too, since windows are cut from each sentence's
// own frames.
func splitGraph(model *onnx.ModelProto, withFlow bool) (*splitVoice, error) {
	graph := model.GetGraph()
	var latent string
	latentRank := 0 // unknown
	inits := map[string]*onnx.TensorProto{}
	for _, init := range graph.GetInitializer() {
		inits[init.GetName()] = init
	}
	for _, node := range graph.GetNode() {
		if node.GetName() == decoderEntry && len(node.GetInput()) > 0 {
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
		return nil, errNoDecoder
	}
	ceil := durationCeil(graph)
	if ceil == "" {
		return nil, errors.New("no duration Ceil node")
	}
	inputs := graph.InputNames()
	io := modelIO{hasSpeaker: slices.Contains(inputs, inputSpeaker), hasFrames: true}

	sv := &splitVoice{io: io}
	var flowIn []string
	if withFlow {
		flowIn = flowInputs(graph)
	}
	if len(flowIn) > 0 {
		sources := map[string]string{}
		toFlow := map[string]string{ceil: outputFrames}
		for i, name := range flowIn {
			sv.flowInputs = append(sv.flowInputs, fmt.Sprintf("flow_in%d", i))
			sources[name], toFlow[name] = sv.flowInputs[i], sv.flowInputs[i]
		}
		sv.flow = onnxgraph.Cut(model, map[string]string{latent: outputLatent}, sources, onnxgraph.Declared{})
		sv.acoustic = onnxgraph.Cut(model, toFlow, nil, onnxgraph.Declared{})
	} else {
		sv.acoustic = onnxgraph.Cut(model, map[string]string{latent: outputLatent, ceil: outputFrames}, nil, onnxgraph.Declared{})
	}
	decoder := onnxgraph.Cut(model, map[string]string{outputAudio: outputAudio}, map[string]string{latent: outputLatent},
		onnxgraph.Declared{Ranks: map[string]int{latent: latentRank}})
	decoderInputs := decoder.GetGraph().InputNames()
	for _, name := range decoderInputs {
		if name != outputLatent && name != inputSpeaker {
			return nil, fmt.Errorf("decoder graph reads input %q besides the latent", name)
		}
	}
	sv.decoder, sv.decoderSpeaker = decoder, slices.Contains(decoderInputs, inputSpeaker)
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
