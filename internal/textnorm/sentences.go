package textnorm

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Sentences splits a document into sentences in reading order, keeping each sentence's terminal punctuation
// (. ? ! and closing quotes/brackets). Abbreviations (Dr. Mr. Mrs. Ms. St. Mt. e.g. i.e. etc. vs. U.S. a.m. p.m. ...),
// initials (J. R. R. Tolkien), decimals (3.14), numbered items, ellipses, URLs and e-mail addresses do not end a
// sentence; quotes and parentheses are kept with their sentence; blank lines / paragraph breaks always end one.
// Whitespace (incl. newlines inside a paragraph) collapses to single spaces. Empty/whitespace-only sentences are dropped.
// Markdown's marks at the start of a line are read first (markdownLines): a heading is a sentence of its own, a list
// item starts one, and the marks ("# ", "* ", "> ", a code fence) are not part of any sentence.
//
// Invalid UTF-8 is dropped and control characters other than whitespace are removed.
// It runs in time linear in len(doc).
func Sentences(doc string) []string {
	var out []string
	for _, para := range paragraphs(markdownLines(clean(doc))) {
		out = splitParagraph(para, out)
	}
	return out
}

// clean drops invalid UTF-8 and control characters, keeping whitespace controls
// (tab, newline, carriage return; form feed, vertical tab and NEL become newlines) so that
// paragraph breaks survive and no two words are glued together. It drops a terminal's control
// sequences ("\x1b[1;31m") whole and folds the compatibility forms of Latin letters and digits to
// them (fold).
func clean(s string) string {
	if isCleanASCII(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch {
		case r == utf8.RuneError && size <= 1:
			// Invalid byte: dropped rather than replaced, so it cannot be read aloud.
		case r == '\t' || r == '\n' || r == '\r':
			b.WriteRune(r)
		case r == '\v' || r == '\f' || r == '\u0085' || r == '\u2028':
			// Line breaks: a form feed between pages (a page may break a sentence), a vertical tab, NEL. Dropped,
			// they glued the words on either side into one ("end.\fNext" read "end dot next").
			b.WriteByte('\n')
		case r == '\u2029':
			b.WriteString("\n\n")
		case r == '\x1b' && strings.HasPrefix(s[i:], "["):
			// A terminal's control sequence (colours: "\x1b[31m", in a captured log): dropped whole, or its
			// "[31m" was read "thirty-one m".
			i += csiLength(s[i:])
		case unicode.IsControl(r), r == '\uFEFF':
			// Dropped: controls and byte-order marks have no sound.
		case r < utf8.RuneSelf:
			b.WriteRune(r)
		default:
			if f, ok := fold(r, func() rune { return lastRuneOf(b.String()) }, s[i:]); ok {
				b.WriteString(f)
			} else {
				b.WriteRune(r)
			}
		}
	}
	return b.String()
}

// csiLength is the length of the control sequence that s starts, after its ESC: "[", parameter bytes (0x30-0x3F),
// intermediate bytes (0x20-0x2F) and a final byte (0x40-0x7E), as ECMA-48 defines it. Where no final byte comes it
// is 0: what follows the ESC is text.
func csiLength(s string) int {
	i := 1
	for i < len(s) && s[i] >= 0x30 && s[i] <= 0x3F {
		i++
	}
	for i < len(s) && s[i] >= 0x20 && s[i] <= 0x2F {
		i++
	}
	if i < len(s) && s[i] >= 0x40 && s[i] <= 0x7E {
		return i + 1
	}
	return 0
}

// isCleanASCII reports whether s is printable ASCII plus tab/newline/CR, the common case
// that clean can return unchanged.
func isCleanASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x7f || (c < 0x20 && c != '\t' && c != '\n' && c != '\r') {
			return false
		}
	}
	return true
}

