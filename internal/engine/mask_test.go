package engine

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/ttsgen/ttsgen/internal/ort"
	"github.com/ttsgen/ttsgen/internal/ort/orttest"
	"github.com/ttsgen/ttsgen/internal/vits"
)

// TestPaddingMasksOfAPiperVoice: Piper's decoder is not masked, so without the masks its batched and windowed audio
// leak padding into the sentences' ends (this test voice shows it plainly); with them both equal batch-1 audio. The
// tests of batches and windows (TestBatchedMatchesAlone, TestContinuousBatching) hold the masked engine to 1e-4.
func TestPaddingMasksOfAPiperVoice(t *testing.T) {
	voice := orttest.Voice(t, piperShapedVoicePath)
	prepared, _, err := vits.PrepareGraph(voice)
	if err != nil {
		t.Fatal(err)
	}
	if _, n, err := vits.MaskWholeGraph(prepared); err != nil || n != 23 {
		t.Errorf("whole graph: %d convolutions masked, err %v; want the decoder's 23", n, err)
	}
	sv, err := vits.SplitGraph(prepared, false)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := vits.MaskDecoderGraph(sv.Decoder); err != nil || n != 23 {
		t.Errorf("split decoder: %d convolutions masked, err %v; want 23", n, err)
	}

	for _, tt := range []struct {
		name    string
		opts    Options
		leaks   bool
		minDiff float64
	}{
		{"batched, masked", Options{Threads: 1, Tuning: Tuning{MaxBatch: 4}}, false, 0},
		{"batched, unmasked", Options{Threads: 1, Tuning: Tuning{MaxBatch: 4, NoPaddingMasks: true}}, true, 1e-2},
		{"windows, masked", Options{Threads: 1, Tuning: Tuning{MaxBatch: 4, DecoderWindow: 16}}, false, 0},
		{"windows, unmasked", Options{Threads: 1, Tuning: Tuning{MaxBatch: 4, DecoderWindow: 16, NoPaddingMasks: true}}, true, 1e-2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			alone, aloneModel := voiceEngine(t, piperShapedVoicePath, Options{Threads: 1, Tuning: Tuning{MaxBatch: 1, NoPaddingMasks: true}})
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
				worst = max(worst, orttest.MaxAbsDiff(got, want[0]))
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
	orttest.Need(t)
	e, err := NewEngine(Options{Device: ort.DeviceCPU, Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	for _, tt := range []struct {
		path string
		want bool
	}{{tinyVoicePath, true}, {piperShapedVoicePath, false}} {
		graph, _, err := vits.PrepareGraph(orttest.Voice(t, tt.path))
		if err != nil {
			t.Fatal(err)
		}
		if got, err := e.decoderMasksItself(graph); err != nil || got != tt.want {
			t.Errorf("%s: masks itself %v, err %v; want %v", tt.path, got, err, tt.want)
		}
	}
	if _, err := e.decoderMasksItself(orttest.Parse(t, orttest.FakeVoice(t, true, false))); !errors.Is(err, vits.ErrNoDecoder) {
		t.Errorf("a graph without a decoder: err %v, want vits.ErrNoDecoder", err)
	}
}

// TestMultiSpeakerPiperVoice: a Piper voice with a "sid" input conditions its duration predictor, flow and decoder
// on the speaker. Sentences of different speakers batched together, or decoded in shared windows after a flow run
// on the GPU, must each come back as that speaker's batch-1 audio.
func TestMultiSpeakerPiperVoice(t *testing.T) {
	const path = piperShaped3VoicePath
	orttest.Need(t)
	cfg := ModelConfig{SampleRate: 22050, NumSpeakers: 3}
	load := func(e *Engine, err error) (*Engine, *Model) {
		t.Helper()
		return loadOn(t, e, err, path, cfg)
	}
	alone, aloneModel := load(NewEngine(Options{Device: ort.DeviceCPU, Threads: 1, Tuning: Tuning{MaxBatch: 1, NoPaddingMasks: true}}))
	rng := rand.New(rand.NewPCG(31, 32))
	var reqs []Request
	var want [][]float32
	for i, n := range []int{7, 19, 12, 26, 7, 15} {
		req := Request{IDs: sentence(rng, n), Speaker: int64(i % 3), Scales: deterministic}
		if i == 4 {
			req.IDs, req.Speaker = reqs[0].IDs, 1 // the first sentence again, another speaker
		}
		audio, err := alone.synthesize(aloneModel.runners[0], []*item{{model: aloneModel, req: req}})
		if err != nil {
			t.Fatal(err)
		}
		reqs, want = append(reqs, req), append(want, audio[0])
	}
	if len(want[0]) == len(want[4]) && orttest.MaxAbsDiff(want[0], want[4]) < 1e-3 {
		t.Fatal("speakers 0 and 1 say the same sentence identically: the test cannot tell speakers apart")
	}

	batched, batchedModel := load(NewEngine(Options{Device: ort.DeviceCPU, Threads: 1, Tuning: Tuning{MaxBatch: 6}}))
	var items []*item
	for _, req := range reqs {
		items = append(items, &item{model: batchedModel, req: req})
	}
	together, err := batched.synthesize(batchedModel.runners[0], items)
	if err != nil {
		t.Fatal(err)
	}
	// A GPU engine's layout (acoustic part on the CPU, flow and decoder windows on the "GPU"), run on the CPU.
	split, splitModel := load(newEngine(Options{Device: ort.DeviceWebGPU, Threads: 2, Tuning: Tuning{AcousticDevice: ort.DeviceCPU, DecoderWindow: 16, DecoderBatch: 4}}, &deviceRecorder{}))
	if splitModel.split == nil || splitModel.split.flow == nil || !splitModel.split.voice.DecoderSpeaker {
		t.Fatalf("not split in three with a speaker-conditioned decoder: %+v", splitModel.split)
	}
	results := make([]<-chan Result, len(reqs))
	for i, req := range reqs {
		results[i] = split.Submit(context.Background(), splitModel, req)
	}
	for i := range reqs {
		if len(together[i]) != len(want[i]) || orttest.MaxAbsDiff(together[i], want[i]) > 1e-4 {
			t.Errorf("sentence %d (speaker %d) batched: %d samples, want %d; difference %g", i, reqs[i].Speaker,
				len(together[i]), len(want[i]), orttest.MaxAbsDiff(together[i], want[i]))
		}
		res := <-results[i]
		if res.Err != nil || len(res.Audio) != len(want[i]) || orttest.MaxAbsDiff(res.Audio, want[i]) > 1e-4 {
			t.Errorf("sentence %d (speaker %d) in windows: %d samples, want %d; err %v", i, reqs[i].Speaker,
				len(res.Audio), len(want[i]), res.Err)
		}
	}
}

// TestNoMasksWithoutPadding: one sentence at a time (the CPU's default) has no padding, so Load neither probes nor
// masks the decoder (its sessions are the tiled decoder's head and tail, tail.go); batches of several do.
func TestNoMasksWithoutPadding(t *testing.T) {
	orttest.Need(t)
	for _, tt := range []struct {
		maxBatch int
		want     string
	}{{1, "[tail_in+w_ceil@cpu/1 output@cpu/1]"}, {2, "[output@cpu/1]"}} { // the probe's decoder session
		b := &deviceRecorder{}
		e, err := newEngine(Options{Device: ort.DeviceCPU, Threads: 1, Tuning: Tuning{MaxBatch: tt.maxBatch}}, b)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.Load("v", orttest.Voice(t, piperShapedVoicePath), ModelConfig{SampleRate: 22050}); err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprint(b.sessions); got != tt.want {
			t.Errorf("MaxBatch %d: graph sessions %s, want %s", tt.maxBatch, got, tt.want)
		}
		e.Close()
	}
}
