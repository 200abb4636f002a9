package gpu

import (
	"errors"
	"fmt"
	"slices"

	"github.com/advancedclimatesystems/gonnx/onnx"
	"google.golang.org/protobuf/proto"
)

// decoderEntry is the node whose first input is the latent that the VITS-family decoder (the "dec" module,
// HiFi-GAN) reads: everything before it depends on the whole sentence, everything after it only on nearby frames.
const decoderEntry = "/dec/conv_pre/Conv"

var errNoDecoderEntry = fmt.Errorf("no decoder node %q to split at", decoderEntry)

// Tensor names of the split graphs.
const (
	outputLatent = "latent" // acoustic graph output and decoder graph input: [B, channels, frames]
)

// splitVoice is a voice graph cut at the latent: the acoustic part (text encoder, durations, frame decoder) runs once
// per sentence; the decoder part can run on fixed windows of frames drawn from many sentences.
type splitVoice struct {
	acoustic []byte // inputs as the voice; outputs "latent" [B,C,F] and "w_ceil" [B,1,L]
	decoder  []byte // input "latent" [B,C,F] (plus "sid" when the decoder is speaker-conditioned); output "output"
	io       modelIO
	// decoderSpeaker: the decoder graph also reads "sid" (Piper's multi-speaker VITS conditions its decoder).
	decoderSpeaker bool
	// decoderMasked: the decoder graph also reads "frame_mask" [B,1,frames] (see mask.go).
	decoderMasked bool
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
func (sv *splitVoice) decoderInputs(latent, mask []float32, speakers []int64, rows, channels, span int) []tensor {
	inputs := []tensor{{shape: []int64{int64(rows), int64(channels), int64(span)}, f32: latent}}
	if sv.decoderMasked {
		inputs = append(inputs, tensor{shape: []int64{int64(rows), 1, int64(span)}, f32: mask})
	}
	if sv.decoderSpeaker {
		inputs = append(inputs, tensor{shape: []int64{int64(rows)}, i64: speakers})
	}
	return inputs
}

// splitGraph cuts a Piper-format voice at the input of decoderEntry. It needs the duration Ceil node too, since
// windows are cut from each sentence's own frames.
func splitGraph(onnxModel []byte) (*splitVoice, error) {
	var model onnx.ModelProto
	if err := proto.Unmarshal(onnxModel, &model); err != nil {
		return nil, fmt.Errorf("not an ONNX model: %w", err)
	}
	graph := model.GetGraph()
	if graph == nil {
		return nil, errors.New("not an ONNX model: no graph")
	}
	var latent string
	for _, node := range graph.GetNode() {
		if node.GetName() == decoderEntry && len(node.GetInput()) > 0 {
			latent = node.GetInput()[0]
		}
		for _, attr := range node.GetAttribute() {
			if attr.GetG() != nil || len(attr.GetGraphs()) > 0 {
				return nil, fmt.Errorf("node %q has a subgraph; splitting such graphs is not supported", node.GetName())
			}
		}
	}
	if latent == "" {
		return nil, errNoDecoderEntry
	}
	ceil := durationCeil(graph)
	if ceil == "" {
		return nil, errors.New("no duration Ceil node")
	}
	inputs := graph.InputNames()
	io := modelIO{hasSpeaker: slices.Contains(inputs, inputSpeaker), hasFrames: true}

	acoustic, err := subgraph(&model, map[string]string{latent: outputLatent, ceil: outputFrames}, "")
	if err != nil {
		return nil, fmt.Errorf("cutting the acoustic graph: %w", err)
	}
	decoder, err := subgraph(&model, map[string]string{outputAudio: outputAudio}, latent)
	if err != nil {
		return nil, fmt.Errorf("cutting the decoder graph: %w", err)
	}
	var decoderGraph onnx.ModelProto
	if err := proto.Unmarshal(decoder, &decoderGraph); err != nil {
		return nil, err
	}
	decoderInputs := decoderGraph.GetGraph().InputNames()
	for _, name := range decoderInputs {
		if name != outputLatent && name != inputSpeaker {
			return nil, fmt.Errorf("decoder graph reads input %q besides the latent", name)
		}
	}
	return &splitVoice{acoustic: acoustic, decoder: decoder, io: io,
		decoderSpeaker: slices.Contains(decoderInputs, inputSpeaker)}, nil
}

// subgraph copies model keeping only the nodes needed for outputs (tensor name -> new output name). With source
// set, that tensor becomes the graph input "latent" and nothing before it is kept. Graph inputs and initializers
// that the kept nodes do not read are dropped, so that ONNX Runtime asks only for what the part needs.
func subgraph(model *onnx.ModelProto, outputs map[string]string, source string) ([]byte, error) {
	graph := model.GetGraph()
	producer := map[string]int{}
	for i, node := range graph.GetNode() {
		for _, out := range node.GetOutput() {
			producer[out] = i
		}
	}
	keep := make([]bool, len(graph.GetNode()))
	needed := map[string]bool{}
	var stack []string
	for name := range outputs {
		stack = append(stack, name)
	}
	for len(stack) > 0 {
		name := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if needed[name] {
			continue
		}
		needed[name] = true
		if name == source {
			continue
		}
		i, ok := producer[name]
		if !ok || keep[i] {
			continue
		}
		keep[i] = true
		for _, in := range graph.GetNode()[i].GetInput() {
			if in != "" {
				stack = append(stack, in)
			}
		}
	}
	cut := &onnx.GraphProto{Name: graph.GetName()}
	for i, node := range graph.GetNode() {
		if !keep[i] {
			continue
		}
		node = proto.Clone(node).(*onnx.NodeProto)
		if source != "" {
			for j, in := range node.Input {
				if in == source {
					node.Input[j] = outputLatent
				}
			}
		}
		cut.Node = append(cut.Node, node)
	}
	if source != "" {
		cut.Input = append(cut.Input, floatTensor(outputLatent))
	}
	for _, in := range graph.GetInput() {
		if needed[in.GetName()] {
			cut.Input = append(cut.Input, in)
		}
	}
	for _, init := range graph.GetInitializer() {
		if needed[init.GetName()] {
			cut.Initializer = append(cut.Initializer, init)
		}
	}
	for _, vi := range graph.GetValueInfo() {
		if needed[vi.GetName()] && vi.GetName() != source {
			cut.ValueInfo = append(cut.ValueInfo, vi)
		}
	}
	names := make([]string, 0, len(outputs))
	for name := range outputs {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		newName := outputs[name]
		if newName != name {
			cut.Node = append(cut.Node, &onnx.NodeProto{Name: "ttsgen_" + newName, OpType: "Identity",
				Input: []string{name}, Output: []string{newName}})
		}
		cut.Output = append(cut.Output, floatTensor(newName))
	}
	return proto.Marshal(&onnx.ModelProto{IrVersion: model.GetIrVersion(), OpsetImport: model.GetOpsetImport(),
		ProducerName: "ttsgen", Graph: cut})
}

func floatTensor(name string) *onnx.ValueInfoProto {
	return &onnx.ValueInfoProto{Name: name, Type: &onnx.TypeProto{Value: &onnx.TypeProto_TensorType{
		TensorType: &onnx.TypeProto_Tensor{ElemType: int32(onnx.TensorProto_FLOAT)}}}}
}
