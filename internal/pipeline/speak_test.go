package pipeline

import (
	"context"
	"errors"
	"iter"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ttsgen/ttsgen/internal/audio"
	"github.com/ttsgen/ttsgen/internal/engine"
	"github.com/ttsgen/ttsgen/internal/voices"
)

// fakeEngine answers each request with len(IDs)*100 samples of a constant equal to the first id, after a delay
// that makes later sentences finish first, so tests see whether Speak restores reading order.
type fakeEngine struct {
	mu        sync.Mutex
	submitted int
	failOn    int64 // first id that fails; 0 = none
	block     bool  // never answer (for cancellation tests)
}

func (f *fakeEngine) QueueSize() int { return 8 }

func (f *fakeEngine) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.submitted
}

// waitFor polls until cond holds, failing the test after two seconds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(2 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// taken is how many places of f are held.
func (f *InFlight) taken() int { return len(f.slots) }

func (f *fakeEngine) Submit(ctx context.Context, _ *engine.Model, req engine.Request) <-chan engine.Result {
	f.mu.Lock()
	n := f.submitted
	f.submitted++
	f.mu.Unlock()
	ch := make(chan engine.Result, 1)
	go func() {
		if f.block {
			<-ctx.Done()
			ch <- engine.Result{Err: ctx.Err()}
			return
		}
		time.Sleep(time.Duration(10-n%10) * time.Millisecond)
		if req.IDs[0] == f.failOn {
			ch <- engine.Result{Err: errors.New("device fell over")}
			return
		}
		samples := make([]float32, len(req.IDs)*100)
		for i := range samples {
			samples[i] = float32(req.IDs[0]) / 100
		}
		ch <- engine.Result{Audio: samples}
	}()
	return ch
}

func testVoice() *LoadedVoice {
	cfg := &voices.Config{}
	cfg.Audio.SampleRate = 1000
	return &LoadedVoice{Voice: &voices.Voice{Name: "fake", Config: cfg}}
}

func sentencesWithFirstIDs(ids ...int64) iter.Seq2[Sentence, error] {
	return func(yield func(Sentence, error) bool) {
		for _, id := range ids {
			if !yield(Sentence{Text: "s", IDs: []int64{id, 0, 0}}, nil) {
				return
			}
		}
	}
}

func TestSpeakWritesInReadingOrderWithSilence(t *testing.T) {
	var buf audio.Buffer
	wav := audio.NewWAVWriter(&buf, 1000)
	var done int
	inFlight := NewInFlight(2) // fewer places than sentences: the third waits for the first to be written
	written, err := Speak(context.Background(), &fakeEngine{}, inFlight, testVoice(), sentencesWithFirstIDs(10, 20, 30),
		SpeakOptions{SentenceSilence: 0.05}, wav, func(SentenceDone) { done++ })
	if err != nil || written != 3 {
		t.Fatalf("wrote %d sentences, err %v; want 3", written, err)
	}
	if n := inFlight.taken(); n != 0 {
		t.Errorf("%d places still taken after the text was written", n)
	}
	if err := wav.Close(); err != nil {
		t.Fatal(err)
	}
	samples, _, err := audio.ReadWAV(strings.NewReader(string(buf.Bytes())))
	if err != nil {
		t.Fatal(err)
	}
	// 3 sentences x 300 samples + 2 gaps x 50 samples.
	if len(samples) != 3*300+2*50 || done != 3 {
		t.Fatalf("%d samples, %d sentences reported", len(samples), done)
	}
	// Each sentence is at speech level (the fake's sentences are constant, so their RMS, -20 dBFS, is every
	// sample's value); gaps are silent.
	for i, want := range []struct {
		at int
		v  int16
	}{{0, 3276}, {299, 3276}, {300, 0}, {349, 0}, {350, 3276}, {649, 3276}, {650, 0}, {999, 3276}} {
		if samples[want.at] != want.v {
			t.Errorf("check %d: sample %d = %d, want %d", i, want.at, samples[want.at], want.v)
		}
	}
}

func TestSpeakStopsAtTheFirstFailedSentence(t *testing.T) {
	var buf audio.Buffer
	wav := audio.NewWAVWriter(&buf, 1000)
	inFlight := NewInFlight(8)
	written, err := Speak(context.Background(), &fakeEngine{failOn: 20}, inFlight, testVoice(),
		sentencesWithFirstIDs(10, 20, 30), SpeakOptions{}, wav, nil)
	if err == nil || !strings.Contains(err.Error(), "sentence 2") || !strings.Contains(err.Error(), "device fell over") {
		t.Fatalf("err = %v", err)
	}
	if written != 1 {
		t.Errorf("wrote %d sentences before the failed one; want 1", written)
	}
	if n := inFlight.taken(); n != 0 {
		t.Errorf("%d places still taken after the text failed", n)
	}
}

func TestSpeakHonoursCancellation(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var buf audio.Buffer
	errc := make(chan error, 1)
	go func() {
		_, err := Speak(ctx, &fakeEngine{block: true}, NewInFlight(8), testVoice(), sentencesWithFirstIDs(1, 2, 3),
			SpeakOptions{}, audio.NewWAVWriter(&buf, 1000), nil)
		errc <- err
	}()
	cancel()
	select {
	case err := <-errc:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want context.Canceled", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Speak did not return after cancellation")
	}
}

