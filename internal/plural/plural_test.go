package plural

import "testing"

func TestCount(t *testing.T) {
	for _, tt := range []struct {
		n    int
		noun string
		want string
	}{
		{0, "item", "0 items"},
		{1, "item", "1 item"},
		{2, "item", "2 items"},
		{1, "sentence", "1 sentence"},
		{120, "sentence", "120 sentences"},
		{1, "temp file", "1 temp file"},
		{3, "temp file", "3 temp files"},
		{2, "batch", "2 batches"},
		{0, "ok row", "0 ok rows"},
	} {
		if got := Count(tt.n, tt.noun); got != tt.want {
			t.Errorf("Count(%d, %q) = %q, want %q", tt.n, tt.noun, got, tt.want)
		}
	}
}
