package textnorm

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// numberLit is a number as written: sign, integer digits (group commas removed) and fraction digits.
type numberLit struct {
	negative, positive bool
	intPart, fracPart  string
	hasPoint, grouped  bool // written with a decimal point / with thousands commas
}

// plain reports an unsigned integer written without commas or a decimal point.
func (n numberLit) plain() bool {
	return !n.negative && !n.positive && !n.hasPoint && !n.grouped && n.intPart != ""
}

// isOne reports the number 1 exactly, which takes a singular unit.
func (n numberLit) isOne() bool { return n.intPart == "1" && !n.hasPoint && !n.negative }

func (n numberLit) value() (uint64, bool) { return parseDigits(n.intPart) }

func (n numberLit) words() string {
	s := decimalWords(n.intPart, n.fracPart)
	if n.grouped && len(n.intPart) > maxCardinalDigits {
		s = cardinalGroups(n.intPart)
		if n.hasPoint {
			s += " point " + spellDigits(n.fracPart)
		}
	}
	switch {
	case n.negative:
		return "minus " + s
	case n.positive:
		return "plus " + s
	}
	return s
}

// scanNumber reads a number at the start of s: an optional sign (when signed), digits with
// optional valid thousands commas, and an optional decimal fraction. It returns the rest of s.
func scanNumber(s string, signed bool) (numberLit, string, bool) {
	var n numberLit
	if signed {
		switch {
		case strings.HasPrefix(s, "-"):
			n.negative, s = true, s[1:]
		case strings.HasPrefix(s, "−"):
			n.negative, s = true, s[len("−"):]
		case strings.HasPrefix(s, "+"):
			n.positive, s = true, s[1:]
		}
	}
	i := 0
	for i < len(s) && isDigit(rune(s[i])) {
		i++
	}
	var digits strings.Builder
	digits.WriteString(s[:i])
	// Thousands groups: "1,234,567". "1,2" is a list, not a number, and stops the scan.
	if i > 0 && i <= 3 {
		for i+4 <= len(s) && s[i] == ',' && isASCIIDigits(s[i+1:i+4]) && (i+4 == len(s) || !isDigit(rune(s[i+4]))) {
			digits.WriteString(s[i+1 : i+4])
			i += 4
			n.grouped = true
		}
	}
	n.intPart = digits.String()
	if i+1 < len(s) && s[i] == '.' && isDigit(rune(s[i+1])) {
		j := i + 1
		for j < len(s) && isDigit(rune(s[j])) {
			j++
		}
		n.hasPoint, n.fracPart = true, s[i+1:j]
		i = j
	}
	if n.intPart == "" && n.fracPart == "" {
		return numberLit{}, s, false
	}
	return n, s[i:], true
}

// numeric speaks a token that starts like a number: money, times and ratios, dates, phone numbers,
// fractions, feet and inches, and quantities with their units.
func (n *normalizer) numeric(i int) (string, int, bool) {
	core := n.toks[i].core
	if w, used, ok := n.money(i); ok {
		return w, used, true
	}
	if w, used, ok := n.timeRange(i); ok {
		return w, used, true
	}
	if strings.Contains(core, ":") {
		if w, used, ok := n.clock(i); ok {
			return w, used, true
		}
	}
	if w, ok := numericDate(core); ok {
		return w, 1, true
	}
	if w, ok := phoneNumber(core); ok {
		return w, 1, true
	}
	if w, ok := versionNumber(core); ok {
		return w, 1, true
	}
	if w, ok := n.hyphenatedCode(i); ok {
		return w, 1, true
	}
	if w, ok := feetInches(core); ok {
		return w, 1, true
	}
	if w, ok := fraction(core); ok {
		return n.afterArticle(i, w), 1, true
	}
	if w, ok := fractionCompound(core); ok {
		return n.afterArticle(i, w), 1, true
	}
	if strings.Contains(core, "/") {
		if groups := strings.Split(core, "/"); allDigits(groups) {
			return joinGroups(groups, "slash"), 1, true // "1/2/3/4", "12/1234567"
		}
	}
	return n.quantity(i)
}

func allDigits(groups []string) bool {
	for _, g := range groups {
		if !isASCIIDigits(g) {
			return false
		}
	}
	return true
}

func singularIf(one bool, singular, plural string) string {
	if one {
		return singular
	}
	return plural
}

func plural(lit numberLit, one, many string) string {
	if lit.isOne() {
		return one
	}
	return many
}