func TestSpeakBoundsSentencesInFlight(t *testing.T) {
	eng := &fakeEngine{block: true}
	ctx, cancel := context.WithCancel(context.Background())
	var buf audio.Buffer
	ids := make([]int64, 500)
	for i := range ids {
		ids[i] = int64(i + 1)
	}
	inFlight := NewInFlight(16)
	errc := make(chan error, 1)
	go func() {
		_, err := Speak(ctx, eng, inFlight, testVoice(), sentencesWithFirstIDs(ids...), SpeakOptions{},
			audio.NewWAVWriter(&buf, 1000), nil)
		errc <- err
	}()
	// While the first sentence is unanswered, the text fills its places and no more.
	waitFor(t, "16 sentences submitted", func() bool { return eng.count() >= 16 })
	time.Sleep(50 * time.Millisecond)
	if n := eng.count(); n != 16 {
		t.Errorf("%d of 500 sentences submitted while the first was unanswered; want 16, the places in flight", n)
	}
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
	if n := inFlight.taken(); n != 0 {
		t.Errorf("%d places still taken after Speak was cancelled", n)
	}
}

// The texts of one job share its places: a second text gets only what the first leaves.
func TestSpeakTextsShareInFlight(t *testing.T) {
	eng := &fakeEngine{block: true}
	ctx, cancel := context.WithCancel(context.Background())
	inFlight := NewInFlight(10)
	ids := make([]int64, 100)
	for i := range ids {
		ids[i] = int64(i + 1)
	}
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var buf audio.Buffer
			Speak(ctx, eng, inFlight, testVoice(), sentencesWithFirstIDs(ids...), SpeakOptions{},
				audio.NewWAVWriter(&buf, 1000), nil)
		}()
	}
	waitFor(t, "10 sentences submitted", func() bool { return eng.count() >= 10 })
	time.Sleep(50 * time.Millisecond)
	if n := eng.count(); n != 10 {
		t.Errorf("two texts submitted %d sentences with 10 places; want 10", n)
	}
	cancel()
	wg.Wait()
	if n := inFlight.taken(); n != 0 {
		t.Errorf("%d places still taken after both texts were cancelled", n)
	}
}

// A text's first sentences are spoken while the rest is still being phonemized: here the sentences after the
// first come only once the first is written, which would never happen if Speak waited for all of them.
func TestSpeakStartsBeforeTheTextIsPhonemized(t *testing.T) {
	firstWritten := make(chan struct{})
	sentences := func(yield func(Sentence, error) bool) {
		if !yield(Sentence{Text: "one", IDs: []int64{1, 0, 0}}, nil) {
			return
		}
		select {
		case <-firstWritten:
		case <-time.After(2 * time.Second):
			t.Error("the first sentence was not written before the text's end was phonemized")
		}
		yield(Sentence{Text: "two", IDs: []int64{2, 0, 0}}, nil)
	}
	var buf audio.Buffer
	inFlight := NewInFlight(8)
	once := sync.OnceFunc(func() { close(firstWritten) })
	written, err := Speak(context.Background(), &fakeEngine{}, inFlight, testVoice(), sentences, SpeakOptions{},
		audio.NewWAVWriter(&buf, 1000), func(SentenceDone) { once() })
	if err != nil || written != 2 {
		t.Fatalf("wrote %d sentences, err %v; want 2", written, err)
	}
}

// A text that fails to phonemize part-way fails with that error after the sentences before it, and gives back
// every place.
func TestSpeakStopsAtAPhonemizingError(t *testing.T) {
	broken := errors.New("phonemizing with espeak-ng voice \"en-us\": helper died")
	sentences := func(yield func(Sentence, error) bool) {
		for id := range int64(3) {
			if !yield(Sentence{Text: "s", IDs: []int64{id + 1, 0, 0}}, nil) {
				return
			}
		}
		if yield(Sentence{}, broken) {
			t.Error("Speak asked for more sentences after the text's error")
		}
	}
	var buf audio.Buffer
	inFlight := NewInFlight(8)
	written, err := Speak(context.Background(), &fakeEngine{}, inFlight, testVoice(), sentences, SpeakOptions{},
		audio.NewWAVWriter(&buf, 1000), nil)
	if !errors.Is(err, broken) || written != 3 {
		t.Errorf("wrote %d sentences, err %v; want 3 and the phonemizer's error", written, err)
	}
	if n := inFlight.taken(); n != 0 {
		t.Errorf("%d places still taken after the text failed", n)
	}
}

func TestSpeakSaysWhenThereIsNothingToSpeak(t *testing.T) {
	var buf audio.Buffer
	written, err := Speak(context.Background(), &fakeEngine{}, NewInFlight(8), testVoice(), sentencesWithFirstIDs(),
		SpeakOptions{}, audio.NewWAVStream(&buf, 1000), nil)
	if !errors.Is(err, ErrNothingToSpeak) || written != 0 {
		t.Errorf("wrote %d sentences, err %v; want ErrNothingToSpeak", written, err)
	}
	if n := len(buf.Bytes()); n != 0 {
		t.Errorf("%d bytes written for a text with nothing to speak; want none", n)
	}
}
