package gpu

import (
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/advancedclimatesystems/gonnx/onnx"
	"google.golang.org/protobuf/proto"
)

// TestPaddingMasksStructure: every convolution of the decoder reads a masked input, one mask per rate, and layers
// that would change a sentence's length (where a repeated frame mask no longer lines up) are refused.
func TestPaddingMasksStructure(t *testing.T) {
	conv := func(name, in, out string, k, d, padLeft, padRight int64) *onnx.NodeProto {
		return &onnx.NodeProto{Name: name, OpType: "Conv", Input: []string{in, "w"}, Output: []string{out},
			Attribute: []*onnx.AttributeProto{intsAttr("kernel_shape", k), intsAttr("dilations", d), intsAttr("pads", padLeft, padRight)}}
	}
	up := func(k, stride, pad int64) *onnx.NodeProto {
		return &onnx.NodeProto{Name: "/dec/ups.0", OpType: "ConvTranspose", Input: []string{"x0", "wt"}, Output: []string{"x1"},
			Attribute: []*onnx.AttributeProto{intsAttr("kernel_shape", k), intsAttr("strides", stride), intsAttr("pads", pad, pad)}}
	}
	decoder := func(pre, ups, r1 *onnx.NodeProto) *onnx.GraphProto {
		return &onnx.GraphProto{Name: "dec", Node: []*onnx.NodeProto{
			pre, ups, r1,
			conv("/dec/r2", "x1", "y2", 3, 1, 1, 1),
			{Name: "/dec/add", OpType: "Add", Input: []string{"y1", "y2"}, Output: []string{"y"}},
			{Name: "/dec/tanh", OpType: "Tanh", Input: []string{"y"}, Output: []string{outputAudio}},
		}}
	}
	good := func() *onnx.GraphProto {
		return decoder(conv(decoderEntry, outputLatent, "x0", 7, 1, 3, 3), up(4, 2, 1), conv("/dec/r1", "x1", "y1", 3, 5, 5, 5))
	}
	g := good()
	masked, err := maskConvolutions(g, outputLatent, inputFrameMask)
	if err != nil || masked != 4 {
		t.Fatalf("masked %d convolutions, err %v; want all 4", masked, err)
	}
	inputs := map[string]string{} // convolution -> what it reads
	producers := map[string]*onnx.NodeProto{}
	for _, n := range g.GetNode() {
		producers[n.GetOutput()[0]] = n
		if n.GetOpType() == "Conv" || n.GetOpType() == "ConvTranspose" {
			inputs[n.GetName()] = n.GetInput()[0]
		}
	}
	for name, in := range inputs {
		if p := producers[in]; p == nil || p.GetOpType() != "Mul" {
			t.Errorf("%s reads %q, not a masked input", name, in)
		}
	}
	// r1 and r2 read the same tensor at rate 2: one Mul; the rate-2 mask is built once.
	if inputs["/dec/r1"] != inputs["/dec/r2"] {
		t.Errorf("two masks for one tensor: %q and %q", inputs["/dec/r1"], inputs["/dec/r2"])
	}
	if m := producers[inputs["/dec/r1"]]; m.GetInput()[1] != maskPrefix+"/rate2" {
		t.Errorf("rate-2 layer masked with %q", m.GetInput()[1])
	}
	if m := producers[inputs[decoderEntry]]; m.GetInput()[1] != inputFrameMask {
		t.Errorf("rate-1 layer masked with %q", m.GetInput()[1])
	}

	for _, tt := range []struct {
		name  string
		graph *onnx.GraphProto
		want  string
	}{
		{"a Conv that shortens", decoder(conv(decoderEntry, outputLatent, "x0", 7, 1, 0, 0), up(4, 2, 1), conv("/dec/r1", "x1", "y1", 3, 5, 5, 5)), "changes the length"},
		{"lopsided padding", decoder(conv(decoderEntry, outputLatent, "x0", 7, 1, 3, 3), up(4, 2, 1), conv("/dec/r1", "x1", "y1", 3, 5, 4, 5)), "changes the length"},
		{"an upsampling that overshoots", decoder(conv(decoderEntry, outputLatent, "x0", 7, 1, 3, 3), up(4, 2, 0), conv("/dec/r1", "x1", "y1", 3, 5, 5, 5)), "exactly 2 times"},
	} {
		before := proto.Clone(tt.graph)
		if _, err := maskConvolutions(tt.graph, outputLatent, inputFrameMask); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err %v, want %q", tt.name, err, tt.want)
		}
		if !proto.Equal(before, tt.graph) {
			t.Errorf("%s: the graph was changed although masking failed", tt.name)
		}
	}
}