// phoneNumber reads 555-1234, 555-123-4567 and 1-800-555-1234 digit by digit, group by group.
func phoneNumber(core string) (string, bool) {
	plus := ""
	if rest, ok := strings.CutPrefix(core, "+"); ok { // "+1-212-555-1234"
		core, plus = rest, "plus "
	}
	core = strings.Replace(strings.TrimPrefix(core, "("), ")", "-", 1) // "(212)555-1234", its "(" apart or not
	sep := "-"
	if !strings.Contains(core, "-") && strings.Count(core, ".") >= 2 {
		sep = "." // "1.800.555.1234"
	}
	if !strings.Contains(core, sep) {
		return "", false
	}
	groups := strings.Split(core, sep)
	lens := make([]int, len(groups))
	for k, g := range groups {
		if !isASCIIDigits(g) {
			return "", false
		}
		lens[k] = len(g)
	}
	ok := false
	switch len(groups) {
	case 2:
		ok = lens[0] == 3 && lens[1] == 4
	case 3:
		ok = lens[0] == 3 && lens[1] == 3 && lens[2] == 4
	case 4:
		ok = lens[0] == 1 && lens[1] == 3 && lens[2] == 3 && lens[3] == 4
	}
	if !ok {
		return "", false
	}
	spoken := make([]string, len(groups))
	for k, g := range groups {
		spoken[k] = spellDigits(g)
	}
	return plus + strings.Join(spoken, ", "), true
}

// versionNumber reads numbers of three or more dotted parts, each as a number: versions "18.17.1" ("eighteen point
// seventeen point one", not "point one seven"), and IPv4 addresses "192.168.1.1", with "dot".
func versionNumber(core string) (string, bool) {
	parts := strings.Split(core, ".")
	if len(parts) < 3 {
		return "", false
	}
	ip := len(parts) == 4
	words := make([]string, len(parts))
	for k, p := range parts {
		if !isASCIIDigits(p) || len(p) > 5 {
			return "", false
		}
		v, _ := parseDigits(p)
		ip = ip && len(p) <= 3 && v <= 255
		words[k] = cardinal(v)
	}
	if ip {
		return strings.Join(words, " dot "), true
	}
	return strings.Join(words, " point "), true
}

// feetInches reads 5'11", 6', 11" (also with prime marks and curly quotes).
func feetInches(core string) (string, bool) {
	s := core
	var inchMark bool
	for _, mark := range []string{`''`, `"`, "″", "”"} {
		if rest, ok := strings.CutSuffix(s, mark); ok {
			s, inchMark = rest, true
			break
		}
	}
	feet, inches, hasFeet := "", s, false
	for _, mark := range []string{"'", "′", "’"} {
		if before, after, ok := strings.Cut(s, mark); ok {
			feet, inches, hasFeet = before, after, true
			break
		}
	}
	if !hasFeet && !inchMark {
		return "", false
	}
	if hasFeet && (!isASCIIDigits(feet) || (inches != "" && !inchMark)) {
		return "", false
	}
	if inches != "" && !isASCIIDigits(inches) {
		return "", false
	}
	var parts []string
	if hasFeet {
		parts = append(parts, cardinalDigits(feet)+" "+singularIf(feet == "1", "foot", "feet"))
	}
	if inches != "" {
		parts = append(parts, cardinalDigits(inches)+" "+singularIf(inches == "1", "inch", "inches"))
	}
	return strings.Join(parts, " "), true
}

// specialFractions are slashed numbers that are names, not fractions.
var specialFractions = map[string]string{"24/7": "twenty-four seven", "9/11": "nine eleven", "50/50": "fifty-fifty"}

// fraction reads "1/2" -> "one half", "3/4" -> "three quarters", "5/8" -> "five eighths".
func fraction(core string) (string, bool) {
	if w, ok := specialFractions[core]; ok {
		return w, true
	}
	num, den, ok := strings.Cut(core, "/")
	if !ok || !isASCIIDigits(num) || !isASCIIDigits(den) || len(num) > 6 || len(den) > 6 {
		return "", false
	}
	nv, _ := parseDigits(num)
	dv, _ := parseDigits(den)
	if len(num) == 2 && len(den) == 2 && nv+dv == 100 && nv%5 == 0 {
		return cardinal(nv) + " " + cardinal(dv), true // a split of a hundred: "the 80/20 rule", "a 60/40 mix"
	}
	return fractionWords(num, den), true
}

