package phonemes

import "testing"

// Each case is the characters ReadClause read for one clause: the text pointer's movement plus the
// pushed-back character at the start, and whether it read the final NUL.
func TestClauseEnd(t *testing.T) {
	german := rulesForLanguage("de")
	tests := []struct {
		name         string
		read         string
		reachedEOF   bool
		rules        languageRules
		wantMark     string
		wantSentence bool
	}{
		{"full stop then next word's letter", "Hello world. H", false, languageRules{}, ".", true},
		{"comma", "Hello, w", false, languageRules{}, ", ", false},
		{"colon", "Note: t", false, languageRules{}, ": ", false},
		{"semicolon", "one; t", false, languageRules{}, "; ", false},
		{"question at end of text", "How are you?", true, languageRules{}, "?", true},
		{"exclamation at end of text", "Wow!", true, languageRules{}, "!", true},
		{"end of text without a mark", "Hello world", true, languageRules{}, "", true},
		{"first mark of a run counts", "Hello?!", true, languageRules{}, "?", true},
		{"comma swallows a full stop", "Yes,. n", false, languageRules{}, ", ", false},
		{"ellipsis: no mark, sentence goes on", "Wait... w", false, languageRules{}, "", false},
		{"fullwidth full stop needs no space, gets no mark", "Yes。N", false, languageRules{}, "", true},
		{"em dash counts as semicolon", "a — b", false, languageRules{}, "; ", false},
		{"closing quote after the mark", `said "hi."`, false, languageRules{}, ".", true},
		{"blank line after full stop is a paragraph", "Hello.\n\nW", false, languageRules{}, "", true},
		{"blank line alone is a paragraph", "Hello\n\nW", false, languageRules{}, "", true},
		{"one newline after a mark is a space", "Hello.\nW", false, languageRules{}, ".", true},
		{"mark without letters before it is no end", "?", true, languageRules{}, "", true},
		{"pushed-back character alone", "W", true, languageRules{}, "", true},
		// ReadClause stopped without punctuation (its buffer was full): no mark, same sentence.
		{"no end found", "a very long clause wi", false, languageRules{}, "", false},
		// "Mr. s" could only be read this far if the clause ended at the dot; but a dot before a
		// lower-case letter never ends a clause, so espeak-ng must have stopped for its buffer.
		{"dot before lower case is no end", "Mr. s", false, languageRules{}, "", false},
		{"dot before lower case ends a Georgian sentence", "Mr. s", false, rulesForLanguage("ka"), ".", true},
		{"German ordinal before capital ends the clause", "Am 3. O", false, german, ".", true},
		{"German Roman ordinal is no end", "Ludwig XIV.", true, german, "", true},
		{"English Roman numeral with dot ends", "Ludwig XIV.", true, languageRules{}, ".", true},
		{"Hungarian ordinal comma is no end", "december 2., s", false, rulesForLanguage("hu"), "", false},
		// After Armenian in-word punctuation the next non-alphanumeric character, here the comma,
		// becomes an emphasis marker: the comma ends nothing and the clause runs to the end.
		{"Armenian in-word mark swallows the next mark", "a\u055eb, c", true, languageRules{}, "", true},
		{"same text without it", "ab, c", false, languageRules{}, ", ", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mark, sentence := piperMark(clauseEnd([]rune(tt.read), tt.reachedEOF, tt.rules))
			if mark != tt.wantMark || sentence != tt.wantSentence {
				t.Errorf("clauseEnd(%q, eof=%v) gives mark %q, sentence end %v; want %q, %v",
					tt.read, tt.reachedEOF, mark, sentence, tt.wantMark, tt.wantSentence)
			}
		})
	}
}

func TestRulesForLanguage(t *testing.T) {
	tests := []struct {
		language string
		want     languageRules
	}{
		{"en-us", languageRules{}},
		{"de", languageRules{ordinalDot: true}},
		{"nb", languageRules{ordinalDot: true}},
		{"hu", languageRules{ordinalDot: true, hungarianOrdinalComma: true}},
		{"ka", languageRules{lowercaseSentence: true}},
		{"fr-fr", languageRules{}},
	}
	for _, tt := range tests {
		if got := rulesForLanguage(tt.language); got != tt.want {
			t.Errorf("rulesForLanguage(%q) = %+v, want %+v", tt.language, got, tt.want)
		}
	}
}
