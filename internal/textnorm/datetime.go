package textnorm

import "strings"

// clock reads times ("3:30 pm", "14:05", "9:00:15") and ratios ("3:1", "16:9").
func (n *normalizer) clock(i int) (string, int, bool) {
	core := n.toks[i].core
	parts := strings.Split(core, ":")
	if len(parts) > 3 {
		return "", 0, false
	}
	// The meridiem may be glued on: "3:30pm".
	last, meridiem := cutMeridiem(parts[len(parts)-1])
	used := 1
	parts[len(parts)-1] = last
	for _, p := range parts {
		if !isASCIIDigits(p) {
			return "", 0, false
		}
	}
	if meridiem == "" {
		meridiem, used = n.meridiemAfter(i)
	}
	hour, _ := parseDigits(parts[0])
	minute, _ := parseDigits(parts[1])
	clockShaped := len(parts[0]) <= 2 && len(parts[1]) == 2 && (len(parts) == 2 || len(parts[2]) == 2)
	if !clockShaped {
		if len(parts) != 2 || meridiem != "" {
			return "", 0, false
		}
		return cardinalDigits(parts[0]) + " to " + cardinalDigits(parts[1]), 1, true
	}
	if !validClock(parts) {
		// "25:61" is no time: read what is written, never as a time.
		w := joinGroups(parts, "colon")
		if meridiem != "" {
			w += " " + meridiem
		}
		return w, used, true
	}
	if len(parts) == 3 {
		// "1:30:05" is a duration or a timestamp; reading its parts by name fits both.
		second, _ := parseDigits(parts[2])
		w := durationWords(hour, minute, second)
		if meridiem != "" {
			w += " " + meridiem
		}
		return w, used, true
	}
	return clockWords(hour, minute, meridiem), used, true
}

// clockWords says a time of day: "three thirty PM", "ten o'clock", "seven oh five", "fifteen hundred".
func clockWords(hour, minute uint64, meridiem string) string {
	var w string
	switch {
	case minute == 0 && meridiem != "":
		w = cardinal(hour)
	case minute == 0 && hour > 0 && hour <= 12:
		w = cardinal(hour) + " o'clock"
	case minute == 0:
		w = cardinal(hour) + " hundred"
	case minute < 10:
		w = cardinal(hour) + " oh " + cardinal(minute)
	default:
		w = cardinal(hour) + " " + cardinal(minute)
	}
	if meridiem != "" {
		w += " " + meridiem
	}
	return w
}

// timeRange reads opening hours and other spans of time: "9am-5pm", "8:30-10:00", "10-11am", "2:00-3:15 p.m." as
// "nine AM to five PM", "eight thirty to ten o'clock"... A span needs a time on at least one side (a meridiem or a
// colon): "10-20" stays a range of numbers. A meridiem after the span is its end's.
func (n *normalizer) timeRange(i int) (string, int, bool) {
	from, to, ok := strings.Cut(strings.ReplaceAll(n.toks[i].core, "–", "-"), "-")
	if !ok {
		return "", 0, false
	}
	fh, fm, fmer, fclock, ok1 := timeOfDay(from)
	th, tm, tmer, tclock, ok2 := timeOfDay(to)
	if !ok1 || !ok2 {
		return "", 0, false
	}
	used := 1
	if fmer == "" && tmer == "" {
		tmer, used = n.meridiemAfter(i) // "2:00-3:15 p.m.", "10-11 am"
	}
	if fmer == "" && tmer == "" && !fclock && !tclock {
		return "", 0, false // "10-20": numbers
	}
	fw := clockWords(fh, fm, fmer)
	if fmer == "" && tmer != "" && fm == 0 {
		fw = cardinal(fh) // the end's meridiem is the start's too: "ten to eleven AM", not "ten o'clock"
	}
	return fw + " to " + clockWords(th, tm, tmer), used, true
}

