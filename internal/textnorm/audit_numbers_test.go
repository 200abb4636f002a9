package textnorm

import (
	"reflect"
	"testing"
)

// Counts after words that also come before years read as counts when a plural noun follows; years stay years; a
// season's or fiscal year's second year is read whole.
func TestCountsAndYearsAfterAmbiguousWords(t *testing.T) {
	wantNormalized(t, map[string]string{
		"A total of 1250 students came.": "A total of one thousand two hundred fifty students came.",
		"Up to 1999 users can join.":     "Up to one thousand nine hundred ninety-nine users can join.",
		"The 2345 students left.":        "The two thousand three hundred forty-five students left.",
		"The summer of 1816 was cold.":   "The summer of eighteen sixteen was cold.",
		"From 1990 to 1995 it grew.":     "From nineteen ninety to nineteen ninety-five it grew.",
		"In 1999 this changed.":          "In nineteen ninety-nine this changed.",
		"The 2008-09 season was long.":   "The two thousand eight to two thousand nine season was long.",
		"In 1905-06 the club moved.":     "In nineteen oh five to nineteen oh six the club moved.",
		"The 1,000th customer won.":      "The one thousandth customer won.",
	})
}

// Opening hours and other spans of time read as times, and spans of weekdays as days; spans of plain numbers stay
// numbers.
func TestSpansOfTimeAndWeekdays(t *testing.T) {
	wantNormalized(t, map[string]string{
		"Open 9am-5pm daily.":           "Open nine AM to five PM daily.",
		"From 8:30-10:00 we meet.":      "From eight thirty to ten o'clock we meet.",
		"Class is 2:00-3:15 p.m. here.": "Class is two to three fifteen PM here.",
		"Lunch 10-11am.":                "Lunch ten to eleven AM.",
		"Open Mon-Fri.":                 "Open Monday to Friday.",
		"Open Monday-Saturday.":         "Open Monday to Saturday.",
		"Pages 10-20 are missing.":      "Pages ten to twenty are missing.",
	})
}

// Prices per something, ranges of amounts with a scale, and a scale written apart read as a reader says them.
func TestPricesPerUnitAndScaledRanges(t *testing.T) {
	wantNormalized(t, map[string]string{
		"It pays $15/hr now.":            "It pays fifteen dollars per hour now.",
		"Rent is $1,200/mo here.":        "Rent is one thousand two hundred dollars per month here.",
		"Apples cost $1.50/lb today.":    "Apples cost one dollar and fifty cents per pound today.",
		"It cost $2-3 billion to build.": "It cost two to three billion dollars to build.",
		"A £1-2m budget.":                "A one to two million pounds budget.",
		"Sales hit $1.2 bn last year.":   "Sales hit one point two billion dollars last year.",
		"It costs $5-10 each.":           "It costs five to ten dollars each.",
	})
}

// wantRead checks read (the frontend's Sentences, then Normalize) on each document of cases.
func wantRead(t *testing.T, cases map[string][]string) {
	t.Helper()
	for in, want := range cases {
		if got := read(in); !reflect.DeepEqual(got, want) {
			t.Errorf("read(%q)\n got  %q\n want %q", in, got, want)
		}
	}
}

// wantNormalized checks Normalize on each input of cases.
func wantNormalized(t *testing.T, cases map[string]string) {
	t.Helper()
	for in, want := range cases {
		if got := Normalize(in); got != want {
			t.Errorf("Normalize(%q) = %q, want %q", in, got, want)
		}
	}
}

// Phone numbers with a country code, parentheses without a space or dots, versions of multi-digit parts and IPv4
// addresses read as a reader says them.
func TestPhonesVersionsAndAddresses(t *testing.T) {
	wantNormalized(t, map[string]string{
		"Call +1-212-555-1234 now.": "Call plus one, two one two, five five five, one two three four now.",
		"Call (212)555-1234 now.":   "Call (two one two, five five five, one two three four now.",
		"Call 1.800.555.1234 now.":  "Call one, eight zero zero, five five five, one two three four now.",
		"Node 18.17.1 is out.":      "Node eighteen point seventeen point one is out.",
		"Use v2.10.1 now.":          "Use version two point ten point one now.",
		"Ping 192.168.1.1 now.":     "Ping one hundred ninety-two dot one hundred sixty-eight dot one dot one now.",
		"It is 3.14 wide.":          "It is three point one four wide.",
		"The 80/20 rule holds.":     "The eighty twenty rule holds.",
		"A 60/40 mix.":              "A sixty forty mix.",
		"Add 3/4 cup.":              "Add three quarters cup.",
	})
}

// A fraction joined to a word by a hyphen and a mixed number written with a hyphen read as one amount, not as digits
// around a slash; "a" before a fraction of one takes the place of its "one". Ranges, dates and plain fractions keep
// their readings.
func TestFractionsInCompounds(t *testing.T) {
	wantNormalized(t, map[string]string{
		"a 1/2-inch pipe":       "a half inch pipe",
		"Add 2-1/2 cups.":       "Add two and a half cups.",
		"a 1-1/2-inch pipe":     "a one and a half inch pipe",
		"Use 3/4-inch plywood.": "Use three quarters inch plywood.",
		"Add 2-3/4 cups.":       "Add two and three quarters cups.",
		"Add a 1/2 cup.":        "Add a half cup.",
		"Read pages 1-2.":       "Read pages one to two.",
		"It was 1/2/2020.":      "It was January second, twenty twenty.",
		"Add 1/2 now.":          "Add one half now.",
		"Add 1 1/2 cups.":       "Add one and a half cups.",
	})
}

// ISBNs read digit by digit, group by group, after an ISBN label with its length ("ISBN-13:") and, when their check
// digit is right, with no label next to them.
func TestISBNsByGroup(t *testing.T) {
	wantNormalized(t, map[string]string{
		"ISBN 978-3-16-148410-0":         "ISBN nine seven eight, three, one six, one four eight four one zero, zero",
		"ISBN-13: 978-3-16-148410-0":     "ISBN-thirteen: nine seven eight, three, one six, one four eight four one zero, zero",
		"ISBN-10 0-306-40615-2.":         "ISBN-ten zero, three zero six, four zero six one five, two.",
		"ISBN-13: 9783161484100":         "ISBN-thirteen: nine seven eight three one six one four eight four one zero zero",
		"ISBN: 9783161484100":            "ISBN: nine seven eight three one six one four eight four one zero zero",
		"The ISBN is 978-0-306-40615-7.": "The ISBN is nine seven eight, zero, three zero six, four zero six one five, seven.",
		"Its ISBN is 0-8044-2957-X.":     "Its ISBN is zero, eight zero four four, two nine five seven, X.",
	})
}