// paragraphs splits cleaned text at blank lines and collapses every whitespace run inside a
// paragraph to one space. Paragraphs come back trimmed and non-empty.
func paragraphs(s string) []string {
	var out []string
	var b strings.Builder
	pendingSpace := false
	newlines := 0   // line breaks in the current whitespace run
	prevCR := false // so that "\r\n" counts as one line break
	flush := func() {
		if b.Len() > 0 {
			out = append(out, b.String())
			b.Reset()
		}
		pendingSpace = false
	}
	for _, r := range s {
		if unicode.IsSpace(r) {
			// A lone "\r" (old Mac files) is a line break too.
			if r == '\r' || (r == '\n' && !prevCR) {
				newlines++
			}
			prevCR = r == '\r'
			pendingSpace = true
			continue
		}
		prevCR = false
		if pendingSpace {
			if newlines >= 2 {
				flush()
			} else if b.Len() > 0 {
				b.WriteByte(' ')
			}
		}
		pendingSpace = false
		newlines = 0
		b.WriteRune(r)
	}
	flush()
	return out
}

// closers are the characters that may follow a sentence's terminal punctuation and still belong to it.
const closers = "\"')]}”’»›"

// openers are the characters that may precede the first word of a token.
const openers = "\"'([{“‘«‹"

// abbreviationKind is what an abbreviation expects after its period, which decides whether that period can end a
// sentence. Before a lower-case word no period ends one; the kinds differ before a number or a capital.
type abbreviationKind int

const (
	notAbbreviation abbreviationKind = iota
	// expectsName: titles and place prefixes that a name follows ("Dr. Smith", "Mt. Everest", "St. Louis"), and words
	// that more of the sentence always follows ("e.g.", "vs.", "approx.", "Dept. of"): never a sentence end.
	expectsName
	// expectsLabel: words that a number or label follows ("No. 5", "Apt. 4B", "Vol. II", "Sept. 11"): no sentence end
	// before one, but an end before a capitalised word ("The answer was no. Then ...").
	expectsLabel
	// company: "Co.", "Inc.", "Ltd.": no end before another company word ("Acme Co. Ltd."), an end before other
	// capitalised words ("Apple Inc. Announced ...").
	company
	// street: "Ave.", "Blvd.", "St." after a number: no end before an address word ("Fifth Ave. NW", "5th St.
	// Suite 5"), an end before other capitalised words.
	street
	// nameOrStreet: "St." and "Dr." after a capitalised word, which may be a street's name ("Baker St.", "Oak Dr.") or
	// not ("In St. Louis", "On Monday Dr. Smith"): a capitalised word after them is a name ("Bury St. Edmunds"), and
	// only a word that usually starts a sentence ends one ("Baker St. It is famous", "Oak Dr. The house").
	nameOrStreet
	// trailing: words that often end a sentence ("etc.", "a.m.", units after a number): a capitalised word after them
	// starts a new sentence.
	trailing
	// academicDegree: "B.A.", "Ph.D.", "M.D.", which end sentences as often as they come before a name or a noun: like
	// nameOrStreet, only a word that usually starts a sentence ends one ("He earned a B.A. He then left"), while other
	// capitalised words continue it ("a B.A. Program", "M.D. Anderson").
	academicDegree
)

// abbreviationKinds classifies abbreviations by their lower-case form without the final period. "St" and "Ft"
// depend on the word before them (abbreviationKindOf).
var abbreviationKinds = func() map[string]abbreviationKind {
	m := map[string]abbreviationKind{}
	add := func(kind abbreviationKind, words ...string) {
		for _, w := range words {
			m[w] = kind
		}
	}
	add(expectsName, "mr", "mrs", "ms", "mx", "dr", "prof", "st", "mt", "ft", "gen", "col", "capt", "cpt", "lt", "sgt",
		"cmdr", "gov", "sen", "rep", "rev", "hon", "pres", "fr", "sr", "jr", "maj", "adm", "brig", "cpl", "pvt", "lieut",
		"supt", "insp", "det", "messrs", "drs", "mme", "mlle", "sgts", "rt", "mtn", "pt",
		"vs", "v", "approx", "cf", "e.g", "i.e", "viz", "esp", "incl", "dept", "univ", "assn", "intl", "natl", "govt",
		"u.s", "u.k", "u.s.a", "u.n", "e.u", "d.c")
	add(expectsLabel, "no", "nos", "vol", "vols", "ch", "chap", "fig", "figs", "p", "pp", "art", "eq", "apt", "ste",
		"rm", "bldg", "fl", "est", "ca", "ex", "pg", "pgs", "tel", "ext",
		"jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec")
	add(company, "co", "corp", "inc", "ltd", "llc", "plc", "llp", "lp", "pty", "bros", "cos")
	add(street, "ave", "blvd", "rd", "ln", "hwy", "pkwy", "sq", "ct", "pl", "ter", "cres")
	add(trailing, "etc", "al", "a.m", "p.m", "min", "mins", "max", "sec", "secs", "hr", "hrs", "yr", "yrs")
	add(academicDegree, "b.a", "m.a", "b.s", "m.s", "m.d", "j.d", "m.b.a", "b.f.a", "m.f.a", "d.d.s", "d.v.m", "r.n")
	for d := range dottedDegrees {
		m[d] = academicDegree // "ph.d", "b.sc", "ll.b"
	}
	return m
}()