// timeOfDay parses one side of a span of time: an hour with minutes after a colon or not, and a meridiem glued on
// or not ("9am", "8:30", "11", "3:15pm"); clock says it had minutes.
func timeOfDay(s string) (hour, minute uint64, meridiem string, clock, ok bool) {
	s, meridiem = cutMeridiem(s)
	h, m, clock := strings.Cut(s, ":")
	if !isASCIIDigits(h) || len(h) > 2 || (clock && (!isASCIIDigits(m) || len(m) != 2)) {
		return 0, 0, "", false, false
	}
	hour, _ = parseDigits(h)
	if clock {
		minute, _ = parseDigits(m)
	}
	if hour > 24 || minute > 59 || (meridiem != "" && (hour == 0 || hour > 12)) {
		return 0, 0, "", false, false
	}
	return hour, minute, meridiem, clock, true
}

// cutMeridiem takes a meridiem glued on after a time, "3:30pm", "9a.m." (the side of a span "9a.m.-5p.m." keeps its
// full stop), and says it as "AM" or "PM"; s as it is and "" where there is none.
func cutMeridiem(s string) (rest, meridiem string) {
	for _, m := range []string{"am", "pm", "a.m.", "p.m.", "a.m", "p.m", "AM", "PM", "A.M.", "P.M.", "A.M", "P.M"} {
		if rest, found := strings.CutSuffix(s, m); found && rest != "" {
			return rest, strings.ToUpper(strings.ReplaceAll(m, ".", ""))
		}
	}
	return s, ""
}

// weekdayRange reads a span of weekdays, "Mon-Fri", "Monday-Friday", as "Monday to Friday".
func weekdayRange(core string) (string, bool) {
	from, to, ok := strings.Cut(strings.ReplaceAll(core, "–", "-"), "-")
	if !ok {
		return "", false
	}
	day := func(w string) string {
		lw := strings.ToLower(strings.TrimSuffix(w, "."))
		if weekdays[lw] {
			return dottedWords[lw]
		}
		for _, name := range []string{"Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"} {
			if lw == strings.ToLower(name) {
				return name
			}
		}
		return ""
	}
	f, t := day(from), day(to)
	if f == "" || t == "" {
		return "", false
	}
	return f + " to " + t, true
}

// validClock reports a clock time ("23:59", "24:00") or, with three parts, a duration or timestamp ("36:15:00"),
// whose minutes and seconds are below 60.
func validClock(parts []string) bool {
	hour, _ := parseDigits(parts[0])
	for _, p := range parts[1:] {
		if v, _ := parseDigits(p); v > 59 {
			return false
		}
	}
	return len(parts) == 3 || hour < 24 || hour == 24 && parts[1] == "00"
}

// joinGroups reads digit groups as numbers with the separator's name between them: "thirty-one slash zero two".
func joinGroups(groups []string, separator string) string {
	words := make([]string, len(groups))
	for k, g := range groups {
		words[k] = cardinalDigits(g)
	}
	return strings.Join(words, " "+separator+" ")
}

