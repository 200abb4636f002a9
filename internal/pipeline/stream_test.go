package pipeline

import (
	"context"
	"iter"
	"slices"
	"testing"
	"time"

	"github.com/ttsgen/ttsgen/internal/audio"
	"github.com/ttsgen/ttsgen/internal/engine"
)

// streamingEngine answers each sentence as the real engine streams one: its audio (a ramp that differs from one
// sentence to the next) in pieces on Request.Stream, then the Result with all of it and how much was streamed.
// Before each piece past the first it calls between (may be nil) with the sentence's first id; a sentence whose
// last id is dropID has no room for its pieces (the engine drops what finds the stream full). Sentences finish in
// the reverse of their order, each after the one after it.
type streamingEngine struct {
	pieces  int
	between func(id int64)
	dropID  int64
	done    map[int64]chan struct{} // closed when the sentence with that first id is answered
}

func (f *streamingEngine) QueueSize() int { return 8 }

func streamedAudio(id int64, n int) []float32 {
	samples := make([]float32, n)
	for i := range samples {
		samples[i] = float32(id)/100 + float32(i%50)/1000
	}
	return samples
}

func (f *streamingEngine) Submit(_ context.Context, _ *engine.Model, req engine.Request) <-chan engine.Result {
	out := make(chan engine.Result, 1)
	id := req.IDs[0]
	go func() {
		defer close(f.done[id])
		if next, ok := f.done[id+10]; ok { // the next sentence finishes first
			<-next
		}
		samples := streamedAudio(id, len(req.IDs)*100)
		streamed := 0
		if req.Stream != nil && req.IDs[len(req.IDs)-1] != f.dropID {
			step := len(samples) / f.pieces
			for k := range f.pieces - 1 {
				if k > 0 && f.between != nil {
					f.between(id)
				}
				select { // as the engine does, never waiting for the reader
				case req.Stream <- samples[streamed : streamed+step]:
					streamed += step
				default:
				}
			}
		}
		out <- engine.Result{Audio: samples, Streamed: streamed}
	}()
	return out
}

// flushRecorder is an encoder that keeps the samples and says, at each Flush, how many it has.
type flushRecorder struct {
	samples []int16
	flushes int
	flushed chan int
}

func (r *flushRecorder) Write(pcm []int16) error { r.samples = append(r.samples, pcm...); return nil }
func (r *flushRecorder) Close() error            { return nil }
func (r *flushRecorder) Flush() error {
	r.flushes++
	select {
	case r.flushed <- len(r.samples):
	default:
	}
	return nil
}

func streamedSentences(lastIDs ...int64) []Sentence {
	var s []Sentence
	for i, last := range lastIDs {
		s = append(s, Sentence{Text: "s", IDs: []int64{int64(10 * (i + 1)), 0, 0, 0, last}})
	}
	return s
}

func each(sentences []Sentence) iter.Seq2[Sentence, error] {
	return func(yield func(Sentence, error) bool) {
		for _, s := range sentences {
			if !yield(s, nil) {
				return
			}
		}
	}
}

// With Stream, a sentence's first piece is written and flushed while the engine still holds the rest: the engine
// here sends its second piece only once the first is flushed.
func TestSpeakWritesAPieceBeforeTheSentenceIsDone(t *testing.T) {
	rec := &flushRecorder{flushed: make(chan int, 16)}
	eng := &streamingEngine{pieces: 3, done: map[int64]chan struct{}{10: make(chan struct{})}}
	eng.between = func(int64) {
		select {
		case n := <-rec.flushed:
			if n == 0 {
				t.Error("flushed before any sample was written")
			}
		case <-time.After(time.Minute): // a bound on a hang, not a timing assertion
			t.Error("the first piece was not written while the engine held the rest")
		}
	}
	opt := SpeakOptions{Level: audio.Level{Normalisation: audio.ModelLevel}, Stream: true}
	if _, err := Speak(t.Context(), eng, NewInFlight(4), testVoice(), each(streamedSentences(0)), opt, rec, nil); err != nil {
		t.Fatal(err)
	}
	if want := opt.Level.PCM16(streamedAudio(10, 500)); !slices.Equal(rec.samples, want) {
		t.Errorf("%d samples written; want the sentence's %d", len(rec.samples), len(want))
	}
}

// Streamed or not, Speak writes the same samples: sentences in reading order (though they finish in reverse) with
// silence between them, a sentence whose pieces found no room whole from its Result, and the pieces of a sentence
// that finished before its turn written at its turn.
func TestStreamedSpeechIsTheSameAudio(t *testing.T) {
	const drop = 99
	sentences := streamedSentences(0, drop, 0, 0)
	speak := func(stream bool) (samples []int16, flushes int) {
		eng := &streamingEngine{pieces: 4, dropID: drop, done: map[int64]chan struct{}{}}
		for _, s := range sentences {
			eng.done[s.IDs[0]] = make(chan struct{})
		}
		rec := &flushRecorder{}
		opt := SpeakOptions{Level: audio.Level{Normalisation: audio.ModelLevel, Volume: 0.5}, SentenceSilence: 0.03, Stream: stream}
		n, err := Speak(t.Context(), eng, NewInFlight(len(sentences)), testVoice(), each(sentences), opt, rec, nil)
		if err != nil || n != len(sentences) {
			t.Fatalf("stream %v: %d sentences written, %v", stream, n, err)
		}
		return rec.samples, rec.flushes
	}
	whole, wholeFlushes := speak(false)
	streamed, streamedFlushes := speak(true)
	if len(whole) != 4*500+3*30 || !slices.Equal(streamed, whole) {
		t.Errorf("%d samples streamed, %d not; want the same %d", len(streamed), len(whole), 4*500+3*30)
	}
	// Each sentence is flushed once whole; streamed, after each of its 3 pieces and its rest, but for the one
	// whose pieces found no room.
	if wholeFlushes != 4 || streamedFlushes != 3*4+1 {
		t.Errorf("%d flushes streamed, %d not; want 13 and 4", streamedFlushes, wholeFlushes)
	}
}

func TestStreamNeedsTheModelsOwnLevel(t *testing.T) {
	eng := &streamingEngine{pieces: 2, done: map[int64]chan struct{}{10: make(chan struct{})}}
	_, err := Speak(context.Background(), eng, NewInFlight(1), testVoice(), each(streamedSentences(0)),
		SpeakOptions{Stream: true}, &flushRecorder{}, nil)
	if err == nil {
		t.Error("streaming peak-normalised audio: no error")
	}
}
