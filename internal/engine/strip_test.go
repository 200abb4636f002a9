package engine

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/ttsgen/ttsgen/internal/ort"
)

// hookRunner calls before() ahead of every run.
type hookRunner struct {
	graphRunner
	before func(inputs []ort.Tensor) error
}

func (r *hookRunner) Run(inputs []ort.Tensor) ([]ort.Tensor, error) {
	if err := r.before(inputs); err != nil {
		return nil, err
	}
	return r.graphRunner.Run(inputs)
}

// multiSentenceWindows counts decoder windows whose frame mask holds frames of two sentences (1..0..1).
func multiSentenceWindows(mask []float32, rows, span int) int {
	n := 0
	for r := range rows {
		m := mask[r*span : (r+1)*span]
		seen1, gap := false, false
		for _, v := range m {
			switch {
			case v == 1 && gap:
				n++
				goto next
			case v == 1:
				seen1 = true
			case seen1:
				gap = true
			}
		}
	next:
	}
	return n
}

// Under continuous batching, windows do carry the end of one sentence and the start of the next, and every sentence
// still comes back as its audio alone; with NoStrips no window does, and the audio is the same.
func TestStripsCarrySeveralSentences(t *testing.T) {
	for _, path := range []string{tinyVoicePath, piperShapedVoicePath} {
		ref, refModel := voiceEngine(t, path, Options{Threads: 1})
		sentences, want := aloneReference(t, ref, refModel, rand.New(rand.NewPCG(5, 6)), 9, func(i int) int { return 2 + 5*i })
		for _, noStrips := range []bool{false, true} {
			e, m := voiceEngine(t, path, Options{Threads: 2, Tuning: Tuning{MaxBatch: 4, DecoderWindow: 16, DecoderBatch: 4, NoStrips: noStrips}})
			var multi atomic.Int64
			for i, d := range m.split.decoder {
				m.split.decoder[i] = &hookRunner{graphRunner: d, before: func(in []ort.Tensor) error {
					if len(in) > 1 {
						multi.Add(int64(multiSentenceWindows(in[1].F32, int(in[1].Shape[0]), int(in[1].Shape[2]))))
					}
					return nil
				}}
			}
			sameAudio(t, "alone", submitTogether(t, e, m, sentences), want, 1e-4)
			t.Logf("%s noStrips=%v decoderMasked=%v: %d windows held two sentences", path, noStrips, m.split.voice.DecoderMasked, multi.Load())
			switch {
			case noStrips && multi.Load() != 0:
				t.Errorf("NoStrips: %d windows with two sentences", multi.Load())
			case !noStrips && m.split.voice.DecoderMasked && multi.Load() == 0:
				// (Only a masked decoder shows where its windows' sentences are.)
				t.Errorf("%s: no window held two sentences", path)
			}
		}
	}
}

