package engine

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/advancedclimatesystems/gonnx/onnx"
	"github.com/ttsgen/ttsgen/internal/onnxgraph"
	"github.com/ttsgen/ttsgen/internal/ort"
	"github.com/ttsgen/ttsgen/internal/ort/orttest"
	"github.com/ttsgen/ttsgen/internal/vits"
	"google.golang.org/protobuf/proto"
)

// The benchmarks here take a WebGPU engine's runs apart: what a decoder run costs with and without bringing its
// audio back, and what the runs before the decoder cost. They run only where TTSGEN_TEST_DEVICE names a GPU; each
// reports the process's CPU time per run beside the wall time (orttest.TimeRuns).

// probeVoice reads the voice the benchmarks below measure: TTSGEN_TEST_PIPER_MEDIUM, else the default voice.
func probeVoice(b *testing.B) []byte {
	return orttest.Voice(b, cmp.Or(os.Getenv("TTSGEN_TEST_PIPER_MEDIUM"), orttest.DefaultVoice))
}

// BenchmarkDeviceDecoder runs full decoder runs of a voice's windows (TTSGEN_TEST_PIPER_MEDIUM, else the default
// voice) as a WebGPU engine runs them (split, masked, polyphase upsampling in its channels-last form), at the
// engine's run sizes: float32 DefaultDecoderFrames of windows per run, float16 DefaultHalfDecoderFrames. Variants:
// "audio" as the engine runs them; "sum" with the audio summed on the device (the same arithmetic, 4 bytes back);
// "unmasked" without padding masks
// (mask.go); "post4" with the last Conv (one output channel) given three more channels of zero weights and sliced
// back to one, to see whether the provider's matrix tiles waste time on a single output channel; "profile" and
// "profile-post4" (where TTSGEN_PROBE_PROFILE names a file prefix) with ONNX Runtime's profiler on.
func BenchmarkDeviceDecoder(b *testing.B) {
	device := orttest.Device(b)
	voice := probeVoice(b)
	// The decoder graph as a WebGPU engine runs it, with and without masks.
	decoders := map[bool]vits.SplitVoice{}
	var w windowing
	for _, masked := range []bool{true, false} {
		e, err := NewEngine(Options{Device: device, Tuning: Tuning{NoPaddingMasks: !masked}})
		if err != nil {
			b.Fatal(err)
		}
		m, err := e.Load("probe", voice, ModelConfig{SampleRate: 22050, NumSpeakers: 1})
		if err != nil {
			b.Fatal(err)
		}
		if m.split == nil {
			b.Fatal("the voice was not split into decoder windows")
		}
		decoders[masked], w = *m.split.voice, m.split.window
		e.Close()
	}
	channels, err := vits.LatentChannels(decoders[true].Decoder)
	if err != nil {
		b.Fatal(err)
	}
	for _, run := range []struct {
		precision    Precision
		rows, frames int
	}{{PrecisionFloat32, DefaultDecoderFrames / w.frames, w.frames}, {PrecisionFloat16, DefaultHalfDecoderFrames / w.frames, w.frames}} {
		span := run.frames + 2*w.margin
		rng := rand.New(rand.NewPCG(1, uint64(run.rows)))
		latent := make([]float32, run.rows*channels*span)
		for i := range latent {
			latent[i] = float32(rng.NormFloat64())
		}
		mask := make([]float32, run.rows*span)
		for i := range mask {
			mask[i] = 1
		}
		for _, variant := range []struct {
			name   string
			masked bool
		}{
			{"audio", true}, {"sum", true}, {"unmasked", false}, {"post4", true},
			{"profile", true}, {"profile-post4", true},
		} {
			sv := decoders[variant.masked]
			if strings.HasSuffix(variant.name, "post4") {
				sv.Decoder = paddedLastConv(b, sv.Decoder)
			}
			if run.precision == PrecisionFloat16 {
				if sv.Decoder, err = onnxgraph.HalfPrecision(sv.Decoder); err != nil {
					b.Fatal(err)
				}
			}
			graph, output := sv.Decoder, vits.OutputAudio
			if variant.name == "sum" {
				graph, output = summedOutput(sv.Decoder), "audio_sum"
			}
			var sessions ort.Sessions
			if strings.HasPrefix(variant.name, "profile") {
				if sessions.ProfilePrefix = os.Getenv("TTSGEN_PROBE_PROFILE"); sessions.ProfilePrefix == "" {
					continue
				}
				sessions.ProfilePrefix += fmt.Sprintf("_%s_%s_%d", variant.name, run.precision, run.rows)
			}
			inputs := decoderInputs(&sv, latent, mask, make([]int64, run.rows), run.rows, channels, span)
			b.Run(fmt.Sprintf("%s/%s/%dx%d", run.precision, variant.name, run.rows, span), func(b *testing.B) {
				encoded, err := onnxgraph.Encode(graph)
				if err != nil {
					b.Fatal(err)
				}
				r, err := sessions.NewRunner(encoded, sv.DecoderInputNames(), []string{output}, device, 1, true)
				if err != nil {
					b.Fatal(err)
				}
				defer r.Close()
				orttest.TimeRuns(b, func() error { _, err := r.Run(inputs); return err })
			})
		}
	}
}

