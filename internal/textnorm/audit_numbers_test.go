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

// Opening hours and other spans of time read as times, and spans of weekdays as days; spans of plain numbers stay
// numbers.
func TestSpansOfTimeAndWeekdays(t *testing.T) {
	for in, want := range map[string]string{
		"Open 9am-5pm daily.":           "Open nine AM to five PM daily.",
		"From 8:30-10:00 we meet.":      "From eight thirty to ten o'clock we meet.",
		"Class is 2:00-3:15 p.m. here.": "Class is two to three fifteen PM here.",
		"Lunch 10-11am.":                "Lunch ten to eleven AM.",
		"Open Mon-Fri.":                 "Open Monday to Friday.",
		"Open Monday-Saturday.":         "Open Monday to Saturday.",
		"Pages 10-20 are missing.":      "Pages ten to twenty are missing.",
	} {
		if got := Normalize(in); got != want {
			t.Errorf("Normalize(%q) = %q, want %q", in, got, want)
		}
	}
}