// durationWords reads hours, minutes and seconds by name, leaving out zero parts:
// "one hour, thirty minutes and five seconds".
func durationWords(h, m, sec uint64) string {
	var parts []string
	for _, p := range []struct {
		v         uint64
		one, many string
	}{{h, "hour", "hours"}, {m, "minute", "minutes"}, {sec, "second", "seconds"}} {
		if p.v == 0 {
			continue
		}
		name := p.many
		if p.v == 1 {
			name = p.one
		}
		parts = append(parts, cardinal(p.v)+" "+name)
	}
	switch len(parts) {
	case 0:
		return "zero seconds"
	case 1:
		return parts[0]
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}

// meridiemAfter looks for "am"/"pm"/"a.m."/"p.m." as the token after i.
func (n *normalizer) meridiemAfter(i int) (string, int) {
	if !n.joinable(i) {
		return "", 1
	}
	next := &n.toks[i+1]
	switch next.core {
	case "am", "AM", "pm", "PM":
		return strings.ToUpper(next.core), 2
	case "a.m", "p.m", "A.M", "P.M":
		next.dotEaten = true
		return strings.ToUpper(strings.ReplaceAll(next.core, ".", "")), 2
	}
	return "", 1
}

var monthNames = [...]string{"", "January", "February", "March", "April", "May", "June", "July", "August",
	"September", "October", "November", "December"}

// numericDate reads ISO dates (2024-03-05), slashed dates in US order (3/5/2024, 3/5/24; a first number above 12 is
// the day, as in 25/12/2024), day and month written with a leading zero (05/03, 25/03) and dotted dates day first
// (25.12.2024). A date that does not exist (31/02/2020, 13/13/2020, 2023-02-29, 30/02) is read group by group,
// "thirty-one slash zero two slash two thousand twenty", never as a date.
func numericDate(core string) (string, bool) {
	if !strings.ContainsAny(core, "-/.") {
		return "", false
	}
	var y, m, d string
	var groups []string
	separator := "slash"
	if parts := strings.Split(core, "-"); len(parts) == 3 && len(parts[0]) == 4 && len(parts[1]) == 2 && len(parts[2]) == 2 {
		y, m, d, groups, separator = parts[0], parts[1], parts[2], parts, "dash"
	} else if parts := strings.Split(core, "/"); len(parts) == 3 && len(parts[0]) <= 2 && len(parts[1]) <= 2 &&
		(len(parts[2]) == 4 || len(parts[2]) == 2) {
		m, d, y, groups = parts[0], parts[1], parts[2], parts
	} else if len(parts) == 2 && len(parts[0]) <= 2 && len(parts[1]) <= 2 && (hasLeadingZero(parts[0]) || hasLeadingZero(parts[1])) {
		m, d, groups = parts[0], parts[1], parts // a fraction has no leading zero
	} else if parts := strings.Split(core, "."); len(parts) == 3 && len(parts[0]) <= 2 && len(parts[1]) <= 2 && len(parts[2]) == 4 {
		d, m, y, groups, separator = parts[0], parts[1], parts[2], parts, "dot" // 25.12.2024, day first
	} else {
		return "", false
	}
	if !isASCIIDigits(y) && y != "" || !isASCIIDigits(m) || !isASCIIDigits(d) {
		return "", false
	}
	yv, _ := parseDigits(y)
	mv, _ := parseDigits(m)
	dv, _ := parseDigits(d)
	if separator != "dash" && mv > 12 && dv <= 12 {
		mv, dv = dv, mv
	}
	fullYear := yv
	if len(y) == 2 {
		fullYear += 2000 // for leap years only: "29/02/00" exists
	}
	if !validDate(mv, dv, fullYear) {
		return joinGroups(groups, separator), true
	}
	w := monthNames[mv] + " " + ordinal(dv)
	switch len(y) {
	case 2:
		w += ", " + twoDigitYear(yv)
	case 4:
		w += ", " + year(yv)
	}
	return w, true
}

func hasLeadingZero(digits string) bool { return len(digits) > 1 && digits[0] == '0' }

// validDate reports whether day d of month m exists in year y; y 0 is an unknown year, in which February has 29 days.
func validDate(m, d, y uint64) bool {
	return m >= 1 && m <= 12 && d >= 1 && d <= daysInMonth(m, y)
}

func daysInMonth(m, y uint64) uint64 {
	switch m {
	case 2:
		if y == 0 || y%4 == 0 && (y%100 != 0 || y%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// twoDigitYear reads "'05"/"05" as "oh five" and "24" as "twenty-four".
func twoDigitYear(v uint64) string {
	if v < 10 {
		return "oh " + cardinal(v)
	}
	return cardinal(v)
}

// dateWithMonthName reads "March 5, 2024", "Mar. 5th", "5 March 2024" and "Jan. 2020". A day the month does not
// have ("Feb 30", "February 29, 2021") is read as a number after the month's name, never as a date.
func (n *normalizer) dateWithMonthName(i int) (string, int, bool) {
	t := n.toks[i]
	if m := monthNumber(t.core); m != 0 && (t.trail == "" || t.trail == ".") && i+1 < len(n.toks) &&
		n.toks[i+1].lead == "" {
		month := monthNames[m]
		eatDot := func() {
			if t.trail == "." && len(t.core) < len(month) {
				n.toks[i].dotEaten = true
			}
		}
		dayTok := n.toks[i+1]
		if y, ok := fourDigitYear(dayTok.core); ok {
			eatDot()
			return month + " " + year(y), 2, true // "Jan. 2020"
		}
		day, ok := dayOfMonth(dayTok.core)
		if !ok {
			return "", 0, false
		}
		eatDot()
		var y uint64
		hasYear := (dayTok.trail == "," || dayTok.trail == "") && i+2 < len(n.toks) && n.toks[i+2].lead == ""
		if hasYear {
			y, hasYear = fourDigitYear(n.toks[i+2].core)
		}
		w := month + " " + ordinal(day)
		if !validDate(uint64(m), day, y) && isASCIIDigits(dayTok.core) {
			w = month + " " + cardinal(day) // "Feb 30"; "April 31st" is read as the ordinal it is written as
		}
		if hasYear {
			return w + ", " + year(y), 3, true
		}
		return w, 2, true
	}
	if day, ok := dayOfMonth(t.core); ok && n.joinable(i) {
		next := n.toks[i+1]
		m := monthNumber(next.core)
		if m == 0 || (next.trail != "" && next.trail != "." && next.trail != ",") {
			return "", 0, false
		}
		var y uint64
		hasYear := n.joinable(i + 1)
		if hasYear {
			y, hasYear = fourDigitYear(n.toks[i+2].core)
		}
		if !validDate(uint64(m), day, y) {
			return "", 0, false // "30 February": a number and a month
		}
		month := monthNames[m]
		if next.trail == "." && len(next.core) < len(month) {
			n.toks[i+1].dotEaten = true // "5 Sept." but not "5 September."
		}
		w := "the " + ordinal(day) + " of " + month
		if prev := n.tok(i - 1); prev.trail == "" && determiners[strings.ToLower(prev.core)] {
			w = strings.TrimPrefix(w, "the ") // "on the 14th June", "the following 23rd April"
		}
		if hasYear {
			return w + " " + year(y), 3, true
		}
		return w, 2, true
	}
	return "", 0, false
}

// determiners already stand where "the" would go before a day of the month.
var determiners = setOf("the", "following", "this", "that", "next", "last", "every", "each", "same", "said")

// monthNamed returns the full name of a capitalised month name or abbreviation ("Sept" -> "September").
func monthNamed(word string) string { return monthNames[monthNumber(word)] }

// monthNumber is the month (1..12) that a capitalised month name or abbreviation names, or 0.
func monthNumber(word string) int {
	if len(word) < 3 || !isCapitalized(word) {
		return 0
	}
	lw := strings.ToLower(word)
	for m := 1; m <= 12; m++ {
		name := monthNames[m]
		if lw == strings.ToLower(name) || lw == strings.ToLower(name[:3]) || (m == 9 && lw == "sept") {
			return m
		}
	}
	return 0
}

// dayOfMonth accepts "5", "05", "5th", "21st" in 1..31.
func dayOfMonth(word string) (uint64, bool) {
	digits := word
	if len(word) > 2 && isOrdinalSuffix(word[len(word)-2:]) {
		digits = word[:len(word)-2]
	}
	if len(digits) == 0 || len(digits) > 2 || !isASCIIDigits(digits) {
		return 0, false
	}
	d, _ := parseDigits(digits)
	return d, d >= 1 && d <= 31
}

func fourDigitYear(word string) (uint64, bool) {
	if len(word) != 4 || !isASCIIDigits(word) {
		return 0, false
	}
	y, _ := parseDigits(word)
	return y, y >= 1000
}

// durationPart is one number and time unit of a duration written with letters: "30m" in "1h 30m".
type durationPart struct {
	lit  numberLit
	rank int // the unit: durationNames[rank]
}

// durationParts holds the parts of one duration, largest unit first; units strictly decrease, so there are at most four.
type durationParts struct {
	part [4]durationPart
	n    int
}

func (d *durationParts) first() int { return d.part[0].rank }
func (d *durationParts) last() int  { return d.part[d.n-1].rank }

// durationUnits are the time units of a duration written with letters, ranked from seconds (1) to days (4).
var durationUnits = map[string]int{"d": 4, "h": 3, "hr": 3, "hrs": 3, "m": 2, "min": 2, "mins": 2, "s": 1, "sec": 1,
	"secs": 1}

var durationNames = [...]unit{1: {"second", "seconds"}, 2: {"minute", "minutes"}, 3: {"hour", "hours"},
	4: {"day", "days"}}

// parseDuration reads a token made of numbers with time units in decreasing order: "30m", "1h30m", "2m30s".
func parseDuration(core string) (durationParts, bool) {
	var d durationParts
	for core != "" {
		lit, rest, ok := scanNumber(core, false)
		if !ok || lit.grouped {
			return d, false
		}
		k := 0
		for k < len(rest) && rest[k] >= 'a' && rest[k] <= 'z' {
			k++
		}
		rank := durationUnits[rest[:k]]
		if rank == 0 || d.n > 0 && rank >= d.last() {
			return d, false
		}
		d.part[d.n] = durationPart{lit, rank}
		d.n++
		core = rest[k:]
	}
	return d, d.n > 0
}

// duration reads a duration written with letters at token i: a number with a time unit glued on ("30m", "1h30m") or
// written after it ("30 m"), when it is a duration by itself ("1h30m") or the tokens beside it go on with a smaller
// or larger unit ("1h 30m", "5 min 30 s"): then "m" is minutes and "s" seconds, not meters or a decade. "5m" alone
// is not a duration. It returns the words and how many tokens they cover.
func (n *normalizer) duration(i int) (string, int, bool) {
	d, used := n.durationAt(i)
	if used == 0 || d.n == 1 && !n.durationBefore(i-1, d.first()) && !n.durationAfter(i+used, d.first()) {
		return "", 0, false
	}
	words := make([]string, d.n)
	for k, p := range d.part[:d.n] {
		words[k] = p.lit.words() + " " + pick(p.lit, durationNames[p.rank])
	}
	return strings.Join(words, " "), used, true
}

// durationAt reads the duration that starts at token i: a glued token ("1h30m") or a number and a unit token ("30
// m"), with how many tokens it takes (0: none).
func (n *normalizer) durationAt(i int) (durationParts, int) {
	var d durationParts
	if i < 0 || i >= len(n.toks) || !startsNumeric(n.toks[i].core) {
		return d, 0
	}
	core := n.toks[i].core
	if d, ok := parseDuration(core); ok {
		return d, 1
	}
	if rank := durationUnits[n.tok(i+1).core]; rank > 0 && n.joinable(i) && isASCIIDigits(core) {
		lit, _, _ := scanNumber(core, false)
		d.part[0], d.n = durationPart{lit, rank}, 1
		return d, 2
	}
	return d, 0
}

// durationBefore reports a duration ending at token j, right before what follows, with a unit larger than rank.
func (n *normalizer) durationBefore(j, rank int) bool {
	for _, start := range []int{j, j - 1} {
		if start < 0 || n.toks[j].trail != "" || j+1 < len(n.toks) && n.toks[j+1].lead != "" {
			continue
		}
		if d, used := n.durationAt(start); used > 0 && start+used-1 == j && d.last() > rank {
			return true
		}
	}
	return false
}

// durationAfter reports a duration starting at token j, right after what comes before, with a unit smaller than rank.
func (n *normalizer) durationAfter(j, rank int) bool {
	if j <= 0 || j >= len(n.toks) || n.toks[j-1].trail != "" || n.toks[j].lead != "" {
		return false
	}
	d, used := n.durationAt(j)
	return used > 0 && d.first() < rank
}
