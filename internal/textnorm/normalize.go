package textnorm

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Normalize rewrites ONE sentence so that it contains only speakable words and punctuation, for English:
// cardinals ("1,234" -> "one thousand two hundred thirty-four"), ordinals (1st, 22nd, 103rd), decimals (3.14 ->
// "three point one four"), negatives (-5), years (1984 -> "nineteen eighty-four", 2005 -> "two thousand five", 1900 ->
// "nineteen hundred", in year-like context), dates (2024-03-05, 3/5/2024 US order, "March 5, 2024", "5 March 2024"),
// times (3:30 pm, 14:05), money ($5, $3.50 -> "three dollars and fifty cents", £, €, $2.5 million, 5¢), percentages
// (12.5%), ratios (3:1 in non-time context, "1/2" fractions), ranges (1990-1995, 5-10), common abbreviations and titles
// (Dr. Smith -> Doctor Smith, St. Louis -> Saint Louis but Main St. -> Main Street, Mr., Mrs., Ms., Prof., Jr., Sr.,
// vs., etc., e.g., i.e., No. 5, approx.), units after numbers (5 km, 3 kg, 10 ft, 5'11", 72°F, 100 mph, 3 GB, 5 ms),
// URLs and e-mail addresses spelled speakably ("example dot com", "john at example dot org"), "&" -> "and",
// ALL-CAPS acronyms left as they are (espeak spells them) unless common words. Output keeps sentence punctuation
// (. , ? ! ; :) because the phonemizer uses it for prosody. Never panics; never loses words.
//
// Whitespace collapses to single spaces, invalid UTF-8 and control characters are dropped, and the
// output never contains an ASCII digit. Text in other scripts passes through unchanged. A separator
// ("***", "=====") is not read, and a sentence of marks alone ("* * *", "!!!") is "": espeak-ng would
// read them by name ("asterisk", "exclamation").
func Normalize(sentence string) string {
	// Links first (their text may hold an ellipsis or emphasis), then ellipses (one may sit between a word and its
	// emphasis mark: "**Wait**...what").
	cleaned := unmarkWords(pauseEllipses(readLinks(clean(sentence))))
	if !strings.ContainsFunc(cleaned, isSpoken) {
		return "" // only marks: a separator ("* * *"), "!!!": read, they were "asterisk", "exclamation"
	}
	toks := tokenize(cleaned)
	if len(toks) == 0 {
		return ""
	}
	n := &normalizer{toks: toks, shouting: isShouting(toks)}
	var b strings.Builder
	b.Grow(len(sentence) + len(sentence)/2)
	for i := 0; i < len(toks); {
		words, used := n.rewrite(i)
		if used < 1 {
			used = 1
		}
		last := toks[i+used-1]
		piece := toks[i].lead + words + n.trailAfter(i+used-1, last.trail)
		if piece != "" {
			if b.Len() > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(piece)
		}
		i += used
	}
	return spellStrayDigits(b.String())
}

// token is one whitespace-separated chunk of a sentence, split into leading opening punctuation,
// the core that gets rewritten, and trailing punctuation.
type token struct {
	lead, core, trail string
	// dotEaten marks that the core is an abbreviation whose period (the first byte of trail)
	// belongs to it; set by rewrite, read by trailAfter.
	dotEaten bool
}

// trailing punctuation: sentence marks, closing quotes and brackets, ellipses.
const trailingPunct = ".,;:!?…" + closers

func tokenize(s string) []token {
	fields := strings.Fields(s)
	toks := make([]token, 0, len(fields))
	for _, f := range fields {
		core := strings.TrimLeft(f, openers)
		lead := f[:len(f)-len(core)]
		trimmed := strings.TrimRight(core, trailingPunct)
		trail := core[len(trimmed):]
		core = trimmed
		core, trail = keepMeasureMarks(lead, core, trail)
		lead = dropElision(lead, core)
		toks = append(toks, token{lead: lead, core: core, trail: trail})
	}
	return toks
}

// keepMeasureMarks gives the inch mark back to the core in 5'11" and 11", which tokenize took for a
// closing quote.
func keepMeasureMarks(lead, core, trail string) (string, string) {
	if trail == "" || core == "" {
		return core, trail
	}
	last := core[len(core)-1]
	if last < '0' || last > '9' {
		return core, trail
	}
	for _, mark := range []string{`''`, `"`, "″", "”"} {
		if strings.HasPrefix(trail, mark) && strings.ContainsAny(core, "'′’") {
			return core + mark, trail[len(mark):]
		}
	}
	// "6'" and "6′": feet. A closing single quote would need an opening one before the number.
	for _, mark := range []string{"'", "′"} {
		if strings.HasPrefix(trail, mark) && isASCIIDigits(core) && !strings.ContainsAny(lead, "'‘") {
			return core + mark, trail[len(mark):]
		}
	}
	return core, trail
}

