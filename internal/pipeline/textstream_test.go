package pipeline

import (
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/ttsgen/ttsgen/internal/textnorm"
)

// chunks is a reader that hands out its strings one Read at a time, as a pipe from a writer that writes as it
// goes does; after each Read the test sees what WholeSentences has yielded so far.
type chunks struct {
	parts []string
	read  func(i int) // called before part i is read
}

func (c *chunks) Read(p []byte) (int, error) {
	if len(c.parts) == 0 {
		return 0, io.EOF
	}
	c.read(len(c.parts))
	n := copy(p, c.parts[0])
	if n < len(c.parts[0]) {
		c.parts[0] = c.parts[0][n:]
	} else {
		c.parts = c.parts[1:]
	}
	return n, nil
}

// Each sentence comes out as soon as it is whole, and not before: when the next begins, when a line ends after a
// sentence's mark (not an abbreviation's), at a blank line, at the end; a character cut between two reads and an
// open block of phonemes wait for their ends. Runs split again into the same sentences.
func TestWholeSentencesYieldsEachSentenceOnceItIsWhole(t *testing.T) {
	parts := []string{
		"Hello there. How",  // "Hello there." is whole: the next sentence has begun
		" are you?\n",       // a line ends after a question mark
		"I met Dr.\n",       // an abbreviation at a line's end: the sentence goes on
		"Smith today.\n",    //
		"Chapter 2\n\n",     // a heading, ended by the blank line
		"Caf\xc3",           // é cut in two
		"\xa9 time. Say [[", // a block of phonemes still open
		" həlˈoʊ ]] now",    // no end mark: waits for the end of the input
	}
	want := [][]string{ // what has come out when each part is read, and at the end
		nil, {"Hello there."}, {"How are you?"}, nil, {"I met Dr. Smith today."}, {"Chapter 2"}, nil,
		{"Café time."}, {"Say [[ həlˈoʊ ]] now"},
	}
	var got [][]string
	var since []string
	r := &chunks{parts: parts, read: func(int) { got = append(got, since); since = nil }}
	for text, err := range WholeSentences(r) {
		if err != nil {
			t.Fatal(err)
		}
		since = append(since, text)
	}
	got = append(got, since)
	for i := range max(len(got), len(want)) {
		var g, w []string
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		if strings.Join(g, "|") != strings.Join(w, "|") {
			t.Errorf("before part %d: got %q, want %q", i, g, w)
		}
	}
}

// A read error ends the texts with it.
func TestWholeSentencesSaysAReadError(t *testing.T) {
	boom := errors.New("boom")
	var texts []string
	var last error
	for text, err := range WholeSentences(io.MultiReader(strings.NewReader("One. Two"), errReader{boom})) {
		texts, last = append(texts, text), err
	}
	if !errors.Is(last, boom) || texts[0] != "One." {
		t.Errorf("texts %q, last error %v", texts, last)
	}
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// A stream of Markdown, however its reads cut it (a language model writes a few characters at a time), gives the
// sentences of the whole text: a line's marks ("# ", "* ") say where its sentence ends, so they must not be lost
// between two reads.
func TestWholeSentencesKeepMarkdownLines(t *testing.T) {
	doc := "Intro. A plan\n# Title\nBody text.\n* item one\n* item two\nand more\n> quoted\n> > nested\n" +
		"```go\nx := 1\n```\n1. first\n2. second\n## Part ##\nEnd"
	want := textnorm.Sentences(doc)
	for size := 1; size <= 8; size++ {
		var parts []string
		for i := 0; i < len(doc); i += size {
			parts = append(parts, doc[i:min(i+size, len(doc))])
		}
		var got []string
		for text, err := range WholeSentences(&chunks{parts: parts, read: func(int) {}}) {
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, textnorm.Sentences(text)...)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("read %d bytes at a time:\n got  %q\n want %q", size, got, want)
		}
	}
}
