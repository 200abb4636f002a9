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

// riskyWithI are regnal names often followed by the pronoun "I" in ordinary prose ("John I think").
var riskyWithI = setOf("John", "Mary", "Paul", "Peter", "Anne", "David", "Robert", "Victor", "Christian", "Stephen")

// numberedNouns are words after which a Roman numeral is a plain number: "World War II" ->
// "World War two", "Chapter IV" -> "Chapter four".
var numberedNouns = setOf("Chapter", "Part", "Volume", "Vol", "Book", "Act", "Scene", "War", "Phase", "Type",
	"Class", "Section", "Article", "Title", "Stage", "Level", "Round", "Episode", "Season", "Apollo", "Mark", "Mk",
	"Appendix", "Schedule", "Canto", "Psalm", "Series", "Grade", "Division", "Vatican", "Gemini", "Vols", "No", "Fig",
	"Ch", "Chap", "Pt", "Art", "Sec", "Bk")

// romanNumeral parses a canonical upper-case Roman numeral from 1 to 39.
func romanNumeral(s string) (uint64, bool) {
	if s == "" || len(s) > 7 || strings.Trim(s, "IVX") != "" {
		return 0, false
	}
	values := map[byte]uint64{'I': 1, 'V': 5, 'X': 10}
	var total uint64
	for k := 0; k < len(s); k++ {
		v := values[s[k]]
		if k+1 < len(s) && values[s[k+1]] > v {
			total -= v
		} else {
			total += v
		}
	}
	if total < 1 || total > 39 || toRoman(total) != s {
		return 0, false // "IIII", "VX": not canonical, so probably not a numeral
	}
	return total, true
}

func toRoman(v uint64) string {
	var b strings.Builder
	for _, step := range []struct {
		value  uint64
		symbol string
	}{{10, "X"}, {9, "IX"}, {5, "V"}, {4, "IV"}, {1, "I"}} {
		for v >= step.value {
			b.WriteString(step.symbol)
			v -= step.value
		}
	}
	return b.String()
}

// regnal reads a Roman numeral after a monarch's name as an ordinal and after a numbered noun as a
// cardinal; elsewhere Roman numerals are left alone ("I" is usually the pronoun).
func (n *normalizer) regnal(i int) (string, bool) {
	t := n.toks[i]
	v, ok := romanNumeral(t.core)
	if !ok || i == 0 || t.lead != "" {
		return "", false
	}
	prev := n.toks[i-1]
	if prev.trail != "" && !(prev.trail == "." && prev.dotEaten) { // "Vol. II": the abbreviation's period
		return "", false
	}
	switch {
	case regnalNames[prev.core] && !(t.core == "I" && riskyWithI[prev.core]):
		n.toks[i].dotEaten = strings.HasPrefix(t.trail, ".") && !strings.HasPrefix(t.trail, "..")
		return "the " + ordinal(v), true
	case numberedNouns[prev.core]:
		return cardinal(v), true
	}
	return "", false
}
