package pipeline

import (
	"errors"
	"io"
	"iter"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/ttsgen/ttsgen/internal/textnorm"
	"github.com/ttsgen/ttsgen/internal/voices"
)

// WholeSentences reads r as it comes (a pipe from a program that writes as it goes, a person typing) and yields its
// text a run of whole sentences at a time, so that each can be spoken as soon as it is finished rather than when
// the input ends. A sentence is whole once the next one begins, once a line ends after it and its last mark ends a
// sentence (a line ending in "Dr." does not: an abbreviation goes on), at a blank line, or at the end of the input.
// The sentences are textnorm's, so the frontend splits each run into the same ones again.
func WholeSentences(r io.Reader) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		var pending string
		buf := make([]byte, 32<<10)
		for {
			n, err := r.Read(buf)
			pending += string(buf[:n])
			if done, rest := wholeSentences(pending, errors.Is(err, io.EOF)); done != "" {
				if !yield(done, nil) {
					return
				}
				pending = rest
			}
			switch {
			case errors.Is(err, io.EOF):
				return
			case err != nil:
				yield("", err)
				return
			}
		}
	}
}

// wholeSentences splits text into its whole sentences, joined by paragraph breaks (which keep them apart when they
// are split again), and the rest, which may go on.
func wholeSentences(text string, atEnd bool) (done, rest string) {
	if !atEnd && cutRune(text) {
		return "", text // a character cut between two reads: wait for its end
	}
	var open string // a block of phonemes not closed yet, which the sentence before it runs into
	if i := strings.LastIndex(text, "[["); !atEnd && i >= 0 && !strings.Contains(text[i:], "]]") {
		text, open = text[:i], text[i:]
	}
	sentences := textnorm.Sentences(text)
	last := len(sentences) - 1
	if last < 0 {
		return "", text + open
	}
	whole := last
	rest = lastSentence(text, sentences[last])
	if open == "" && (atEnd || endsParagraph(text) || endsLine(text) && endsSentence(rest)) {
		whole, rest = len(sentences), ""
	}
	if whole <= 0 {
		return "", text + open
	}
	return strings.Join(sentences[:whole], "\n\n"), rest + open
}

// lastSentence is the end of text that holds its last sentence, last (as Sentences gave it), with the space after it:
// the next read goes on from there. Its lines are kept as written, from the start of the line where it begins,
// because a line's Markdown marks tell where a sentence ends ("# Title" ends at its line's end, "* item" starts one)
// and a line is not whole before its end: Sentences' one line of text would lose them. Where the sentence begins
// inside a line, its words on that line come as Sentences gave them, then the lines after as written.
func lastSentence(text, last string) string {
	words := strings.Fields(last)
	after := 0 // how many of its words the lines from end on hold
	for end := len(text); end > 0; {
		start := strings.LastIndexAny(text[:end], "\r\n") + 1
		n := len(strings.Fields(strings.Join(textnorm.Sentences(text[start:end]), " ")))
		switch {
		case after+n == len(words):
			return text[start:]
		case after+n > len(words):
			if end == len(text) {
				return last + trailingSpace(text)
			}
			return strings.Join(words[:len(words)-after], " ") + text[end:]
		}
		after += n
		end = max(start-1, 0)
	}
	return last + trailingSpace(text)
}

// endsLine reports whether text ends with a line break (white space after it included).
func endsLine(text string) bool { return strings.ContainsAny(trailingSpace(text), "\n\r") }

// endsParagraph reports whether text ends with a blank line, which ends a sentence whatever its last mark (a
// heading's "Chapter 2").
func endsParagraph(text string) bool {
	return strings.Count(strings.ReplaceAll(trailingSpace(text), "\r", ""), "\n") >= 2
}

// endsSentence reports whether a sentence, the last so far (as written, with the line break after it), would end
// where it does if more text followed: it ends with a sentence's mark, not an abbreviation's, or it is a heading.
func endsSentence(s string) bool {
	return len(textnorm.Sentences(s+"Next")) == 2
}

func trailingSpace(text string) string {
	return text[len(strings.TrimRightFunc(text, unicode.IsSpace)):]
}

// cutRune reports whether text ends in the first bytes of a character whose last bytes have not come yet.
func cutRune(text string) bool {
	i := len(text) - 1
	for i > 0 && len(text)-i < utf8.UTFMax && !utf8.RuneStart(text[i]) {
		i--
	}
	return i >= 0 && !utf8.FullRuneInString(text[i:])
}

// StreamTexts yields the synthesis units of texts (WholeSentences' runs) in reading order, each run phonemized as it
// comes; planned (may be nil) hears how many sentences each run adds.
func (f *Frontend) StreamTexts(texts iter.Seq2[string, error], cfg *voices.Config, planned func(int)) iter.Seq2[Sentence, error] {
	return func(yield func(Sentence, error) bool) {
		for text, err := range texts {
			if err != nil {
				yield(Sentence{}, err)
				return
			}
			split := f.Split(text)
			if planned != nil {
				planned(split.Estimate())
			}
			for s, err := range f.Stream(split, cfg) {
				if !yield(s, err) || err != nil {
					return
				}
			}
		}
	}
}
