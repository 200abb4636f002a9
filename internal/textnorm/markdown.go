package textnorm

import (
	"strings"
	"unicode/utf8"
)

// Markdown's marks are not read: people pipe a language model's answers and Markdown files into ttsgen, and
// espeak-ng reads the marks by name ("This is *important*" was "asterisk important asterisk", a link's address was
// spelled letter by letter). The rules here are targeted rather than a Markdown parser (such as
// github.com/yuin/goldmark): a parser reads every text as Markdown, so plain text would change with it (a line
// "1984. Then" would be a list, four spaces a code block, "\*" an escape, "a*b*c" emphasis), it needs the whole
// document where a stream has only its first lines, and what it gives back is a tree without the text's own
// spacing. The rules below only take marks where Markdown puts them: at the edges of words, in "[text](url)", and
// (markdownLines) at the start of a line.

// emphasisMarks are the characters that Markdown's emphasis and code marks are made of.
const emphasisMarks = "*_~`"

// readLinks rewrites Markdown links "[text](url)" (also with a title, "[text](url "title")") as their text and
// images "![alt](url)" as their alt text, which may be nothing; a badge, an image inside a link, is its alt text.
// Brackets without an address after them ("[sic]", "a[1]") stay.
func readLinks(s string) string {
	if !strings.Contains(s, "](") {
		return s
	}
	type open struct {
		at    int // where "[" is in b
		image bool
	}
	var opens []open
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); {
		switch s[i] {
		case '[':
			opens = append(opens, open{len(b), len(b) > 0 && b[len(b)-1] == '!'})
		case ']':
			if len(opens) == 0 {
				break
			}
			o := opens[len(opens)-1]
			opens = opens[:len(opens)-1]
			end, ok := linkTarget(s, i+1)
			if !ok {
				break
			}
			start := o.at
			if o.image {
				start-- // the "!"
			}
			n := copy(b[start:], b[o.at+1:])
			b = b[:start+n]
			i = end
			continue
		}
		b = append(b, s[i])
		i++
	}
	return string(b)
}

// maxLinkTarget bounds the address and title that linkTarget reads, so that text full of "](" without an end is
// read in linear time.
const maxLinkTarget = 2048

// linkTarget reads a link's "(address "title")" at s[i:], and returns where it ends.
func linkTarget(s string, i int) (int, bool) {
	if i >= len(s) || s[i] != '(' {
		return 0, false
	}
	limit := min(len(s), i+maxLinkTarget)
	j := skipBlanks(s, i+1, limit)
	if j < limit && s[j] == '<' {
		k := strings.IndexByte(s[j:limit], '>')
		if k < 0 {
			return 0, false
		}
		j += k + 1
	} else {
		depth := 0
		// An address with brackets in it is rare enough to give up on: text full of "[a](b" is read quickly.
		for ; j < limit && s[j] != ' ' && s[j] != '\t' && s[j] != '[' && s[j] != ']'; j++ {
			if s[j] == '(' {
				depth++
			} else if s[j] == ')' {
				if depth == 0 {
					break
				}
				depth--
			}
		}
	}
	j = skipBlanks(s, j, limit)
	if j < limit && (s[j] == '"' || s[j] == '\'' || s[j] == '(') {
		closing := s[j]
		if closing == '(' {
			closing = ')'
		}
		k := strings.IndexByte(s[j+1:limit], closing)
		if k < 0 {
			return 0, false
		}
		j = skipBlanks(s, j+1+k+1, limit)
	}
	if j < limit && s[j] == ')' {
		return j + 1, true
	}
	return 0, false
}

func skipBlanks(s string, i, limit int) int {
	for i < limit && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	return i
}

// unmarkWords drops the emphasis and code marks at the edges of the words of s: "*x*", "**x**", "***x***", "_x_",
// "__x__", "~~x~~" and "`x`" are read as x, and so are phrases ("*this is it*"), since the marks go where a word
// starts or ends. Marks inside a word ("a*b", "snake_case_name", "src/_next/") or alone ("5 * 3", "a * b", "***")
// stay: there they are not markup. A single "~" is "about" ("~5"), so only "~~" goes.
func unmarkWords(s string) string {
	if !strings.ContainsAny(s, emphasisMarks) {
		return s
	}
	fields := strings.Fields(s)
	changed := false
	for k, f := range fields {
		if g := unmarkWord(f); g != f {
			fields[k], changed = g, true
		}
	}
	if !changed {
		return s
	}
	return strings.Join(fields, " ")
}

