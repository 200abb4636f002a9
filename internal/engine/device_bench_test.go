package engine

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/advancedclimatesystems/gonnx/onnx"
	ort "github.com/yalue/onnxruntime_go"
	"google.golang.org/protobuf/proto"
)

// The benchmarks here take a WebGPU run apart: what moving a decoder run's worth of bytes to and from the device
// costs on its own, and what a decoder run costs with and without bringing its audio back. They run only where
// TTSGEN_TEST_DEVICE names a GPU (scripts/gpu-bench.sh's `probe`); each reports the process's CPU time per run
// beside the wall time, which says whether the host works (encoding, copying) or waits for the device.

func benchDevice(b *testing.B) Device {
	device := Device(os.Getenv("TTSGEN_TEST_DEVICE"))
	if device == "" {
		b.Skip("TTSGEN_TEST_DEVICE is not set: no GPU to measure")
	}
	lib := testLibPath()
	if err := Init(lib); err != nil {
		b.Fatal(err)
	}
	return device
}

func cpuTime() time.Duration {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		return 0
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}

// timeRuns runs run b.N times and reports wall and CPU milliseconds per run.
func timeRuns(b *testing.B, run func() error) {
	b.Helper()
	if err := run(); err != nil { // warm-up: the provider compiles its kernels on first sight of a shape
		b.Fatal(err)
	}
	cpu0, wall0 := cpuTime(), time.Now()
	b.ResetTimer()
	for range b.N {
		if err := run(); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	wall, cpu := time.Since(wall0), cpuTime()-cpu0
	b.ReportMetric(float64(wall.Microseconds())/1000/float64(b.N), "wall-ms/run")
	b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/run")
}

// probeVoice reads the voice the benchmarks below measure: TTSGEN_TEST_PIPER_MEDIUM, else the default voice.
func probeVoice(b *testing.B) []byte {
	path := os.Getenv("TTSGEN_TEST_PIPER_MEDIUM")
	if path == "" {
		path = "../voices/default/en_US-ttsgen-medium.onnx"
	}
	voice, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	return voice
}

// transferGraph is one of: "both" (y = x*2, x and y n floats), "up" (y = ReduceSum(x): n floats up, one down),
// "down" (y = Expand(x, [n]): one float up, n down).
func transferGraph(kind string, n int64) ([]byte, int64, int64) {
	in, out := n, n
	var nodes []*onnx.NodeProto
	inits := []*onnx.TensorProto{floatInit("two", []float32{2})}
	switch kind {
	case "both":
		nodes = []*onnx.NodeProto{{Name: "mul", OpType: "Mul", Input: []string{"x", "two"}, Output: []string{"y"}}}
	case "up":
		out = 1
		nodes = []*onnx.NodeProto{{Name: "sum", OpType: "ReduceSum", Input: []string{"x"}, Output: []string{"y"},
			Attribute: []*onnx.AttributeProto{{Name: "keepdims", Type: onnx.AttributeProto_INT, I: 1}}}}
	case "down":
		in = 1
		inits = append(inits, intInit("shape", n))
		nodes = []*onnx.NodeProto{{Name: "expand", OpType: "Expand", Input: []string{"x", "shape"}, Output: []string{"y"}}}
	}
	model := &onnx.ModelProto{
		IrVersion:   8,
		OpsetImport: []*onnx.OperatorSetIdProto{{Version: 15}},
		Graph: &onnx.GraphProto{Name: "transfer_" + kind, Node: nodes, Initializer: inits,
			Input: []*onnx.ValueInfoProto{floatTensor("x")}, Output: []*onnx.ValueInfoProto{floatTensor("y")}},
	}
	data, err := proto.Marshal(model)
	if err != nil {
		panic(err)
	}
	return data, in, out
}

func BenchmarkDeviceTransfers(b *testing.B) {
	device := benchDevice(b)
	for _, n := range []int64{16, 1 << 18, 64 * 160 * 256} {
		for _, kind := range []string{"both", "up", "down"} {
			b.Run(fmt.Sprintf("%s/%dKiB", kind, n*4/1024), func(b *testing.B) {
				graph, in, out := transferGraph(kind, n)
				r, err := ortBackend{}.newGraphRunner(graph, []string{"x"}, []string{"y"}, device, 1)
				if err != nil {
					b.Fatal(err)
				}
				defer r.close()
				x := tensor{shape: []int64{in}, f32: make([]float32, in)}
				for i := range x.f32 {
					x.f32[i] = float32(i % 7)
				}
				b.SetBytes(4 * (in + out))
				timeRuns(b, func() error { _, err := r.runGraph([]tensor{x}); return err })
			})
		}
	}
}

// BenchmarkDeviceDecoder runs full decoder runs of a voice's windows (TTSGEN_TEST_PIPER_MEDIUM, else the default
// voice) as a WebGPU engine runs them (split, masked, polyphase upsampling in its channels-last form), at the
// engine's run sizes: float32 DefaultDecoderFrames of windows per run, float16 DefaultHalfDecoderFrames. Variants:
// "audio" as the engine runs them; "sum" with the audio summed on the device (the same arithmetic, 4 bytes back);
// "prealloc" with output tensors made once and reused (ORT copies into them); "unmasked" without padding masks
// (mask.go); "post4" with the last Conv (one output channel) given three more channels of zero weights and sliced
// back to one, to see whether the provider's matrix tiles waste time on a single output channel; "profile" and
// "profile-post4" (where TTSGEN_PROBE_PROFILE names a file prefix) with ONNX Runtime's profiler on.
func BenchmarkDeviceDecoder(b *testing.B) {
	device := benchDevice(b)
	voice := probeVoice(b)
	// The decoder graph as a WebGPU engine runs it, with and without masks.
	decoders := map[bool]splitVoice{}
	var w windowing
	for _, masked := range []bool{true, false} {
		e, err := NewEngine(Options{Device: device, NoPaddingMasks: !masked})
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
	channels, err := latentChannels(decoders[true].decoder)
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
			{"audio", true}, {"sum", true}, {"prealloc", true}, {"unmasked", false}, {"post4", true},
			{"profile", true}, {"profile-post4", true},
		} {
			sv := decoders[variant.masked]
			if strings.HasSuffix(variant.name, "post4") {
				sv.decoder = paddedLastConv(b, sv.decoder)
			}
			if run.precision == PrecisionFloat16 {
				if sv.decoder, err = halfPrecision(sv.decoder); err != nil {
					b.Fatal(err)
				}
			}
			graph, output := sv.decoder, outputAudio
			if variant.name == "sum" {
				graph, output = summedOutput(b, sv.decoder), "audio_sum"
			}
			backend := ortBackend{providerOptions: map[string]string{}}
			if strings.HasPrefix(variant.name, "profile") {
				if backend.profilePrefix = os.Getenv("TTSGEN_PROBE_PROFILE"); backend.profilePrefix == "" {
					continue
				}
				backend.profilePrefix += fmt.Sprintf("_%s_%s_%d", variant.name, run.precision, run.rows)
			}
			inputs := sv.decoderInputs(latent, mask, make([]int64, run.rows), run.rows, channels, span)
			b.Run(fmt.Sprintf("%s/%s/%dx%d", run.precision, variant.name, run.rows, span), func(b *testing.B) {
				r, err := backend.newGraphRunner(graph, sv.decoderInputNames(), []string{output}, device, 1)
				if err != nil {
					b.Fatal(err)
				}
				defer r.close()
				if variant.name != "prealloc" {
					timeRuns(b, func() error { _, err := r.runGraph(inputs); return err })
					return
				}
				var values []ort.Value
				for _, in := range inputs {
					v, err := inputValue(in)
					if err != nil {
						b.Fatal(err)
					}
					defer v.Destroy()
					values = append(values, v)
				}
				out, err := r.runGraph(inputs)
				if err != nil {
					b.Fatal(err)
				}
				audio, err := ort.NewEmptyTensor[float32](ort.NewShape(out[0].shape...))
				if err != nil {
					b.Fatal(err)
				}
				defer audio.Destroy()
				session := r.(*ortGraphRunner).session
				timeRuns(b, func() error { return session.Run(values, []ort.Value{audio}) })
			})
		}
	}
}

