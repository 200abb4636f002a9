package textnorm

import "testing"

// Compatibility forms of Latin letters and digits read as the letters and digits they stand for: espeak-ng dropped
// full-width digits and circled numbers and spelled full-width and mathematical letters as code points.
func TestNormalizeFoldsCompatibilityForms(t *testing.T) {
	for _, tc := range []struct{ in, same string }{
		{"I have ３ apples and ２０ pears.", "I have 3 apples and 20 pears."},
		{"Hello ＡＢＣ company, ｆｕｌｌ ｗｉｄｔｈ.", "Hello ABC company, full width."},
		{"Price ＄５ now.", "Price $5 now."},
		{"Call ５５５－１２３４.", "Call 555-1234."},
		{"Meet at １２：３０ today（ＯＫ）.", "Meet at 12:30 today(OK)."},
		{"The ﬀ, ﬁ, ﬂ, ﬃ, ﬄ and ﬆ ligatures: ﬁrst ﬂoor.", "The ff, fi, fl, ffi, ffl and st ligatures: first floor."},
		{"Math 𝐛𝐨𝐥𝐝 and 𝑖𝑡𝑎𝑙𝑖𝑐 𝟏𝟐.", "Math bold and italic 12."},
		{"Item ① and ⑫.", "Item 1 and 12."},
		{"Chapter Ⅻ.", "Chapter XII."},
		{"It is 5㎞ away.", "It is 5km away."},
		{"Of ſome ſtrength.", "Of some strength."},
	} {
		got, want := Normalize(tc.in), Normalize(tc.same)
		if got != want {
			t.Errorf("Normalize(%q) = %q, want %q (as %q)", tc.in, got, want, tc.same)
		}
	}
	// Forms read better as they are, and other scripts' own punctuation, stay.
	for _, in := range []string{
		"5 km² area, H₂O, 10⁶", "Trade™ mark, № 5, 20℃", "1º and 2ª", "tʰ and ½ and … and é",
		"你好，世界！（一）", "Привет, мир!", "ＡＢＣ",
	} {
		want := in
		if in == "ＡＢＣ" {
			want = "ABC"
		}
		if got := clean(in); got != want {
			t.Errorf("clean(%q) = %q, want %q", in, got, want)
		}
	}
}

// foldAlnum passes over whole ranges of characters without looking them up: none of them is folded by the rule.
func TestNoASCIIFormsSkipsNone(t *testing.T) {
	for r := rune(0x80); r <= 0x10FFFF; r++ {
		if !noASCIIForms(r) {
			continue
		}
		if d, ok := asciiAlnumForm(r); ok && !keepForm(r) {
			t.Errorf("%U is skipped, but is a form of %q", r, d)
		}
	}
}
