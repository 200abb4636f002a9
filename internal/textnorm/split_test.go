package textnorm

import (
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestSplitLong(t *testing.T) {
	cases := []struct {
		name     string
		in       string
		maxRunes int
		want     []string
	}{
		{"short stays whole", "Hello there.", 40, []string{"Hello there."}},
		{"exactly the limit", "abcde fghij", 11, []string{"abcde fghij"}},
		{"whitespace collapses", "  Hello \n there. ", 40, []string{"Hello there."}},
		{"empty", "   ", 10, nil},
		{"semicolon before comma", "one two, three; four five six", 20,
			[]string{"one two, three;", "four five six"}},
		{"comma", "the cat sat, the dog ran far away", 20, []string{"the cat sat,", "the dog ran far away"}},
		{"conjunction", "the cat sat down and the dog ran away", 25,
			[]string{"the cat sat down", "and the dog ran away"}},
		{"dash", "he paused — then he spoke again slowly", 26, []string{"he paused —", "then he spoke again slowly"}},
		{"colon", "note this: the cat sat on the mat", 22, []string{"note this:", "the cat sat on the mat"}},
		{"sentence mark strongest", "Go now. Then stop, wait; rest", 22, []string{"Go now.", "Then stop, wait; rest"}},
		{"initial is no sentence end", "said J. Smith, who ran off", 14, []string{"said J. Smith,", "who ran off"}},
		{"word boundary", "aaaa bbbb cccc dddd eeee", 10, []string{"aaaa bbbb", "cccc dddd", "eeee"}},
		{"no stub before early comma", "a, bbbb cccc dddd eeee ffff", 15, []string{"a, bbbb cccc", "dddd eeee ffff"}},
		{"long word cut last", "hi abcdefghijkl yo", 5, []string{"hi", "abcde", "fghij", "kl", "yo"}},
		{"runes not bytes", "ééééé ééééé ééééé", 11, []string{"ééééé ééééé", "ééééé"}},
		{"limit below one keeps everything", "one two", 0, []string{"one two"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := SplitLong(c.in, c.maxRunes)
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("SplitLong(%q, %d)\n got  %q\n want %q", c.in, c.maxRunes, got, c.want)
			}
		})
	}
}

// checkSplit asserts SplitLong's contract on one input; shared by the property test and the fuzzer.
func checkSplit(t *testing.T, in string, maxRunes int) {
	t.Helper()
	pieces := SplitLong(in, maxRunes)
	words := strings.Fields(in)
	if len(words) == 0 {
		if pieces != nil {
			t.Fatalf("SplitLong(%q, %d) = %q, want nil for no words", in, maxRunes, pieces)
		}
		return
	}
	longWord := false
	for _, w := range words {
		if utf8.RuneCountInString(w) > maxRunes {
			longWord = true
		}
	}
	for _, p := range pieces {
		if p == "" || strings.TrimSpace(p) != p {
			t.Fatalf("SplitLong(%q, %d): piece %q is empty or untrimmed", in, maxRunes, p)
		}
		if n := utf8.RuneCountInString(p); maxRunes >= 1 && n > maxRunes {
			t.Fatalf("SplitLong(%q, %d): piece %q has %d runes", in, maxRunes, p, n)
		}
	}
	joined := strings.Join(pieces, " ")
	if !longWord || maxRunes < 1 {
		if want := strings.Join(words, " "); joined != want {
			t.Fatalf("SplitLong(%q, %d) lost words: joined %q, want %q", in, maxRunes, joined, want)
		}
		return
	}
	// Cut words come back in order without any text missing.
	if got, want := strings.Join(strings.Fields(joined), ""), strings.Join(words, ""); got != want {
		t.Fatalf("SplitLong(%q, %d) lost text: %q, want %q", in, maxRunes, got, want)
	}
}

func TestSplitLongProperties(t *testing.T) {
	text := "It was the best of times, it was the worst of times; it was the age of wisdom — it was the age " +
		"of foolishness, and it was the epoch of belief: it was the epoch of incredulity. Über-long-hyphenated-" +
		"compound-words-happen and 日本語のテキストも and emoji 🙂🙂🙂 too."
	for maxRunes := 1; maxRunes <= 120; maxRunes++ {
		checkSplit(t, text, maxRunes)
	}
	pieces := SplitLong(text, 60)
	if len(pieces) < 3 {
		t.Fatalf("SplitLong(text, 60) gave %d pieces, want at least 3", len(pieces))
	}
	// Clause breaks are preferred: every piece but the last should end at punctuation here.
	for _, p := range pieces[:2] {
		last, _ := utf8.DecodeLastRuneInString(p)
		if !strings.ContainsRune(",;:—.", last) {
			t.Errorf("piece %q does not end at a clause boundary", p)
		}
	}
}