// fractionCompound reads a fraction joined to a word by a hyphen and a mixed number written with a hyphen:
// "1/2-inch" -> "one half inch", "2-1/2" -> "two and a half", "2-1/2-inch" -> "two and a half inch". Without this
// the slash and the hyphens split the digits into separate numbers ("one/ two-inch", "two-one/ two").
func fractionCompound(core string) (string, bool) {
	whole, frac := "", core
	if w, rest, ok := strings.Cut(core, "-"); ok && isASCIIDigits(w) {
		whole, frac = w, rest // "2-1/2"
	}
	frac, word, _ := strings.Cut(frac, "-")
	if whole == "" && word == "" || word != "" && !unicode.IsLetter(firstRune(word)) {
		return "", false // a plain fraction is fraction's; "1/2-3" is no compound
	}
	var w string
	if whole == "" {
		var ok bool
		if w, ok = fraction(frac); !ok {
			return "", false
		}
	} else {
		// A mixed number's fraction is proper; "5-10/20" is something else.
		num, den, ok := strings.Cut(frac, "/")
		if !ok || !isASCIIDigits(num) || !isASCIIDigits(den) || len(num) > 6 || len(den) > 6 {
			return "", false
		}
		nv, _ := parseDigits(num)
		dv, _ := parseDigits(den)
		if nv == 0 || nv >= dv {
			return "", false
		}
		w = mixedNumber(cardinalDigits(whole), num, den)
	}
	if word != "" {
		w += " " + mixed(word) // "one half inch": the hyphen joins the compound in writing only
	}
	return w, true
}

// mixedNumber reads a whole number, already in words, and a fraction: "1 1/2" and "1-1/2" -> "one and a half",
// "2-3/4" -> "two and three quarters".
func mixedNumber(whole, num, den string) string {
	f := fractionWords(num, den)
	if strings.HasPrefix(f, "one ") && !strings.Contains(f, " over ") {
		f = "a " + strings.TrimPrefix(f, "one ")
	}
	return whole + " and " + f
}

// afterArticle reads a fraction of one after the article "a" without its "one": "a 1/2 cup" -> "a half cup", "a
// 1/2-inch pipe" -> "a half inch pipe"; nobody says "a one half".
func (n *normalizer) afterArticle(i int, w string) string {
	if !strings.HasPrefix(n.toks[i].core, "1/") || i == 0 || !n.joinable(i-1) {
		return w
	}
	if !strings.EqualFold(n.toks[i-1].core, "a") {
		return w
	}
	if rest, ok := strings.CutPrefix(w, "one "); ok && !strings.Contains(w, " over ") {
		return rest
	}
	return w
}

func fractionWords(num, den string) string {
	nv, _ := parseDigits(num)
	dv, _ := parseDigits(den)
	if dv == 0 || dv > 1000 || len(den) > 1 && den[0] == '0' {
		return cardinalDigits(num) + " over " + cardinalDigits(den)
	}
	var name string
	switch dv {
	case 1:
		return cardinalDigits(num) + " over one"
	case 2:
		name = "half"
		if nv != 1 {
			name = "halves"
		}
	case 4:
		name = "quarter"
		if nv != 1 {
			name = "quarters"
		}
	default:
		name = ordinal(dv)
		if nv != 1 {
			name = pluralWords(name)
		}
	}
	return cardinalDigits(num) + " " + name
}

// unit names a unit of measure in the singular and plural.
type unit struct{ one, many string }