// unmarkWord drops the emphasis and code marks before and after the letters of one word, keeping the quotes,
// brackets and punctuation around them: `("**x**")` is `("x")`, "**Note:**" is "Note:".
func unmarkWord(f string) string {
	if !strings.ContainsAny(f, emphasisMarks) || !strings.ContainsFunc(f, isSpoken) {
		return f
	}
	var lead, trail []byte
	i, j := 0, len(f)
	for i < j {
		if n := markRun(f[i:j], true); n > 0 {
			i += n
			continue
		}
		r := firstRune(f[i:j])
		if !strings.ContainsRune(openers, r) {
			break
		}
		lead = append(lead, string(r)...)
		i += len(string(r))
	}
	for j > i {
		if n := markRun(f[i:j], false); n > 0 {
			j -= n
			continue
		}
		r := lastRuneOf(f[i:j])
		if !strings.ContainsRune(trailingPunct, r) {
			break
		}
		trail = append([]byte(string(r)), trail...)
		j -= len(string(r))
	}
	if len(lead)+len(trail)+j-i == len(f) {
		return f
	}
	return string(lead) + f[i:j] + string(trail)
}

// markRun is the length of the emphasis or code mark that s starts with (or, !atStart, ends with): a run of "*",
// "_" or "`", or exactly "~~"; 0 if none.
func markRun(s string, atStart bool) int {
	if s == "" {
		return 0
	}
	c := s[0]
	if !atStart {
		c = s[len(s)-1]
	}
	if !strings.ContainsRune(emphasisMarks, rune(c)) {
		return 0
	}
	n := 0
	for n < len(s) && (atStart && s[n] == c || !atStart && s[len(s)-1-n] == c) {
		n++
	}
	if c == '~' && n != 2 {
		return 0
	}
	return n
}

func lastRuneOf(s string) rune {
	r, _ := utf8.DecodeLastRuneInString(s)
	return r
}

// lineKind is what a line's Markdown marks make of it.
type lineKind int

const (
	plainLine   lineKind = iota
	breakLine            // no words, only marks (a code fence, a rule, a heading's or quote's marks alone): a paragraph break
	headingLine          // a heading: a sentence of its own
	itemLine             // a bullet item: starts a sentence
	orderedLine          // a numbered item ("1. ", "2) "): starts a sentence where it starts a list or follows an item
)

// markdownLines reads the marks that Markdown puts at the start of a line, before paragraphs collapses the lines:
// a heading's "#"s ("# Title", "## Title ##"), a bullet ("* ", "- ", "+ ", with a task box "[ ]" or "[x]"), a
// quote's ">"s ("> ", "> > "), a code fence ("```", "```go", "~~~") and a rule or a heading's underline ("---",
// "* * *", "===") are not read. Each line is read on its own (a line inside a code block too), so that a stream's
// lines are read alike whatever came before them.
//
// A heading is a sentence of its own: it has no full stop, and its paragraph's next line is not part of it ("#
// Title\nBody text." was read "Title Body text."). A fence, a rule, and a heading or quote line without words end a
// paragraph. A bullet item starts a sentence: items are mostly words without a full stop ("- milk\n- eggs"), which
// ran together into one sentence ("milk eggs") without a pause between them; as sentences they are read with the
// pause between sentences. A line after an item that has no mark of its own goes on the item (Markdown's lazy
// continuation: an item wrapped over lines). A numbered item starts a sentence too where it is "1." or follows an
// item, as Markdown lets a list interrupt a paragraph only with "1.": a wrapped line that begins "1984. Then" stays in
// its sentence. Its number is read ("1. First" is "one. First"), as before.
func markdownLines(s string) string {
	if !hasLineMarks(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + len(s)/8)
	inList := false
	for i := 0; ; {
		j := strings.IndexAny(s[i:], "\r\n")
		if j < 0 {
			j = len(s) - i
		}
		text, kind, number := readLine(s[i : i+j])
		switch kind {
		case plainLine:
			b.WriteString(text)
			if strings.TrimSpace(text) == "" {
				inList = false
			}
		case breakLine:
			inList = false
		case headingLine:
			b.WriteString("\n" + text + "\n")
			inList = false
		case itemLine:
			b.WriteString("\n" + text)
			inList = true
		case orderedLine:
			if number == "1" || inList {
				b.WriteByte('\n')
			}
			b.WriteString(text)
			inList = true
		}
		i += j
		if i >= len(s) {
			break
		}
		if s[i] == '\r' && i+1 < len(s) && s[i+1] == '\n' {
			i++
		}
		i++
		b.WriteByte('\n')
	}
	return b.String()
}