// paddedLastConv gives decoder's one-output-channel Conv (HiFi-GAN's conv_post) three more output channels of
// zero weights and bias and slices its output back to the first channel: the same audio.
func paddedLastConv(b *testing.B, decoder []byte) []byte {
	var g onnx.ModelProto
	if err := proto.Unmarshal(decoder, &g); err != nil {
		b.Fatal(err)
	}
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
			v, ok := floatData(t)
			if !ok {
				b.Fatalf("%s: not float data", name)
			}
			dims := append([]int64{4}, t.GetDims()[1:]...)
			g.Graph.Initializer = append(g.Graph.Initializer, floatInit(name+"/x4", append(v, make([]float32, 3*len(v))...), dims...))
		}
		widen(n.GetInput()[1])
		n.Input[1] += "/x4"
		if len(n.GetInput()) > 2 {
			widen(n.GetInput()[2])
			n.Input[2] += "/x4"
		}
		out := n.GetOutput()[0]
		n.Output[0] = out + "/x4"
		g.Graph.Initializer = append(g.Graph.Initializer, intInit(out+"/starts", 0), intInit(out+"/ends", 1), intInit(out+"/axes", 1))
		slice := &onnx.NodeProto{Name: n.GetName() + "/first", OpType: "Slice",
			Input: []string{out + "/x4", out + "/starts", out + "/ends", out + "/axes"}, Output: []string{out}}
		g.Graph.Node = append(g.Graph.Node[:i+1], append([]*onnx.NodeProto{slice}, g.Graph.Node[i+1:]...)...)
		data, err := proto.Marshal(&g)
		if err != nil {
			b.Fatal(err)
		}
		return data
	}
	b.Fatal("no Conv with one output channel in the decoder")
	return nil
}

