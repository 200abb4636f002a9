package phonemes

import (
	"regexp"
	"strings"
	"unicode"
)

// Part is a stretch of input text: words for the phonemizer, or a block of raw phonemes written
// "[[ həlˈoʊ ]]", which goes to the voice as written (piper1-gpl's syntax).
type Part struct {
	// Text is the words, or the block as written, brackets included.
	Text string
	// Raw marks a block of phonemes.
	Raw bool
	// Phonemes is a block's content without the white space around it: each code point is one
	// phoneme, taken as it is (no NFD, unlike espeak-ng's phonemes). Empty for words.
	Phonemes string
	// SpaceBefore and SpaceAfter say that the words before a block end, or the words after it start,
	// with a space; Piper then puts a space phoneme between them and the block.
	SpaceBefore, SpaceAfter bool
}

// rawBlock is piper1-gpl's pattern for a block of raw phonemes: "[[", the shortest run of
// characters other than a line break, "]]".
var rawBlock = regexp.MustCompile(`\[\[.*?\]\]`)

// SplitRaw cuts text into words and blocks of raw phonemes in reading order. Parts of words may be
// empty or only white space (between two blocks, or at either end), as in Piper, whose spacing rule
// looks at them; a text without blocks is one part.
func SplitRaw(text string) []Part {
	blocks := rawBlock.FindAllStringIndex(text, -1)
	if blocks == nil {
		return []Part{{Text: text}}
	}
	parts := make([]Part, 0, 2*len(blocks)+1)
	start := 0
	for _, b := range blocks {
		before, block := text[start:b[0]], text[b[0]:b[1]]
		start = b[1]
		parts = append(parts, Part{Text: before}, Part{
			Text:        block,
			Raw:         true,
			Phonemes:    strings.TrimFunc(block[2:len(block)-2], isPythonSpace),
			SpaceBefore: strings.HasSuffix(before, " "),
		})
	}
	parts = append(parts, Part{Text: text[start:]})
	for i := 1; i < len(parts); i += 2 {
		parts[i].SpaceAfter = strings.HasPrefix(parts[i+1].Text, " ")
	}
	return parts
}

// isPythonSpace is the white space Python's str.strip removes, which Piper applies to a block's
// content: Unicode white space and the four information separators U+001C..U+001F.
func isPythonSpace(r rune) bool { return unicode.IsSpace(r) || r >= 0x1C && r <= 0x1F }
