package textnorm

import "testing"

// TestAuditSaintAndStreet: "St." and "Dr." after a capitalised word end a sentence only before a word that starts
// one; before a name they are a saint or a doctor.
func TestAuditSaintAndStreet(t *testing.T) {
	wantRead(t, map[string][]string{
		"In St. Louis, the Cardinals play.":     []string{"In Saint Louis, the Cardinals play."},
		"At St. Louis, the river is wide.":      []string{"At Saint Louis, the river is wide."},
		"Visit St. Louis in May.":               []string{"Visit Saint Louis in May."},
		"The St. Lawrence is a river.":          []string{"The Saint Lawrence is a river."},
		"Near St. Paul's, we stopped.":          []string{"Near Saint Paul's, we stopped."},
		"From St. Louis we drove west.":         []string{"From Saint Louis we drove west."},
		"Bury St. Edmunds is old.":              []string{"Bury Saint Edmunds is old."},
		"He lives on Oak Dr. The house is big.": []string{"He lives on Oak Drive.", "The house is big."},
	})
}

// TestAuditRomanNumerals: possessive regnal numerals, all-capitals headings, and numerals with L and C after
// division nouns.
func TestAuditRomanNumerals(t *testing.T) {
	wantNormalized(t, map[string]string{
		"Henry VIII's wives":   "Henry the eighth's wives",
		"Elizabeth II's reign": "Elizabeth the second's reign",
		"Elizabeth II’s reign": "Elizabeth the second’s reign",
		"CHAPTER IV":           "CHAPTER four",
		"CHAPTER I":            "CHAPTER one",
		"Chapter XL":           "Chapter forty",
		"Chapter LXI":          "Chapter sixty-one",
		"Psalm CXIX":           "Psalm one hundred nineteen",
		"Book CCCXCIX ends.":   "Book three hundred ninety-nine ends.",
		"No I won't.":          "No I won't.",
	})
}

// TestAuditDegrees: dotted degrees are read by their letters.
func TestAuditDegrees(t *testing.T) {
	wantNormalized(t, map[string]string{
		"a Ph.D. in physics":                "a PHD in physics",
		"She has a Ph.D.":                   "She has a PHD.",
		"a B.Sc. and an M.Sc. in chemistry": "a BSC and an MSC in chemistry",
		"an Ed.D. from Harvard":             "an EDD from Harvard",
		"an LL.B. in law":                   "an LLB in law",
	})
}

// TestAuditNamesKept guards readings that were right before these fixes and must stay so: streets before a
// lower-case word, the end or a sentence starter; doctors before names; the pronoun "I"; letters that are labels;
// degrees of single letters.
func TestAuditNamesKept(t *testing.T) {
	wantRead(t, map[string][]string{
		"We met on Baker St. today.":          []string{"We met on Baker Street today."},
		"I live on Main St.":                  []string{"I live on Main Street."},
		"I live on Main St. The rent is low.": []string{"I live on Main Street.", "The rent is low."},
		"On Monday Dr. Smith called.":         []string{"On Monday Doctor Smith called."},
		"Ask Dr. Jones. He knows.":            []string{"Ask Doctor Jones.", "He knows."},
	})
	wantNormalized(t, map[string]string{
		"Then I went":                       "Then I went",
		"In the present volume I wrote it.": "In the present volume I wrote it.",
		"See Appendix C and Type C.":        "See Appendix C and Type C.",
		"Mark XL":                           "Mark XL",
		"James C. Smith":                    "James C Smith",
		"an M.D. and a B.A. and an M.A. and an M.B.A. too": "an MD and a BA and an MA and an MBA too",
	})
}

// TestDegreeEndsSentence: a degree's period ends a sentence before a word that starts one, as "St." and "Dr." after a
// name do; before other words the sentence goes on.
func TestDegreeEndsSentence(t *testing.T) {
	wantRead(t, map[string][]string{
		"He earned a B.A. He then left.":    []string{"He earned a BA.", "He then left."},
		"She earned a Ph.D. She then left.": []string{"She earned a PHD.", "She then left."},
		"She has an M.D. It took years.":    []string{"She has an MD.", "It took years."},
		"The B.A. program is new.":          []string{"The BA program is new."},
		"The B.A. Program is new.":          []string{"The BA Program is new."},
		"Ask M.D. Anderson today.":          []string{"Ask MD Anderson today."},
	})
}
