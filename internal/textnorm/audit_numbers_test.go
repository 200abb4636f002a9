package textnorm

import "testing"

// Counts after words that also come before years read as counts when a plural noun follows; years stay years; a
// season's or fiscal year's second year is read whole.
func TestCountsAndYearsAfterAmbiguousWords(t *testing.T) {
	for in, want := range map[string]string{
		"A total of 1250 students came.": "A total of one thousand two hundred fifty students came.",
		"Up to 1999 users can join.":     "Up to one thousand nine hundred ninety-nine users can join.",
		"The 2345 students left.":        "The two thousand three hundred forty-five students left.",
		"The summer of 1816 was cold.":   "The summer of eighteen sixteen was cold.",
		"From 1990 to 1995 it grew.":     "From nineteen ninety to nineteen ninety-five it grew.",
		"In 1999 this changed.":          "In nineteen ninety-nine this changed.",
		"The 2008-09 season was long.":   "The two thousand eight to two thousand nine season was long.",
		"In 1905-06 the club moved.":     "In nineteen oh five to nineteen oh six the club moved.",
	} {
		if got := Normalize(in); got != want {
			t.Errorf("Normalize(%q) = %q, want %q", in, got, want)
		}
	}
}
