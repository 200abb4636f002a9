package onnxgraph

import (
	"github.com/advancedclimatesystems/gonnx/onnx"
)

// Polyphase upsampling: a VITS/HiFi-GAN decoder upsamples with 1-D ConvTranspose (Piper: kernel 16 stride 8, kernel
// 4 stride 2, padding half the stride). A ConvTranspose with stride s and kernel K = J*s is the same sum as one
// ordinary Conv with s*Cout output channels and kernel J, whose channel o*s+r holds output phase r of channel o,
// followed by interleaving the phases (Reshape, Transpose, Reshape) and trimming the padding (Slice). The
// arithmetic is identical (each output sample sums the same products, in another order); what changes is which
// kernel the provider runs: its Conv is a tiled matrix product on every provider, its ConvTranspose often is not.
//
// With x[t] (t < T), y[n] = sum_i sum_k x_i[t] W[i,o,k] over n = t*s + k - p. Writing n+p = q*s + r (0 <= r < s)
// and k = j*s + r gives y[q*s+r-p] = sum_i sum_j x_i[q-j] W[i,o,j*s+r], a Conv over x padded by J-1 on both sides
// (q runs over 0..T+J-2), with weight W'[o*s+r, i, J-1-j] = W[i,o,j*s+r]. Flattened phase-major, positions
// [p, (T+J-1)*s - p) are ConvTranspose's output, of length (T-1)*s + K - 2p. Where p >= s (an inverse-STFT head's
// overlap-add: kernel 16, stride 4, padding 6), the first d = p/s whole frames of that padding are never output, so the
// Conv pads by J-1-d instead and the Slice trims only p mod s.
//
// The interleave has two forms, the same values in the same places. Channels first (o*s+r; Reshape [N,Cout,s,Q],
// Transpose to [N,Cout,Q,s], Reshape [N,Cout,Q*s]) suits providers that run Conv on [N,C,T] (the CPU). Channels
// last (r*Cout+o; Transpose to [N,Q,s*Cout], Reshape [N,Q*s,Cout], Transpose back to [N,Cout,Q*s]) is for providers
// that run Conv on [N,T,C] (WebGPU): ONNX Runtime wraps each of their Convs in Transposes to and from [N,T,C], and
// its transpose optimizer cancels the first of ours against the one after the Conv and carries the second down
// through the Slice, LeakyRelu and mask Mul to cancel against the one before the next Conv. Channels first, four
// Transposes of the upsampled activations would stay in the graph per upsampling layer.

// RewriteUpsampling replaces every ConvTranspose of model that the identity above covers (1-D, one group, no
// dilation or output padding, kernel a multiple of the stride, symmetric padding below the kernel, constant weight)
// and says how many it replaced and how many it left as they are. channelsLast picks the interleave's form (above).
func RewriteUpsampling(model *onnx.ModelProto, channelsLast bool) (replaced, left int) {
	graph := model.GetGraph()
	// Weights from Constant nodes too: PyTorch's exporter writes a buffer, such as an inverse-STFT head's fixed
	// kernel, as one.
	consts := constantTensors(graph)
	var nodes []*onnx.NodeProto
	for _, node := range graph.GetNode() {
		if node.GetOpType() != "ConvTranspose" {
			nodes = append(nodes, node)
			continue
		}
		poly, newInits, ok := polyphaseConv(node, consts, channelsLast)
		if !ok {
			nodes = append(nodes, node)
			left++
			continue
		}
		nodes = append(nodes, poly...)
		graph.Initializer = append(graph.Initializer, newInits...)
		replaced++
	}
	if replaced > 0 {
		// The original weights may now be unread; ONNX Runtime drops unused initializers itself.
		graph.Node = nodes
	}
	return replaced, left
}

