package suggest

import "testing"

func TestClosest(t *testing.T) {
	known := []string{"length_scale", "noise_scale", "voice", "speaker"}
	for _, tt := range []struct{ name, want string }{
		{"lenght_scale", "length_scale"},
		{"Voice", "voice"},
		{"speakr", "speaker"},
		{"colour", ""},
		{"noise_scales", "noise_scale"},
	} {
		if got := Closest(tt.name, known); got != tt.want {
			t.Errorf("Closest(%q) = %q, want %q", tt.name, got, tt.want)
		}
	}
	if d := Distance("kitten", "sitting"); d != 3 {
		t.Errorf("Distance(kitten, sitting) = %d, want 3", d)
	}
}
