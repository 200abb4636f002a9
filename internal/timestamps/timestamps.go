// Package timestamps turns a voice's own phoneme durations into word and sentence times, and writes them as JSON,
// SRT or WebVTT.
//
// A VITS voice decides how long each phoneme lasts (its duration predictor's rounded output, in frames of the
// decoder's hop), and the audio is exactly those frames: so a phoneme's time in the audio is the sum of the frames
// before it. What is left is to know which phonemes belong to which word. espeak-ng separates words by spaces in
// its output, but it also runs unstressed words into their neighbours ("in the" is one phoneme word, "ɪnðə"), so
// the words are found by aligning each word's own phonemes (espeak-ng on the word alone) with the sentence's, an
// edit-distance alignment that puts each phoneme with the word it came from. The normalised words ("one thousand
// two hundred five") are then mapped back to the tokens of the text as written ("1,205") by a diff of the two.
package timestamps

import (
	"errors"
	"fmt"
	"sync"
)

// Word is one spoken word: Word as spoken (after normalisation), Text the token of the original text it comes from
// (the same for most words; "1,205" for each of "one thousand two hundred five"), its times in seconds.
type Word struct {
	Word  string  `json:"word"`
	Text  string  `json:"text"`
	Start float64 `json:"start"`
	End   float64 `json:"end"`

	sentence  int  // which of the timeline's sentences it is in
	token     int  // which token of the text as written it comes from: the words a token is spoken as share it
	clauseEnd bool // the last word of a token that ends a clause ("fifth," of "5th,")
}

// Sentence is one spoken sentence: its text as written, from its first word's start to its last word's end.
type Sentence struct {
	Text  string  `json:"text"`
	Start float64 `json:"start"`
	End   float64 `json:"end"`
}

// Timeline is an output's words and sentences in reading order.
type Timeline struct {
	Words     []Word     `json:"words"`
	Sentences []Sentence `json:"sentences"`
}

// Unit is one synthesised sentence, as the pipeline made and wrote it.
type Unit struct {
	Source    string    // the sentence of the text as written that Text came from ("" = Text)
	Text      string    // what was phonemized: Source normalised (a piece of it, if it was long)
	Phonemes  string    // this unit's phonemes (a Text can give several units)
	IDs       []int64   // the model's input ids for Phonemes
	Durations []float32 // the voice's frames for each id (nil: the voice does not say)
	Start     int64     // where the unit's audio starts in the output, in samples
	Samples   int       // the unit's samples
}

// ErrNoDurations is the error for a voice that does not give its phoneme durations.
var ErrNoDurations = errors.New("the voice gives no phoneme durations (its graph has no duration Ceil node), so it cannot time words")

// Aligner times the words of one voice's sentences. It is safe for concurrent use: each output has its Builder.
type Aligner struct {
	idMap     map[string][]int64
	rate      int
	phonemize func(word string) (string, error)

	mu    sync.Mutex
	cache map[string][]rune // word -> its core phonemes
}

// NewAligner times sentences of a voice with phoneme map idMap at sampleRate. phonemize gives a word's phonemes
// when it is said alone (espeak-ng for espeak voices), to find each word in a sentence's phonemes.
func NewAligner(idMap map[string][]int64, sampleRate int, phonemize func(word string) (string, error)) *Aligner {
	return &Aligner{idMap: idMap, rate: sampleRate, phonemize: phonemize, cache: map[string][]rune{}}
}

// wordPhonemes is a word's core phonemes said alone, cached: a corpus says the same words many times.
func (a *Aligner) wordPhonemes(word string) ([]rune, error) {
	a.mu.Lock()
	p, ok := a.cache[word]
	a.mu.Unlock()
	if ok {
		return p, nil
	}
	ph, err := a.phonemize(word)
	if err != nil {
		return nil, fmt.Errorf("phonemizing the word %q alone: %w", word, err)
	}
	p = core(ph)
	a.mu.Lock()
	a.cache[word] = p
	a.mu.Unlock()
	return p, nil
}

// Builder collects one output's timeline, a unit at a time in reading order.
type Builder struct {
	a        *Aligner
	timeline Timeline
	piece    *piece // the Text being spoken, and how far its words have gone
}

// NewBuilder starts an output's timeline.
func (a *Aligner) NewBuilder() *Builder { return &Builder{a: a} }

// Add times the words of the next unit.
func (b *Builder) Add(u Unit) error {
	if u.Durations == nil {
		return ErrNoDurations
	}
	if b.piece == nil || b.piece.text != u.Text || b.piece.next == len(b.piece.words) {
		b.piece = newPiece(u.Source, u.Text, b.continuesAt(u))
	}
	words, err := b.a.timeWords(u, b.piece)
	if err != nil {
		return fmt.Errorf("timing the words of %q: %w", clip(u.Text, 60), err)
	}
	if len(words) == 0 {
		return nil
	}
	for i := range words {
		words[i].sentence = len(b.timeline.Sentences)
	}
	b.timeline.Words = append(b.timeline.Words, words...)
	b.timeline.Sentences = append(b.timeline.Sentences, Sentence{
		Text:  b.piece.span(b.piece.next-len(words), b.piece.next),
		Start: words[0].Start,
		End:   words[len(words)-1].End,
	})
	return nil
}

// continuesAt is the token of u's source that u's text starts at: after the last word spoken where u's text is the
// next of a long sentence's texts (the same source, normalised, and another text), else 0 (a sentence said again
// starts over).
func (b *Builder) continuesAt(u Unit) int {
	p := b.piece
	if p == nil || u.Source == "" || u.Source == u.Text || p.source != u.Source || p.text == u.Text || p.next == 0 {
		return 0
	}
	return p.words[p.next-1].token + 1
}

// Timeline is what was added so far.
func (b *Builder) Timeline() Timeline { return b.timeline }

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
