package textnorm

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzNormalize checks that any input gives clean, valid UTF-8 with no ASCII digit left (the
// phonemizer would read digits by its own rules) and that a plain number becomes only words.
func FuzzNormalize(f *testing.F) {
	for _, c := range normalizeCases {
		f.Add(c.in)
	}
	for _, c := range sentenceCases {
		f.Add(c.in)
	}
	for _, in := range markupSeeds {
		f.Add(in)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out := Normalize(in)
		if !utf8.ValidString(out) {
			t.Fatalf("Normalize(%q) = %q: invalid UTF-8", in, out)
		}
		if strings.ContainsAny(out, "0123456789") {
			t.Fatalf("Normalize(%q) = %q: digits left", in, out)
		}
		if strings.Contains(out, "  ") || strings.TrimSpace(out) != out {
			t.Fatalf("Normalize(%q) = %q: uncollapsed whitespace", in, out)
		}
		for _, r := range out {
			if r < ' ' || r == 0x7f {
				t.Fatalf("Normalize(%q) = %q: control character %U", in, out, r)
			}
		}
		if isPlainNumber(in) && strings.ContainsFunc(out, func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r == ' ' || r == '-')
		}) {
			t.Fatalf("Normalize(%q) = %q: a plain number must become lower-case words", in, out)
		}
		// Words made only of letters are never dropped (they may change case or expand), except a Markdown link's
		// or image's address and title: "![](cat.png)" is "".
		read := readLinks(clean(in))
		if strings.TrimSpace(in) != "" && out == "" && strings.ContainsFunc(read, isLetterOrDigit) {
			t.Fatalf("Normalize(%q) lost everything", in)
		}
		// Lower-case words are read as written, so each one is still in the output, unless it is an
		// abbreviation or unit that gets expanded.
		lowerOut := strings.ToLower(out)
		for _, w := range strings.Fields(read) {
			if isLowerASCIIWord(w) && !expandable(w) && !strings.Contains(lowerOut, w) {
				t.Fatalf("Normalize(%q) = %q: lost the word %q", in, out, w)
			}
		}
		// Normalizing twice changes nothing more: the output has no numbers or symbols left to read.
		if again := Normalize(out); !utf8.ValidString(again) || strings.ContainsAny(again, "0123456789") {
			t.Fatalf("Normalize(Normalize(%q)) = %q", in, again)
		}
	})
}

// isPlainNumber reports digits with an optional minus sign and decimal point, e.g. "-12.5".
func isPlainNumber(s string) bool {
	s = strings.TrimPrefix(s, "-")
	whole, frac, _ := strings.Cut(s, ".")
	return isASCIIDigits(whole) && (frac == "" && !strings.HasSuffix(s, ".") || isASCIIDigits(frac))
}

func isLetterOrDigit(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
}

func FuzzSentences(f *testing.F) {
	for _, c := range sentenceCases {
		f.Add(c.in)
	}
	for _, c := range normalizeCases {
		f.Add(c.in)
	}
	for _, in := range markupSeeds {
		f.Add(in)
	}
	f.Fuzz(func(t *testing.T, in string) {
		got := Sentences(in)
		for _, s := range got {
			if s == "" || strings.TrimSpace(s) != s || strings.Contains(s, "  ") {
				t.Fatalf("Sentences(%q): bad sentence %q", in, s)
			}
			if !utf8.ValidString(s) || strings.ContainsAny(s, "\n\r\t") {
				t.Fatalf("Sentences(%q): sentence %q is not clean one-line UTF-8", in, s)
			}
		}
		// Only the marks that Markdown puts at the start of a line ("# ", "* ", "> ", "```go") may go.
		if joined, want := strings.Join(got, " "), strings.Join(strings.Fields(markdownLines(clean(in))), " "); joined != want {
			t.Fatalf("Sentences(%q) lost text: %q, want %q", in, joined, want)
		}
	})
}

func FuzzSplitLong(f *testing.F) {
	for _, c := range sentenceCases {
		f.Add(c.in, 10)
	}
	for _, c := range normalizeCases {
		f.Add(c.want, 7)
	}
	f.Add("a, b; c — d and e but f", 3)
	f.Fuzz(func(t *testing.T, in string, maxRunes int) {
		if maxRunes > 1000 || maxRunes < -1 {
			maxRunes %= 1000
		}
		checkSplit(t, in, maxRunes)
	})
}

func isLowerASCIIWord(w string) bool {
	if len(w) < 3 {
		return false
	}
	for i := 0; i < len(w); i++ {
		if w[i] < 'a' || w[i] > 'z' {
			return false
		}
	}
	return true
}

// expandable reports words that Normalize may legitimately replace: abbreviations and units.
func expandable(w string) bool {
	_, unit := unitNames[w]
	_, glued := gluedUnits[w]
	_, dotted := dottedWords[w]
	_, undotted := undottedWords[w]
	return unit || glued || dotted || undotted || scaleSuffixes[w] != ""
}
