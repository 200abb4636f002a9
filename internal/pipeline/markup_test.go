package pipeline

import (
	"reflect"
	"testing"
)

// sameIDs checks that each text gives, sentence by sentence, the phoneme ids of the text it stands for.
func sameIDs(t *testing.T, pairs map[string]string) {
	t.Helper()
	f, cfg, _ := testFrontend(t, true)
	for in, same := range pairs {
		got, err := f.Sentences(in, cfg)
		if err != nil {
			t.Fatal(err)
		}
		want, err := f.Sentences(same, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) || len(got) == 0 {
			t.Errorf("%q: %d sentences %q, %q: %d", in, len(got), texts(got), same, len(want))
			continue
		}
		for i := range got {
			if !reflect.DeepEqual(got[i].IDs, want[i].IDs) {
				t.Errorf("%q: %s (ids %v)\nwant %s (ids %v)", in, got[i].Phonemes, got[i].IDs, want[i].Phonemes, want[i].IDs)
			}
		}
	}
}

func texts(ss []Sentence) []string {
	var out []string
	for _, s := range ss {
		out = append(out, s.Text)
	}
	return out
}

// An ellipsis between two words is a pause between two words, as a comma is: espeak-ng ran them into one
// ("wˈeɪtwˌʌt").
func TestFrontendPausesAtEllipses(t *testing.T) {
	sameIDs(t, map[string]string{
		"Wait... what?":       "Wait, what?",
		"Wait … what?":        "Wait, what?",
		"Ellipsis...and more": "Ellipsis, and more",
		"I do not know...":    "I do not know.",
	})
}

// "*" and "×" between numbers are read "times", not "asterisk".
func TestFrontendReadsTimes(t *testing.T) {
	sameIDs(t, map[string]string{
		"5*3 = 15":  "5 times 3 = 15",
		"x = 5 * 3": "x = 5 times 3",
		"5 × 3":     "5 times 3",
	})
}

// Markdown's emphasis and code marks are not read, a link is read as its text and an image as its alt text, so
// marked-up text gives the ids of its plain words.
func TestFrontendReadsInlineMarkdownAsItsWords(t *testing.T) {
	sameIDs(t, map[string]string{
		"This is **bold** text.":                        "This is bold text.",
		"This is *important* and ~~old~~ `code` text.":  "This is important and old code text.",
		"The **2024** report":                           "The 2024 report",
		"See [the docs](https://example.com/docs).":     "See the docs.",
		"![A cat](cat.png) sits. ![](x.png) Then more.": "A cat sits. Then more.",
		"**Note.** Read this.":                          "Note. Read this.",
	})
}

// Markdown's line marks are not read: a heading is a sentence of its own, each bullet item starts one, a quote is
// read as its words, a code fence not at all.
func TestFrontendReadsMarkdownLinesAsTheirWords(t *testing.T) {
	sameIDs(t, map[string]string{
		"# Title\nBody text.":                   "Title\n\nBody text.",
		"## Part one ##\nIt began.":             "Part one\n\nIt began.",
		"Buy:\n* milk\n- eggs\n+ bread":         "Buy:\n\nmilk\n\neggs\n\nbread",
		"> quoted line\n> goes on.":             "quoted line goes on.",
		"Run:\n```bash\nmake build\n```\nDone.": "Run:\n\nmake build\n\nDone.",
	})
	f, cfg, _ := testFrontend(t, true)
	got, err := f.Sentences("# Title\nBody text.", cfg)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"Title", "Body text."}; !reflect.DeepEqual(texts(got), want) {
		t.Errorf("sentences %q, want %q", texts(got), want)
	}
}
