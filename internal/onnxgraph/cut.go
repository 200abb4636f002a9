package onnxgraph

import (
	"slices"
	"strings"

	"github.com/advancedclimatesystems/gonnx/onnx"
	"google.golang.org/protobuf/proto"
)

// Declared says how Cut declares the new inputs and outputs of a cut, by their names in the model it cuts: their
// element types (a name Types lacks is float) and the ranks of the inputs (0 or absent: unknown; see WithRank).
type Declared struct {
	Types map[string]int32
	Ranks map[string]int
}

// Cut copies model keeping only the nodes needed for outputs (tensor name -> new output name). Each tensor in
// sources (tensor name -> new input name) becomes a graph input, and nothing before it is kept. Graph inputs and
// initializers that the kept nodes do not read are dropped, so that ONNX Runtime asks only for what the part
// needs. New inputs come first, in the order of their new names, then the graph inputs kept, in the model's
// order. The copy shares nothing with model: passes may edit either.
func Cut(model *onnx.ModelProto, outputs, sources map[string]string, declared Declared) *onnx.ModelProto {
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
		if _, ok := sources[name]; ok {
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
		for j, in := range node.Input {
			if renamed, ok := sources[in]; ok {
				node.Input[j] = renamed
			}
		}
		cut.Node = append(cut.Node, node)
	}
	var sourceNames []string
	for name := range sources {
		sourceNames = append(sourceNames, name)
	}
	slices.SortFunc(sourceNames, func(a, b string) int { return strings.Compare(sources[a], sources[b]) })
	for _, name := range sourceNames {
		cut.Input = append(cut.Input, WithRank(TypedTensor(sources[name], declared.Types[name]), declared.Ranks[name]))
	}
	for _, in := range graph.GetInput() {
		if needed[in.GetName()] {
			cut.Input = append(cut.Input, proto.Clone(in).(*onnx.ValueInfoProto))
		}
	}
	for _, init := range graph.GetInitializer() {
		if needed[init.GetName()] {
			cut.Initializer = append(cut.Initializer, proto.Clone(init).(*onnx.TensorProto))
		}
	}
	for _, vi := range graph.GetValueInfo() {
		if _, isSource := sources[vi.GetName()]; needed[vi.GetName()] && !isSource {
			cut.ValueInfo = append(cut.ValueInfo, proto.Clone(vi).(*onnx.ValueInfoProto))
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
		cut.Output = append(cut.Output, TypedTensor(newName, declared.Types[name]))
	}
	opsets := make([]*onnx.OperatorSetIdProto, len(model.GetOpsetImport()))
	for i, o := range model.GetOpsetImport() {
		opsets[i] = proto.Clone(o).(*onnx.OperatorSetIdProto)
	}
	return &onnx.ModelProto{IrVersion: model.GetIrVersion(), OpsetImport: opsets, ProducerName: "ttsgen", Graph: cut}
}