// polyphaseConv returns the nodes and initializers that compute node (a ConvTranspose) as a Conv, or ok=false when
// node is outside what the identity covers.
func polyphaseConv(node *onnx.NodeProto, consts map[string]constTensor, channelsLast bool) ([]*onnx.NodeProto, []*onnx.TensorProto, bool) {
	in := node.GetInput()
	if len(in) < 2 || len(node.GetOutput()) != 1 {
		return nil, nil, false
	}
	w, ok := consts[in[1]]
	if !ok || len(w.dims) != 3 {
		return nil, nil, false
	}
	cin, cout, k := int(w.dims[0]), int(w.dims[1]), int(w.dims[2])
	weights := w.values
	if len(weights) != cin*cout*k {
		return nil, nil, false
	}
	var bias []float32
	if len(in) > 2 && in[2] != "" {
		b, ok := consts[in[2]]
		if !ok || b.size() != cout {
			return nil, nil, false
		}
		bias = b.values
	}
	stride, pad := 1, 0
	for _, a := range node.GetAttribute() {
		ints := a.GetInts()
		switch a.GetName() {
		case "strides":
			if len(ints) != 1 {
				return nil, nil, false
			}
			stride = int(ints[0])
		case "pads":
			if len(ints) != 2 || ints[0] != ints[1] {
				return nil, nil, false
			}
			pad = int(ints[0])
		case "kernel_shape":
			if len(ints) != 1 || int(ints[0]) != k {
				return nil, nil, false
			}
		case "dilations":
			for _, v := range ints {
				if v != 1 {
					return nil, nil, false
				}
			}
		case "output_padding":
			for _, v := range ints {
				if v != 0 {
					return nil, nil, false
				}
			}
		case "group":
			if a.GetI() != 1 {
				return nil, nil, false
			}
		case "auto_pad":
			if s := string(a.GetS()); s != "" && s != "NOTSET" {
				return nil, nil, false
			}
		default: // output_shape, or anything newer: not covered
			return nil, nil, false
		}
	}
	if stride < 2 || k%stride != 0 || pad < 0 || pad >= k {
		return nil, nil, false
	}
	j := k / stride
	convPad, trim := j-1-pad/stride, pad%stride
	// Output channel of phase r of channel o: o*s+r channels first, r*Cout+o channels last.
	channel := func(o, r int) int { return o*stride + r }
	if channelsLast {
		channel = func(o, r int) int { return r*cout + o }
	}
	// W'[channel(o,r), i, J-1-jj] = W[i, o, jj*s+r]
	polyW := make([]float32, cout*stride*cin*j)
	for i := range cin {
		for o := range cout {
			for kk := range k {
				jj, r := kk/stride, kk%stride
				polyW[(channel(o, r)*cin+i)*j+(j-1-jj)] = weights[(i*cout+o)*k+kk]
			}
		}
	}
	base := "ttsgen_poly" + node.GetName()
	newInits := []*onnx.TensorProto{FloatInit(base+"/W", polyW, int64(cout*stride), int64(cin), int64(j))}
	convIn := []string{in[0], base + "/W"}
	if bias != nil {
		polyB := make([]float32, cout*stride)
		for o := range cout {
			for r := range stride {
				polyB[channel(o, r)] = bias[o]
			}
		}
		newInits = append(newInits, FloatInit(base+"/B", polyB, int64(cout*stride)))
		convIn = append(convIn, base+"/B")
	}
	out := node.GetOutput()[0]
	flat := out
	if trim > 0 {
		flat = base + "/flat_out"
	}
	nodes := []*onnx.NodeProto{
		{Name: base + "/Conv", OpType: "Conv", Input: convIn, Output: []string{base + "/conv_out"}, Attribute: []*onnx.AttributeProto{
			IntsAttr("kernel_shape", int64(j)), IntsAttr("pads", int64(convPad), int64(convPad)), IntsAttr("strides", 1)}},
	}
	transpose := func(name, in, out string, perm ...int64) *onnx.NodeProto {
		return &onnx.NodeProto{Name: base + "/" + name, OpType: "Transpose", Input: []string{in}, Output: []string{out},
			Attribute: []*onnx.AttributeProto{IntsAttr("perm", perm...)}}
	}
	reshape := func(name, in, shape, out string) *onnx.NodeProto {
		return &onnx.NodeProto{Name: base + "/" + name, OpType: "Reshape", Input: []string{in, shape}, Output: []string{out}}
	}
	if channelsLast {
		newInits = append(newInits, IntInit(base+"/frames", 0, -1, int64(cout)))
		nodes = append(nodes,
			transpose("ChannelsLast", base+"/conv_out", base+"/channels_last", 0, 2, 1),
			reshape("Interleave", base+"/channels_last", base+"/frames", base+"/interleaved"),
			transpose("ChannelsFirst", base+"/interleaved", flat, 0, 2, 1))
	} else {
		newInits = append(newInits, IntInit(base+"/phases", 0, int64(cout), int64(stride), -1), IntInit(base+"/flat", 0, int64(cout), -1))
		nodes = append(nodes,
			reshape("Reshape", base+"/conv_out", base+"/phases", base+"/phases_out"),
			transpose("Transpose", base+"/phases_out", base+"/interleaved", 0, 1, 3, 2),
			reshape("Flatten", base+"/interleaved", base+"/flat", flat))
	}
	if trim > 0 {
		newInits = append(newInits, IntInit(base+"/starts", int64(trim)), IntInit(base+"/ends", int64(-trim)), IntInit(base+"/axes", 2))
		nodes = append(nodes, &onnx.NodeProto{Name: base + "/Slice", OpType: "Slice",
			Input: []string{flat, base + "/starts", base + "/ends", base + "/axes"}, Output: []string{out}})
	}
	return nodes, newInits, true
}
