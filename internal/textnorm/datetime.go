package textnorm

import "strings"

// clock reads times ("3:30 pm", "14:05", "9:00:15") and ratios ("3:1", "16:9").
func (n *normalizer) clock(i int) (string, int, bool) {
	core := n.toks[i].core
	parts := strings.Split(core, ":")
	if len(parts) > 3 {
		return "", 0, false
	}
	last := parts[len(parts)-1]
	// The meridiem may be glued on: "3:30pm".
	meridiem, used := "", 1
	for _, m := range []string{"am", "pm", "a.m", "p.m", "AM", "PM", "A.M", "P.M"} {
		if strings.HasSuffix(last, m) && len(last) > len(m) {
			meridiem = strings.ToUpper(strings.ReplaceAll(m, ".", ""))
			last = last[:len(last)-len(m)]
			break
		}
	}
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
	isTime := len(parts[0]) <= 2 && hour <= 24 && len(parts[1]) == 2 && parts[1] <= "59" &&
		(len(parts) == 2 || (len(parts[2]) == 2 && parts[2] <= "59"))
	if !isTime {
		if len(parts) != 2 || meridiem != "" {
			return "", 0, false
		}
		return cardinalDigits(parts[0]) + " to " + cardinalDigits(parts[1]), 1, true
	}
	minute, _ := parseDigits(parts[1])
	if len(parts) == 3 {
		// "1:30:05" is a duration or a timestamp; reading its parts by name fits both.
		second, _ := parseDigits(parts[2])
		w := durationWords(hour, minute, second)
		if meridiem != "" {
			w += " " + meridiem
		}
		return w, used, true
	}
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
	return w, used, true
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

// numericDate reads ISO dates (2024-03-05) and slashed dates in US order (3/5/2024, 3/5/24); a first
// number above 12 is taken as the day (25/12/2024).
func numericDate(core string) (string, bool) {
	var y, m, d string
	slashed := false
	if parts := strings.Split(core, "-"); len(parts) == 3 && len(parts[0]) == 4 && len(parts[1]) == 2 && len(parts[2]) == 2 {
		y, m, d = parts[0], parts[1], parts[2]
	} else if parts := strings.Split(core, "/"); len(parts) == 3 && len(parts[0]) <= 2 && len(parts[1]) <= 2 &&
		(len(parts[2]) == 4 || len(parts[2]) == 2) {
		m, d, y, slashed = parts[0], parts[1], parts[2], true
	} else {
		return "", false
	}
	if !isASCIIDigits(y) || !isASCIIDigits(m) || !isASCIIDigits(d) {
		return "", false
	}
	yv, _ := parseDigits(y)
	mv, _ := parseDigits(m)
	dv, _ := parseDigits(d)
	if slashed && mv > 12 && dv <= 12 {
		mv, dv = dv, mv
	}
	if mv < 1 || mv > 12 || dv < 1 || dv > 31 {
		return "", false
	}
	var yw string
	if len(y) == 2 {
		yw = twoDigitYear(yv)
	} else {
		yw = year(yv)
	}
	return monthNames[mv] + " " + ordinal(dv) + ", " + yw, true
}

// twoDigitYear reads "'05"/"05" as "oh five" and "24" as "twenty-four".
func twoDigitYear(v uint64) string {
	if v < 10 {
		return "oh " + cardinal(v)
	}
	return cardinal(v)
}

// dateWithMonthName reads "March 5, 2024", "Mar. 5th", "5 March 2024" and "March 2024".
func (n *normalizer) dateWithMonthName(i int) (string, int, bool) {
	t := n.toks[i]
	if month := monthNamed(t.core); month != "" && (t.trail == "" || t.trail == ".") && i+1 < len(n.toks) &&
		n.toks[i+1].lead == "" {
		day, ok := dayOfMonth(n.toks[i+1].core)
		if !ok {
			return "", 0, false
		}
		if t.trail == "." && len(t.core) < len(month) {
			n.toks[i].dotEaten = true
		}
		w := month + " " + ordinal(day)
		dayTok := n.toks[i+1]
		if (dayTok.trail == "," || dayTok.trail == "") && i+2 < len(n.toks) && n.toks[i+2].lead == "" {
			if y, ok := fourDigitYear(n.toks[i+2].core); ok {
				return w + ", " + year(y), 3, true
			}
		}
		return w, 2, true
	}
	if day, ok := dayOfMonth(t.core); ok && n.joinable(i) {
		next := n.toks[i+1]
		month := monthNamed(next.core)
		if month == "" || (next.trail != "" && next.trail != "." && next.trail != ",") {
			return "", 0, false
		}
		if next.trail == "." && len(next.core) < len(month) {
			n.toks[i+1].dotEaten = true // "5 Sept." but not "5 September."
		}
		w := "the " + ordinal(day) + " of " + month
		if prev := n.tok(i - 1); prev.trail == "" && determiners[strings.ToLower(prev.core)] {
			w = strings.TrimPrefix(w, "the ") // "on the 14th June", "the following 23rd April"
		}
		if n.joinable(i + 1) {
			if y, ok := fourDigitYear(n.toks[i+2].core); ok {
				return w + " " + year(y), 3, true
			}
		}
		return w, 2, true
	}
	return "", 0, false
}

// determiners already stand where "the" would go before a day of the month.
var determiners = setOf("the", "following", "this", "that", "next", "last", "every", "each", "same", "said")

// monthNamed returns the full name of a capitalised month name or abbreviation ("Sept" -> "September").
func monthNamed(word string) string {
	if len(word) < 3 || !isCapitalized(word) {
		return ""
	}
	lw := strings.ToLower(word)
	for m := 1; m <= 12; m++ {
		name := monthNames[m]
		if lw == strings.ToLower(name) || lw == strings.ToLower(name[:3]) || (m == 9 && lw == "sept") {
			return name
		}
	}
	return ""
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
