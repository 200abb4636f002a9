package engine

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/advancedclimatesystems/gonnx/onnx"
	"github.com/ttsgen/ttsgen/internal/onnxgraph"
	"github.com/ttsgen/ttsgen/internal/ort"
	"github.com/ttsgen/ttsgen/internal/ort/orttest"
	"github.com/ttsgen/ttsgen/internal/vits"
	"google.golang.org/protobuf/proto"
)

// tiledAndWhole makes a tiled runner (tiles of tile samples of the tail's input, margin reach unless it is -1) and
// a whole-graph runner for the voice at path, both on the CPU.
func tiledAndWhole(t *testing.T, path string, tile, reach int) (*tiledRunner, runner, *vits.TailCut) {
	t.Helper()
	graph, io, err := vits.PrepareGraph(orttest.Voice(t, path))
	if err != nil {
		t.Fatal(err)
	}
	tc, err := vits.CutTail(graph)
	if err != nil {
		t.Fatal(err)
	}
	if reach >= 0 {
		tc.Reach = reach
	}
	head := cpuRunner(t, tc.Head, io.InputNames(), tc.HeadOutputs())
	tail := cpuRunner(t, tc.Tail, tc.TailInputs(), []string{vits.OutputAudio})
	encoded, err := onnxgraph.Encode(graph)
	if err != nil {
		t.Fatal(err)
	}
	whole, err := ortBackend{}.newRunner(encoded, io, ort.DeviceCPU, 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { whole.Close() })
	tiled := &tiledRunner{head: head, tail: tail, io: io, cut: tc, tile: tile}
	return tiled, whole, tc
}

// A sentence decoded tile by tile is the sentence decoded whole, for tiles smaller and larger than the sentence
// and not dividing it; without the margins it is not (so the comparison can fail).
func TestTiledTailMatchesWholeSentence(t *testing.T) {
	orttest.Need(t)
	rng := rand.New(rand.NewPCG(15, 16))
	for _, path := range []string{tinyVoicePath, piperShapedVoicePath, piperShaped3VoicePath} {
		for _, tile := range []int{16, 40, 256} {
			t.Run(fmt.Sprintf("%s/tile%d", path, tile), func(t *testing.T) {
				tiled, whole, _ := tiledAndWhole(t, path, tile, -1)
				noMargin, _, _ := tiledAndWhole(t, path, tile, 0)
				for _, n := range []int{3, 17, 40} {
					ids := sentence(rng, n)
					in := batchInput{size: 1, width: len(ids), ids: ids, lengths: []int64{int64(len(ids))}, scales: deterministic}
					if path == piperShaped3VoicePath {
						in.speakers = []int64{int64(n % 3)}
					}
					want, err := whole.run(in)
					if err != nil {
						t.Fatal(err)
					}
					got, err := tiled.run(in)
					if err != nil {
						t.Fatal(err)
					}
					if len(got.audio) != len(want.audio) || orttest.MaxAbsDiff(got.frames, want.frames) != 0 {
						t.Fatalf("%d phonemes: %d samples, want %d; durations differ by %g", n, len(got.audio), len(want.audio), orttest.MaxAbsDiff(got.frames, want.frames))
					}
					if d := orttest.MaxAbsDiff(got.audio, want.audio); d > 1e-5 {
						t.Errorf("%d phonemes (%d samples): tiled audio differs by %g", n, len(want.audio), d)
					}
					cut, err := noMargin.run(in)
					if err != nil {
						t.Fatal(err)
					}
					if d := orttest.MaxAbsDiff(cut.audio, want.audio); tile < len(want.audio)/32 && d < 1e-3 {
						t.Errorf("%d phonemes: without margins the tiles differ by only %g", n, d)
					}
				}
			})
		}
	}
}