// hasLineMarks reports whether a line of s may start with a Markdown mark (after its indentation), so that plain
// text is passed over without a copy.
func hasLineMarks(s string) bool {
	for i := 0; i < len(s); {
		j := i
		for j < len(s) && (s[j] == ' ' || s[j] == '\t') {
			j++
		}
		if j < len(s) && (strings.IndexByte("#*-+>`~_=", s[j]) >= 0 || isDigit(rune(s[j]))) {
			return true
		}
		k := strings.IndexAny(s[j:], "\r\n")
		if k < 0 {
			return false
		}
		i = j + k + 1
	}
	return false
}

// readLine reads one line's Markdown marks: the text to read and what kind of line it is (with an ordered item's
// number).
func readLine(line string) (text string, kind lineKind, number string) {
	rest := strings.TrimLeft(line, " \t")
	quoted := false
	if q := quoteMarks(rest); q > 0 {
		rest, quoted = rest[q:], true
		if rest == "" {
			return "", breakLine, ""
		}
	}
	switch {
	case rest == "":
	case isFence(rest) || isRule(rest):
		return "", breakLine, ""
	case rest[0] == '#':
		n := 0
		for n < len(rest) && rest[n] == '#' {
			n++
		}
		if n <= 6 && (n == len(rest) || rest[n] == ' ' || rest[n] == '\t') {
			title := strings.TrimSpace(rest[n:])
			if closed := strings.TrimRight(title, "#"); closed == "" || strings.HasSuffix(closed, " ") || strings.HasSuffix(closed, "\t") {
				title = strings.TrimSpace(closed) // "## Title ##"
			}
			if title == "" {
				return "", breakLine, ""
			}
			return title, headingLine, ""
		}
	case strings.IndexByte("*-+", rest[0]) >= 0 && len(rest) > 1 && (rest[1] == ' ' || rest[1] == '\t'):
		item := strings.TrimLeft(rest[2:], " \t")
		for _, box := range []string{"[ ]", "[x]", "[X]"} {
			if after, ok := strings.CutPrefix(item, box); ok && (after == "" || after[0] == ' ' || after[0] == '\t') {
				item = strings.TrimLeft(after, " \t")
			}
		}
		if strings.TrimSpace(item) == "" {
			return "", breakLine, ""
		}
		return item, itemLine, ""
	case isDigit(rune(rest[0])):
		n := 0
		for n < len(rest) && isDigit(rune(rest[n])) {
			n++
		}
		if n <= 9 && n+1 < len(rest) && (rest[n] == '.' || rest[n] == ')') && (rest[n+1] == ' ' || rest[n+1] == '\t') {
			return rest, orderedLine, strings.TrimLeft(rest[:n], "0")
		}
	}
	if quoted {
		return rest, plainLine, ""
	}
	return line, plainLine, ""
}

// quoteMarks is the length of the quote marks that line starts with, the spaces after them included: one ">" or more,
// the last followed by a space or tab or the line's end ("> ", "> > ", ">> ", ">"). ">5%" starts no quote.
func quoteMarks(line string) int {
	k, last := 0, -1
	for k < len(line) && (line[k] == '>' || line[k] == ' ' || line[k] == '\t') {
		if line[k] == '>' {
			last = k
		}
		k++
	}
	if last < 0 || last+1 < len(line) && line[last+1] != ' ' && line[last+1] != '\t' {
		return 0
	}
	return k
}

// isFence reports a code fence: "```" or "~~~" (or longer), with an optional one-word language ("```go"). A line
// with more after its marks ("~~~ Fin ~~~", "```code```") is none.
func isFence(line string) bool {
	if !strings.HasPrefix(line, "```") && !strings.HasPrefix(line, "~~~") {
		return false
	}
	info := strings.TrimSpace(strings.TrimLeft(line, line[:1]))
	return !strings.ContainsAny(info, " \t`~")
}

// isRule reports a rule between sections or a heading's underline: one of "*", "-", "_", "=" three times or more,
// with nothing else but blanks ("***", "---", "* * *", "=====").
func isRule(line string) bool {
	c := line[0]
	if strings.IndexByte("*-_=", c) < 0 {
		return false
	}
	n := 0
	for i := 0; i < len(line); i++ {
		switch line[i] {
		case c:
			n++
		case ' ', '\t':
		default:
			return false
		}
	}
	return n >= 3
}