// unitNames are unit symbols read after a number, written apart ("5 km") or glued on ("5km").
// Symbols that are also ordinary words ("in", "s", "m" alone as a letter) are in gluedUnits only.
var unitNames = map[string]unit{
	"km": {"kilometer", "kilometers"}, "cm": {"centimeter", "centimeters"}, "mm": {"millimeter", "millimeters"},
	"m": {"meter", "meters"}, "nm": {"nanometer", "nanometers"}, "μm": {"micrometer", "micrometers"},
	"µm": {"micrometer", "micrometers"},
	"kg": {"kilogram", "kilograms"}, "g": {"gram", "grams"}, "mg": {"milligram", "milligrams"},
	"μg": {"microgram", "micrograms"}, "µg": {"microgram", "micrograms"},
	"lb": {"pound", "pounds"}, "lbs": {"pounds", "pounds"}, "oz": {"ounce", "ounces"},
	"ft": {"foot", "feet"}, "mi": {"mile", "miles"}, "yd": {"yard", "yards"}, "yds": {"yards", "yards"},
	"mph": {"mile per hour", "miles per hour"}, "km/h": {"kilometer per hour", "kilometers per hour"},
	"kph": {"kilometer per hour", "kilometers per hour"}, "m/s": {"meter per second", "meters per second"},
	"KB": {"kilobyte", "kilobytes"}, "kB": {"kilobyte", "kilobytes"}, "MB": {"megabyte", "megabytes"},
	"GB": {"gigabyte", "gigabytes"}, "TB": {"terabyte", "terabytes"}, "PB": {"petabyte", "petabytes"},
	"Kbps": {"kilobit per second", "kilobits per second"}, "kbps": {"kilobit per second", "kilobits per second"},
	"Mbps": {"megabit per second", "megabits per second"}, "Gbps": {"gigabit per second", "gigabits per second"},
	"Hz": {"hertz", "hertz"}, "kHz": {"kilohertz", "kilohertz"}, "MHz": {"megahertz", "megahertz"},
	"GHz": {"gigahertz", "gigahertz"},
	"ms":  {"millisecond", "milliseconds"}, "μs": {"microsecond", "microseconds"}, "µs": {"microsecond", "microseconds"},
	"ns": {"nanosecond", "nanoseconds"}, "sec": {"second", "seconds"}, "secs": {"seconds", "seconds"},
	"min": {"minute", "minutes"}, "mins": {"minutes", "minutes"}, "hr": {"hour", "hours"}, "hrs": {"hours", "hours"},
	"yr": {"year", "years"}, "yrs": {"years", "years"},
	"tbsp": {"tablespoon", "tablespoons"}, "Tbsp": {"tablespoon", "tablespoons"}, "tbs": {"tablespoon", "tablespoons"},
	"tsp": {"teaspoon", "teaspoons"}, "qt": {"quart", "quarts"}, "gal": {"gallon", "gallons"},
	"doz": {"dozen", "dozen"},
	"L":   {"liter", "liters"}, "l": {"liter", "liters"}, "ml": {"milliliter", "milliliters"},
	"mL": {"milliliter", "milliliters"},
	"W":  {"watt", "watts"}, "kW": {"kilowatt", "kilowatts"}, "MW": {"megawatt", "megawatts"},
	"kWh": {"kilowatt hour", "kilowatt hours"}, "V": {"volt", "volts"}, "mAh": {"milliamp hour", "milliamp hours"},
	"dB": {"decibel", "decibels"}, "px": {"pixel", "pixels"}, "kcal": {"kilocalorie", "kilocalories"},
	"°C": {"degree Celsius", "degrees Celsius"}, "°F": {"degree Fahrenheit", "degrees Fahrenheit"},
	"°": {"degree", "degrees"}, "℃": {"degree Celsius", "degrees Celsius"}, "℉": {"degree Fahrenheit", "degrees Fahrenheit"},
	"%":   {"percent", "percent"},
	"USD": {"US dollar", "US dollars"}, "EUR": {"euro", "euros"}, "GBP": {"pound", "pounds"}, "JPY": {"yen", "yen"},
	"CAD": {"Canadian dollar", "Canadian dollars"}, "AUD": {"Australian dollar", "Australian dollars"},
	"CHF": {"Swiss franc", "Swiss francs"}, "CNY": {"yuan", "yuan"}, "INR": {"rupee", "rupees"},
}

// gluedUnits are only units when written straight after the digits: "5s", "3h", "12in".
var gluedUnits = map[string]unit{
	"s": {"second", "seconds"}, "h": {"hour", "hours"}, "in": {"inch", "inches"},
	"°c": {"degree Celsius", "degrees Celsius"}, "°f": {"degree Fahrenheit", "degrees Fahrenheit"},
	"x": {"times", "times"},
}

// dottedUnits are units after a number only when written with their period: "3 in. wide" but "3 in the box", "1 pt.
// of cream" but "12 pt type".
var dottedUnits = map[string]unit{"in": {"inch", "inches"}, "pt": {"pint", "pints"}}

// unitPrefixes come before a unit: "5 sq. ft.", "2 cu. in.", "8 fl. oz.".
var unitPrefixes = map[string]string{"sq": "square", "cu": "cubic", "fl": "fluid"}

