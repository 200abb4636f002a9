package textnorm

import (
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
	"golang.org/x/text/width"
)

// fold returns what r, a non-ASCII character, is read as, where that is not r itself: the ASCII letters or digits it
// is a compatibility form of (its NFKC decomposition). espeak-ng reads many such forms badly or not at all: full-width digits
// ("３", "２０") are dropped, full-width letters read as "letter FF41", the ligatures ﬀ ﬃ ﬄ ﬆ and mathematical
// letters ("𝐛𝐨𝐥𝐝", in text from social media) as code points, circled numbers ("①") are dropped, and Roman numeral
// characters ("Ⅻ") spelled. Folded, they are text that the rules here and espeak-ng know ("5㎞" as five kilometres,
// "Chapter Ⅻ" as chapter twelve, "ſ" of old books as "s").
//
// A full-width sign or punctuation mark ("＄", "－", "：") is folded only next to an ASCII letter or digit (prev
// gives the character written before it; rest starts with the one after it, which counts folded): in "＄５" or "１２：３０" it belongs to the
// Latin text, while "，" and "！" between Chinese characters are that script's own punctuation and stay, for a voice
// that reads it.
//
// Left as they are, because their readings are better than their decompositions: superscripts and subscripts
// (km² is square kilometres, not "km2"), modifier letters (IPA's ʰ), the ordinal indicators ª º, letterlike symbols
// (™ is "trade mark", not "T M"; №, ℃), and anything whose decomposition is not ASCII letters and digits (½, …,
// accented letters, other scripts).
func fold(r rune, prev func() rune, rest string) (string, bool) {
	if s, ok := foldAlnum(r); ok {
		return s, true
	}
	if n := fullwidthSign(r); n != 0 {
		next, _ := utf8.DecodeRuneInString(rest)
		if f, ok := foldAlnum(next); ok {
			next, _ = utf8.DecodeRuneInString(f)
		}
		if isASCIIAlnum(next) || isASCIIAlnum(prev()) {
			return string(n), true
		}
	}
	return "", false
}

// fullwidthSign is the ASCII sign or punctuation mark whose full-width form r is ("＄" "$"), 0 if r is none.
func fullwidthSign(r rune) rune {
	if r < 0xFF01 || r > 0xFFEF { // the block of half-width and full-width forms
		return 0
	}
	if p := width.LookupRune(r); p.Kind() == width.EastAsianFullwidth {
		if n := p.Narrow(); n > ' ' && n < utf8.RuneSelf {
			return n
		}
	}
	return 0
}

// foldAlnum returns the ASCII letters and digits that r is a compatibility form of, if it is one that fold folds.
func foldAlnum(r rune) (string, bool) {
	if noASCIIForms(r) {
		return "", false
	}
	d, ok := asciiAlnumForm(r)
	if !ok || keepForm(r) {
		return "", false
	}
	return d, true
}

// asciiAlnumForm is r's compatibility decomposition where that is ASCII letters and digits.
func asciiAlnumForm(r rune) (string, bool) {
	var buf [utf8.UTFMax]byte
	d := norm.NFKC.Properties(buf[:utf8.EncodeRune(buf[:], r)]).Decomposition()
	if len(d) == 0 {
		return "", false
	}
	for _, c := range d {
		if !isASCIIAlnum(rune(c)) {
			return "", false
		}
	}
	return string(d), true
}

// noASCIIForms reports the ranges where no character is a compatibility form of ASCII letters and digits that fold
// folds (TestNoASCIIFormsSkipsNone checks it): Latin-1 (whose ª º ¹ ² ³ are kept), the scripts from Greek to Latin
// Extended Additional, CJK ideographs, Yi and Hangul. Passing them over at once keeps other scripts' text as quick
// to clean as before.
func noASCIIForms(r rune) bool {
	return r < 0x100 || r >= 0x300 && r < 0x2000 || r >= 0x3400 && r < 0xF900
}

// keepForm reports the compatibility forms that are read better as they are.
func keepForm(r rune) bool {
	switch {
	case r == '²' || r == '³' || r == '¹' || r >= 0x2070 && r <= 0x209F: // superscripts and subscripts
		return true
	case r == 'ª' || r == 'º':
		return true // (foldAlnum does not look at Latin-1: these say what it passes over)
	case r >= 0x2100 && r <= 0x214F: // letterlike symbols: ™ ℠ № ℃ ...
		return true
	}
	return unicode.Is(unicode.Lm, r) // modifier letters
}

func isASCIIAlnum(r rune) bool {
	return r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
}