// summedOutput is decoder with its audio summed into "audio_sum" [1,1,1].
func summedOutput(b *testing.B, decoder []byte) []byte {
	var g onnx.ModelProto
	if err := proto.Unmarshal(decoder, &g); err != nil {
		b.Fatal(err)
	}
	g.Graph.Node = append(g.Graph.Node, &onnx.NodeProto{Name: "probe_sum", OpType: "ReduceSum",
		Input: []string{outputAudio}, Output: []string{"audio_sum"},
		Attribute: []*onnx.AttributeProto{{Name: "keepdims", Type: onnx.AttributeProto_INT, I: 1}}})
	g.Graph.Output = []*onnx.ValueInfoProto{floatTensor("audio_sum")}
	summed, err := proto.Marshal(&g)
	if err != nil {
		b.Fatal(err)
	}
	return summed
}

// BenchmarkDeviceAcoustic times the GPU runs before the decoder as a WebGPU engine makes them for a voice
// (TTSGEN_TEST_PIPER_MEDIUM, else the default voice): its text part (encoder and duration predictor, LayerNorms
// fused) on one sentence of ~100 ids, as a one-sentence request runs it, and on a batch of 16; its flow on the
// same batches. Variant "profile" (where TTSGEN_PROBE_PROFILE names a file prefix) turns ONNX Runtime's profiler on
// for the engine's sessions, whose GPU timestamps say how much of a run is the device's own work.
func BenchmarkDeviceAcoustic(b *testing.B) {
	device := benchDevice(b)
	voice := probeVoice(b)
	for _, variant := range []string{"plain", "profile"} {
		opts := Options{Device: device}
		if variant == "profile" {
			if opts.ProfilePrefix = os.Getenv("TTSGEN_PROBE_PROFILE"); opts.ProfilePrefix == "" {
				continue
			}
			opts.ProfilePrefix += "_acoustic"
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
			acoustic, err := s.acoustic[0].runGraph(mid)
			if err != nil {
				b.Fatal(err)
			}
			b.Run(fmt.Sprintf("%s/text/%dx101", variant, size), func(b *testing.B) {
				timeRuns(b, func() error { _, _, err := s.runText(gpuWorker, 0, inputs, time.Now); return err })
			})
			b.Run(fmt.Sprintf("%s/flow/%dx%d", variant, size, acoustic[0].shape[2]), func(b *testing.B) {
				timeRuns(b, func() error { _, err := s.runFlow(0, acoustic); return err })
			})
		}
		e.Close()
	}
}