// unitAfter reads token j as a unit written apart after a number: "5 km", "3 in." (dottedUnits need their period).
func (n *normalizer) unitAfter(j int) (unit, bool) {
	next := n.tok(j)
	if u, ok := unitFor(next.core, false); ok {
		return u, true
	}
	u, ok := dottedUnits[next.core]
	return u, ok && strings.HasPrefix(next.trail, ".")
}

// idWords introduce codes rather than quantities: "Box 2915" is "box two nine one five".
var idWords = setOf("number", "no", "nos", "box", "serial", "code", "account", "acct", "phone", "tel", "flight",
	"pin", "id", "zip", "extension", "ext", "ticket", "order", "invoice", "policy", "patent", "model", "batch", "lot",
	"room", "suite", "apt", "unit", "gate", "platform", "bus", "train", "route", "channel", "isbn", "issn", "call",
	"dial", "ssn", "vin", "ref", "reference", "tracking", "customer", "member", "card")

// callWords come before a telephone number.
var callWords = setOf("call", "dial", "called", "dialed", "dialled", "calling", "dialing", "dialling", "phone",
	"phoned", "ring", "rang")

// emergencyNumbers are read digit by digit after a call word.
var emergencyNumbers = setOf("911", "999", "112", "000")

// isbnLabels name an ISBN together with its length: "ISBN-13: 978-3-16-148410-0", "ISBN10 0306406152".
var isbnLabels = setOf("isbn-13", "isbn-10", "isbn13", "isbn10")

// isIDWord reports a word that a code follows: one of idWords, or an ISBN label with its length.
func isIDWord(word string) bool {
	lw := strings.ToLower(word)
	return idWords[lw] || isbnLabels[lw]
}

// hyphenatedCode reads "978-3-16-148410-0" group by group, digit by digit, after an id word ("ISBN", "ISBN-13:") or
// when its groups are an ISBN's ("the ISBN is 978-3-16-148410-0").
func (n *normalizer) hyphenatedCode(i int) (string, bool) {
	core := n.toks[i].core
	if strings.Count(core, "-") < 2 {
		return "", false
	}
	groups := strings.Split(core, "-")
	if (i == 0 || !isIDWord(n.toks[i-1].core)) && !isISBN(groups) {
		return "", false
	}
	for k, g := range groups {
		if !isASCIIDigits(g) && !(k == len(groups)-1 && (g == "X" || g == "x")) {
			return "", false
		}
		groups[k] = spellDigits(g)
		if g == "X" || g == "x" {
			groups[k] = "X"
		}
	}
	return strings.Join(groups, ", "), true
}

// isISBN reports the hyphenated groups of an ISBN with a valid check digit: ISBN-13, five groups starting with 978 or
// 979 ("978-3-16-148410-0"), or ISBN-10, four groups that may end in X ("0-8044-2957-X"). The check digit keeps other
// hyphenated numbers out, so no id word is needed before it.
func isISBN(groups []string) bool {
	if len(groups) < 4 || len(groups) > 5 || len(groups[len(groups)-1]) != 1 {
		return false
	}
	digits := strings.Join(groups, "")
	check := digits[len(digits)-1]
	ten := check == 'X' || check == 'x' // an ISBN-10's check digit ten
	if !isASCIIDigits(digits[:len(digits)-1]) || !isDigit(rune(check)) && !ten {
		return false
	}
	sum := 0
	switch {
	case len(groups) == 5 && len(digits) == 13 && (groups[0] == "978" || groups[0] == "979") && !ten:
		for k := 0; k < 13; k++ {
			sum += int(digits[k]-'0') * (1 + 2*(k%2)) // weights 1, 3, 1, 3, ...
		}
		return sum%10 == 0
	case len(groups) == 4 && len(digits) == 10:
		for k := 0; k < 9; k++ {
			sum += int(digits[k]-'0') * (10 - k) // weights 10, 9, ..., 2
		}
		if ten {
			sum += 10
		} else {
			sum += int(check - '0')
		}
		return sum%11 == 0
	}
	return false
}

// isCode reports a digit string that is read digit by digit because an id word comes before it.
func (n *normalizer) isCode(i int, lit numberLit) bool {
	if lit.plain() && emergencyNumbers[lit.intPart] && callWords[strings.ToLower(n.tok(i-1).core)] {
		return true // "call 911", but "scored 112 points"
	}
	if !lit.plain() || len(lit.intPart) < 4 || i == 0 {
		return false
	}
	prev := n.toks[i-1]
	if lw := strings.ToLower(prev.core); (isbnLabels[lw] || lw == "isbn" || lw == "issn") && prev.trail == ":" {
		return true // "ISBN-13: 9783161484100": a colon after an ISBN label introduces the ISBN, never a count
	}
	return (prev.trail == "" || prev.trail == ".") && isIDWord(prev.core)
}

