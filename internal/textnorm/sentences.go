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
//
// Invalid UTF-8 is dropped and control characters other than whitespace are removed.
// It runs in time linear in len(doc).
func Sentences(doc string) []string {
	var out []string
	for _, para := range paragraphs(clean(doc)) {
		out = splitParagraph(para, out)
	}
	return out
}

// clean drops invalid UTF-8 and control characters, keeping whitespace controls
// (tab, newline, carriage return) so that paragraph breaks survive.
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
		case r == '\u2028':
			b.WriteByte('\n')
		case r == '\u2029':
			b.WriteString("\n\n")
		case unicode.IsControl(r), r == '\uFEFF':
			// Dropped: controls and byte-order marks have no sound.
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
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

// strongAbbreviations end with a period but never end a sentence: titles before names, and
// words that are always followed by more of the same sentence. Keys are lower case, without the final period.
var strongAbbreviations = setOf(
	"mr", "mrs", "ms", "mx", "dr", "prof", "st", "mt", "ft", "gen", "col", "capt", "cpt", "lt", "sgt", "cmdr",
	"gov", "sen", "rep", "rev", "hon", "pres", "fr", "sr", "jr", "maj", "adm", "brig", "cpl", "pvt", "lieut", "supt",
	"insp", "det", "messrs", "drs", "mme", "mlle", "sgts", "rt",
	"vs", "v", "approx", "cf", "e.g", "i.e", "viz", "dept", "univ", "est", "ave", "blvd", "rd",
	"jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec",
	"u.s", "u.k", "u.s.a", "u.n", "e.u", "d.c", "ph.d", "b.a", "m.a", "b.sc", "m.sc",
)

// numberAbbreviations never end a sentence before a number ("No. 5", "p. 12") and are ordinary
// words elsewhere ("The answer was no. Then ...").
var numberAbbreviations = setOf("no", "nos", "vol", "vols", "ch", "chap", "fig", "figs", "p", "pp", "art", "eq")

// weakAbbreviations often end a sentence too ("... and so on, etc. Next ..."), so they only
// keep the sentence going when the next word starts in lower case (which any abbreviation does).
var weakAbbreviations = setOf("etc", "inc", "ltd", "co", "corp", "al", "bros", "a.m", "p.m", "min", "max", "sec", "hr", "hrs")

func setOf(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

// splitParagraph appends the sentences of one collapsed paragraph to out.
func splitParagraph(p string, out []string) []string {
	sentStart, tokStart := 0, 0
	for i := 0; i <= len(p); i++ {
		if i < len(p) && p[i] != ' ' {
			continue
		}
		if i < len(p) && endsSentence(p[tokStart:i], tokStart == sentStart, p[i+1:]) {
			out = append(out, p[sentStart:i])
			sentStart = i + 1
		}
		tokStart = i + 1
	}
	if sentStart < len(p) {
		out = append(out, p[sentStart:])
	}
	return out
}

// endsSentence decides whether the whitespace after token ends a sentence. firstInSentence
// tells numbered list items ("1. Mix the flour") from numbers that end a sentence; rest is the
// text after the space.
func endsSentence(token string, firstInSentence bool, rest string) bool {
	core := strings.TrimRight(token, closers)
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
	if strings.HasSuffix(core, "..") {
		return false // ellipsis: a pause, not an end
	}
	if nextLower {
		return false
	}
	word := strings.TrimLeft(strings.TrimSuffix(core, "."), openers)
	if word == "" {
		return true
	}
	lw := strings.ToLower(word)
	switch {
	case strongAbbreviations[lw]:
		return false
	case numberAbbreviations[lw]:
		return !isDigit(next)
	case weakAbbreviations[lw]:
		return true
	case utf8.RuneCountInString(word) == 1 && unicode.IsLetter(firstRune(word)):
		return false // an initial: "J. R. R. Tolkien"
	case isInitialism(word):
		return false // "U.S.", "N.Y."
	case firstInSentence && isASCIIDigits(word):
		return false // numbered item: "1. Mix the flour."
	}
	return true
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
