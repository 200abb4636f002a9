package textnorm

import "strings"

// regnalNames are given names that monarchs and popes share, after which a Roman numeral is an
// ordinal: "George III" -> "George the third".
var regnalNames = setOf("George", "Charles", "Henry", "Edward", "William", "James", "Richard", "Elizabeth", "Mary",
	"Louis", "Napoleon", "Pius", "Leo", "Gregory", "Benedict", "Innocent", "Clement", "Urban", "Boniface", "Sixtus",
	"Alexander", "Nicholas", "Peter", "Paul", "John", "Frederick", "Philip", "Ferdinand", "Francis", "Wilhelm",
	"Ludwig", "Otto", "Rudolf", "Ivan", "Catherine", "Alfonso", "Carlos", "Juan", "Gustav", "Gustavus", "Christian",
	"Haakon", "Olaf", "Constantine", "Victor", "Umberto", "Anne", "Edmund", "Harold", "Stephen", "Malcolm",
	"David", "Robert", "Selim", "Mehmed", "Ramesses", "Ptolemy", "Amenhotep", "Thutmose", "Felipe")

// riskyWithI are regnal names and numbered nouns often followed by the pronoun "I" in ordinary prose ("John I
// think", "No I won't").
var riskyWithI = setOf("John", "Mary", "Paul", "Peter", "Anne", "David", "Robert", "Victor", "Christian", "Stephen",
	"No", "Mark", "Art")

// numberedNouns are words after which a Roman numeral is a plain number: "World War II" ->
// "World War two", "Chapter IV" -> "Chapter four".
var numberedNouns = setOf("Chapter", "Part", "Volume", "Vol", "Book", "Act", "Scene", "War", "Phase", "Type",
	"Class", "Section", "Article", "Title", "Stage", "Level", "Round", "Episode", "Season", "Apollo", "Mark", "Mk",
	"Appendix", "Schedule", "Canto", "Psalm", "Series", "Grade", "Division", "Vatican", "Gemini", "Vols", "No", "Fig",
	"Ch", "Chap", "Pt", "Art", "Sec", "Bk")

// divisionNouns are the numbered nouns that divide long texts, whose numbers run past 39 ("Chapter XL", "Psalm
// CXIX"). After other numbered nouns "XL" and "C" are more often sizes or labels ("Type C", "Mark XL").
var divisionNouns = setOf("Chapter", "Ch", "Chap", "Part", "Pt", "Book", "Bk", "Volume", "Vol", "Vols", "Act",
	"Scene", "Section", "Sec", "Article", "Art", "Canto", "Psalm", "Title", "Episode")

// romanNumeral parses a canonical upper-case Roman numeral from 1 to 399.
func romanNumeral(s string) (uint64, bool) {
	if s == "" || len(s) > 12 || strings.Trim(s, "IVXLC") != "" {
		return 0, false
	}
	values := map[byte]uint64{'I': 1, 'V': 5, 'X': 10, 'L': 50, 'C': 100}
	var total uint64
	for k := 0; k < len(s); k++ {
		v := values[s[k]]
		if k+1 < len(s) && values[s[k+1]] > v {
			total -= v
		} else {
			total += v
		}
	}
	if total < 1 || total > 399 || toRoman(total) != s {
		return 0, false // "IIII", "VX": not canonical, so probably not a numeral
	}
	return total, true
}

func toRoman(v uint64) string {
	var b strings.Builder
	for _, step := range []struct {
		value  uint64
		symbol string
	}{{100, "C"}, {90, "XC"}, {50, "L"}, {40, "XL"}, {10, "X"}, {9, "IX"}, {5, "V"}, {4, "IV"}, {1, "I"}} {
		for v >= step.value {
			b.WriteString(step.symbol)
			v -= step.value
		}
	}
	return b.String()
}

// regnal reads a Roman numeral after a monarch's name as an ordinal and after a numbered noun as a
// cardinal, keeping a possessive ("Henry VIII's" -> "Henry the eighth's"); elsewhere Roman numerals
// are left alone ("I" is usually the pronoun). Monarchs' numerals stop at 39, and only division nouns
// take numerals of L and C, never a lone "L" or "C" ("Appendix C" is a letter).
func (n *normalizer) regnal(i int) (string, bool) {
	t := n.toks[i]
	numeral, possessive := cutPossessive(t.core)
	v, ok := romanNumeral(numeral)
	if !ok || i == 0 || t.lead != "" {
		return "", false
	}
	prev := n.toks[i-1]
	dottedPrev := prev.trail == "." && prev.dotEaten // "Vol. II": the abbreviation's period
	if prev.trail != "" && !dottedPrev {
		return "", false
	}
	noun := headingCase(prev.core)
	if numeral == "I" && riskyWithI[noun] {
		return "", false
	}
	switch {
	case regnalNames[noun] && v <= 39:
		n.toks[i].dotEaten = possessive == "" && strings.HasPrefix(t.trail, ".") && !strings.HasPrefix(t.trail, "..")
		return "the " + ordinal(v) + possessive, true
	case numberedNouns[noun] && (v <= 39 || divisionNouns[noun] && len(numeral) > 1):
		return cardinal(v) + possessive, true
	}
	return "", false
}

// cutPossessive splits "VIII's" into "VIII" and "'s" (straight or curly apostrophe).
func cutPossessive(core string) (string, string) {
	for _, suffix := range []string{"'s", "’s"} {
		if base, ok := strings.CutSuffix(core, suffix); ok {
			return base, suffix
		}
	}
	return core, ""
}

// headingCase writes an all-capitals word as a capitalised one ("CHAPTER" -> "Chapter"), so that headings
// match the names and nouns above; other words, lower-case ones included ("the present volume I"), stay.
func headingCase(word string) string {
	if len(word) < 2 || !isUpperWord(word) {
		return word
	}
	return word[:1] + strings.ToLower(word[1:])
}