// apartOnly are units read only when written apart: "x" glued on is handled as "times" anyway.
func unitFor(suffix string, glued bool) (unit, bool) {
	if u, ok := unitNames[suffix]; ok {
		return u, true
	}
	if glued {
		u, ok := gluedUnits[suffix]
		return u, ok
	}
	return unit{}, false
}

// yearWords are words after which a four-digit number is a year.
var yearWords = setOf("in", "since", "by", "from", "until", "till", "til", "of", "year", "years", "circa", "ca", "c",
	"during", "before", "after", "around", "early", "late", "mid", "spring", "summer", "autumn", "fall", "winter",
	"january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november",
	"december", "through", "between", "and", "to", "born", "died", "ad", "bc", "class", "about", "dated", "date",
	"as", "ending", "ended", "the", "year's", "michaelmas", "easter", "christmas")

// countWords are year words that come before counts as often ("a total of 1250 students", "up to 1999 users",
// "the 2345 students"): after them a number followed by a plural noun is a count.
var countWords = setOf("of", "to", "about", "around", "the", "and", "as", "between", "through")

// notPlurals are words ending in s that are not plural nouns, which follow years as often as anything does ("of
// 1816 was", "in 1999 this").
var notPlurals = setOf("was", "is", "has", "as", "its", "this", "his", "hers", "ours", "yours", "theirs", "us",
	"does", "goes", "thus", "plus", "across", "always", "perhaps", "unless", "whereas", "besides", "towards",
	"afterwards", "whereupon", "less", "yes", "news")

// countedNoun reports whether token i is a lower-case word that reads as a plural noun: what a count, not a year,
// is followed by ("1250 students").
func (n *normalizer) countedNoun(i int) bool {
	if i >= len(n.toks) || n.toks[i].lead != "" {
		return false
	}
	w := n.toks[i].core
	first, _ := utf8.DecodeRuneInString(w)
	return unicode.IsLower(first) && len(w) > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") &&
		!notPlurals[w]
}

// eras follow a year: "44 BC", "1066 AD".
var eras = map[string]string{"BC": "BC", "AD": "AD", "BCE": "BCE", "CE": "CE", "B.C": "BC", "A.D": "AD",
	"B.C.E": "BCE", "C.E": "CE"}

// looksLikeYear decides whether the plain number at token i is a year: after a year-like word,
// before an era, in parentheses as in "Orwell (1949)", or, for 1100 to 2099, when no lower-case
// word follows it ("in the summer of 1816, ...", "1469, 1470;"), which is where counts ("1500
// people") differ from years. Reading a round count as a year costs nothing: 1500 is "fifteen
// hundred" either way.
func (n *normalizer) looksLikeYear(i int, v uint64, digits int) bool {
	if digits != 4 || v < 1000 || v > 2999 {
		return false
	}
	if eras[n.tok(i+1).core] != "" {
		return true
	}
	t := n.toks[i]
	if strings.HasSuffix(t.lead, "(") && strings.HasPrefix(t.trail, ")") {
		return true
	}
	if prev := n.tok(i - 1); prev.trail == "" || strings.HasPrefix(prev.trail, ",") {
		word := strings.ToLower(strings.TrimSuffix(prev.core, "."))
		if yearWords[word] && !(countWords[word] && n.countedNoun(i+1)) {
			return true
		}
	}
	if v < 1100 || v > 2099 {
		return false
	}
	if t.trail != "" || i+1 == len(n.toks) {
		return true
	}
	next, _ := utf8.DecodeRuneInString(n.toks[i+1].core)
	return !unicode.IsLower(next) && !isDigit(next) && n.toks[i+1].lead == ""
}

// quantity reads numbers with what follows them: "1,234", "-5", "3.14", "12.5%", "5km", "5 km",
// "1st", "1980s", "5-10", "1990-1995", "3pm", "5 p.m.", "1 1/2", and years in year-like context.
func (n *normalizer) quantity(i int) (string, int, bool) {
	core := n.toks[i].core
	approx := ""
	if rest, ok := strings.CutPrefix(core, "~"); ok {
		approx, core = "about ", rest
	}
	lit, rest, ok := scanNumber(core, true)
	if !ok {
		return "", 0, false
	}
	w, used, ok := n.quantityRest(i, lit, rest)
	if !ok {
		return "", 0, false
	}
	return approx + w, used, true
}