// A sentence cancelled while its strip-mates are still being decoded: it gets ctx.Err() once, they get their audio.
func TestCancelInsideStrip(t *testing.T) {
	path := tinyVoicePath
	ref, refModel := voiceEngine(t, path, Options{Threads: 1})
	sentences, want := aloneReference(t, ref, refModel, rand.New(rand.NewPCG(7, 8)), 4, func(i int) int { return 10 + 7*i })
	e, m := voiceEngine(t, path, Options{Threads: 1, Tuning: Tuning{MaxBatch: 3, DecoderWindow: 16, DecoderBatch: 1}})
	gate := make(chan struct{})
	entered := make(chan struct{}, 1)
	var decRuns atomic.Int64
	var mu sync.Mutex
	var abcDone bool
	var cancelB context.CancelFunc
	cancelled := false
	for i, a := range m.split.acoustic {
		m.split.acoustic[i] = &hookRunner{graphRunner: a, before: func(in []ort.Tensor) error {
			if in[0].Shape[0] == 3 {
				mu.Lock()
				abcDone = true
				mu.Unlock()
			}
			return nil
		}}
	}
	for i, d := range m.split.decoder {
		m.split.decoder[i] = &hookRunner{graphRunner: d, before: func(in []ort.Tensor) error {
			if decRuns.Add(1) == 1 {
				entered <- struct{}{}
				<-gate
			}
			mu.Lock()
			defer mu.Unlock()
			if abcDone && !cancelled {
				cancelled = true
				cancelB()
			}
			return nil
		}}
	}
	blocker := e.Submit(context.Background(), m, Request{IDs: sentences[0], Scales: deterministic})
	<-entered
	ctxB, cancel := context.WithCancel(context.Background())
	mu.Lock()
	cancelB = cancel
	mu.Unlock()
	a := e.Submit(context.Background(), m, Request{IDs: sentences[1], Scales: deterministic})
	b := e.Submit(ctxB, m, Request{IDs: sentences[2], Scales: deterministic})
	c := e.Submit(context.Background(), m, Request{IDs: sentences[3], Scales: deterministic})
	close(gate)
	for i, ch := range []<-chan Result{blocker, a, b, c} {
		res := <-ch
		switch {
		case i == 2:
			if !errors.Is(res.Err, context.Canceled) {
				t.Errorf("cancelled sentence: err %v, %d samples", res.Err, len(res.Audio))
			}
		case res.Err != nil:
			t.Errorf("sentence %d: %v", i, res.Err)
		default:
			sameAudio(t, "alone", [][]float32{res.Audio}, [][]float32{want[i]}, 1e-4)
		}
		select {
		case extra := <-ch:
			t.Errorf("sentence %d: a second result %+v", i, extra)
		default:
		}
	}
	if !abcDone || !cancelled {
		t.Errorf("scenario not reached: batch of 3 %v, cancelled %v", abcDone, cancelled)
	}
}

// A decoder run that fails: every sentence of the strip gets exactly one result, and the engine goes on.
func TestDecoderFailureInStrip(t *testing.T) {
	path := tinyVoicePath
	ref, refModel := voiceEngine(t, path, Options{Threads: 1})
	sentences, want := aloneReference(t, ref, refModel, rand.New(rand.NewPCG(9, 8)), 6, func(i int) int { return 3 + 5*i })
	e, m := voiceEngine(t, path, Options{Threads: 2, Tuning: Tuning{MaxBatch: 3, DecoderWindow: 16, DecoderBatch: 2}})
	var runs atomic.Int64
	for i, d := range m.split.decoder {
		m.split.decoder[i] = &hookRunner{graphRunner: d, before: func([]ort.Tensor) error {
			if n := runs.Add(1); n == 2 || n == 5 {
				return errors.New("injected")
			}
			return nil
		}}
	}
	results := make([]<-chan Result, len(sentences))
	for i, ids := range sentences {
		results[i] = e.Submit(context.Background(), m, Request{IDs: ids, Scales: deterministic})
	}
	failed := 0
	for i, ch := range results {
		res := <-ch
		if res.Err != nil {
			failed++
			continue
		}
		sameAudio(t, "alone", [][]float32{res.Audio}, [][]float32{want[i]}, 1e-4)
	}
	t.Logf("%d of %d failed", failed, len(sentences))
	if failed == 0 {
		t.Error("no failure injected")
	}
	sameAudio(t, "alone after failures", submitTogether(t, e, m, sentences), want, 1e-4)
}

