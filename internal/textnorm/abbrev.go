package textnorm

import (
	"strings"
	"unicode"
)

// titles are read in full before a capitalised name ("Dr. Smith"); the key is the written form
// without its period.
var titles = map[string]string{
	"Mr": "Mister", "Mrs": "Missus", "Ms": "Miz", "Mx": "Mix", "Prof": "Professor", "Mt": "Mount", "Ft": "Fort",
	"Gen": "General", "Col": "Colonel", "Capt": "Captain", "Lt": "Lieutenant", "Sgt": "Sergeant", "Cmdr": "Commander",
	"Gov": "Governor", "Sen": "Senator", "Rep": "Representative", "Rev": "Reverend", "Hon": "Honorable",
	"Pres": "President", "Fr": "Father", "Supt": "Superintendent", "Adm": "Admiral", "Maj": "Major",
	"Messrs": "Messers", "Drs": "Doctors", "Mme": "Madame", "Mlle": "Mademoiselle", "Sgts": "Sergeants",
}

// alwaysTitles are expanded even when no name follows ("Mr. and Mrs. Smith").
var alwaysTitles = setOf("Mr", "Mrs", "Ms", "Prof", "Messrs", "Drs")

// dottedWords are abbreviations read in full when written with their period. Keys are lower case.
var dottedWords = map[string]string{
	"approx": "approximately", "etc": "et cetera", "vs": "versus", "e.g": "for example", "i.e": "that is",
	"cf": "compare", "viz": "namely", "a.k.a": "also known as", "esp": "especially", "incl": "including",
	"misc": "miscellaneous", "govt": "government", "dept": "department", "univ": "university",
	"intl": "international", "natl": "national", "assn": "association", "ave": "avenue", "blvd": "boulevard",
	"rd": "road", "hwy": "highway", "ln": "lane", "jr": "junior", "sr": "senior", "inc": "incorporated",
	"ltd": "limited", "corp": "corporation", "co": "company", "bros": "brothers", "et al": "et al",
	"al": "al", "ca": "circa", "avg": "average", "no": "number",
	"nos": "numbers", "vol": "volume", "vols": "volumes", "ch": "chapter", "chap": "chapter", "fig": "figure",
	"figs": "figures", "p": "page", "pp": "pages", "eq": "equation", "ex": "example", "sec": "section",
	"mon": "Monday", "tue": "Tuesday", "tues": "Tuesday", "wed": "Wednesday", "thu": "Thursday",
	"thur": "Thursday", "thurs": "Thursday", "fri": "Friday", "sat": "Saturday", "sun": "Sunday",
	"a.m": "AM", "p.m": "PM", "esq": "Esquire", "apt": "apartment", "ste": "suite", "rm": "room", "bldg": "building",
	"fl": "floor", "est": "established", "pg": "page", "pgs": "pages", "ext": "extension", "pty": "proprietary",
	"llc": "LLC", "plc": "PLC",
}

// undottedWords are read in full even without a period.
var undottedWords = map[string]string{"etc": "et cetera", "vs": "versus", "approx": "approximately"}

// beforeNumber are abbreviations that only mean what dottedWords says when a number follows
// ("No. 5", "p. 12"): "no." and "p." also end sentences and name letters.
var beforeNumber = setOf("no", "nos", "vol", "vols", "ch", "chap", "fig", "figs", "p", "pp", "eq", "ex", "sec", "ca",
	"apt", "ste", "rm", "bldg", "fl", "est", "pg", "pgs", "ext")

// labelWords are read in full without their period too when a number or label follows: "Apt 4B", "Bldg 7".
var labelWords = setOf("apt", "ste", "bldg")

// measures are units read out when no number written in digits comes before them ("a tbsp. of oil", "two lbs."),
// keyed in lower case. Abbreviations that are also words or other abbreviations ("in.", "gal.", "pt.", "ft." for
// "featuring") are read as units only after digits (unitNames, dottedUnits).
var measures = map[string]unit{
	"tbsp": {"tablespoon", "tablespoons"}, "tbs": {"tablespoon", "tablespoons"}, "tsp": {"teaspoon", "teaspoons"},
	"oz": {"ounce", "ounces"}, "lb": {"pound", "pounds"}, "lbs": {"pounds", "pounds"}, "qt": {"quart", "quarts"},
	"yd": {"yard", "yards"}, "yds": {"yards", "yards"},
}

// pluralCues before a unit make it plural ("two tbsp.", "several oz."); after other words it is singular ("a tsp.",
// "per lb.").
var pluralCues = setOf("two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
	"fifteen", "twenty", "thirty", "forty", "fifty", "hundred", "thousand", "dozen", "several", "few", "many", "half")

// weekdays need a date after them ("Sat., March 5"): "Sun." ends plenty of sentences.
var weekdays = setOf("mon", "tue", "tues", "wed", "thu", "thur", "thurs", "fri", "sat", "sun")

