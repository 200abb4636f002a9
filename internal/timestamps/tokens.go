package timestamps

import (
	"strings"
	"unicode"

	"github.com/ttsgen/ttsgen/internal/textnorm"
)

// piece is a Text being spoken: its words, the tokens of the text as written that they come from, and how many
// of its words the units so far have spoken.
type piece struct {
	text, source string
	words        []pieceWord
	tokens       []token
	next         int // words before next are spoken
}

type pieceWord struct {
	spoken string
	token  int  // index in tokens
	raw    bool // written as phonemes, in a [[ ]] block: spoken is its phonemes
}

// token is a white-space-separated token of the source: where it lies, and how a word list shows it.
type token struct {
	start, end int // byte offsets in source
	text       string
}

// newPiece is text, normalised from source (or source itself), its words matched to source's tokens from token
// from on: a long sentence is phonemized in several texts, and each goes on where the one before it ended.
func newPiece(source, text string, from int) *piece {
	if source == "" {
		source = text
	}
	p := &piece{text: text, source: source, tokens: tokenize(source)}
	spoken, raw := wordsOf(text)
	p.words = make([]pieceWord, len(spoken))
	for i, w := range spoken {
		p.words[i].spoken, p.words[i].raw = w, raw[i]
	}
	if source == text {
		// Not normalised: word i is the i-th token that has something to say.
		i := 0
		for t, tok := range p.tokens {
			if i < len(spoken) && strings.TrimFunc(source[tok.start:tok.end], isEdgePunct) != "" { // as wordsOf has it
				p.words[i].token = t
				i++
			}
		}
		return p
	}
	if from >= len(p.tokens) {
		from = 0
	}
	for i, t := range matchTokens(spoken, p.tokens[from:], source) {
		p.words[i].token = from + t
	}
	return p
}

// span is the source text from word from's token to word to-1's, as written.
func (p *piece) span(from, to int) string {
	if from >= to {
		return ""
	}
	first, last := p.tokens[p.words[from].token], p.tokens[p.words[to-1].token]
	if last.end < first.start {
		last = first
	}
	return p.source[first.start:last.end]
}

// spokenWords are the words of a normalised text: its white-space-separated fields without the punctuation around
// them, leaving out fields of punctuation alone.
func spokenWords(text string) []string {
	words, _ := wordsOf(text)
	return words
}

// wordsOf is spokenWords, and which of them are in a block of phonemes ("[[ həlˈoʊ ]]"), said as written.
func wordsOf(text string) (words []string, raw []bool) {
	inBlock := false
	for _, f := range strings.Fields(text) {
		inBlock = inBlock || strings.HasPrefix(f, "[[")
		if w := strings.TrimFunc(f, isEdgePunct); w != "" {
			words, raw = append(words, w), append(raw, inBlock)
		}
		inBlock = inBlock && !strings.HasSuffix(f, "]]")
	}
	return words, raw
}

// isEdgePunct is what is trimmed off a word: punctuation and symbols, but for pictographs and other symbols that
// espeak-ng reads out by name ("❤" is "red heart", "🍕" "pizza"), which are words of their own.
func isEdgePunct(r rune) bool {
	return unicode.IsPunct(r) || (unicode.IsSymbol(r) && !unicode.Is(unicode.So, r))
}

func tokenize(source string) []token {
	var out []token
	start := -1
	for i, r := range source + " " {
		if unicode.IsSpace(r) {
			if start >= 0 {
				out = append(out, token{start: start, end: i})
				start = -1
			}
			continue
		}
		if start < 0 {
			start = i
		}
	}
	for i := range out {
		out[i].text = display(source[out[i].start:out[i].end])
	}
	return out
}

// closers are the quotes and brackets that close around a token.
const closers = "\"'”’»)]}"