// TestPaddingMasksOfAPiperVoice: Piper's decoder is not masked, so without the masks its batched and windowed audio
// leak padding into the sentences' ends (this test voice shows it plainly); with them both equal batch-1 audio. The
// tests of batches and windows (TestBatchedMatchesAlone, TestContinuousBatching) hold the masked engine to 1e-4.
func TestPaddingMasksOfAPiperVoice(t *testing.T) {
	voice := readVoice(t, piperShapedVoicePath)
	prepared, _, err := prepareGraph(voice)
	if err != nil {
		t.Fatal(err)
	}
	if _, n, err := maskWholeGraph(prepared); err != nil || n != 23 {
		t.Errorf("whole graph: %d convolutions masked, err %v; want the decoder's 23", n, err)
	}
	sv, err := splitGraph(prepared, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, n, err := maskDecoderGraph(sv.decoder); err != nil || n != 23 {
		t.Errorf("split decoder: %d convolutions masked, err %v; want 23", n, err)
	}

	for _, tt := range []struct {
		name    string
		opts    Options
		leaks   bool
		minDiff float64
	}{
		{"batched, masked", Options{Threads: 1, MaxBatch: 4}, false, 0},
		{"batched, unmasked", Options{Threads: 1, MaxBatch: 4, NoPaddingMasks: true}, true, 1e-2},
		{"windows, masked", Options{Threads: 1, MaxBatch: 4, DecoderWindow: 16}, false, 0},
		{"windows, unmasked", Options{Threads: 1, MaxBatch: 4, DecoderWindow: 16, NoPaddingMasks: true}, true, 1e-2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			alone, aloneModel := voiceEngine(t, piperShapedVoicePath, Options{Threads: 1, MaxBatch: 1, NoPaddingMasks: true})
			e, m := voiceEngine(t, piperShapedVoicePath, tt.opts)
			rng := rand.New(rand.NewPCG(21, 22))
			var worst float64
			for _, n := range []int{5, 23, 12} {
				short := &item{model: m, req: Request{IDs: sentence(rng, n), Scales: deterministic}}
				want, err := alone.synthesize(aloneModel.runners[0], []*item{{model: aloneModel, req: short.req}})
				if err != nil {
					t.Fatal(err)
				}
				var got []float32
				if m.Windowed() {
					// The windows reach past both ends of even a sentence on its own.
					res := <-e.Submit(context.Background(), m, short.req)
					got, err = res.Audio, res.Err
				} else {
					// Batched with a longer sentence, the short one is padded.
					long := &item{model: m, req: Request{IDs: sentence(rng, 40), Scales: deterministic}}
					var both [][]float32
					both, err = e.synthesize(m.runners[0], []*item{short, long})
					if err == nil {
						got = both[0]
					}
				}
				if err != nil {
					t.Fatal(err)
				}
				if len(got) != len(want[0]) {
					t.Fatalf("%d phonemes: %d samples, want %d", n, len(got), len(want[0]))
				}
				worst = max(worst, maxAbsDiff(got, want[0]))
			}
			if tt.leaks && worst < tt.minDiff {
				t.Errorf("max difference from Piper's own batch-1 audio %g: the test voice no longer shows the leak (want > %g)", worst, tt.minDiff)
			}
			if !tt.leaks && worst > 1e-4 {
				t.Errorf("max difference from Piper's own batch-1 audio %g (> 1e-4)", worst)
			}
			t.Logf("max difference %g", worst)
		})
	}
}

// TestDecoderMasksItself: the probe tells ttsgen's voice (masked layers) from Piper's (unmasked decoder), so masks
// are added only where they change the audio.
func TestDecoderMasksItself(t *testing.T) {
	needORT(t)
	e, err := NewEngine(Options{Device: DeviceCPU, Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	for _, tt := range []struct {
		path string
		want bool
	}{{tinyVoicePath, true}, {piperShapedVoicePath, false}} {
		graph, _, err := prepareGraph(readVoice(t, tt.path))
		if err != nil {
			t.Fatal(err)
		}
		if got, err := e.decoderMasksItself(graph); err != nil || got != tt.want {
			t.Errorf("%s: masks itself %v, err %v; want %v", tt.path, got, err, tt.want)
		}
	}
	if _, err := e.decoderMasksItself(fakeVoiceGraph(t, true, false)); !errors.Is(err, errNoDecoder) {
		t.Errorf("a graph without a decoder: err %v, want errNoDecoder", err)
	}
}