// abbreviationKindOf classifies word (lower case, without its period) given the word before it: "St." is a street
// after a number ("5th St."); "St." and "Dr." after a capitalised word may be a street or a saint or doctor
// ("Main St.", "In St. Louis"); elsewhere they are a saint and a doctor. After a number "ft.", "pt." and other units
// are units.
func abbreviationKindOf(word, prev string) abbreviationKind {
	afterNumber := prev != "" && isDigit(firstRune(prev))
	// A capital says little on its own: "In", "Visit" and "Monday" are capitalised and name no street.
	afterCapital := isCapitalized(prev) && !strings.HasSuffix(prev, ".")
	switch word {
	case "st":
		if afterNumber {
			return street
		}
		if afterCapital {
			return nameOrStreet
		}
	case "dr":
		if afterCapital {
			return nameOrStreet
		}
	}
	if afterNumber && (unitAbbreviations[word] || word == "ft" || word == "pt") {
		return trailing // a unit: "6 ft.", "2 pt." (elsewhere "Ft. Worth", "Pt. Reyes")
	}
	return abbreviationKinds[word]
}

// unitAbbreviations are written with a period after a number ("3 in.", "5 oz."); like "etc." they may end a sentence.
var unitAbbreviations = setOf("in", "oz", "lb", "lbs", "yd", "yds", "mi", "tbsp", "tbs", "tsp", "qt", "gal", "doz", "sq",
	"cu", "fl")

// companyWords may follow a company abbreviation in the same name: "Co. Ltd.", "Bros. & Co.", "Pty. Ltd.".
var companyWords = setOf("co", "corp", "inc", "ltd", "llc", "plc", "llp", "lp", "pty", "&")

// addressWords may follow a street abbreviation in the same address: compass points and unit words.
var addressWords = setOf("n", "s", "e", "w", "ne", "nw", "se", "sw", "n.e", "n.w", "s.e", "s.w", "north", "south",
	"east", "west", "suite", "ste", "apt", "unit", "fl", "floor", "room", "rm", "bldg", "#")

// sentenceStarters are words (lower case) that often start a sentence and seldom follow "St." or "Dr." as a name.
// "No" and "Who" are left out for "Dr. No" and "Dr. Who".
var sentenceStarters = setOf("the", "a", "an", "this", "that", "these", "those", "there", "here", "he", "she", "it",
	"we", "they", "you", "i", "his", "her", "its", "our", "their", "my", "your", "and", "but", "so", "or", "yet",
	"then", "now", "if", "when", "while", "after", "before", "as", "although", "though", "because", "since", "once",
	"later", "soon", "today", "tomorrow", "yesterday", "tonight", "however", "meanwhile", "still", "also", "in", "on",
	"at", "from", "to", "for", "with", "by", "during", "what", "where", "why", "how", "which", "some", "many", "most",
	"all", "each", "every", "both", "is", "was", "are", "were", "do", "does", "did")

// startsSentence reports whether rest begins with a new sentence after "St.", "Dr." or a degree: an opening quote or
// bracket, or one of sentenceStarters that is not an initial ("Dr. A. Smith").
func startsSentence(rest string) bool {
	field := firstField(rest)
	if strings.ContainsRune(openers, firstRune(field)) {
		return true
	}
	word := strings.TrimRight(field, trailingPunct)
	if utf8.RuneCountInString(word) == 1 && strings.HasPrefix(field[len(word):], ".") {
		return false
	}
	return sentenceStarters[strings.ToLower(word)]
}

