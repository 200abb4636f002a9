package engine

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/ttsgen/ttsgen/internal/ort/orttest"
	"github.com/ttsgen/ttsgen/internal/vits"

	"github.com/advancedclimatesystems/gonnx/onnx"
	"github.com/ttsgen/ttsgen/internal/onnxgraph"
	"github.com/ttsgen/ttsgen/internal/ort"
	"google.golang.org/protobuf/proto"
)

// The generic passes (package onnxgraph) on real voices, as Load applies them: the audio, or the part's outputs,
// stay what the voice gives as it is.

// TestPolyphaseVoiceMatches: the tiny voice rewritten has no ConvTranspose left, and an engine that loads it with
// polyphase upsampling (the default) gives each sentence the audio of the voice as it is.
func TestPolyphaseVoiceMatches(t *testing.T) {
	asIs, asIsModel := tinyEngine(t, Options{Threads: 1, Tuning: Tuning{Upsampling: UpsamplingConvTranspose}})
	e, m := tinyEngine(t, Options{Threads: 1})
	if e.upsampling != UpsamplingPolyphase {
		t.Fatalf("default upsampling on cpu is %q, want polyphase", e.upsampling)
	}
	poly := orttest.Parse(t, orttest.Voice(t, tinyVoicePath))
	if replaced, left := onnxgraph.RewriteUpsampling(poly, false); replaced == 0 || left != 0 {
		t.Fatalf("rewrite: replaced %d, left %d", replaced, left)
	}
	for _, n := range poly.GetGraph().GetNode() {
		if n.GetOpType() == "ConvTranspose" {
			t.Errorf("ConvTranspose %q left in the rewritten voice", n.GetName())
		}
	}
	sentences, want := aloneReference(t, asIs, asIsModel, rand.New(rand.NewPCG(7, 8)), 3, func(i int) int { return 5 + 20*i })
	var got [][]float32
	for _, ids := range sentences {
		audio, err := e.synthesize(m.runners[0], []*item{{model: m, req: Request{IDs: ids, Scales: deterministic}}})
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, audio[0])
	}
	sameAudio(t, "the voice as it is", got, want, 1e-4)
}

// TestUpsamplingFormFollowsDevice: WebGPU, which runs Conv channels last, gets the channels-last interleave; the
// CPU and CUDA (ONNX Runtime's default layout there) the channels-first one.
func TestUpsamplingFormFollowsDevice(t *testing.T) {
	e, _ := tinyEngine(t, Options{Threads: 1})
	for d, want := range map[ort.Device]string{ort.DeviceWebGPU: "/ChannelsLast", ort.DeviceCPU: "/Reshape", ort.DeviceCUDA: "/Reshape"} {
		model := orttest.Parse(t, orttest.Voice(t, piperShapedVoicePath))
		e.rewriteUpsampling("tiny", model, d)
		forms := map[string]bool{}
		for _, n := range model.GetGraph().GetNode() {
			for _, form := range []string{"/ChannelsLast", "/Reshape"} {
				if strings.HasPrefix(n.GetName(), "ttsgen_poly") && strings.HasSuffix(n.GetName(), form) {
					forms[form] = true
				}
			}
		}
		if len(forms) != 1 || !forms[want] {
			t.Errorf("%s: interleave nodes %v, want only %s", d, forms, want)
		}
	}
}

// TestHalfPrecisionEngine: with Precision fp16 a GPU engine loads a split voice's flow and decoder as float16
// graphs (their weights float16) and its audio stays that of the float32 voice; a CPU engine ignores it.
func TestHalfPrecisionEngine(t *testing.T) {
	ref, refModel := voiceEngine(t, piperShapedVoicePath, Options{Threads: 1})
	e, m, _ := gpuLayoutEngine(t, piperShapedVoicePath, Options{Device: ort.DeviceWebGPU, Threads: 2, Precision: PrecisionFloat16, Tuning: Tuning{DecoderWindow: 16, DecoderBatch: 4, TextDevice: ort.DeviceWebGPU}})
	for name, model := range map[string]*onnx.ModelProto{"flow": m.split.voice.Flow, "decoder": m.split.voice.Decoder} {
		types := map[int32]int{}
		for _, init := range model.GetGraph().GetInitializer() {
			types[init.GetDataType()]++
		}
		if types[int32(onnx.TensorProto_FLOAT)] != 0 || types[int32(onnx.TensorProto_FLOAT16)] == 0 {
			t.Errorf("%s weights by type %v, want float16 only", name, types)
		}
	}
	sentences, audio := aloneReference(t, ref, refModel, rand.New(rand.NewPCG(3, 4)), 4, func(i int) int { return 6 + 9*i })
	sameAudio(t, "the float32 voice", submitTogether(t, e, m, sentences), audio, 5e-3)
	cpu, err := newEngine(Options{Device: ort.DeviceCPU, Threads: 1, Precision: PrecisionFloat16}, &deviceRecorder{})
	if err != nil {
		t.Fatal(err)
	}
	defer cpu.Close()
	if cpu.half {
		t.Error("a CPU engine computes in float16; its provider lacks the kernels")
	}
	if _, err := newEngine(Options{Precision: "fp8"}, &deviceRecorder{}); err == nil || !strings.Contains(err.Error(), `unknown precision "fp8"`) {
		t.Errorf("precision fp8: err %v", err)
	}
}