func (n *normalizer) quantityRest(i int, lit numberLit, rest string) (string, int, bool) {
	if w, used, ok := n.duration(i); ok {
		return w, used, true
	}
	v, small := lit.value()
	switch {
	case rest == "":
		return n.bareNumber(i, lit)
	case !lit.negative && !lit.positive && !lit.hasPoint && lit.intPart != "" && small && isOrdinalSuffix(rest):
		return ordinal(v), 1, true // "1st", "1,000th"
	case rest == "s" && lit.plain() && len(lit.intPart) <= 3 && n.secondsCue(i):
		return lit.words() + " " + plural(lit, "second", "seconds"), 1, true // "wait 30s"
	case !lit.negative && !lit.hasPoint && small && (rest == "s" || rest == "'s") && strings.HasSuffix(lit.intPart, "0"):
		return decade(lit.intPart, v), 1, true // "1980s", "1,000s"
	case rest[0] == '-' || strings.HasPrefix(rest, "–"):
		return n.numberRange(i, lit, rest)
	}
	if m := strings.ToUpper(strings.ReplaceAll(rest, ".", "")); (m == "AM" || m == "PM") && lit.plain() && v <= 24 {
		return cardinal(v) + " " + m, 1, true
	}
	if u, ok := unitFor(rest, true); ok {
		return lit.words() + " " + pick(lit, u), 1, true
	}
	if scale := countScales[rest]; scale != "" && (rest != "B" || n.moneyContext(i)) {
		return lit.words() + " " + scale, 1, true // "20M units", "3B dollars"
	}
	return "", 0, false
}

// secondsCues before "30s" make it seconds ("wait 30s", "every 10s") rather than a decade or tens ("the 90s", "10s
// of people"); "15s" is seconds anyway.
var secondsCues = setOf("wait", "waits", "waited", "waiting", "for", "after", "every", "take", "takes", "took", "last",
	"lasts", "lasted", "within", "in", "under", "than", "only", "just", "timeout", "delay", "interval", "about", "another")

// secondsCue reports that the "Ns" at token i, a multiple of ten, is seconds.
func (n *normalizer) secondsCue(i int) bool {
	return i > 0 && n.toks[i].lead == "" && n.toks[i-1].trail == "" && secondsCues[strings.ToLower(n.toks[i-1].core)]
}

// countScales are scale letters glued to a count. "K" is left out: "4K" and "5K" are names of a
// resolution and a race more often than thousands; "B" is a billion only in a money context, as
// "Flat 3B" and "Vitamin B12" are labels.
var countScales = map[string]string{"M": "million", "mn": "million", "B": "billion", "bn": "billion", "tn": "trillion"}

// moneyWords before an amount make "3B" a sum of money: "worth 3B", "revenue of 3B".
var moneyWords = setOf("worth", "revenue", "revenues", "valued", "valuation", "raised", "raise", "raising", "cost",
	"costs", "budget", "budgets", "profit", "profits", "funding", "debt", "debts", "loss", "losses", "earned", "earnings",
	"spent", "paid", "capital", "income", "sales", "turnover", "deficit", "gdp", "fund", "bid", "deal", "price")

// currencyWords after an amount make it a sum of money: "3B dollars".
var currencyWords = setOf("dollar", "dollars", "euro", "euros", "pound", "pounds", "yen", "yuan", "rupee", "rupees",
	"franc", "francs", "usd", "eur", "gbp", "jpy", "cny", "inr", "chf", "cad", "aud")

// moneyContext reports an amount of money at token i: a currency after it, or a money word shortly before it
// ("worth 3B", "a revenue of 3B").
func (n *normalizer) moneyContext(i int) bool {
	if n.joinable(i) && currencyWords[strings.ToLower(n.toks[i+1].core)] {
		return true
	}
	for k := i - 1; k >= 0 && k >= i-3; k-- {
		if moneyWords[strings.ToLower(n.toks[k].core)] {
			return true
		}
		if n.toks[k].trail != "" {
			break
		}
	}
	return false
}

func pick(lit numberLit, u unit) string {
	if lit.isOne() {
		return u.one
	}
	return u.many
}

