package textnorm

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// pauseEllipses rewrites each ellipsis of a sentence ("...", "…", ". . .", longer runs of periods) as the pause it
// stands for. espeak-ng gives an ellipsis between two words neither a pause nor a word boundary: "Wait... what",
// "Wait ... what", "Wait… what" and "Wait...what" were all read "wˈeɪtwˌʌt", one word. Listening to nothing but
// espeak-ng's phonemes:
//
//   - between words it becomes a comma ("Wait, what": "wˈeɪt, wˌʌt", a pause and two words), glued to the word
//     before it, with a space after it;
//   - at the end of the sentence, a full stop ("I do not know." ends with espeak-ng's falling "."; "know..." had
//     no mark at all);
//   - before any word (", and then" would start with a pause) it goes;
//   - next to a mark that already pauses ("Really?...", "Wait...?", "Yes..., no") it goes, as that mark does the
//     work.
//
// An ellipsis with something other than words, marks and brackets around it ("src/.../main.go", "f(...)") is left as
// it is.
func pauseEllipses(s string) string {
	if !strings.Contains(s, "..") && !strings.Contains(s, "…") && !strings.Contains(s, ". .") {
		return s
	}
	lastSpoken := strings.LastIndexFunc(s, isSpoken) // no words after an ellipsis past it: the sentence's end
	var b []byte
	spokenBefore := false // a word has been written to b
	for i := 0; i < len(s); {
		n := ellipsisAt(s, i)
		if n == 0 {
			r, size := utf8.DecodeRuneInString(s[i:])
			if isSpoken(r) {
				spokenBefore = true
			}
			b = append(b, s[i:i+size]...)
			i += size
			continue
		}
		end := i + n
		b = trimBlanks(b)
		before, _ := utf8.DecodeLastRune(b)
		after, _ := utf8.DecodeRuneInString(strings.TrimLeft(s[end:], " \t"))
		if !pauseNeighbour(before, true) || !pauseNeighbour(after, false) {
			if i > 0 && (s[i-1] == ' ' || s[i-1] == '\t') {
				b = append(b, ' ')
			}
			b = append(b, s[i:i+n]...) // a path, code: not a pause
			i += n
			continue
		}
		wordsAfter := lastSpoken >= end
		rest := strings.TrimLeft(s[end:], closers+" \t")
		pausedBefore := strings.ContainsRune(".,;:!?", before)
		pausedAfter := rest != "" && strings.ContainsRune(".,;:!?…", firstRune(rest))
		mark := ""
		switch {
		case !spokenBefore || pausedBefore || pausedAfter:
		case wordsAfter:
			mark = ","
		default:
			mark = "."
		}
		b = append(b, mark...)
		i = end
		last, _ := utf8.DecodeLastRune(b)
		if next, _ := utf8.DecodeRuneInString(s[i:]); wordsAfter && len(b) > 0 && !unicode.IsSpace(next) &&
			!strings.ContainsRune(closers+".,;:!?…", next) && !strings.ContainsRune(openers, last) {
			b = append(b, ' ') // "Wait...what": two words
		}
	}
	return string(b)
}

// ellipsisAt is the length of the ellipsis that s starts at i (0 if none): "…" (and runs of it), three periods or
// more, or three periods or more each followed by one space or tab (". . .").
func ellipsisAt(s string, i int) int {
	switch {
	case strings.HasPrefix(s[i:], "…"):
		j := i
		for strings.HasPrefix(s[j:], "…") {
			j += len("…")
		}
		return j - i
	case s[i] != '.':
		return 0
	}
	if i > 0 && s[i-1] == '.' {
		return 0 // inside a run that did not make an ellipsis ("..")
	}
	j := i
	for j < len(s) && s[j] == '.' {
		j++
	}
	if j-i >= 3 {
		return j - i
	}
	if j-i != 1 {
		return 0
	}
	// ". . .": single periods with a space or tab between them, three or more
	dots, end := 1, j
	for end+1 < len(s) && (s[end] == ' ' || s[end] == '\t') && s[end+1] == '.' && (end+2 == len(s) || s[end+2] != '.') {
		dots++
		end += 2
	}
	if dots >= 3 {
		return end - i
	}
	return 0
}

// pauseNeighbour reports whether r, the character before (or after) an ellipsis, lets it be a pause in a sentence:
// none, white space, a letter, digit or symbol, a mark or bracket, or emphasis marks ("*Wait...*"). Slashes and other
// marks of paths and code ("src/.../x", "f(...)" inside) do not.
func pauseNeighbour(r rune, before bool) bool {
	switch {
	case r == utf8.RuneError, unicode.IsSpace(r), isSpoken(r):
		return true
	case strings.ContainsRune(".,;:!?*_~`", r):
		return true
	case before:
		return strings.ContainsRune(closers, r)
	}
	return strings.ContainsRune(openers, r) || strings.ContainsRune(closers, r)
}

// trimBlanks drops the spaces and tabs at the end of b.
func trimBlanks(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t') {
		b = b[:len(b)-1]
	}
	return b
}
