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
	// Source is the sentence of the input this one was made from, as written (before normalisation): what word
	// timestamps name. Without normalisation it is Text (with the blocks of raw phonemes it joins).
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
// normalisation (Frontend.Split), with its blocks of raw phonemes ("[[ həlˈoʊ ]]") apart.
type Text struct {
	pieces   []phonemes.Part
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
	t.estimate = f.estimate(t.pieces)
	return t
}

// Stream yields the text's synthesis units for the voice in reading order, each as soon as its piece of the text
// is phonemized, so that a book's first sentences are spoken while the rest is still being phonemized. After an
// error it yields nothing more.
//
// Blocks of raw phonemes join sentences as in piper1-gpl: a block continues the sentence before it (or starts the
// first one), and the first sentence of the words after it continues that same sentence. A space phoneme separates
// a block from words that are separated from it by a space in the text.
func (f *Frontend) Stream(text Text, cfg *voices.Config) iter.Seq2[Sentence, error] {
	return func(yield func(Sentence, error) bool) {
		var (
			pending    Sentence // the sentence that a block or the words after a block may still continue
			hasPending bool
			joinNext   bool // a block came last: the next sentence continues pending
			spaceAfter bool // the last block had a space after it
		)
		emit := func() bool {
			if !hasPending {
				return true
			}
			hasPending = false
			return f.yieldSentence(pending, cfg, yield)
		}
		for i, piece := range text.pieces {
			if piece.Raw {
				if !hasPending {
					pending = Sentence{}
				}
				pending.Source = joinText(pending.Source, text.sources[i], piece.SpaceBefore)
				pending.Text = joinText(pending.Text, piece.Text, piece.SpaceBefore)
				pending.Phonemes += rawPhonemes(piece)
				hasPending, joinNext, spaceAfter = true, true, piece.SpaceAfter
			} else {
				sentences, err := f.sentences(piece.Text, cfg)
				if err != nil {
					yield(Sentence{}, err)
					return
				}
				for _, ph := range sentences {
					// A piece that espeak-ng reads as several sentences gives each its own text (and, where the
					// piece is its own source, its own source): not the whole piece's.
					own, source := piece.Text, text.sources[i]
					if len(sentences) > 1 && ph.Text != "" {
						if source == own {
							source = ph.Text
						}
						own = ph.Text
					}
					if joinNext {
						pending.Source = joinText(pending.Source, source, spaceAfter)
						pending.Text = joinText(pending.Text, own, spaceAfter)
						pending.Phonemes += ph.Phonemes
						joinNext = false
						continue
					}
					if !emit() {
						return
					}
					pending, hasPending = Sentence{Text: own, Phonemes: ph.Phonemes, Source: source}, true
				}
			}
			if nextRaw := i+1 < len(text.pieces) && text.pieces[i+1].Raw; !nextRaw && !joinNext && !emit() {
				return
			}
		}
		emit()
	}
}

// rawPhonemes is what a block of raw phonemes adds to its sentence: its phonemes, with a space phoneme before and
// after where the text has a space there.
func rawPhonemes(block phonemes.Part) string {
	ph := block.Phonemes
	if block.SpaceBefore {
		ph = " " + ph
	}
	if block.SpaceAfter {
		ph += " "
	}
	return ph
}

// joinText joins the texts of the pieces of one sentence, with a space between them where the input had one (the
// pieces of a normalised text have lost their outer spaces).
func joinText(a, b string, spaced bool) string {
	if spaced && a != "" && !strings.HasSuffix(a, " ") && !strings.HasPrefix(b, " ") {
		return a + " " + b
	}
	return a + b
}

// yieldSentence cuts a sentence that is too long, maps it to ids and yields the pieces that have something to say.
func (f *Frontend) yieldSentence(s Sentence, cfg *voices.Config, yield func(Sentence, error) bool) bool {
	for _, part := range splitPhonemes(s.Phonemes, f.maxPhonemes()) {
		ids, missing := phonemes.IDs(part, cfg.PhonemeIDMap)
		f.warnMissing(missing)
		if len(ids) <= 3 { // only ^ _ $: nothing speakable (e.g. a stray quote)
			continue
		}
		if !yield(Sentence{Text: s.Text, Phonemes: part, IDs: ids, Source: s.Source}, nil) {
			return false
		}
	}
	return true
}

// textPieces is what goes to the phonemizer, and the sentence of text each piece comes from: the words between
// blocks of raw phonemes, and the blocks. Without normalisation the words go as they are, exactly as Piper sends
// them to espeak-ng (espeak-ng finds the sentences), so phoneme ids match Piper's. textnorm never sees a block.
func (f *Frontend) textPieces(text string) (pieces []phonemes.Part, sources []string) {
	for _, part := range phonemes.SplitRaw(text) {
		switch {
		case part.Raw:
			pieces, sources = append(pieces, part), append(sources, part.Text)
		case !f.Normalize:
			if strings.TrimSpace(part.Text) != "" {
				pieces, sources = append(pieces, part), append(sources, part.Text)
			}
		default:
			for _, s := range textnorm.Sentences(part.Text) {
				for _, piece := range textnorm.SplitLong(textnorm.Normalize(s), maxSentenceRunes) {
					pieces, sources = append(pieces, phonemes.Part{Text: piece}), append(sources, s)
				}
			}
		}
	}
	return pieces, sources
}

// estimate counts the sentences pieces will give: one per normalised piece, espeak-ng's count for text that is not
// normalised, less the sentences that a block joins.
func (f *Frontend) estimate(pieces []phonemes.Part) int {
	n := 0
	afterBlock := false
	for _, piece := range pieces {
		if piece.Raw {
			n = max(n, 1)
			afterBlock = true
			continue
		}
		k := 1
		if !f.Normalize {
			k = estimateText(piece.Text)
		}
		if afterBlock && k > 0 {
			k--
			afterBlock = false
		}
		n += k
	}
	return n
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

// sentences is phonemize with each sentence's text, where espeak-ng says it ("" where not: for a voice of
// phoneme_type "text", or a phonemizer that is no phonemes.SentencePhonemizer).
func (f *Frontend) sentences(text string, cfg *voices.Config) ([]phonemes.Sentence, error) {
	if sp, ok := f.Espeak.(phonemes.SentencePhonemizer); ok && cfg.PhonemeType != voices.PhonemeTypeText {
		sents, err := sp.Sentences(text, cfg.Espeak.Voice)
		if err != nil {
			return nil, fmt.Errorf("phonemizing with espeak-ng voice %q: %w", cfg.Espeak.Voice, err)
		}
		return sents, nil
	}
	ph, err := f.phonemize(text, cfg)
	sents := make([]phonemes.Sentence, len(ph))
	for i, p := range ph {
		sents[i].Phonemes = p
	}
	return sents, err
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
// Every phoneme is kept; a string within the limit comes back unchanged, trailing space included.
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
	if strings.TrimSpace(string(runes)) != "" {
		out = append(out, string(runes)) // as it is: Piper ends a sentence whose last clause ends in , : ; with a space
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