func isOrdinalSuffix(s string) bool {
	switch strings.ToLower(s) {
	case "st", "nd", "rd", "th":
		return true
	}
	return false
}

// decade reads "1980s" -> "nineteen eighties", "80s" -> "eighties", "2000s" -> "two thousands".
func decade(digits string, v uint64) string {
	w := cardinalDigits(digits)
	if len(digits) == 4 {
		w = year(v)
	}
	// "1000s" and "100s" are "thousands" and "hundreds", not "one thousands".
	return pluralWords(strings.TrimPrefix(w, "one "))
}

// bareNumber reads a number token with nothing glued on, looking at the next token for a unit,
// a meridiem, a scale word or a fraction.
func (n *normalizer) bareNumber(i int, lit numberLit) (string, int, bool) {
	v, small := lit.value()
	if n.isCode(i, lit) {
		return spellDigits(lit.intPart), 1, true
	}
	if lit.plain() && small && n.looksLikeYear(i, v, len(lit.intPart)) {
		w := year(v)
		if era := eras[n.tok(i+1).core]; era != "" && n.joinable(i) {
			n.toks[i+1].dotEaten = strings.Contains(n.toks[i+1].core, ".")
			return w + " " + era, 2, true
		}
		return w, 1, true
	}
	if t := n.toks[i]; lit.plain() && len(lit.intPart) == 3 && t.lead == "(" && t.trail == ")" && i+1 < len(n.toks) {
		if _, ok := phoneNumber(n.toks[i+1].core); ok && len(n.toks[i+1].core) == 8 {
			return spellDigits(lit.intPart), 1, true // the area code of "(555) 123-4567"
		}
	}
	if !n.joinable(i) {
		return lit.words(), 1, true
	}
	next := n.toks[i+1].core
	if lit.plain() && small && v <= 24 {
		if m, used := n.meridiemAfter(i); m != "" {
			return cardinal(v) + " " + m, used, true
		}
	}
	if w, used, ok := n.duration(i); ok {
		return w, used, true // "1 h 30 m"
	}
	if u, ok := n.unitAfter(i + 1); ok {
		return lit.words() + " " + pick(lit, u), 2, true
	}
	if measure := unitPrefixes[next]; measure != "" && (n.toks[i+1].trail == "." || n.joinable(i+1)) {
		if u, ok := n.unitAfter(i + 2); ok {
			return lit.words() + " " + measure + " " + pick(lit, u), 3, true // "5 sq. ft.", "8 fl. oz."
		}
	}
	if lit.plain() {
		if num, den, ok := strings.Cut(next, "/"); ok && isASCIIDigits(num) && isASCIIDigits(den) && len(num) <= 6 && len(den) <= 6 {
			return mixedNumber(lit.words(), num, den), 2, true
		}
	}
	return lit.words(), 1, true
}

// numberRange reads "5-10" -> "five to ten", "1990-1995" and "1990-95" as years, "5-10km" with
// the unit after the second number.
func (n *normalizer) numberRange(i int, from numberLit, rest string) (string, int, bool) {
	_, size := utf8.DecodeRuneInString(rest)
	to, tail, ok := scanNumber(rest[size:], false)
	if !ok {
		return "", 0, false
	}
	fv, fsmall := from.value()
	tv, tsmall := to.value()
	fw, tw := from.words(), to.words()
	if from.plain() && to.plain() && fsmall && tsmall && len(from.intPart) == 4 && fv >= 1000 && fv <= 2999 {
		switch {
		case len(to.intPart) == 4 && tv >= fv:
			fw, tw = year(fv), year(tv)
		case len(to.intPart) == 2 && to.intPart[0] == '0' && tail == "":
			// a season's or fiscal year's second year, "2008-09", "1905-06": that year whole, not "zero nine"
			fw, tw = year(fv), year(fv-fv%100+tv)
		case len(to.intPart) <= 2 && tail == "":
			fw, tw = year(fv), to.words() // "1848-9", "1990-95"
		}
	}
	w := fw + " to " + tw
	if from == to && tail == "" {
		w = fw + "-" + tw // "50-50"
	}
	if tail == "" {
		if n.joinable(i) {
			if u, ok := unitFor(n.toks[i+1].core, false); ok {
				return w + " " + u.many, 2, true
			}
		}
		return w, 1, true
	}
	if u, ok := unitFor(tail, true); ok {
		return w + " " + u.many, 1, true
	}
	return "", 0, false
}
