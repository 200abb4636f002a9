package pipeline

import (
	"strings"
	"testing"
)

func TestSplitPhonemesKeepsEveryPhonemeAndPrefersClauses(t *testing.T) {
	tests := []struct {
		name string
		in   string
		max  int
		want []string
	}{
		{"short stays whole", "həlˈoʊ wˈɜːld.", 400, []string{"həlˈoʊ wˈɜːld."}},
		{"clause mark first", "aa bb, cc dd ee", 12, []string{"aa bb,", "cc dd ee"}},
		{"else last space", "aaa bbb ccc ddd", 9, []string{"aaa bbb", "ccc ddd"}},
		{"endless word cut at the limit", "abcdefghij", 4, []string{"abcd", "efgh", "ij"}},
		{"exactly at the limit", "abcd", 4, []string{"abcd"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := splitPhonemes(tt.in, tt.max)
			if strings.Join(got, "|") != strings.Join(tt.want, "|") {
				t.Fatalf("splitPhonemes(%q, %d) = %q, want %q", tt.in, tt.max, got, tt.want)
			}
			for _, p := range got {
				if n := len([]rune(p)); n > tt.max {
					t.Errorf("piece %q has %d phonemes > %d", p, n, tt.max)
				}
			}
			if strings.ReplaceAll(strings.Join(got, ""), " ", "") != strings.ReplaceAll(tt.in, " ", "") {
				t.Errorf("phonemes lost: %q -> %q", tt.in, got)
			}
		})
	}
}

func TestSplitPhonemesLongInput(t *testing.T) {
	in := strings.Repeat("ðə kˈæt sˈæt, ", 200)
	got := splitPhonemes(in, DefaultMaxPhonemes)
	if len(got) < 2 {
		t.Fatalf("got %d pieces", len(got))
	}
	total := 0
	for _, p := range got {
		n := len([]rune(p))
		if n > DefaultMaxPhonemes {
			t.Errorf("piece of %d phonemes", n)
		}
		if !strings.HasSuffix(p, ",") && p != got[len(got)-1] {
			t.Errorf("piece %q does not end at a clause mark", p)
		}
		total += len([]rune(strings.ReplaceAll(p, " ", "")))
	}
	if want := len([]rune(strings.ReplaceAll(in, " ", ""))); total != want {
		t.Errorf("kept %d phonemes of %d", total, want)
	}
}