// startsLabel reports a word that a label abbreviation expects: a number ("5", "4B", "#3"), a Roman numeral of two
// letters or more ("II", "XIV"), a letter with digits ("A1") or a capital letter other than "A" and "I" ("Bldg. C").
func startsLabel(word string) bool {
	word = strings.TrimLeft(word, openers)
	r, size := utf8.DecodeRuneInString(word)
	if isDigit(r) || r == '#' {
		return true
	}
	core := strings.TrimRight(word, trailingPunct)
	switch {
	case len(core) >= 2 && strings.Trim(core, "IVXLC") == "":
		return true
	case len(core) == 1:
		return r >= 'B' && r <= 'Z' && r != 'I'
	}
	return unicode.IsLetter(r) && len(core) > size && isASCIIDigits(core[size:])
}

func setOf(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

// splitParagraph appends the sentences of one collapsed paragraph to out.
func splitParagraph(p string, out []string) []string {
	sentStart, tokStart, prevStart := 0, 0, 0
	for i := 0; i <= len(p); i++ {
		if i < len(p) && p[i] != ' ' {
			continue
		}
		prev := ""
		if tokStart > sentStart {
			prev = p[prevStart : tokStart-1]
		}
		if i < len(p) && endsSentence(p[tokStart:i], prev, p[i+1:]) {
			out = append(out, p[sentStart:i])
			sentStart = i + 1
		}
		prevStart, tokStart = tokStart, i+1
	}
	if sentStart < len(p) {
		out = append(out, p[sentStart:])
	}
	return out
}

// endsSentence decides whether the whitespace after token ends a sentence. prev is the token before it in the same
// sentence ("" for the first, which tells numbered list items, "1. Mix the flour", from numbers that end a
// sentence); rest is the text after the space.
func endsSentence(token, prev, rest string) bool {
	core := strings.TrimRight(token, closers+emphasisMarks) // "**Note.** Next", "*Really?* Yes"
	if core == "" {
		return false
	}
	next, _ := utf8.DecodeRuneInString(rest)
	nextLower := unicode.IsLower(next)
	last, _ := utf8.DecodeLastRuneInString(core)
	switch last {
	case '?', '!', '‽', '。', '！', '？':
		// '"Help!" he cried.' is one sentence.
		return !nextLower
	case '.':
	default:
		return false
	}
	if strings.HasSuffix(core, "..") || firstField(rest) == "." || core == "." && strings.HasSuffix(prev, ".") {
		return false // ellipsis ("...", ". . ."): a pause, not an end
	}
	if nextLower {
		return false
	}
	word := strings.TrimLeft(strings.TrimSuffix(core, "."), openers+emphasisMarks)
	if word == "" {
		return true
	}
	lw := strings.ToLower(word)
	nextWord := firstField(rest)
	kind := abbreviationKindOf(lw, strings.TrimLeft(prev, openers))
	if kind != notAbbreviation && isDigit(next) {
		return false // "Sept. 5", "approx. 5 kg", "5 ft. 3 in."
	}
	nextWord = strings.ToLower(strings.TrimRight(nextWord, trailingPunct))
	switch kind {
	case expectsName:
		return false
	case expectsLabel:
		return !startsLabel(firstField(rest))
	case company:
		return !companyWords[nextWord]
	case street:
		return !addressWords[nextWord]
	case nameOrStreet, academicDegree:
		return startsSentence(rest)
	case trailing:
		return true
	}
	switch {
	case utf8.RuneCountInString(word) == 1 && unicode.IsLetter(firstRune(word)):
		return false // an initial: "J. R. R. Tolkien"
	case isInitialism(word):
		return false // "U.S.", "N.Y."
	case prev == "" && isASCIIDigits(word):
		return false // numbered item: "1. Mix the flour."
	}
	return true
}

// firstField is s up to its first space.
func firstField(s string) string {
	if i := strings.IndexByte(s, ' '); i >= 0 {
		return s[:i]
	}
	return s
}

func firstRune(s string) rune {
	r, _ := utf8.DecodeRuneInString(s)
	return r
}

// isInitialism reports words like "U.S" or "a.k.a": single letters joined by periods.
func isInitialism(word string) bool {
	if !strings.Contains(word, ".") {
		return false
	}
	for _, part := range strings.Split(word, ".") {
		if utf8.RuneCountInString(part) != 1 || !unicode.IsLetter(firstRune(part)) {
			return false
		}
	}
	return true
}

func isASCIIDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