// Every LayerNorm of the Piper-shaped voice (its text encoder's and duration predictor's) is fused, and its
// acoustic part gives the same outputs for a batch of sentences.
func TestFuseLayerNormsPiperShaped(t *testing.T) {
	orttest.Need(t)
	sv, io := splitVoiceAt(t, piperShapedVoicePath)
	before := orttest.OpCounts(sv.Acoustic)
	fused := proto.Clone(sv.Acoustic).(*onnx.ModelProto)
	n := onnxgraph.FuseLayerNorms(fused)
	if after := orttest.OpCounts(fused); n == 0 || n != before["ReduceMean"]/2 || after["ReduceMean"] != 0 || after["LayerNormalization"] != n {
		t.Fatalf("fused %d LayerNorms; ReduceMean %d before, %d after; LayerNormalization %d",
			n, before["ReduceMean"], after["ReduceMean"], after["LayerNormalization"])
	}
	rng := rand.New(rand.NewPCG(11, 12))
	in := paddedBatch(rng, 30, 12, 21)
	var outs [2][]ort.Tensor
	for i, g := range []*onnx.ModelProto{sv.Acoustic, fused} {
		outs[i] = orttest.Run(t, g, io.InputNames(), sv.AcousticOutputs(), ort.DeviceCPU, acousticInputs(in, io))
	}
	for i := range outs[0] {
		if !slices.Equal(outs[1][i].Shape, outs[0][i].Shape) {
			t.Fatalf("output %d: shape %v, want %v", i, outs[1][i].Shape, outs[0][i].Shape)
		}
		if d := orttest.MaxAbsDiff(outs[1][i].F32, outs[0][i].F32); d > 1e-4 {
			t.Errorf("output %d differs by %g", i, d)
		}
	}
}

// The Piper-shaped voice's flow: each WaveNet's zero skip sum is dropped, and the flow gives the same latent.
func TestDropZeroAddsPiperShapedFlow(t *testing.T) {
	orttest.Need(t)
	sv, io := splitVoiceAt(t, piperShapedVoicePath)
	dropped := proto.Clone(sv.Flow).(*onnx.ModelProto)
	n := onnxgraph.DropZeroAdds(dropped)
	if before, after := orttest.OpCounts(sv.Flow)["ConstantOfShape"], orttest.OpCounts(dropped)["ConstantOfShape"]; n == 0 || n != before || after != 0 {
		t.Fatalf("replaced %d of the flow's %d ConstantOfShape, %d left; want all, none left", n, before, after)
	}
	rng := rand.New(rand.NewPCG(13, 14))
	in := paddedBatch(rng, 30, 12)
	out := orttest.Run(t, sv.Acoustic, io.InputNames(), sv.AcousticOutputs(), ort.DeviceCPU, acousticInputs(in, io))
	flowIn := out[:len(sv.FlowInputs)]
	var latents [2][]float32
	for i, g := range []*onnx.ModelProto{sv.Flow, dropped} {
		latents[i] = orttest.Run(t, g, sv.FlowInputs, []string{vits.OutputLatent}, ort.DeviceCPU, flowIn)[0].F32
	}
	if d := orttest.MaxAbsDiff(latents[1], latents[0]); d != 0 || len(latents[0]) == 0 {
		t.Errorf("latent differs by %g (%d values)", d, len(latents[0]))
	}
}
