package engine

import (
	"math"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/advancedclimatesystems/gonnx/onnx"
	"github.com/ttsgen/ttsgen/internal/onnxgraph"
	"github.com/ttsgen/ttsgen/internal/ort"
	"github.com/ttsgen/ttsgen/internal/ort/orttest"
	"github.com/ttsgen/ttsgen/internal/vits"
	"google.golang.org/protobuf/proto"
)

// TestOnDevice checks on a real GPU what the CPU-only suite cannot: that float16 arithmetic (which the CPU
// provider does not really do, see half_test.go) keeps a voice's audio, and that batched and windowed audio equal
// one sentence alone on the device itself. It runs only where TTSGEN_TEST_DEVICE names a GPU device, since the
// suite must pass without a GPU.
func TestOnDevice(t *testing.T) {
	device := ort.Device(os.Getenv("TTSGEN_TEST_DEVICE"))
	if device == "" {
		t.Skip("TTSGEN_TEST_DEVICE is not set: no GPU to check")
	}
	for _, v := range []struct{ name, path string }{
		{"default", orttest.DefaultVoice},
		{"piper-shaped", piperShapedVoicePath},
		{"piper-medium-shaped", os.Getenv("TTSGEN_TEST_PIPER_MEDIUM")},
	} {
		if v.path == "" {
			continue
		}
		t.Run(v.name, func(t *testing.T) {
			// One sentence at a time, whole, float32: the reference.
			ref, refModel := voiceEngine(t, v.path, Options{Device: device, Tuning: Tuning{DecoderWindow: -1, MaxBatch: 1, InFlight: 1}})
			sentences, audio := aloneReference(t, ref, refModel, rand.New(rand.NewPCG(21, 22)), 8, func(i int) int { return 20 + 23*i })
			for _, tt := range []struct {
				name    string
				opts    Options
				maxDiff float64 // largest difference allowed at any sample
				minSNR  float64 // dB of the reference's energy over the difference's
			}{
				{"windows and batches, fp32", Options{Device: device, Tuning: Tuning{TextDevice: device}}, 1e-4, 60},
				{"windows and batches, fp16", Options{Device: device, Precision: PrecisionFloat16, Tuning: Tuning{TextDevice: device}}, 0.05, 30},
			} {
				e, m := voiceEngine(t, v.path, tt.opts)
				for i, got := range submitTogether(t, e, m, sentences) {
					if len(got) != len(audio[i]) {
						t.Fatalf("%s: sentence %d: %d samples, want %d", tt.name, i, len(got), len(audio[i]))
					}
					var signal, noise float64
					for k, x := range audio[i] {
						d := float64(got[k] - x)
						signal, noise = signal+float64(x)*float64(x), noise+d*d
					}
					snr := 10 * math.Log10(signal/max(noise, 1e-30))
					d := orttest.MaxAbsDiff(got, audio[i])
					t.Logf("%s: sentence %d (%d ids): max difference %.2g, SNR %.1f dB", tt.name, i, len(sentences[i]), d, snr)
					if d > tt.maxDiff || snr < tt.minSNR {
						t.Errorf("%s: sentence %d: max difference %.2g (allowed %.2g), SNR %.1f dB (want >= %.0f)", tt.name, i, d, tt.maxDiff, snr, tt.minSNR)
					}
				}
				e.Close()
			}
		})
	}
}

// TestOnDeviceTextPart: a Piper voice's text part as the GPU runs it (its LayerNorms fused, and the
// device's kernels) gives what the CPU gives for the voice's own graph, durations included (they set each
// sentence's length).
func TestOnDeviceTextPart(t *testing.T) {
	device := ort.Device(os.Getenv("TTSGEN_TEST_DEVICE"))
	if device == "" {
		t.Skip("TTSGEN_TEST_DEVICE is not set: no GPU to check")
	}
	orttest.Need(t)
	for _, v := range []struct{ name, path string }{
		{"piper-shaped", piperShapedVoicePath},
		{"piper-medium-shaped", os.Getenv("TTSGEN_TEST_PIPER_MEDIUM")},
	} {
		if v.path == "" {
			continue
		}
		t.Run(v.name, func(t *testing.T) {
			sv, io := splitVoiceAt(t, v.path)
			cut, err := vits.CutText(sv.Acoustic)
			if err != nil {
				t.Fatal(err)
			}
			onGPU := proto.Clone(cut.Text).(*onnx.ModelProto)
			fused := onnxgraph.FuseLayerNorms(onGPU)
			if fused == 0 {
				t.Fatal("fused no LayerNorms")
			}
			rng := rand.New(rand.NewPCG(23, 24))
			in := paddedBatch(rng, 120, 37, 80, 9)
			inputs := acousticInputs(in, io)
			var outs [2][]ort.Tensor
			for i, run := range []struct {
				graph  *onnx.ModelProto
				device ort.Device
			}{{cut.Text, ort.DeviceCPU}, {onGPU, device}} {
				outs[i] = orttest.Run(t, run.graph, cut.TextInputs, cut.Boundary, run.device, inputs)
			}
			for i, name := range cut.Boundary {
				want, got := outs[0][i], outs[1][i]
				if want.F32 == nil {
					continue
				}
				scale := 0.0
				for _, x := range want.F32 {
					scale = max(scale, math.Abs(float64(x)))
				}
				d := orttest.MaxAbsDiff(got.F32, want.F32)
				t.Logf("%s: %d LayerNorms fused; %s: max difference %.2g (largest value %.3g)", v.name, fused, name, d, scale)
				if d > 1e-3*max(scale, 1) {
					t.Errorf("%s differs from the CPU's by %.2g", name, d)
				}
			}
		})
	}
}
