package phonemes

import (
	"reflect"
	"testing"
)

func TestIDs(t *testing.T) {
	idMap := loadTestIDMap(t)
	tests := []struct {
		name        string
		phonemes    string
		wantIDs     []int64
		wantMissing []string
	}{
		{"statement", "ðɪs ɪz ɐ tˈɛst.",
			[]int64{1, 0, 41, 0, 74, 0, 31, 0, 3, 0, 74, 0, 38, 0, 3, 0, 50, 0, 3, 0, 32, 0, 120, 0, 61, 0, 31, 0, 32, 0, 10, 0, 2}, nil},
		{"empty", "", []int64{1, 0, 2}, nil},
		// Each code point is one phoneme: the decomposed ç is c (16) and the cedilla (140), and the
		// map's diphthong key "oʊ" (165) is never used.
		{"code points", "ɪc\u0327oʊ", []int64{1, 0, 74, 0, 16, 0, 140, 0, 27, 0, 100, 0, 2}, nil},
		{"unknown skipped, reported once in order", "aЖbЖ€a",
			[]int64{1, 0, 14, 0, 15, 0, 14, 0, 2}, []string{"Ж", "€"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ids, missing := IDs(tt.phonemes, idMap)
			if !reflect.DeepEqual(ids, tt.wantIDs) || !reflect.DeepEqual(missing, tt.wantMissing) {
				t.Errorf("IDs(%q) = %v, %q\nwant %v, %q", tt.phonemes, ids, missing, tt.wantIDs, tt.wantMissing)
			}
		})
	}
}

// Map values are lists: a phoneme with several ids contributes all of them before its pad.
func TestIDsMultipleIDsPerPhoneme(t *testing.T) {
	idMap := map[string][]int64{"_": {0}, "^": {1}, "$": {2}, "a": {5, 6}}
	ids, missing := IDs("aa", idMap)
	want := []int64{1, 0, 5, 6, 0, 5, 6, 0, 2}
	if !reflect.DeepEqual(ids, want) || missing != nil {
		t.Fatalf("IDs = %v, %q; want %v", ids, missing, want)
	}
}

func TestText(t *testing.T) {
	tests := []struct {
		name string
		text string
		want []string
	}{
		{"sentences", "Hello, world. How are you? Fine!", []string{"Hello, world.", "How are you?", "Fine!"}},
		{"NFD", "Café.", []string{"Cafe\u0301."}},
		{"marks inside words stay", "It is 3.5 m, i.e. far.", []string{"It is 3.5 m, i.e.", "far."}},
		{"run of marks", "What?! Yes...  No", []string{"What?!", "Yes...", "No"}},
		{"empty", "  ", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Text(tt.text); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Text(%q) = %q, want %q", tt.text, got, tt.want)
			}
		})
	}
}