// Speaker-conditioned decoder: a batch's sentences of one speaker share a strip (windows with two sentences), and
// each comes back as that speaker's audio alone.
func TestSameSpeakerStrips(t *testing.T) {
	cfg := ModelConfig{SampleRate: 22050, NumSpeakers: 3}
	e, err := NewEngine(Options{Device: ort.DeviceCPU, Threads: 1, Tuning: Tuning{MaxBatch: 1, NoPaddingMasks: true}})
	alone, am := loadOn(t, e, err, piperShaped3VoicePath, cfg)
	e, err = newEngine(Options{Device: ort.DeviceWebGPU, Threads: 1, Tuning: Tuning{AcousticDevice: ort.DeviceCPU, DecoderWindow: 16, DecoderBatch: 4}}, &deviceRecorder{})
	split, sm := loadOn(t, e, err, piperShaped3VoicePath, cfg)
	var multi atomic.Int64
	for i, d := range sm.split.decoder {
		sm.split.decoder[i] = &hookRunner{graphRunner: d, before: func(in []ort.Tensor) error {
			multi.Add(int64(multiSentenceWindows(in[1].F32, int(in[1].Shape[0]), int(in[1].Shape[2]))))
			return nil
		}}
	}
	rng := rand.New(rand.NewPCG(41, 42))
	var reqs []Request
	for i, n := range []int{7, 9, 8, 26, 7, 15, 8, 9} {
		reqs = append(reqs, Request{IDs: sentence(rng, n), Speaker: int64(i % 3), Scales: deterministic}) // speakers interleaved
	}
	var results []<-chan Result
	for _, r := range reqs {
		results = append(results, split.Submit(context.Background(), sm, r))
	}
	for i, r := range reqs {
		want, err := alone.synthesize(am.runners[0], []*item{{model: am, req: r}})
		if err != nil {
			t.Fatal(err)
		}
		res := <-results[i]
		if res.Err != nil {
			t.Fatal(res.Err)
		}
		sameAudio(t, "alone", [][]float32{res.Audio}, want, 1e-4)
	}
	t.Logf("%d windows held two sentences", multi.Load())
	if multi.Load() == 0 {
		t.Error("no window held two sentences of one speaker")
	}
}

// Request.Stream gets a sentence's audio in order while its windows are decoded: the chunks, then the Result's
// samples past Streamed, are the sentence's audio alone; a long sentence comes in several chunks; a stream nobody
// reads (no room) blocks nothing and gets nothing.
func TestStreamedAudio(t *testing.T) {
	ref, refModel := voiceEngine(t, piperShapedVoicePath, Options{Threads: 1})
	sentences, want := aloneReference(t, ref, refModel, rand.New(rand.NewPCG(13, 14)), 3, func(i int) int { return 40 + 30*i })
	e, m := voiceEngine(t, piperShapedVoicePath, Options{Threads: 2, Tuning: Tuning{DecoderWindow: 8, DecoderBatch: 2}})
	streams := []chan []float32{make(chan []float32, 64), make(chan []float32), make(chan []float32, 64)} // the second has no room
	results := make([]<-chan Result, len(sentences))
	for i, ids := range sentences {
		results[i] = e.Submit(context.Background(), m, Request{IDs: ids, Scales: deterministic, Stream: streams[i]})
	}
	for i := range sentences {
		res := <-results[i]
		if res.Err != nil {
			t.Fatal(res.Err)
		}
		var got []float32
		chunks := 0
		for len(streams[i]) > 0 {
			got = append(got, <-streams[i]...)
			chunks++
		}
		if len(got) != res.Streamed {
			t.Errorf("sentence %d: %d samples in %d chunks, Result says %d streamed", i, len(got), chunks, res.Streamed)
		}
		got = append(got, res.Audio[min(res.Streamed, len(res.Audio)):]...)
		sameAudio(t, "alone", [][]float32{got}, [][]float32{want[i]}, 1e-4)
		switch {
		case i == 1 && res.Streamed != 0:
			t.Errorf("a stream with no room got %d samples", res.Streamed)
		case i != 1 && chunks < 2:
			t.Errorf("sentence %d (%d samples): %d chunks, want its first audio before its last", i, len(want[i]), chunks)
		}
		t.Logf("sentence %d: %d samples, %d streamed in %d chunks", i, len(want[i]), res.Streamed, chunks)
	}
	// Whole sentences (no windows): nothing streams, the Result has it all.
	whole, wm := voiceEngine(t, piperShapedVoicePath, Options{Threads: 1})
	stream := make(chan []float32, 8)
	res := <-whole.Submit(context.Background(), wm, Request{IDs: sentences[0], Scales: deterministic, Stream: stream})
	if res.Err != nil || res.Streamed != 0 || len(stream) != 0 || len(res.Audio) != len(want[0]) {
		t.Errorf("whole sentences: err %v, streamed %d, %d chunks, %d samples", res.Err, res.Streamed, len(stream), len(res.Audio))
	}
}
