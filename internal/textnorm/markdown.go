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
