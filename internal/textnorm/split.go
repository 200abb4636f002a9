package textnorm

import (
	"strings"
	"unicode/utf8"
)

// SplitLong splits a sentence longer than maxRunes into pieces of at most maxRunes, preferring clause boundaries
// (; : , — –, then " and "/" but " etc.), then word boundaries; a single word longer than maxRunes is cut at maxRunes
// only as a last resort. Joining the pieces with single spaces gives back the sentence's words exactly: text is never
// dropped or truncated. Shorter sentences come back as a one-element slice.
//
// Whitespace runs count as one space. A sentence with no words gives nil; maxRunes < 1 returns the
// sentence's words joined as one piece (there is no way to honour such a limit). It runs in time
// linear in len(sentence).
func SplitLong(sentence string, maxRunes int) []string {
	words := strings.Fields(sentence)
	if len(words) == 0 {
		return nil
	}
	lengths := make([]int, len(words))
	total := len(words) - 1
	for i, w := range words {
		lengths[i] = utf8.RuneCountInString(w)
		total += lengths[i]
	}
	if maxRunes < 1 || total <= maxRunes {
		return []string{strings.Join(words, " ")}
	}

	var pieces []string
	// The current piece is words[start:end]; width is its length in runes with single spaces.
	start, width := 0, 0
	for end := 0; end < len(words); end++ {
		if lengths[end] > maxRunes {
			if end > start {
				pieces = append(pieces, strings.Join(words[start:end], " "))
			}
			pieces = appendCutWord(pieces, words[end], maxRunes)
			start, width = end+1, 0
			continue
		}
		added := lengths[end]
		if end > start {
			added++ // the space before it
		}
		for width+added > maxRunes {
			cut := bestBreak(words, lengths, start, end, maxRunes)
			pieces = append(pieces, strings.Join(words[start:cut], " "))
			start = cut
			width = widthOf(lengths, start, end)
			added = lengths[end]
			if end > start {
				added++
			}
		}
		width += added
	}
	if start < len(words) {
		pieces = append(pieces, strings.Join(words[start:], " "))
	}
	return pieces
}

// widthOf is the length in runes of words[start:end] joined by single spaces.
func widthOf(lengths []int, start, end int) int {
	if end <= start {
		return 0
	}
	w := end - start - 1
	for _, n := range lengths[start:end] {
		w += n
	}
	return w
}

// Break strengths, strongest first: a break after a word ending a sentence, after a strong
// clause mark, after a comma, before a conjunction, anywhere between words.
const (
	breakSentence = iota
	breakClause
	breakComma
	breakConjunction
	breakWord
)

// conjunctions start a new clause, so breaking before them sounds natural.
var conjunctions = setOf("and", "but", "or", "nor", "so", "yet", "because", "although", "though", "while",
	"whereas", "which", "who", "whom", "whose", "where", "when", "if", "unless", "until", "since", "that", "then")

// breakStrength rates the boundary between words[i-1] and words[i].
func breakStrength(words []string, i int) int {
	prev, next := words[i-1], words[i]
	prevCore := strings.TrimRight(prev, closers)
	last, _ := utf8.DecodeLastRuneInString(prevCore)
	first, _ := utf8.DecodeRuneInString(next)
	switch {
	case last == '?' || last == '!' || last == '.' && utf8.RuneCountInString(prevCore) > 2:
		// A period after one letter is an initial or an abbreviation ("J.", "s."), not a sentence end.
		return breakSentence
	case last == ';' || last == ':' || last == '—' || last == '–' || first == '—' || first == '–' ||
		prev == "-" || next == "-":
		return breakClause
	case last == ',':
		return breakComma
	case conjunctions[strings.ToLower(next)]:
		return breakConjunction
	}
	return breakWord
}

// bestBreak picks where to end the piece words[start:end] (end is the word that no longer
// fits): the strongest boundary, the latest among equals, that still leaves the piece at least a
// third of maxRunes long so that no piece is a stub. It returns an index in (start, end].
func bestBreak(words []string, lengths []int, start, end, maxRunes int) int {
	minWidth := maxRunes / 3
	best, bestStrength := end, breakWord+1
	width := lengths[start]
	for i := start + 1; i <= end; i++ {
		// width is now the width of words[start:i].
		if width >= minWidth {
			if s := breakStrength(words, i); s <= bestStrength {
				best, bestStrength = i, s
			}
		}
		if i < end {
			width += 1 + lengths[i]
		}
	}
	if end == len(words) || bestStrength > breakWord {
		return end
	}
	return best
}

// appendCutWord cuts a word longer than maxRunes into rune chunks of maxRunes.
func appendCutWord(pieces []string, word string, maxRunes int) []string {
	for word != "" {
		n, cut := 0, 0
		for cut < len(word) && n < maxRunes {
			_, size := utf8.DecodeRuneInString(word[cut:])
			cut += size
			n++
		}
		pieces = append(pieces, word[:cut])
		word = word[cut:]
	}
	return pieces
}