// dropElision removes the apostrophe of "'90s", which stands for the missing "19" and is not a quote.
func dropElision(lead, core string) string {
	if len(core) == 3 && core[2] == 's' && isASCIIDigits(core[:2]) {
		for _, apostrophe := range []string{"'", "’", "‘"} {
			if rest, ok := strings.CutSuffix(lead, apostrophe); ok {
				return rest
			}
		}
	}
	return lead
}

type normalizer struct {
	toks     []token
	shouting bool // most letters are capitals, so capitalised common words are words, not acronyms
}

// trailAfter returns token i's trailing punctuation, without the period that an abbreviation
// swallowed unless the token ends the sentence (then that period ends the sentence too).
func (n *normalizer) trailAfter(i int, trail string) string {
	if trail == "." && i < len(n.toks)-1 && n.toks[i+1].lead == "" {
		// A lone period before a lower-case word or a number is an abbreviation's ("c. 54",
		// "Gen. and"), not a sentence end; espeak-ng would end a clause there.
		if r, _ := utf8.DecodeRuneInString(n.toks[i+1].core); unicode.IsLower(r) || isDigit(r) {
			return ""
		}
	}
	if !n.toks[i].dotEaten || !strings.HasPrefix(trail, ".") {
		return trail
	}
	if i == len(n.toks)-1 && !strings.ContainsAny(trail[1:], ".,;:!?…") {
		return trail // "at 9 a.m." ends the sentence: one period serves both
	}
	return trail[1:]
}

// tok returns token i, or an empty token when i is out of range.
func (n *normalizer) tok(i int) token {
	if i < 0 || i >= len(n.toks) {
		return token{}
	}
	return n.toks[i]
}

// joinable reports whether token i+1 can be read together with token i (no punctuation between them).
func (n *normalizer) joinable(i int) bool {
	return i+1 < len(n.toks) && n.toks[i].trail == "" && n.toks[i+1].lead == ""
}

// rewrite speaks token i, possibly together with the tokens after it; it returns the words and how
// many tokens they cover.
func (n *normalizer) rewrite(i int) (string, int) {
	t := n.toks[i]
	core := t.core
	if core == "" || isSeparator(core) {
		return "", 1
	}
	if w, ok := spellAddress(core); ok {
		return w, 1
	}
	if w, used, ok := n.dateWithMonthName(i); ok {
		return w, used
	}
	if startsNumeric(core) || strings.Contains(core[:min(len(core), 3)], "$") {
		if w, used, ok := n.numeric(i); ok {
			return w, used
		}
	}
	if w, ok := weekdayRange(core); ok {
		return w, 1
	}
	if len(core) > 1 && (core[0] == 'v' || core[0] == 'V') {
		if w, ok := versionNumber(core[1:]); ok {
			return "version " + w, 1 // "v2.10.1"
		}
	}
	if w, used, ok := n.abbreviation(i); ok {
		return w, used
	}
	if (core == "x" || core == "×" || core == "*") && i > 0 && endsWithDigit(n.toks[i-1].core) &&
		startsNumeric(n.tok(i+1).core) {
		// Between numbers "*" and "×" multiply ("5 * 3", "5 × 3": "five times three", as "=" is "equals" and "+"
		// "plus"); "x" and a "×" whose second number has a unit ("2 × 3 m") give dimensions: "six by four".
		if core == "*" || core == "×" && !n.hasUnit(i+1) {
			return "times", 1
		}
		return "by", 1
	}
	if w, ok := symbolWord(core, n.tok(i+1).core); ok {
		return w, 1
	}
	if w, ok := n.regnal(i); ok {
		return w, 1
	}
	if w, ok := n.capsWord(core); ok {
		return w, 1
	}
	return mixed(core), 1
}

// hasUnit reports that the number of token j has a unit, glued ("3m") or apart ("3 m").
func (n *normalizer) hasUnit(j int) bool {
	_, rest, ok := scanNumber(n.tok(j).core, true)
	if !ok {
		return false
	}
	if rest != "" {
		_, glued := unitFor(rest, true)
		return glued
	}
	_, apart := n.unitAfter(j + 1)
	return apart
}

