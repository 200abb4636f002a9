package timestamps

import (
	"fmt"
	"math"
	"strings"
	"unicode"
)

// Piper's reserved phoneme map keys (internal/phonemes): ids are ^ _ p1 _ p2 _ ... pn _ $.
const (
	padKey = "_"
	bosKey = "^"
	eosKey = "$"
)

// isCore says whether a phoneme carries a word's sound: not a stress mark, a space or punctuation.
func isCore(r rune) bool {
	return r != 'ˈ' && r != 'ˌ' && !unicode.IsSpace(r) && !unicode.IsPunct(r)
}

// core is a phoneme string's core phonemes.
func core(ph string) []rune {
	var out []rune
	for _, r := range ph {
		if isCore(r) {
			out = append(out, r)
		}
	}
	return out
}

// phone is one core phoneme of a unit: where its ids lie, and which space-separated phoneme word it is in.
type phone struct {
	r          rune
	start, end int // its ids and the pad after them, in the unit's ids
	// lead is where a word starting with it starts: the space before it when one comes right before (stress marks
	// and pads between), else start. A VITS voice makes a word's first sound in part during the space and pad
	// tokens before it (they have frames of their own, and the sound has to start somewhere): the word's onset is
	// there, not at its first phoneme's own frames.
	lead  int
	group int // counts the spaces before it
}

// phones lays the unit's phonemes over its ids as internal/phonemes.IDs builds them, checking that they agree.
func (a *Aligner) phones(u Unit) ([]phone, error) {
	pos := len(a.idMap[bosKey]) + len(a.idMap[padKey])
	pad := len(a.idMap[padKey])
	group, space := 0, -1
	var out []phone
	for _, r := range u.Phonemes {
		ids, ok := a.idMap[string(r)]
		if !ok {
			continue // the voice has no id for it: skipped, as in the ids
		}
		switch {
		case r == ' ':
			group++
			space = pos
		case isCore(r):
			lead := pos
			if space >= 0 {
				lead = space
			}
			out = append(out, phone{r: r, start: pos, end: pos + len(ids) + pad, lead: lead, group: group})
			space = -1
		case unicode.IsPunct(r):
			space = -1
		}
		pos += len(ids) + pad
	}
	if pos += len(a.idMap[eosKey]); pos != len(u.IDs) {
		return nil, fmt.Errorf("its %d phoneme ids do not follow its phonemes %q (%d ids)", len(u.IDs), u.Phonemes, pos)
	}
	return out, nil
}

// clock turns id positions of a unit into seconds in the output: an id starts after the frames of those before
// it, and a frame is the unit's samples over its frames.
type clock struct {
	frames  []float64 // frames before id i; frames[len] = all
	perUnit float64   // samples per frame
	start   int64
	rate    float64
}

func newClock(u Unit, rate int) (clock, error) {
	if len(u.Durations) < len(u.IDs) {
		return clock{}, fmt.Errorf("%d durations for %d phoneme ids", len(u.Durations), len(u.IDs))
	}
	c := clock{frames: make([]float64, len(u.IDs)+1), start: u.Start, rate: float64(rate)}
	for i, d := range u.Durations[:len(u.IDs)] {
		c.frames[i+1] = c.frames[i] + float64(d)
	}
	if total := c.frames[len(u.IDs)]; total > 0 {
		c.perUnit = float64(u.Samples) / math.Round(total)
	}
	return c, nil
}

func (c clock) at(id int) float64 {
	return math.Round((float64(c.start)+c.frames[id]*c.perUnit)/c.rate*1000) / 1000
}

