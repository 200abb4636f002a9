package ort_test

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/advancedclimatesystems/gonnx/onnx"
	onnxrt "github.com/yalue/onnxruntime_go"
	"google.golang.org/protobuf/proto"

	"github.com/ttsgen/ttsgen/internal/onnxgraph"
	"github.com/ttsgen/ttsgen/internal/ort"
	"github.com/ttsgen/ttsgen/internal/ort/orttest"
)

// What moving a decoder run's worth of bytes to and from a GPU costs on its own, and how this machine's cores slow
// each other down: measurements of the machine under the engine, run by hand (-test.bench, -test.benchtime 1x).

// transferGraph is one of: "both" (y = x*2, x and y n floats), "up" (y = ReduceSum(x): n floats up, one down),
// "down" (y = Expand(x, [n]): one float up, n down).
func transferGraph(kind string, n int64) ([]byte, int64, int64) {
	in, out := n, n
	var nodes []*onnx.NodeProto
	inits := []*onnx.TensorProto{onnxgraph.FloatInit("two", []float32{2})}
	switch kind {
	case "both":
		nodes = []*onnx.NodeProto{{Name: "mul", OpType: "Mul", Input: []string{"x", "two"}, Output: []string{"y"}}}
	case "up":
		out = 1
		nodes = []*onnx.NodeProto{{Name: "sum", OpType: "ReduceSum", Input: []string{"x"}, Output: []string{"y"},
			Attribute: []*onnx.AttributeProto{{Name: "keepdims", Type: onnx.AttributeProto_INT, I: 1}}}}
	case "down":
		in = 1
		inits = append(inits, onnxgraph.IntInit("shape", n))
		nodes = []*onnx.NodeProto{{Name: "expand", OpType: "Expand", Input: []string{"x", "shape"}, Output: []string{"y"}}}
	}
	model := &onnx.ModelProto{
		IrVersion:   8,
		OpsetImport: []*onnx.OperatorSetIdProto{{Version: 15}},
		Graph: &onnx.GraphProto{Name: "transfer_" + kind, Node: nodes, Initializer: inits,
			Input: []*onnx.ValueInfoProto{onnxgraph.FloatTensor("x")}, Output: []*onnx.ValueInfoProto{onnxgraph.FloatTensor("y")}},
	}
	data, err := proto.Marshal(model)
	if err != nil {
		panic(err)
	}
	return data, in, out
}

func BenchmarkDeviceTransfers(b *testing.B) {
	device := orttest.Device(b)
	for _, n := range []int64{16, 1 << 18, 64 * 160 * 256} {
		for _, kind := range []string{"both", "up", "down"} {
			b.Run(fmt.Sprintf("%s/%dKiB", kind, n*4/1024), func(b *testing.B) {
				graph, in, out := transferGraph(kind, n)
				r, err := ort.Sessions{}.NewRunner(graph, []string{"x"}, []string{"y"}, device, 1, true)
				if err != nil {
					b.Fatal(err)
				}
				defer r.Close()
				x := ort.Tensor{Shape: []int64{in}, F32: make([]float32, in)}
				for i := range x.F32 {
					x.F32[i] = float32(i % 7)
				}
				b.SetBytes(4 * (in + out))
				orttest.TimeRuns(b, func() error { _, err := r.Run([]ort.Tensor{x}); return err })
			})
		}
	}
}

// BenchmarkMachineScaling measures how this machine's cores slow each other down, as the CPU engine's side-by-side
// sessions do: each workload runs on one locked thread alone, then on one per core at once, and reports the per-thread rate with every core busy as a
// fraction of the rate alone. "arith" is register arithmetic (what clock speed alone does); "stream" reads a
// private 64 MiB buffer (memory bandwidth); "conv-l2", "conv-cache" and "conv-dram" are one ONNX Runtime Conv of
// a HiFi-GAN's last stage (32 channels, kernel 7), single-threaded, on 1,024 samples (128 KiB in, 128 out: within
// a core's L2), 8,192 (1 MiB each) and 176,400 (8 s of audio, 22 MiB each: as the engine's whole-sentence CPU
// runs). Run with -test.bench MachineScaling -test.benchtime 1x.
func BenchmarkMachineScaling(b *testing.B) {
	threads := runtime.NumCPU()
	workloads := []struct {
		name    string
		newUnit func(b *testing.B) (unit func() float64, close func()) // unit runs one unit of work, returns its size
	}{
		{"arith", func(*testing.B) (func() float64, func()) {
			return func() float64 { arith(50_000_000); return 50e6 }, func() {}
		}},
		{"stream", func(*testing.B) (func() float64, func()) {
			buf := make([]float32, 16<<20)
			for i := range buf {
				buf[i] = float32(i & 7)
			}
			return func() float64 { sumFloats(buf); return float64(4 * len(buf)) }, func() {}
		}},
		{"conv-l2", func(b *testing.B) (func() float64, func()) { return convUnit(b, 1024, 320) }},
		{"conv-cache", func(b *testing.B) (func() float64, func()) { return convUnit(b, 8192, 40) }},
		{"conv-dram", func(b *testing.B) (func() float64, func()) { return convUnit(b, 176400, 2) }},
	}
	for _, w := range workloads {
		b.Run(w.name, func(b *testing.B) {
			if w.name[:4] == "conv" {
				orttest.Need(b)
			}
			alone := scalingRate(b, 1, w.newUnit)
			together := scalingRate(b, threads, w.newUnit)
			b.ReportMetric(alone, "rate-alone")
			b.ReportMetric(together, "rate-per-thread-all-busy")
			b.ReportMetric(together/alone, "fraction")
			b.Logf("%s: %d threads: per-thread rate %.3g, alone %.3g: %.0f%%", w.name, threads, together, alone, 100*together/alone)
		})
	}
}

