package engine

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ttsgen/ttsgen/internal/onnxgraph"
	"github.com/ttsgen/ttsgen/internal/ort"
	"github.com/ttsgen/ttsgen/internal/ort/orttest"

	"github.com/advancedclimatesystems/gonnx/onnx"
)

const (
	tinyVoicePath         = orttest.TinyVoice
	piperShapedVoicePath  = orttest.PiperShapedVoice
	piperShaped3VoicePath = orttest.PiperShaped3Voice
	testVoicePath         = orttest.TestVoice
	tinyHop               = 256
)

// deterministic scales: with no noise a sentence's audio depends only on its phonemes.
var deterministic = Scales{Noise: 0, Length: 1, NoiseW: 0}

// testVoices are the voice graphs the engine's exactness tests run on: ttsgen's own architecture, which masks every
// layer, and Piper's, whose decoder does not mask (Load adds the masks; mask.go).
var testVoices = []struct{ name, path string }{{"tiny", tinyVoicePath}, {"piper-shaped", piperShapedVoicePath}}

// tinyEngine is a CPU engine with the tiny default-voice model loaded.
func tinyEngine(t *testing.T, opts Options) (*Engine, *Model) {
	t.Helper()
	return voiceEngine(t, tinyVoicePath, opts)
}

// voiceEngine is a CPU engine with the voice at path loaded.
func voiceEngine(t *testing.T, path string, opts Options) (*Engine, *Model) {
	t.Helper()
	orttest.Need(t)
	if opts.Device == "" { // only TestOnDevice names a GPU
		opts.Device = ort.DeviceCPU
	}
	e, err := NewEngine(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := e.Close(); err != nil {
			t.Error(err)
		}
	})
	m, err := e.Load("tiny", orttest.Voice(t, path), ModelConfig{SampleRate: 22050, NumSpeakers: 1})
	if err != nil {
		t.Fatal(err)
	}
	return e, m
}

// sentence is n phoneme ids in Piper's layout: BOS, then each phoneme followed by the pad id, then EOS.
func sentence(rng *rand.Rand, n int) []int64 {
	ids := []int64{1, 0}
	for range n {
		ids = append(ids, 14+rng.Int64N(140), 0)
	}
	return append(ids, 2)
}

