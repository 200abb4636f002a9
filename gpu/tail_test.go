package gpu

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// tiledAndWhole makes a tiled runner (tiles of tile samples of the tail's input, margin reach unless it is -1) and
// a whole-graph runner for the voice at path, both on the CPU.
func tiledAndWhole(t *testing.T, path string, tile, reach int) (*tiledRunner, runner, *tailCut) {
	t.Helper()
	graph, io, err := prepareGraph(readVoice(t, path))
	if err != nil {
		t.Fatal(err)
	}
	tc, err := cutTail(graph)
	if err != nil {
		t.Fatal(err)
	}
	if reach >= 0 {
		tc.reach = reach
	}
	b := ortBackend{}
	head, err := b.newGraphRunner(tc.head, io.inputNames(), tc.headOutputs(), DeviceCPU, 1)
	if err != nil {
		t.Fatal(err)
	}
	tail, err := b.newGraphRunner(tc.tail, tc.tailInputs(), []string{outputAudio}, DeviceCPU, 1)
	if err != nil {
		t.Fatal(err)
	}
	whole, err := b.newRunner(graph, io, DeviceCPU, 1)
	if err != nil {
		t.Fatal(err)
	}
	tiled := &tiledRunner{head: head, tail: tail, io: io, cut: tc, tile: tile}
	t.Cleanup(func() { tiled.close(); whole.close() })
	return tiled, whole, tc
}

// The cut for ttsgen's voice (which masks its own decoder: the tail reads its masks from the head) and for
// Piper's graph (nothing but the cut tensor), at the input of the second-to-last upsampling layer.
func TestCutTail(t *testing.T) {
	needORT(t)
	for _, tt := range []struct {
		path                  string
		perFrame, rate, extra int
	}{
		{tinyVoicePath, 8, 32, 2}, // its masks at the last two stages' rates
		{piperShapedVoicePath, 8, 32, 0},
	} {
		t.Run(tt.path, func(t *testing.T) {
			_, _, tc := tiledAndWhole(t, tt.path, 16, -1)
			if tc.perFrame != tt.perFrame || tc.rate != tt.rate || len(tc.extras) != tt.extra {
				t.Errorf("cut: %d samples per frame, %d output samples per sample, extras %v; want %d, %d, %d extras",
					tc.perFrame, tc.rate, tc.extras, tt.perFrame, tt.rate, tt.extra)
			}
			if tc.reach <= 0 || tc.reach%tc.perFrame != 0 {
				t.Errorf("reach %d: want a positive number of whole frames", tc.reach)
			}
		})
	}
}

// A sentence decoded tile by tile is the sentence decoded whole, for tiles smaller and larger than the sentence
// and not dividing it; without the margins it is not (so the comparison can fail).
func TestTiledTailMatchesWholeSentence(t *testing.T) {
	needORT(t)
	rng := rand.New(rand.NewPCG(15, 16))
	for _, path := range []string{tinyVoicePath, piperShapedVoicePath} {
		for _, tile := range []int{16, 40, 256} {
			t.Run(fmt.Sprintf("%s/tile%d", path, tile), func(t *testing.T) {
				tiled, whole, _ := tiledAndWhole(t, path, tile, -1)
				noMargin, _, _ := tiledAndWhole(t, path, tile, 0)
				for _, n := range []int{3, 17, 40} {
					ids := sentence(rng, n)
					in := batchInput{size: 1, width: len(ids), ids: ids, lengths: []int64{int64(len(ids))}, scales: deterministic}
					want, err := whole.run(in)
					if err != nil {
						t.Fatal(err)
					}
					got, err := tiled.run(in)
					if err != nil {
						t.Fatal(err)
					}
					if len(got.audio) != len(want.audio) || maxAbsDiff(got.frames, want.frames) != 0 {
						t.Fatalf("%d phonemes: %d samples, want %d; durations differ by %g", n, len(got.audio), len(want.audio), maxAbsDiff(got.frames, want.frames))
					}
					if d := maxAbsDiff(got.audio, want.audio); d > 1e-5 {
						t.Errorf("%d phonemes (%d samples): tiled audio differs by %g", n, len(want.audio), d)
					}
					cut, err := noMargin.run(in)
					if err != nil {
						t.Fatal(err)
					}
					if d := maxAbsDiff(cut.audio, want.audio); tile < len(want.audio)/32 && d < 1e-3 {
						t.Errorf("%d phonemes: without margins the tiles differ by only %g", n, d)
					}
				}
			})
		}
	}
}

// A CPU engine running one sentence at a time tiles its decoders by default; -1, batches and GPUs do not.
func TestTailTilesWhereTheyApply(t *testing.T) {
	needORT(t)
	for _, tt := range []struct {
		name  string
		opts  Options
		tiled bool
	}{
		{"cpu default", Options{Device: DeviceCPU, Threads: 1}, true},
		{"cpu, tail tiles off", Options{Device: DeviceCPU, Threads: 1, TailTile: -1}, false},
		{"cpu, batches", Options{Device: DeviceCPU, Threads: 1, MaxBatch: 4}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e, m := voiceEngine(t, piperShapedVoicePath, tt.opts)
			defer e.Close()
			_, tiled := m.runners[0].(*tiledRunner)
			if tiled != tt.tiled {
				t.Errorf("tiled runner %v, want %v", tiled, tt.tiled)
			}
		})
	}
}