// isSpoken reports a character that is read as something: a letter, a digit, or a symbol such as an emoji or ©. A
// sentence of none is only marks, which espeak-ng would read by their names.
func isSpoken(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.So, r)
}

// isSeparator reports a word made of one mark repeated three times or more ("***", "=====", "~~~", "###"): a rule
// between sections, as in the "*** START OF THE PROJECT GUTENBERG EBOOK ***" of Project Gutenberg's books, not
// something to read ("asterisk asterisk asterisk").
func isSeparator(core string) bool {
	first, size := utf8.DecodeRuneInString(core)
	if isSpoken(first) || utf8.RuneCountInString(core) < 3 {
		return false
	}
	return strings.Count(core, string(first))*size == len(core)
}

// startsNumeric reports whether s begins like a number, an amount of money or a signed number.
func startsNumeric(s string) bool {
	r, size := utf8.DecodeRuneInString(s)
	if isDigit(r) {
		return true
	}
	if r == '-' || r == '+' || r == '−' || r == '.' || r == '~' || currencyOf(r) != nil {
		next, _ := utf8.DecodeRuneInString(s[size:])
		return isDigit(next) || currencyOf(next) != nil || next == '.'
	}
	return false
}

func endsWithDigit(s string) bool { return s != "" && isDigit(rune(s[len(s)-1])) }

func isDigit(r rune) bool { return r >= '0' && r <= '9' }

// symbolWord speaks a core made of a single symbol, or a hashtag/number sign.
func symbolWord(core, next string) (string, bool) {
	switch core {
	case "&", "＆":
		return "and", true
	case "+":
		return "plus", true
	case "=":
		return "equals", true
	case "@":
		return "at", true
	case "%":
		return "percent", true
	case "×":
		return "times", true
	case "±":
		return "plus or minus", true
	case "≈", "~":
		return "approximately", true
	case "<":
		return "less than", true
	case ">":
		return "greater than", true
	case "≤", "<=":
		return "less than or equal to", true
	case "≥", ">=":
		return "greater than or equal to", true
	case "→", "->":
		return "to", true
	case "#":
		if next != "" && startsNumeric(next) {
			return "number", true
		}
	}
	if rest, ok := strings.CutPrefix(core, "#"); ok && rest != "" {
		if isASCIIDigits(rest) && len(rest) >= 4 {
			return "number " + spellDigits(rest), true
		}
		if startsNumeric(rest) {
			return "number " + mixed(rest), true
		}
		if r, _ := utf8.DecodeRuneInString(rest); unicode.IsLetter(r) {
			return "hashtag " + mixed(rest), true
		}
	}
	return "", false
}

// capsWord lower-cases an all-capitals common English word ("THE", "STOP") so that espeak does not
// spell it; other all-capitals words are acronyms and stay as they are.
func (n *normalizer) capsWord(core string) (string, bool) {
	if len(core) < 2 || !isUpperWord(core) {
		return "", false
	}
	lw := strings.ToLower(core)
	if !commonWords[lw] || (acronymLike[lw] && !n.shouting) {
		return "", false
	}
	return lw, true
}

// isUpperWord reports an ASCII word of capital letters (apostrophes allowed: "DON'T").
func isUpperWord(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < 'A' || c > 'Z') && c != '\'' {
			return false
		}
	}
	return true
}

// isShouting reports whether most words of the sentence are written in capitals.
func isShouting(toks []token) bool {
	upper, words := 0, 0
	for _, t := range toks {
		if len(t.core) < 2 || !isLetters(t.core) {
			continue
		}
		words++
		if isUpperWord(t.core) {
			upper++
		}
	}
	return words >= 2 && upper*3 >= words*2
}

func isLetters(s string) bool {
	for _, r := range s {
		if !unicode.IsLetter(r) && r != '\'' {
			return false
		}
	}
	return s != ""
}

func isCapitalized(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return unicode.IsUpper(r)
}