// cpuRunner is a one-thread CPU graph runner of graph, closed when the test ends.
func cpuRunner(t *testing.T, graph *onnx.ModelProto, inputs, outputs []string) graphRunner {
	t.Helper()
	orttest.Need(t)
	data, err := onnxgraph.Encode(graph)
	if err != nil {
		t.Fatal(err)
	}
	r, err := ortBackend{}.newGraphRunner(data, inputs, outputs, ort.DeviceCPU, 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// paddedBatch is a batch of random sentences of the given lengths in phoneme ids (Piper's layout, as sentence's),
// zero-padded to the longest, with deterministic scales.
func paddedBatch(rng *rand.Rand, lengths ...int) batchInput {
	in := batchInput{size: len(lengths), width: slices.Max(lengths), scales: deterministic}
	for _, n := range lengths {
		row := make([]int64, in.width)
		row[0], row[n-1] = 1, 2
		for j := 1; j < n-1; j += 2 {
			row[j] = 14 + rng.Int64N(140)
		}
		in.ids, in.lengths = append(in.ids, row...), append(in.lengths, int64(n))
	}
	return in
}

// aloneReference makes n random sentences, the i-th of length(i) phonemes, and their audio run alone (batch 1, no
// noise) on m's first session: what any batched or windowed run of the same sentence must give back.
func aloneReference(t *testing.T, e *Engine, m *Model, rng *rand.Rand, n int, length func(int) int) ([][]int64, [][]float32) {
	t.Helper()
	var sentences [][]int64
	var audio [][]float32
	for i := range n {
		ids := sentence(rng, length(i))
		alone, err := e.synthesize(m.runners[0], []*item{{model: m, req: Request{IDs: ids, Scales: deterministic}}})
		if err != nil {
			t.Fatal(err)
		}
		sentences, audio = append(sentences, ids), append(audio, alone[0])
	}
	return sentences, audio
}

// submitTogether submits every sentence to e at once (so that they share batches and decoder runs), without
// noise, and returns their audio in order; a failed request fails the test.
func submitTogether(t *testing.T, e *Engine, m *Model, sentences [][]int64) [][]float32 {
	t.Helper()
	results := make([]<-chan Result, len(sentences))
	for i, ids := range sentences {
		results[i] = e.Submit(context.Background(), m, Request{IDs: ids, Scales: deterministic})
	}
	audio := make([][]float32, len(sentences))
	for i, ch := range results {
		res := <-ch
		if res.Err != nil {
			t.Fatalf("sentence %d (%d ids): %v", i, len(sentences[i]), res.Err)
		}
		audio[i] = res.Audio
	}
	return audio
}

// sameAudio checks each sentence's audio against its reference: the same length, and no sample further than tol.
func sameAudio(t *testing.T, reference string, got, want [][]float32, tol float64) {
	t.Helper()
	for i := range want {
		if len(got[i]) != len(want[i]) {
			t.Fatalf("sentence %d: %d samples, want %d", i, len(got[i]), len(want[i]))
		}
		if d := orttest.MaxAbsDiff(got[i], want[i]); d > tol {
			t.Errorf("sentence %d differs from %s by %g", i, reference, d)
		}
	}
}

// TestBatchedMatchesAlone checks what batching must not change: a sentence padded in a batch with longer and
// shorter ones gives the samples it gives alone, and its length is its predicted frames x 256.
func TestBatchedMatchesAlone(t *testing.T) {
	for _, v := range testVoices {
		t.Run(v.name, func(t *testing.T) { testBatchedMatchesAlone(t, v.path) })
	}
}

func testBatchedMatchesAlone(t *testing.T, path string) {
	e, m := voiceEngine(t, path, Options{Threads: 1, Tuning: Tuning{MaxBatch: 3}})
	rng := rand.New(rand.NewPCG(1, 2))
	var batch []*item
	for _, n := range []int{9, 30, 17} {
		batch = append(batch, &item{model: m, req: Request{IDs: sentence(rng, n), Scales: deterministic}})
	}
	r := m.runners[0]
	in := packBatch(batch, false)
	out, err := r.run(in)
	if err != nil {
		t.Fatal(err)
	}
	together, err := splitAudio(in, out)
	if err != nil {
		t.Fatal(err)
	}
	for i, it := range batch {
		var frames float32
		for _, f := range out.frames[i*in.width : (i+1)*in.width] {
			frames += f
		}
		if want := int(frames) * tinyHop; len(together[i]) != want {
			t.Errorf("item %d: %d samples, want sum(w_ceil) x 256 = %d", i, len(together[i]), want)
		}
		// Every phoneme lasts at least one frame (ceil of a positive duration), and padding lasts none.
		if n := len(it.req.IDs); len(together[i]) < n*tinyHop || len(together[i]) > 20*n*tinyHop {
			t.Errorf("item %d: %d samples for %d ids, outside 1..20 frames per id", i, len(together[i]), n)
		}
		alone, err := e.synthesize(r, []*item{it})
		if err != nil {
			t.Fatal(err)
		}
		if len(alone[0]) != len(together[i]) {
			t.Fatalf("item %d: %d samples alone, %d in the batch", i, len(alone[0]), len(together[i]))
		}
		if d := orttest.MaxAbsDiff(alone[0], together[i]); d > 1e-4 {
			t.Errorf("item %d: batched audio differs from batch-1 audio by %g (> 1e-4)", i, d)
		}
		var energy float64
		for _, s := range alone[0] {
			energy += float64(s) * float64(s)
		}
		if energy == 0 {
			t.Errorf("item %d: all-zero audio, the comparison proves nothing", i)
		}
	}
}

// TestConcurrentSubmit drives the real engine from many goroutines; with no noise every copy of a sentence must
// come back as the sentence's batch-1 audio, whatever batch it ran in.
func TestConcurrentSubmit(t *testing.T) {
	e, m := tinyEngine(t, Options{Threads: 2, QueueSize: 8, Tuning: Tuning{MaxBatch: 4}})
	sentences, reference := aloneReference(t, e, m, rand.New(rand.NewPCG(3, 4)), 6, func(i int) int { return 5 + 7*i })
	const goroutines, each = 8, 6
	var wg sync.WaitGroup
	errs := make(chan error, goroutines*each)
	for g := range goroutines {
		wg.Go(func() {
			for k := range each {
				s := (g + k) % len(sentences)
				res := <-e.Submit(context.Background(), m, Request{IDs: sentences[s], Scales: deterministic})
				switch {
				case res.Err != nil:
					errs <- res.Err
				case len(res.Audio) != len(reference[s]):
					errs <- errors.New("length differs from batch-1 audio")
				case orttest.MaxAbsDiff(res.Audio, reference[s]) > 1e-4:
					errs <- errors.New("audio differs from batch-1 audio")
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestPerRequestErrorsDoNotStopTheEngine(t *testing.T) {
	e, m := tinyEngine(t, Options{Threads: 1, Tuning: Tuning{MaxBatch: 4}})
	ctx := context.Background()
	outOfRange := e.Submit(ctx, m, Request{IDs: []int64{1, 5000, 2}, Scales: deterministic})
	wrongSpeaker := e.Submit(ctx, m, Request{IDs: []int64{1, 20, 2}, Speaker: 1, Scales: deterministic})
	fine := e.Submit(ctx, m, Request{IDs: []int64{1, 20, 0, 21, 2}, Scales: deterministic})
	if res := <-outOfRange; res.Err == nil || !strings.Contains(res.Err.Error(), `voice "tiny" on cpu`) {
		t.Errorf("phoneme id 5000: err %v, want a voice error", res.Err)
	}
	if res := <-wrongSpeaker; res.Err == nil || !strings.Contains(res.Err.Error(), `speaker 1 out of range: voice "tiny" has 1 speaker(s)`) {
		t.Errorf("speaker 1: err %v", res.Err)
	}
	if res := <-fine; res.Err != nil || len(res.Audio) < 5*2*tinyHop {
		t.Errorf("valid request after bad ones: %d samples, err %v", len(res.Audio), res.Err)
	}
}

func TestCancelAndCloseWithORT(t *testing.T) {
	for _, tt := range []struct {
		name string
		opts Options
	}{
		{"whole sentences", Options{Threads: 2, QueueSize: 64, Tuning: Tuning{MaxBatch: 2}}},
		{"decoder windows", Options{Threads: 2, QueueSize: 64, Tuning: Tuning{MaxBatch: 2, DecoderWindow: 16, DecoderBatch: 4}}},
	} {
		t.Run(tt.name, func(t *testing.T) { testCancelAndClose(t, tt.opts) })
	}
}

func testCancelAndClose(t *testing.T, opts Options) {
	e, m := tinyEngine(t, opts)
	rng := rand.New(rand.NewPCG(5, 6))
	ctx, cancel := context.WithCancel(context.Background())
	var cancelled []<-chan Result
	for range 40 {
		cancelled = append(cancelled, e.Submit(ctx, m, Request{IDs: sentence(rng, 40), Scales: deterministic}))
	}
	cancel()
	var ran, left int
	for _, ch := range cancelled {
		select {
		case res := <-ch:
			switch {
			case errors.Is(res.Err, context.Canceled):
				left++
			case res.Err == nil:
				ran++
			default:
				t.Errorf("cancelled request: unexpected error %v", res.Err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("a cancelled request got no result")
		}
	}
	if left < 30 {
		t.Errorf("only %d of 40 requests left the queue on cancel (%d ran)", left, ran)
	}

	// Close while busy: every request gets exactly one result, audio or ErrClosed.
	var busy []<-chan Result
	for range 30 {
		busy = append(busy, e.Submit(context.Background(), m, Request{IDs: sentence(rng, 40), Scales: deterministic}))
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	for i, ch := range busy {
		select {
		case res := <-ch:
			if res.Err != nil && !errors.Is(res.Err, ErrClosed) {
				t.Errorf("request %d: %v", i, res.Err)
			}
		default:
			t.Fatalf("request %d has no result after Close returned", i)
		}
	}
}

// A result carries its ids' frames, whole sentences or decoder windows: one value an id, and the audio is their
// sum times the hop.
func TestResultDurations(t *testing.T) {
	for _, mode := range []struct {
		name string
		opts Options
	}{
		{"whole sentences", Options{Threads: 1, Tuning: Tuning{MaxBatch: 3}}},
		{"decoder windows", Options{Threads: 1, Tuning: Tuning{MaxBatch: 3, DecoderWindow: 16, DecoderBatch: 4}}},
	} {
		t.Run(mode.name, func(t *testing.T) {
			e, m := tinyEngine(t, mode.opts)
			rng := rand.New(rand.NewPCG(3, 4))
			var reqs []Request
			var results []<-chan Result
			for _, n := range []int{9, 30, 17} {
				req := Request{IDs: sentence(rng, n), Scales: deterministic}
				reqs = append(reqs, req)
				results = append(results, e.Submit(context.Background(), m, req))
			}
			for i, ch := range results {
				res := <-ch
				if res.Err != nil {
					t.Fatal(res.Err)
				}
				var frames float32
				for _, f := range res.Durations {
					frames += f
				}
				if len(res.Durations) != len(reqs[i].IDs) || int(frames)*tinyHop != len(res.Audio) {
					t.Errorf("sentence %d: %d durations for %d ids, %v frames for %d samples", i, len(res.Durations),
						len(reqs[i].IDs), frames, len(res.Audio))
				}
			}
		})
	}
}

func TestVoiceWithoutDurationsRunsAlone(t *testing.T) {
	orttest.Need(t)
	var logs []string
	e, err := NewEngine(Options{Device: ort.DeviceCPU, Threads: 1, Logf: func(f string, a ...any) { logs = append(logs, f) }})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	m, err := e.Load("piper-test", orttest.Voice(t, testVoicePath), ModelConfig{SampleRate: 22050})
	if err != nil {
		t.Fatal(err)
	}
	if m.MaxBatch() != 1 || len(logs) != 1 {
		t.Errorf("MaxBatch %d, logs %q; want 1 and one warning", m.MaxBatch(), logs)
	}
	var results []<-chan Result
	for range 3 {
		results = append(results, e.Submit(context.Background(), m, Request{IDs: []int64{1, 2, 3}, Scales: deterministic}))
	}
	for _, ch := range results {
		// Piper's test voice always answers with one second of silence.
		if res := <-ch; res.Err != nil || len(res.Audio) != 22050 || res.Durations != nil {
			t.Errorf("%d samples, %d durations, err %v; want 22050 and none", len(res.Audio), len(res.Durations), res.Err)
		}
	}
	if _, err := e.Load("junk", []byte("this is a text file, not a model\n"), ModelConfig{}); err == nil ||
		!strings.Contains(err.Error(), `loading voice "junk": not an ONNX model`) {
		t.Errorf("loading a text file: err %v", err)
	}
}

// loadOn loads the voice at path on an engine just made (e, err from NewEngine or newEngine), which is closed when
// the test ends.
func loadOn(t *testing.T, e *Engine, err error, path string, cfg ModelConfig) (*Engine, *Model) {
	t.Helper()
	orttest.Need(t)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	m, err := e.Load("voice", orttest.Voice(t, path), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return e, m
}
