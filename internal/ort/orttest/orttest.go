// Package orttest is what the tests of packages that run graphs share: ONNX Runtime loaded (or the test skipped), the
// repository's test voices, and a graph run once.
package orttest

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/advancedclimatesystems/gonnx/onnx"
	"google.golang.org/protobuf/proto"

	"github.com/ttsgen/ttsgen/internal/ort"
	"github.com/ttsgen/ttsgen/internal/ortlib"
)

// The repository's test voices, by their paths from its root.
const (
	// TinyVoice has the default voice's architecture at a tiny size: a decoder that masks every layer itself.
	TinyVoice = "testdata/tiny-voice/tiny.onnx"
	// PiperShapedVoice is a random voice with a Piper VITS graph (unmasked decoder, flow, relative attention):
	// training/piper_shape.py.
	PiperShapedVoice = "testdata/piper-shaped-voice/tiny-vits.onnx"
	// PiperShaped3Voice is the same with 3 speakers: "sid" conditions its duration predictor, flow and decoder.
	PiperShaped3Voice = "testdata/piper-shaped-voice/tiny-vits-3speakers.onnx"
	// TestVoice is Piper's own test voice.
	TestVoice = "testdata/piper-test-voice/test_voice.onnx"
	// DefaultVoice is ttsgen's built-in voice.
	DefaultVoice = "internal/voices/default/en_US-ttsgen-medium.onnx"
)

// required says whether a missing library or voice fails the test rather than skipping it (CI sets
// TTSGEN_REQUIRE_ORT=1, so that a broken setup cannot pass as skipped tests).
func required() bool { return os.Getenv("TTSGEN_REQUIRE_ORT") == "1" }

// Need loads ONNX Runtime from $TTSGEN_ORT_LIB, else from where setup installs it (ortlib.InstallPath). Without it
// the test is skipped, or fails when TTSGEN_REQUIRE_ORT=1.
func Need(t testing.TB) {
	t.Helper()
	lib := os.Getenv("TTSGEN_ORT_LIB")
	if lib == "" {
		lib = ortlib.InstallPath()
	}
	if _, err := os.Stat(lib); err != nil {
		if required() {
			t.Fatalf("TTSGEN_REQUIRE_ORT=1 but the ONNX Runtime library is missing: %v (set TTSGEN_ORT_LIB)", err)
		}
		t.Skipf("no ONNX Runtime library (%v); set TTSGEN_ORT_LIB to run this test", err)
	}
	if err := ort.Init(lib); err != nil {
		t.Fatal(err)
	}
}

// Voice reads the voice at path: absolute, or from the repository's root (the constants above).
func Voice(t testing.TB, path string) []byte {
	t.Helper()
	var err error
	if !filepath.IsAbs(path) {
		var root string
		root, err = moduleRoot()
		path = filepath.Join(root, path)
	}
	if err == nil {
		var data []byte
		if data, err = os.ReadFile(path); err == nil {
			return data
		}
	}
	if required() {
		t.Fatalf("test voice missing: %v", err)
	}
	t.Skipf("test voice missing: %v", err)
	return nil
}

// moduleRoot is the folder of the go.mod above the test's working directory (its package's folder).
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}

// Run makes a one-thread session of graph on device d, runs it once on inputs and returns its outputs; any failure
// fails the test.
func Run(t testing.TB, graph *onnx.ModelProto, inputNames, outputNames []string, d ort.Device, inputs []ort.Tensor) []ort.Tensor {
	t.Helper()
	Need(t)
	data, err := proto.Marshal(graph)
	if err != nil {
		t.Fatal(err)
	}
	r, err := ort.Sessions{}.NewRunner(data, inputNames, outputNames, d, 1, false)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	out, err := r.Run(inputs)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Device is the GPU that $TTSGEN_TEST_DEVICE names, for benchmarks that measure one, with ONNX Runtime loaded;
// without it the benchmark is skipped.
func Device(b *testing.B) ort.Device {
	b.Helper()
	device := ort.Device(os.Getenv("TTSGEN_TEST_DEVICE"))
	if device == "" {
		b.Skip("TTSGEN_TEST_DEVICE is not set: no GPU to measure")
	}
	Need(b)
	return device
}

// TimeRuns runs run once to warm up (a GPU provider compiles its kernels on first sight of a shape), then b.N
// times, and reports wall and CPU milliseconds per run: the CPU time says whether the host works (encoding,
// copying) or waits for the device.
func TimeRuns(b *testing.B, run func() error) {
	b.Helper()
	if err := run(); err != nil {
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

// cpuTime is the process's CPU time so far, user and system.
func cpuTime() time.Duration {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		return 0
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}

// OpCounts counts graph's nodes by operator.
func OpCounts(graph *onnx.ModelProto) map[string]int {
	counts := map[string]int{}
	for _, n := range graph.GetGraph().GetNode() {
		counts[n.GetOpType()]++
	}
	return counts
}

// MaxAbsDiff is the largest difference between a and b at any index of a (b at least as long).
func MaxAbsDiff(a, b []float32) float64 {
	var worst float64
	for i := range a {
		worst = max(worst, math.Abs(float64(a[i]-b[i])))
	}
	return worst
}

// FakeVoice is a minimal graph with a Piper voice's signature: what a loader checks and edits, not a voice.
func FakeVoice(t testing.TB, withCeil, withSpeaker bool) []byte {
	t.Helper()
	value := func(name string, elem onnx.TensorProto_DataType) *onnx.ValueInfoProto {
		return &onnx.ValueInfoProto{Name: name, Type: &onnx.TypeProto{Value: &onnx.TypeProto_TensorType{
			TensorType: &onnx.TypeProto_Tensor{ElemType: int32(elem)}}}}
	}
	graph := &onnx.GraphProto{
		Name: "fake_voice",
		Input: []*onnx.ValueInfoProto{value("input", onnx.TensorProto_INT64),
			value("input_lengths", onnx.TensorProto_INT64), value("scales", onnx.TensorProto_FLOAT)},
		Output: []*onnx.ValueInfoProto{value("output", onnx.TensorProto_FLOAT)},
		Node: []*onnx.NodeProto{
			{Name: "/Cast", OpType: "Cast", Input: []string{"input"}, Output: []string{"/Cast_output_0"}},
			{Name: "/Identity", OpType: "Identity", Input: []string{"/Cast_output_0"}, Output: []string{"output"}},
		},
	}
	if withCeil {
		graph.Node = append(graph.Node, &onnx.NodeProto{Name: "/Ceil", OpType: "Ceil",
			Input: []string{"/Cast_output_0"}, Output: []string{"/Ceil_output_0"}})
	}
	if withSpeaker {
		graph.Input = append(graph.Input, value("sid", onnx.TensorProto_INT64))
	}
	data, err := proto.Marshal(&onnx.ModelProto{IrVersion: 8, Graph: graph,
		OpsetImport: []*onnx.OperatorSetIdProto{{Version: 15}}})
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// Parse decodes an ONNX model or fails the test.
func Parse(t testing.TB, data []byte) *onnx.ModelProto {
	t.Helper()
	var model onnx.ModelProto
	if err := proto.Unmarshal(data, &model); err != nil {
		t.Fatal(err)
	}
	return &model
}

// InputRanks lists a graph's inputs with their declared ranks (0: unknown).
func InputRanks(graph *onnx.ModelProto) string {
	var ranks []string
	for _, in := range graph.GetGraph().GetInput() {
		ranks = append(ranks, fmt.Sprintf("%s:%d", in.GetName(), len(in.GetType().GetTensorType().GetShape().GetDim())))
	}
	return strings.Join(ranks, " ")
}