// A CPU engine running one sentence at a time tiles its decoders by default; -1, batches and GPUs do not.
func TestTailTilesWhereTheyApply(t *testing.T) {
	orttest.Need(t)
	for _, tt := range []struct {
		name  string
		opts  Options
		tiled bool
	}{
		{"cpu default", Options{Device: ort.DeviceCPU, Threads: 1}, true},
		{"cpu, tail tiles off", Options{Device: ort.DeviceCPU, Threads: 1, Tuning: Tuning{TailTile: -1}}, false},
		{"cpu, batches", Options{Device: ort.DeviceCPU, Threads: 1, Tuning: Tuning{MaxBatch: 4}}, false},
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

// speakerScaledTail multiplies the 3-speaker Piper-shaped voice's last upsampling output by a factor of one made
// from the speaker id: a tail that reads something of the head's that does not run along the sentence.
func speakerScaledTail(t *testing.T) []byte {
	t.Helper()
	model := orttest.Parse(t, orttest.Voice(t, piperShaped3VoicePath))
	g := model.GetGraph()
	var last *onnx.NodeProto
	for _, n := range g.GetNode() {
		if n.GetOpType() == "ConvTranspose" {
			last = n
		}
	}
	out := last.GetOutput()[0]
	last.Output[0] = out + "/unscaled"
	g.Initializer = append(g.Initializer, onnxgraph.FloatInit("speaker/zero", []float32{0}), onnxgraph.FloatInit("speaker/one", []float32{1}),
		onnxgraph.IntInit("speaker/shape", 1, 1, 1))
	extra := []*onnx.NodeProto{
		{Name: "speaker/cast", OpType: "Cast", Input: []string{vits.InputSpeaker}, Output: []string{"speaker/f"},
			Attribute: []*onnx.AttributeProto{{Name: "to", Type: onnx.AttributeProto_INT, I: int64(onnx.TensorProto_FLOAT)}}},
		{Name: "speaker/mul", OpType: "Mul", Input: []string{"speaker/f", "speaker/zero"}, Output: []string{"speaker/0"}},
		{Name: "speaker/add", OpType: "Add", Input: []string{"speaker/0", "speaker/one"}, Output: []string{"speaker/1"}},
		{Name: "speaker/reshape", OpType: "Reshape", Input: []string{"speaker/1", "speaker/shape"}, Output: []string{"speaker/factor"}},
		{Name: "speaker/scale", OpType: "Mul", Input: []string{out + "/unscaled", "speaker/factor"}, Output: []string{out}},
	}
	var nodes []*onnx.NodeProto
	for _, n := range g.GetNode() {
		nodes = append(nodes, n)
		if n == last {
			nodes = append(nodes, extra...)
		}
	}
	g.Node = nodes
	data, err := proto.Marshal(model)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// A tail that reads a head tensor not along the sentence fails Load's trial run: the voice runs whole sentences,
// with a note, and speaks.
func TestTailTrialRunFallsBack(t *testing.T) {
	orttest.Need(t)
	var logs []string
	e, err := NewEngine(Options{Device: ort.DeviceCPU, Threads: 1, Logf: func(f string, a ...any) { logs = append(logs, fmt.Sprintf(f, a...)) }})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	m, err := e.Load("scaled", speakerScaledTail(t), ModelConfig{SampleRate: 22050, NumSpeakers: 3})
	if err != nil {
		t.Fatal(err)
	}
	if _, tiled := m.runners[0].(*tiledRunner); tiled || len(logs) != 1 || !strings.Contains(logs[0], "a trial run") {
		t.Errorf("tiled %v, logs %q; want whole sentences and a note of the trial run", tiled, logs)
	}
	res := <-e.Submit(t.Context(), m, Request{IDs: sentence(rand.New(rand.NewPCG(1, 2)), 10), Speaker: 1, Scales: deterministic})
	if res.Err != nil || len(res.Audio) == 0 {
		t.Errorf("result: %d samples, err %v", len(res.Audio), res.Err)
	}
}

// Through the engine (its polyphase upsampling, its workers), tiles as small as a frame give each sentence the audio
// the voice's own whole-sentence run gives.
func TestEngineTilesMatchWholeSentences(t *testing.T) {
	orttest.Need(t)
	for _, path := range []string{tinyVoicePath, piperShapedVoicePath} {
		t.Run(path, func(t *testing.T) {
			ref, refModel := voiceEngine(t, path, Options{Threads: 1, Tuning: Tuning{TailTile: -1, Upsampling: UpsamplingConvTranspose}})
			sentences, audio := aloneReference(t, ref, refModel, rand.New(rand.NewPCG(17, 18)), 5, func(i int) int { return 2 + 19*i })
			e, m := voiceEngine(t, path, Options{Threads: 2, Tuning: Tuning{TailTile: 8}})
			if _, tiled := m.runners[0].(*tiledRunner); !tiled {
				t.Fatal("the engine runs whole sentences")
			}
			sameAudio(t, "the whole-sentence run", submitTogether(t, e, m, sentences), audio, 1e-5)
			checkTileStats(t, e.Stats(), sentences)
		})
	}
}

// checkTileStats checks that a tiled engine's stats count each sentence's head run once (with its phonemes) and
// its tail in tiles that cover its frames, margins counted apart; trial runs at Load add two sentences.
func checkTileStats(t *testing.T, stats []StageStats, sentences [][]int64) {
	t.Helper()
	n := len(sentences)
	byStage := map[string]StageStats{}
	for _, s := range stats {
		byStage[s.Stage] = s
	}
	head, tail, whole := byStage[stageHead], byStage[stageTail], byStage[stageWhole]
	phonemes := 32 + 47 // the trial runs'
	for _, s := range sentences {
		phonemes += len(s)
	}
	if head.Runs != n+2 || head.Items != n+2 || head.Units != phonemes {
		t.Errorf("head stats %+v; want %d runs of %d phonemes", head, n+2, phonemes)
	}
	if tail.Runs != n+2 || tail.Items < n+2 || tail.Units <= 0 || tail.Padded <= tail.Units {
		t.Errorf("tail stats %+v; want %d runs of at least one tile each, margins beyond the frames", tail, n+2)
	}
	if whole.Runs != n || whole.Seconds < head.Seconds*float64(n)/float64(n+2)/2 {
		t.Errorf("whole-sentence stats %+v against head %+v; want a run per sentence, each holding its head's", whole, head)
	}
}