// timeWords times the words of piece p that unit u speaks, from p's next word on, and moves p past them.
func (a *Aligner) timeWords(u Unit, p *piece) ([]Word, error) {
	phones, err := a.phones(u)
	if err != nil {
		return nil, err
	}
	clk, err := newClock(u, a.rate)
	if err != nil {
		return nil, err
	}
	// The candidate words: enough of the piece's next ones to cover the unit's phonemes twice over.
	var q []rune    // their phonemes said alone, end to end
	var qWord []int // the candidate each rune of q belongs to
	bounds := []int{0}
	for w := p.next; w < len(p.words) && (len(q) < 2*len(phones)+8 || w == p.next); w++ {
		ph, err := a.wordPhonemes(p.words[w].spoken)
		if p.words[w].raw {
			ph, err = core(p.words[w].spoken), nil // phonemes as written: espeak-ng would read them as letters
		}
		if err != nil {
			return nil, err
		}
		for _, r := range ph {
			q = append(q, r)
			qWord = append(qWord, w-p.next)
		}
		bounds = append(bounds, len(q))
	}
	if len(bounds) == 1 {
		return nil, nil
	}
	spoken, aligned := align(q, phones, bounds)
	owner := owners(aligned, qWord, phones)
	words := make([]Word, spoken)
	for i := range words {
		pw := p.words[p.next+i]
		tok := p.tokens[pw.token]
		lastOfToken := p.next+i+1 == len(p.words) || p.words[p.next+i+1].token != pw.token
		raw := strings.TrimRight(p.source[tok.start:tok.end], closers)
		words[i] = Word{Word: pw.spoken, Text: tok.text, token: pw.token,
			clauseEnd: lastOfToken && raw != "" && strings.ContainsAny(raw[len(raw)-1:], ",;:")}
	}
	// The unit is a sentence: its last token's full stop is the sentence's.
	if spoken > 0 {
		lastToken := p.words[p.next+spoken-1].token
		for i := range words {
			if p.words[p.next+i].token == lastToken {
				words[i].Text = fullStop(words[i].Text)
			}
		}
	}
	first := make([]int, spoken)
	last := make([]int, spoken)
	for i := range first {
		first[i], last[i] = -1, -1
	}
	for j, w := range owner {
		if w < 0 || w >= spoken {
			continue
		}
		if first[w] < 0 {
			first[w] = j
		}
		last[w] = j
	}
	// A word with no phoneme of its own (espeak-ng said nothing for it) sits where the one before it ends.
	at := 0.0
	if len(phones) > 0 {
		at = clk.at(phones[0].start)
	}
	for i := range words {
		if first[i] < 0 {
			words[i].Start, words[i].End = at, at
			continue
		}
		words[i].Start = clk.at(phones[first[i]].lead)
		words[i].End = clk.at(phones[last[i]].end)
		at = words[i].End
	}
	p.next += spoken
	return words, nil
}

// align is an edit-distance alignment of the candidate words' phonemes q (bounds: where each word ends in q)
// against the unit's phones, all of which must be used, while q may end early at a word's end: it returns how many
// words the unit speaks and, for each phone, the rune of q it is aligned with (-1 for none).
func align(q []rune, phones []phone, bounds []int) (spoken int, aligned []int) {
	n, m := len(q), len(phones)
	d := make([][]int32, n+1)
	for i := range d {
		d[i] = make([]int32, m+1)
		d[i][0] = int32(i)
	}
	for j := 1; j <= m; j++ {
		d[0][j] = int32(j)
	}
	for i := 1; i <= n; i++ {
		for j := 1; j <= m; j++ {
			sub := d[i-1][j-1]
			if q[i-1] != phones[j-1].r {
				sub++
			}
			d[i][j] = min(sub, d[i-1][j]+1, d[i][j-1]+1)
		}
	}
	// The end: the word boundary that costs least, the later one of equals (a word espeak-ng says nothing for is
	// taken with the one before it).
	best := 0
	for w, b := range bounds {
		if d[b][m] <= d[bounds[best]][m] {
			best = w
		}
	}
	aligned = make([]int, m)
	for i, j := bounds[best], m; j > 0; {
		switch {
		case i > 0 && d[i][j] == d[i-1][j-1]+cost(q[i-1], phones[j-1].r):
			aligned[j-1] = i - 1
			i, j = i-1, j-1
		case i > 0 && d[i][j] == d[i-1][j]+1:
			i--
		default:
			aligned[j-1] = -1
			j--
		}
	}
	return best, aligned
}

func cost(a, b rune) int32 {
	if a == b {
		return 0
	}
	return 1
}

// owners gives each phone the candidate word it belongs to: the word of the rune it is aligned with, else (a
// phoneme the word alone does not have) the word of its nearest aligned neighbour in the same phoneme word,
// before it first.
func owners(aligned, qWord []int, phones []phone) []int {
	owner := make([]int, len(phones))
	for j, i := range aligned {
		owner[j] = -1
		if i >= 0 {
			owner[j] = qWord[i]
		}
	}
	fill := make([]int, len(owner))
	copy(fill, owner)
	for j := range fill {
		if fill[j] >= 0 {
			continue
		}
		for k := j - 1; k >= 0 && phones[k].group == phones[j].group; k-- {
			if owner[k] >= 0 {
				fill[j] = owner[k]
				break
			}
		}
		for k := j + 1; fill[j] < 0 && k < len(owner) && phones[k].group == phones[j].group; k++ {
			if owner[k] >= 0 {
				fill[j] = owner[k]
			}
		}
	}
	return fill
}
