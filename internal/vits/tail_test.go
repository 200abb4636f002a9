package vits

import (
	"testing"

	"github.com/ttsgen/ttsgen/internal/ort/orttest"
)

// The cut for ttsgen's voice (which masks its own decoder: the tail reads its masks from the head) and for
// Piper's graph (nothing but the cut tensor), at the input of the second-to-last upsampling layer.
func TestCutTail(t *testing.T) {
	for _, tt := range []struct {
		path                  string
		perFrame, rate, extra int
	}{
		{orttest.TinyVoice, 8, 32, 2}, // its masks at the last two stages' rates
		{orttest.PiperShapedVoice, 8, 32, 0},
	} {
		t.Run(tt.path, func(t *testing.T) {
			tc, err := CutTail(prepared(t, tt.path))
			if err != nil {
				t.Fatal(err)
			}
			if tc.PerFrame != tt.perFrame || tc.Rate != tt.rate || len(tc.Extras) != tt.extra {
				t.Errorf("cut: %d samples per frame, %d output samples per sample, extras %v; want %d, %d, %d extras",
					tc.PerFrame, tc.Rate, tc.Extras, tt.perFrame, tt.rate, tt.extra)
			}
			if tc.Reach <= 0 || tc.Reach%tc.PerFrame != 0 {
				t.Errorf("reach %d: want a positive number of whole frames", tc.Reach)
			}
		})
	}
}
