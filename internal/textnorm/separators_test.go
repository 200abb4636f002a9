package textnorm

import "testing"

// Separators and lines of marks alone are not read: espeak-ng read "* * *" as "asterisk asterisk asterisk" and a
// lone "!" as "exclamation". Words around a separator, marks that go with words and emoji stay.
func TestNormalizeSkipsSeparators(t *testing.T) {
	for in, want := range map[string]string{
		"*** START OF THE PROJECT GUTENBERG EBOOK PRIDE AND PREJUDICE ***": "start of the PROJECT GUTENBERG EBOOK PRIDE and PREJUDICE",
		"* * *":                   "",
		"***":                     "",
		"!!!":                     "",
		"... !!! ??? ---":         "",
		"(!)":                     "",
		"& + =":                   "",
		"==== Title ====":         "Title",
		"~~~ Fin ~~~":             "Fin",
		"Part one ##### Part two": "Part one Part two",
		"Wow!!! Really???":        "Wow!!! Really???",
		"word -- word":            "word -- word",
		"Party 🎉🎉🎉":               "Party 🎉🎉🎉",
		"🎉":                       "🎉",
	} {
		if got := Normalize(in); got != want {
			t.Errorf("Normalize(%q) = %q, want %q", in, got, want)
		}
	}
}