// display is how a token shows as a word's text: without the quotes, brackets and clause marks around it (a full
// stop stays: "Dr." mid-sentence is an abbreviation; fullStop takes a sentence's last one off).
func display(tok string) string {
	t := strings.TrimLeft(tok, "\"'“‘«([{")
	t = strings.TrimRight(t, closers+",;:!?…")
	if t == "" {
		return tok
	}
	return t
}

// fullStop is a sentence's last word's text without the sentence's full stop, unless the stops are an
// abbreviation's ("U.S.A.", "e.g.").
func fullStop(text string) string {
	if trimmed := strings.TrimRight(text, "."); trimmed != "" && !strings.Contains(trimmed, ".") {
		return trimmed
	}
	return text
}

// key is how words and tokens compare: lower case, letters and digits only.
func key(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// matchTokens gives each normalised word the index of the source token it comes from. Words equal to a token (as
// keys) anchor the match, found as a longest common subsequence; the words between two anchors come from the
// tokens between them: one each when the counts agree, else as many as each token says on its own when
// normalised ("$1,205" gives six), else spread evenly.
func matchTokens(words []string, tokens []token, source string) []int {
	wk := make([]string, len(words))
	for i, w := range words {
		wk[i] = key(w)
	}
	tk := make([]string, len(tokens))
	for i, t := range tokens {
		tk[i] = key(source[t.start:t.end])
	}
	pairs := lcs(wk, tk)
	out := make([]int, len(words))
	prevW, prevT := -1, -1
	for _, pr := range append(pairs, [2]int{len(words), len(tokens)}) {
		spread(out, prevW+1, pr[0], prevT+1, pr[1], tokens, source)
		if pr[0] < len(words) {
			out[pr[0]] = pr[1]
		}
		prevW, prevT = pr[0], pr[1]
	}
	return out
}

// spread assigns words [w0, w1) to tokens [t0, t1), the gap between two anchors.
func spread(out []int, w0, w1, t0, t1 int, tokens []token, source string) {
	nw, nt := w1-w0, t1-t0
	switch {
	case nw <= 0:
		return
	case nt <= 0: // words with no token of their own (the normaliser added them): the token before, if any
		for i := w0; i < w1; i++ {
			out[i] = max(0, min(t0-1, len(tokens)-1))
		}
		return
	case nw == nt:
		for i := range nw {
			out[w0+i] = t0 + i
		}
		return
	}
	counts := make([]int, nt)
	total := 0
	for j := range nt {
		t := tokens[t0+j]
		counts[j] = max(1, len(spokenWords(textnorm.Normalize(source[t.start:t.end]))))
		total += counts[j]
	}
	i := w0
	for j := range nt {
		// Token j gets its share of the words: its own count when the counts add up, else in proportion.
		end := w0 + (prefix(counts, j+1)*nw+total/2)/total
		if total == nw {
			end = w0 + prefix(counts, j+1)
		}
		for ; i < min(end, w1); i++ {
			out[i] = t0 + j
		}
	}
	for ; i < w1; i++ {
		out[i] = t1 - 1
	}
}

func prefix(counts []int, n int) int {
	s := 0
	for _, c := range counts[:n] {
		s += c
	}
	return s
}

// lcs is a longest common subsequence of a and b (ignoring empty keys), as pairs of indices in order.
func lcs(a, b []string) [][2]int {
	n, m := len(a), len(b)
	// A table of the LCS lengths of suffixes: the texts here are sentences, a few hundred words at most.
	t := make([][]int32, n+1)
	for i := range t {
		t[i] = make([]int32, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] != "" && a[i] == b[j] {
				t[i][j] = t[i+1][j+1] + 1
			} else {
				t[i][j] = max(t[i+1][j], t[i][j+1])
			}
		}
	}
	var out [][2]int
	for i, j := 0, 0; i < n && j < m; {
		switch {
		case a[i] != "" && a[i] == b[j]:
			out = append(out, [2]int{i, j})
			i++
			j++
		case t[i+1][j] >= t[i][j+1]:
			i++
		default:
			j++
		}
	}
	return out
}
