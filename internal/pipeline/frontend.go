package pipeline

import (
	"fmt"
	"iter"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/ttsgen/ttsgen/internal/phonemes"
	"github.com/ttsgen/ttsgen/internal/textnorm"
	"github.com/ttsgen/ttsgen/internal/voices"
)

// Defaults for splitting long sentences. Piper-style voices are trained on sentences of a few hundred phonemes;
// much longer inputs degrade (and cost quadratic attention in some models), so they are split, never truncated.
const (
	DefaultMaxPhonemes = 400
	// maxSentenceRunes splits text before phonemization: English runs at roughly one phoneme per character, so this
	// keeps most pieces under DefaultMaxPhonemes; the phoneme-level split below catches the rest.
	maxSentenceRunes = 300
)

// Sentence is one unit of synthesis: a sentence (or a piece of a long one) with its phonemes and model input ids.
type Sentence struct {
	Text     string  `json:"text"`
	Phonemes string  `json:"phonemes"`
	IDs      []int64 `json:"ids"`
	// Source is the sentence of the text as written that Text was normalised from (Text itself without
	// normalisation), for word timestamps that show the words as written.
	Source string `json:"-"`
}

// Frontend turns text into sentences for one voice's phoneme map. Safe for concurrent use.
type Frontend struct {
	Espeak      phonemes.Phonemizer // needed for phoneme_type "espeak" voices
	Normalize   bool                // expand numbers, dates, abbreviations... first (textnorm)
	MaxPhonemes int                 // split longer sentences (0 = DefaultMaxPhonemes)
	Warnf       func(format string, args ...any)

	warned sync.Map // phoneme -> struct{}: each missing phoneme is reported once per process
}

// Sentences splits text into synthesis units for the voice. Empty text gives no sentences and no error.
func (f *Frontend) Sentences(text string, cfg *voices.Config) ([]Sentence, error) {
	var out []Sentence
	for s, err := range f.Stream(f.Split(text), cfg) {
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// Text is a text as it goes to the phonemizer: normalised and split into sentences, or whole without
// normalisation (Frontend.Split).
type Text struct {
	pieces   []string
	sources  []string // the sentence each piece comes from, as written
	estimate int
}

// Estimate is how many sentences the text will give, found without phonemizing: exact unless espeak-ng splits a
// piece further or a piece has nothing to say. Without normalisation the text goes to espeak-ng whole, and the
// estimate is its count of sentences.
func (t Text) Estimate() int { return t.estimate }

// Split normalises text (if the frontend normalises) and splits it into what goes to the phonemizer: cheap, ~0.15
// s a megabyte, against seconds to phonemize it.
func (f *Frontend) Split(text string) Text {
	if !utf8.ValidString(text) {
		text = strings.ToValidUTF8(text, "\uFFFD")
	}
	t := Text{}
	t.pieces, t.sources = f.textPieces(text)
	t.estimate = len(t.pieces)
	if !f.Normalize {
		t.estimate = estimateText(text)
	}
	return t
}

// Stream yields the text's synthesis units for the voice in reading order, each as soon as its piece of the text
// is phonemized, so that a book's first sentences are spoken while the rest is still being phonemized. After an
// error it yields nothing more.
func (f *Frontend) Stream(text Text, cfg *voices.Config) iter.Seq2[Sentence, error] {
	return func(yield func(Sentence, error) bool) {
		for i, piece := range text.pieces {
			phonemeSentences, err := f.phonemize(piece, cfg)
			if err != nil {
				yield(Sentence{}, err)
				return
			}
			for _, ph := range phonemeSentences {
				for _, part := range splitPhonemes(ph, f.maxPhonemes()) {
					ids, missing := phonemes.IDs(part, cfg.PhonemeIDMap)
					f.warnMissing(missing)
					if len(ids) <= 3 { // only ^ _ $: nothing speakable (e.g. a stray quote)
						continue
					}
					if !yield(Sentence{Text: piece, Phonemes: part, IDs: ids, Source: text.sources[i]}, nil) {
						return
					}
				}
			}
		}
	}
}

// textPieces is what goes to the phonemizer, and the sentence of text each piece comes from. Without
// normalisation the text goes whole, exactly as Piper sends it to espeak-ng (espeak-ng finds the sentences), so
// phoneme ids match Piper's.
func (f *Frontend) textPieces(text string) (pieces, sources []string) {
	if !f.Normalize {
		if strings.TrimSpace(text) == "" {
			return nil, nil
		}
		return []string{text}, []string{text}
	}
	for _, s := range textnorm.Sentences(text) {
		for _, p := range textnorm.SplitLong(textnorm.Normalize(s), maxSentenceRunes) {
			pieces = append(pieces, p)
			sources = append(sources, s)
		}
	}
	return pieces, sources
}

func (f *Frontend) phonemize(text string, cfg *voices.Config) ([]string, error) {
	if cfg.PhonemeType == voices.PhonemeTypeText {
		return phonemes.Text(text), nil
	}
	if f.Espeak == nil {
		return nil, fmt.Errorf("phonemizing: espeak-ng is not initialised")
	}
	sents, err := f.Espeak.Phonemize(text, cfg.Espeak.Voice)
	if err != nil {
		return nil, fmt.Errorf("phonemizing with espeak-ng voice %q: %w", cfg.Espeak.Voice, err)
	}
	return sents, nil
}

func (f *Frontend) maxPhonemes() int {
	if f.MaxPhonemes > 0 {
		return f.MaxPhonemes
	}
	return DefaultMaxPhonemes
}

func (f *Frontend) warnMissing(missing []string) {
	for _, p := range missing {
		if _, seen := f.warned.LoadOrStore(p, struct{}{}); !seen && f.Warnf != nil {
			f.Warnf("the voice has no id for phoneme %q (%U); skipping it", p, []rune(p))
		}
	}
}

// splitPhonemes cuts a phoneme string longer than max phonemes (code points) into pieces, preferring the last
// clause mark (", " etc.) and then the last word gap before the limit; a single endless "word" is cut at the limit.
// Every phoneme is kept.
func splitPhonemes(ph string, max int) []string {
	runes := []rune(ph)
	var out []string
	for len(runes) > max {
		cut := lastBreak(runes[:max])
		out = append(out, strings.TrimSpace(string(runes[:cut])))
		runes = runes[cut:]
		for len(runes) > 0 && runes[0] == ' ' {
			runes = runes[1:]
		}
	}
	if s := strings.TrimSpace(string(runes)); s != "" {
		out = append(out, s)
	}
	return out
}

// lastBreak is where to cut runes: after the last clause mark followed by a space, else at the last space, else at
// the end. Never 0, so splitting always makes progress.
func lastBreak(runes []rune) int {
	space := -1
	for i := len(runes) - 1; i > 0; i-- {
		if runes[i] != ' ' {
			continue
		}
		if strings.ContainsRune(",;:", runes[i-1]) {
			return i + 1
		}
		if space < 0 {
			space = i + 1
		}
	}
	if space > 0 {
		return space
	}
	return len(runes)
}