// scalingRate runs n locked threads, each with its own workload, for about two seconds and returns the mean
// per-thread rate (work units per second).
func scalingRate(b *testing.B, n int, newUnit func(b *testing.B) (func() float64, func())) float64 {
	units, closers := make([]func() float64, n), make([]func(), n)
	for i := range n {
		units[i], closers[i] = newUnit(b)
	}
	defer func() {
		for _, c := range closers {
			c()
		}
	}()
	for _, u := range units {
		u() // warm: first runs allocate and fault pages
	}
	rates := make([]float64, n)
	var start, wg sync.WaitGroup
	start.Add(1)
	for i := range n {
		wg.Go(func() {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			start.Wait()
			t0, done := time.Now(), 0.0
			for time.Since(t0) < 2*time.Second {
				done += units[i]()
			}
			rates[i] = done / time.Since(t0).Seconds()
		})
	}
	start.Done()
	wg.Wait()
	sum := 0.0
	for _, r := range rates {
		sum += r
	}
	return sum / float64(n)
}

//go:noinline
func arith(n int) float64 {
	a, c, d, e := 1.0, 1.1, 1.2, 1.3
	for range n {
		a, c, d, e = a*0.999999+1e-7, c*0.999999+1e-7, d*0.999999+1e-7, e*0.999999+1e-7
	}
	return a + c + d + e
}

//go:noinline
func sumFloats(buf []float32) float32 {
	var s0, s1, s2, s3 float32
	for i := 0; i+3 < len(buf); i += 4 {
		s0, s1, s2, s3 = s0+buf[i], s1+buf[i+1], s2+buf[i+2], s3+buf[i+3]
	}
	return s0 + s1 + s2 + s3
}

// convUnit makes a one-thread CPU session of y = Conv(x) (32 -> 32 channels, kernel 7, padding 3) on samples
// samples, and returns a unit that runs it reps times (its size: samples x reps).
func convUnit(b *testing.B, samples, reps int) (func() float64, func()) {
	rng := rand.New(rand.NewPCG(uint64(samples), 1))
	w := make([]float32, 32*32*7)
	for i := range w {
		w[i] = float32(rng.NormFloat64() * 0.1)
	}
	model := &onnx.ModelProto{IrVersion: 8, OpsetImport: []*onnx.OperatorSetIdProto{{Version: 15}},
		Graph: &onnx.GraphProto{Name: "conv",
			Node: []*onnx.NodeProto{{Name: "conv", OpType: "Conv", Input: []string{"x", "w"}, Output: []string{"y"},
				Attribute: []*onnx.AttributeProto{onnxgraph.IntsAttr("kernel_shape", 7), onnxgraph.IntsAttr("pads", 3, 3)}}},
			Initializer: []*onnx.TensorProto{onnxgraph.FloatInit("w", w, 32, 32, 7)},
			Input:       []*onnx.ValueInfoProto{onnxgraph.FloatTensor("x")},
			Output:      []*onnx.ValueInfoProto{onnxgraph.FloatTensor("y")},
		}}
	graph, err := proto.Marshal(model)
	if err != nil {
		b.Fatal(err)
	}
	r, err := ort.Sessions{}.NewRunner(graph, []string{"x"}, []string{"y"}, ort.DeviceCPU, 1, false)
	if err != nil {
		b.Fatal(err)
	}
	x := ort.Tensor{Shape: []int64{1, 32, int64(samples)}, F32: make([]float32, 32*samples)}
	for i := range x.F32 {
		x.F32[i] = float32(rng.NormFloat64())
	}
	// Tensors made once, run after run (as the engine's planned outputs are): the Go heap stays out of it.
	in, err := ort.InputValue(x)
	if err != nil {
		b.Fatal(err)
	}
	out, err := onnxrt.NewEmptyTensor[float32](onnxrt.NewShape(x.Shape...))
	if err != nil {
		b.Fatal(err)
	}
	session := r.Session()
	unit := func() float64 {
		for range reps {
			if err := session.Run([]onnxrt.Value{in}, []onnxrt.Value{out}); err != nil {
				panic(fmt.Sprintf("conv run: %v", err))
			}
		}
		return float64(samples * reps)
	}
	return unit, func() { in.Destroy(); out.Destroy(); r.Close() }
}
