package gpu

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

func TestWindowCutAndPlace(t *testing.T) {
	w := windowing{frames: 2, margin: 1}
	// 2 channels x 3 frames: channel 0 = 1 2 3, channel 1 = 4 5 6.
	latent := []float32{1, 2, 3, 4, 5, 6}
	tests := []struct {
		k    int
		want string
	}{
		{0, "[0 1 2 3 0 4 5 6]"}, // left margin before the sentence is zero
		{1, "[2 3 0 0 5 6 0 0]"}, // frames past the end are zero
	}
	if w.count(3) != 2 {
		t.Fatalf("count(3) = %d, want 2", w.count(3))
	}
	for _, tt := range tests {
		dst := make([]float32, 2*w.span())
		for i := range dst {
			dst[i] = -1 // cutWindow must overwrite stale data
		}
		w.cutWindow(dst, latent, 2, 3, tt.k)
		if fmt.Sprint(dst) != tt.want {
			t.Errorf("window %d: %v, want %s", tt.k, dst, tt.want)
		}
	}
	audio := make([]float32, 3*2) // 3 frames, hop 2
	for k, decoded := range [][]float32{{9, 9, 1, 1, 2, 2, 9, 9}, {9, 9, 3, 3, 8, 8, 9, 9}} {
		if err := w.placeWindow(audio, decoded, 2, k); err != nil {
			t.Fatal(err)
		}
	}
	if fmt.Sprint(audio) != "[1 1 2 2 3 3]" {
		t.Errorf("stitched %v, want [1 1 2 2 3 3]", audio)
	}
	if err := w.placeWindow(audio, make([]float32, 5), 2, 0); err == nil {
		t.Error("placeWindow took a window of the wrong size")
	}
}

// TestWindowedDecoderMatchesWholeSentence checks the split graph: the acoustic part, then the decoder on fixed
// windows drawn from three sentences at once, stitched, equals the whole graph run on each sentence alone. With no
// margin the windows' edges show (the test's own control).
func TestWindowedDecoderMatchesWholeSentence(t *testing.T) {
	e, m := tinyEngine(t, Options{Threads: 1})
	sv, err := splitGraph(readVoice(t, tinyVoicePath))
	if err != nil {
		t.Fatal(err)
	}
	if sv.decoderSpeaker || sv.io.hasSpeaker {
		t.Errorf("single-speaker voice split with speaker inputs: %+v", sv.io)
	}
	b := ortBackend{}
	acoustic, err := b.newGraphRunner(sv.acoustic, sv.io.inputNames(), []string{outputLatent, outputFrames}, DeviceCPU, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer acoustic.close()
	decoder, err := b.newGraphRunner(sv.decoder, []string{outputLatent}, []string{outputAudio}, DeviceCPU, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer decoder.close()

	rng := rand.New(rand.NewPCG(9, 10))
	var batch []*item
	var whole [][]float32
	for _, n := range []int{6, 25, 14} {
		it := &item{model: m, req: Request{IDs: sentence(rng, n), Scales: deterministic}}
		alone, err := e.synthesize(m.runners[0], []*item{it})
		if err != nil {
			t.Fatal(err)
		}
		batch, whole = append(batch, it), append(whole, alone[0])
	}
	in := packBatch(batch, false)
	tests := []struct {
		name     string
		w        windowing
		maxDiff  float64
		minDiff  float64
		nWindows int
	}{
		{"32-frame windows, 16 margin", windowing{frames: 32, margin: 16}, 1e-4, 0, 7},
		{"8-frame windows, 16 margin", windowing{frames: 8, margin: 16}, 1e-4, 0, 64},
		{"no margin shows the seams", windowing{frames: 32, margin: 0}, 10, 1e-3, 7},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			audio, err := decodeWindowed(acoustic, decoder, sv, in, tt.w, tinyHop, tt.nWindows)
			if err != nil {
				t.Fatal(err)
			}
			var worst float64
			for i := range batch {
				if len(audio[i]) != len(whole[i]) {
					t.Fatalf("item %d: %d samples windowed, %d whole", i, len(audio[i]), len(whole[i]))
				}
				worst = max(worst, maxAbsDiff(audio[i], whole[i]))
			}
			if worst > tt.maxDiff || worst < tt.minDiff {
				t.Errorf("max difference from the whole-sentence decoder %g, want within [%g, %g]", worst, tt.minDiff, tt.maxDiff)
			}
			t.Logf("max difference %g", worst)
		})
	}
}