// mixed rewrites a word that may contain digits and symbols: digit runs become numbers ("MP3" -> "MP
// three", "COVID-19" -> "COVID-nineteen"), "&" becomes "and", "*" between digits "times", vulgar fractions are spelled;
// everything else is kept.
func mixed(core string) string {
	if !strings.ContainsFunc(core, needsMixed) {
		return core
	}
	var b strings.Builder
	prevKind := 0 // 0 start, 1 letters/other, 2 number words
	prevRune := rune(0)
	space := func() {
		if b.Len() > 0 && !strings.HasSuffix(b.String(), " ") && !strings.HasSuffix(b.String(), "-") {
			b.WriteByte(' ')
		}
	}
	for i := 0; i < len(core); {
		r, size := utf8.DecodeRuneInString(core[i:])
		switch {
		case isDigit(r):
			lit, rest, _ := scanNumber(core[i:], false)
			space()
			words, rest := numberInWord(lit, rest, prevRune)
			b.WriteString(words)
			i = len(core) - len(rest)
			if next, _ := utf8.DecodeRuneInString(rest); unicode.IsLetter(next) {
				b.WriteByte(' ')
			}
			prevKind, prevRune = 2, '0'
			continue
		case r == '&' || r == '＆':
			space()
			b.WriteString("and ")
		case vulgarFractions[r] != "":
			f := vulgarFractions[r]
			if prevKind == 2 {
				b.WriteString(" and")
				if rest, ok := strings.CutPrefix(f, "one "); ok {
					f = "a " + rest // "1½" -> "one and a half"
				}
			}
			space()
			b.WriteString(f)
			b.WriteByte(' ')
		case (r == 'x' || r == '×') && prevKind == 2 && i+size < len(core) && isDigit(rune(core[i+size])):
			b.WriteString(" by ") // "1920x1080"
			prevKind = 0
			i += size
			continue
		case r == '*' && prevKind == 2 && i+size < len(core) && isDigit(rune(core[i+size])):
			b.WriteString(" times ") // "5*3"
			prevKind = 0
			i += size
			continue
		case r == ',' && prevKind == 2:
			b.WriteString(", ")
		case r == '.' && prevKind == 2 && i+1 < len(core) && isDigit(rune(core[i+1])):
			b.WriteString(" point ") // "1.2.3": the scan stopped at the second point
			i += size
			continue
		default:
			b.WriteString(core[i : i+size])
			prevKind, prevRune = 1, r
			i += size
			continue
		}
		prevKind, prevRune = 1, r
		i += size
	}
	return strings.Join(strings.Fields(b.String()), " ")
}

// numberInWord reads a number inside a word, given what follows it and the rune before it:
// "1st-class" -> "first", "mid-1990s" -> "nineteen nineties", "pre-1945" -> "nineteen forty-five",
// "C2766" -> "two seven six six" (a code). It returns the rest of the word after what it read.
func numberInWord(lit numberLit, rest string, prevRune rune) (string, string) {
	suffix := rest
	for k, c := range rest {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			suffix = rest[:k]
			break
		}
	}
	v, small := lit.value()
	switch {
	case lit.plain() && small && isOrdinalSuffix(suffix):
		return ordinal(v), rest[len(suffix):]
	case lit.plain() && small && suffix == "s" && strings.HasSuffix(lit.intPart, "0") && !unicode.IsLetter(prevRune):
		return decade(lit.intPart, v), rest[1:]
	}
	after := rest[len(suffix):]
	dimension := (suffix == "x" || strings.HasPrefix(rest, "×")) && after != "" && isDigit(rune(after[0]))
	if lit.plain() && len(lit.intPart) >= 4 && (unicode.IsLetter(prevRune) || suffix != "" && !dimension) {
		return spellDigits(lit.intPart), rest // a code: "C2766" is "C two seven six six"
	}
	if lit.plain() && small && len(lit.intPart) == 4 && prevRune == '-' && v >= 1100 && v <= 2099 {
		return year(v), rest // "pre-1945"
	}
	return lit.words(), rest
}

func needsMixed(r rune) bool {
	return isDigit(r) || r == '&' || r == '＆' || vulgarFractions[r] != ""
}

var vulgarFractions = map[rune]string{
	'½': "one half", '⅓': "one third", '⅔': "two thirds", '¼': "one quarter", '¾': "three quarters",
	'⅕': "one fifth", '⅖': "two fifths", '⅗': "three fifths", '⅘': "four fifths", '⅙': "one sixth",
	'⅚': "five sixths", '⅛': "one eighth", '⅜': "three eighths", '⅝': "five eighths", '⅞': "seven eighths",
}

// spellStrayDigits is the last line of defence: any ASCII digit that no rule consumed is read
// digit by digit, so the phonemizer never sees a digit (espeak would read it with its own rules).
func spellStrayDigits(s string) string {
	if !strings.ContainsAny(s, "0123456789") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			b.WriteByte(c)
			continue
		}
		if b.Len() > 0 && !strings.HasSuffix(b.String(), " ") {
			b.WriteByte(' ')
		}
		b.WriteString(onesWords[c-'0'])
		if i+1 < len(s) && s[i+1] != ' ' {
			b.WriteByte(' ')
		}
	}
	return b.String()
}