// abbreviation reads titles, street words, Latin and other abbreviations, and initialisms
// ("U.S." -> "US", "a.m." -> "AM").
func (n *normalizer) abbreviation(i int) (string, int, bool) {
	t := n.toks[i]
	dotted := strings.HasPrefix(t.trail, ".") && !strings.HasPrefix(t.trail, "..")
	word := t.core
	lw := strings.ToLower(word)
	next := n.tok(i + 1)
	nextName := i+1 < len(n.toks) && next.lead == "" && isCapitalized(next.core) && (t.trail == "" || t.trail == ".")
	prevName := i > 0 && isCapitalized(n.toks[i-1].core) && n.toks[i-1].trail == ""
	eat := func(w string) (string, int, bool) {
		n.toks[i].dotEaten = dotted
		return w, 1, true
	}

	if len(word) == 1 && word[0] >= 'B' && word[0] <= 'Z' && dotted && nextName {
		// An initial: "J. R. R. Tolkien" -> "J R R Tolkien". espeak-ng ends a clause at each period,
		// which breaks the name apart. "A" keeps its period, as "A" alone reads as the article.
		return eat(word)
	}
	switch word {
	case "St", "ST":
		// "St. Louis" (a saint's name follows) versus "Main St." (a street name precedes).
		if nextName && !addressWords[strings.ToLower(next.core)] {
			return eat("Saint") // also after a name: "Bury St. Edmunds", "Port St. Lucie"
		}
		if word == "St" && (dotted || prevName) {
			return eat("Street")
		}
	case "Dr", "DR":
		if word == "DR" && !dotted {
			break // "DR Congo"
		}
		if nextName || !prevName {
			return eat("Doctor")
		}
		return eat("Drive")
	}
	// Undotted titles need a name after them ("Col Smith" but "Col" alone may be a column).
	if full, ok := titles[word]; ok && (dotted || t.trail == "" && (nextName || alwaysTitles[word])) {
		return eat(full)
	}
	if m := monthNamed(word); m != "" && len(word) < len(m) && (dotted || lw == "sept") {
		return eat(m) // "Sept." -> "September"; dates with a day or a year are read before (dateWithMonthName)
	}
	if u, ok := measures[lw]; ok && (word == lw || lw == "tbsp" || lw == "tsp") { // "Oz" and "LB" are names
		if pluralCues[strings.ToLower(n.tok(i-1).core)] || lw == "lbs" || lw == "yds" {
			return eat(u.many)
		}
		return eat(u.one)
	}
	if letters, ok := degree(lw); ok {
		return eat(letters) // "Ph.D." -> "PHD", with or without its final period
	}
	nextNumeric := i+1 < len(n.toks) && startsLabel(next.core)
	if !dotted {
		if full, ok := undottedWords[lw]; ok {
			return full, 1, true
		}
		if labelWords[lw] && nextNumeric && t.trail == "" {
			return capitalizeLike(word, dottedWords[lw]), 1, true
		}
		return "", 0, false
	}
	if initials, ok := initialism(word); ok && dottedWords[lw] == "" {
		return eat(initials)
	}
	full, ok := dottedWords[lw]
	if !ok {
		return "", 0, false
	}
	switch {
	case beforeNumber[lw] && !nextNumeric:
		return "", 0, false
	case weekdays[lw] && !(strings.HasPrefix(t.trail, ".,") && monthNamed(next.core) != "") &&
		!(isCapitalized(word) && dotted && (unicode.IsLower(firstRune(next.core)) || weekdays[strings.ToLower(next.core)])):
		return "", 0, false // "Sun." ends plenty of sentences; "Sat., March 5", "Mon. through Fri." are days
	case lw == "co" && !isCapitalized(word):
		return "", 0, false
	}
	return eat(capitalizeLike(word, full))
}

// dottedDegrees are academic degrees (lower case, without the final period) whose dotted parts have two letters,
// which initialism does not join because two-letter parts are often words ("Co.", "St."). Readers say their
// letters, as they do for the degrees initialism joins ("M.D.", "B.A.", "M.B.A.").
var dottedDegrees = setOf("ph.d", "ed.d", "th.d", "d.sc", "b.sc", "m.sc", "b.ed", "m.ed", "ll.b", "ll.m", "ll.d")

// degree writes a dotted degree in capitals for espeak to spell: "Ph.D" -> "PHD", "B.Sc" -> "BSC".
func degree(lw string) (string, bool) {
	if !dottedDegrees[lw] {
		return "", false
	}
	return strings.ToUpper(strings.ReplaceAll(lw, ".", "")), true
}

// capitalizeLike gives full the writer's capital: "Ave." -> "Avenue", "Inc." -> "Incorporated".
func capitalizeLike(word, full string) string {
	if isCapitalized(word) && !isCapitalized(full) {
		return strings.ToUpper(full[:1]) + full[1:]
	}
	return full
}

// initialism joins dotted single letters: "U.S" -> "US", "u.s.a" -> "USA". espeak spells the result.
func initialism(word string) (string, bool) {
	if !isInitialism(word) {
		return "", false
	}
	return strings.ToUpper(strings.ReplaceAll(word, ".", "")), true
}

// commonWords are English words that are lower-cased when written in capitals, so that espeak reads
// them instead of spelling them.
var commonWords = setOf(strings.Fields(`
a about after again all also am an and any are as at back be because been before being best big but by
call can come could day did do does done down each even ever every few find first for free from get give go
going good great had has have he help her here him his home how i if in into is it its just keep know last
let life like little long look love made make man many may me more most much must my never new next no not
now of off old on once one only or other our out over own people please read real right said same say see
she should show so some still stop such take tell than thank thanks that the their them then there these they
thing think this those time to today too two under up us very want was way we well were what when where which
while who why will with without work world would yes yet you your warning danger caution notice note important
attention exit open closed end start yes sale news breaking update alert error fire police welcome hello goodbye`)...)

// acronymLike are common words that are also frequent acronyms (US, IT, AM, PM, OR, ID); they are
// lower-cased only in a sentence written all in capitals.
var acronymLike = setOf("us", "it", "am", "or", "no", "one", "who", "may", "man", "help", "a", "i", "me", "go")