// paddedLastConv gives decoder's one-output-channel Conv (HiFi-GAN's conv_post) three more output channels of
// zero weights and bias and slices its output back to the first channel: the same audio.
func paddedLastConv(b *testing.B, decoder *onnx.ModelProto) *onnx.ModelProto {
	g := proto.Clone(decoder).(*onnx.ModelProto)
	inits := map[string]*onnx.TensorProto{}
	for _, t := range g.Graph.Initializer {
		inits[t.GetName()] = t
	}
	for i, n := range g.Graph.Node {
		if n.GetOpType() != "Conv" || len(n.GetInput()) < 2 || inits[n.GetInput()[1]] == nil || inits[n.GetInput()[1]].GetDims()[0] != 1 {
			continue
		}
		widen := func(name string) {
			t := inits[name]
			v, ok := onnxgraph.FloatData(t)
			if !ok {
				b.Fatalf("%s: not float data", name)
			}
			dims := append([]int64{4}, t.GetDims()[1:]...)
			g.Graph.Initializer = append(g.Graph.Initializer, onnxgraph.FloatInit(name+"/x4", append(v, make([]float32, 3*len(v))...), dims...))
		}
		widen(n.GetInput()[1])
		n.Input[1] += "/x4"
		if len(n.GetInput()) > 2 {
			widen(n.GetInput()[2])
			n.Input[2] += "/x4"
		}
		out := n.GetOutput()[0]
		n.Output[0] = out + "/x4"
		g.Graph.Initializer = append(g.Graph.Initializer, onnxgraph.IntInit(out+"/starts", 0), onnxgraph.IntInit(out+"/ends", 1), onnxgraph.IntInit(out+"/axes", 1))
		slice := &onnx.NodeProto{Name: n.GetName() + "/first", OpType: "Slice",
			Input: []string{out + "/x4", out + "/starts", out + "/ends", out + "/axes"}, Output: []string{out}}
		g.Graph.Node = append(g.Graph.Node[:i+1], append([]*onnx.NodeProto{slice}, g.Graph.Node[i+1:]...)...)
		return g
	}
	b.Fatal("no Conv with one output channel in the decoder")
	return nil
}

// summedOutput is decoder with its audio summed into "audio_sum" [1,1,1].
func summedOutput(decoder *onnx.ModelProto) *onnx.ModelProto {
	g := proto.Clone(decoder).(*onnx.ModelProto)
	g.Graph.Node = append(g.Graph.Node, &onnx.NodeProto{Name: "probe_sum", OpType: "ReduceSum",
		Input: []string{vits.OutputAudio}, Output: []string{"audio_sum"},
		Attribute: []*onnx.AttributeProto{{Name: "keepdims", Type: onnx.AttributeProto_INT, I: 1}}})
	g.Graph.Output = []*onnx.ValueInfoProto{onnxgraph.FloatTensor("audio_sum")}
	return g
}

// BenchmarkDeviceAcoustic times the GPU runs before the decoder as a WebGPU engine makes them for a voice
// (TTSGEN_TEST_PIPER_MEDIUM, else the default voice): its text part (encoder and duration predictor, LayerNorms
// fused) on one sentence of ~100 ids, as a one-sentence request runs it, and on a batch of 16; its flow on the
// same batches. Variant "profile" (where TTSGEN_PROBE_PROFILE names a file prefix) turns ONNX Runtime's profiler on
// for the engine's sessions, whose GPU timestamps say how much of a run is the device's own work.
func BenchmarkDeviceAcoustic(b *testing.B) {
	device := orttest.Device(b)
	voice := probeVoice(b)
	for _, variant := range []string{"plain", "profile"} {
		opts := Options{Device: device}
		if variant == "profile" {
			if opts.Tuning.ProfilePrefix = os.Getenv("TTSGEN_PROBE_PROFILE"); opts.Tuning.ProfilePrefix == "" {
				continue
			}
			opts.Tuning.ProfilePrefix += "_acoustic"
		}
		e, err := NewEngine(opts)
		if err != nil {
			b.Fatal(err)
		}
		m, err := e.Load("probe", voice, ModelConfig{SampleRate: 22050, NumSpeakers: 1})
		if err != nil {
			b.Fatal(err)
		}
		s := m.split
		if s == nil || s.text == nil {
			b.Fatal("the voice was not split, or its text part not cut")
		}
		gpuWorker := len(s.textCPU) // past the CPU workers: runText runs on the GPU
		rng := rand.New(rand.NewPCG(5, 5))
		for _, size := range []int{1, 16} {
			in := batchInput{size: size, width: 101, scales: Scales{Length: 1, Noise: 0.667, NoiseW: 0.8}}
			for range size {
				in.ids = append(in.ids, sentence(rng, 49)...)
				in.lengths = append(in.lengths, 101)
			}
			inputs := acousticInputs(in, m.io)
			mid, _, err := s.runText(gpuWorker, 0, inputs, time.Now)
			if err != nil {
				b.Fatal(err)
			}
			acoustic, err := s.acoustic[0].Run(mid)
			if err != nil {
				b.Fatal(err)
			}
			b.Run(fmt.Sprintf("%s/text/%dx101", variant, size), func(b *testing.B) {
				orttest.TimeRuns(b, func() error { _, _, err := s.runText(gpuWorker, 0, inputs, time.Now); return err })
			})
			b.Run(fmt.Sprintf("%s/flow/%dx%d", variant, size, acoustic[0].Shape[2]), func(b *testing.B) {
				orttest.TimeRuns(b, func() error { _, err := s.runFlow(0, acoustic); return err })
			})
		}
		e.Close()
	}
}
