package engine

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/advancedclimatesystems/gonnx/onnx"
	ort "github.com/yalue/onnxruntime_go"
	"google.golang.org/protobuf/proto"
)

// BenchmarkMachineScaling measures how this machine's cores slow each other down, as the CPU engine's sessions do
// (16 single-thread sessions on the H200 machine ran at 62-77% of 16 x one session): each workload runs on one
// locked thread alone, then on one per core at once, and reports the per-thread rate with every core busy as a
// fraction of the rate alone. "arith" is register arithmetic (what clock speed alone does); "stream" reads a
// private 64 MiB buffer (memory bandwidth); "conv-l2", "conv-cache" and "conv-dram" are one ONNX Runtime Conv of
// a HiFi-GAN's last stage (32 channels, kernel 7), single-threaded, on 1,024 samples (128 KiB in, 128 out: within
// a core's L2), 8,192 (1 MiB each) and 176,400 (8 s of audio, 22 MiB each: as the engine's whole-sentence CPU runs). Run with -test.bench MachineScaling
// -test.benchtime 1x (scripts/gpu-bench.sh's probe).
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
				if err := Init(testLibPath()); err != nil {
					b.Skip(err)
				}
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
				Attribute: []*onnx.AttributeProto{intsAttr("kernel_shape", 7), intsAttr("pads", 3, 3)}}},
			Initializer: []*onnx.TensorProto{floatInit("w", w, 32, 32, 7)},
			Input:       []*onnx.ValueInfoProto{floatTensor("x")},
			Output:      []*onnx.ValueInfoProto{floatTensor("y")},
		}}
	graph, err := proto.Marshal(model)
	if err != nil {
		b.Fatal(err)
	}
	r, err := ortBackend{}.newGraphRunner(graph, []string{"x"}, []string{"y"}, DeviceCPU, 1)
	if err != nil {
		b.Fatal(err)
	}
	x := tensor{shape: []int64{1, 32, int64(samples)}, f32: make([]float32, 32*samples)}
	for i := range x.f32 {
		x.f32[i] = float32(rng.NormFloat64())
	}
	// Tensors made once, run after run (as the engine's planned outputs are): the Go heap stays out of it.
	in, err := inputValue(x)
	if err != nil {
		b.Fatal(err)
	}
	out, err := ort.NewEmptyTensor[float32](ort.NewShape(x.shape...))
	if err != nil {
		b.Fatal(err)
	}
	session := r.(*ortGraphRunner).session
	unit := func() float64 {
		for range reps {
			if err := session.Run([]ort.Value{in}, []ort.Value{out}); err != nil {
				panic(fmt.Sprintf("conv run: %v", err))
			}
		}
		return float64(samples * reps)
	}
	return unit, func() { in.Destroy(); out.Destroy(); r.close() }
}
