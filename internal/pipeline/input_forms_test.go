package pipeline

import (
	"reflect"
	"strings"
	"testing"
)

// Text as users' files hold it gives the phoneme ids of the plain text it stands for: full-width digits (which
// espeak-ng dropped), full-width and mathematical letters and ligatures (which it read as code points), circled
// numbers (dropped).
func TestFrontendReadsCompatibilityFormsAsTheirText(t *testing.T) {
	sameIDs(t, map[string]string{
		"I have ３ apples and ２０ pears.": "I have 3 apples and 20 pears.",
		"Hello ＡＢＣ, the ﬃ ﬆyle.":        "Hello ABC, the ffi style.",
		"Step ② of 𝟑, 𝐛𝐨𝐥𝐝𝐥𝐲.":          "Step 2 of 3, boldly.",
	})
}

// A Project Gutenberg book's separators are not read as "asterisk asterisk asterisk", and a document of marks alone
// has nothing to say; every word around them is read.
func TestFrontendSkipsSeparators(t *testing.T) {
	f, cfg, _ := testFrontend(t, true)
	doc := "*** START OF THE PROJECT GUTENBERG EBOOK ***\n\nChapter I.\n\n" +
		"It is a truth universally acknowledged.\n\n                 * * *\n\nThe end.\n"
	got, err := f.Sentences(doc, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, s := range got {
		texts = append(texts, s.Text)
		if strings.Contains(s.Phonemes, "ɹˌɪsk") {
			t.Errorf("%q is read with an asterisk: %s", s.Text, s.Phonemes)
		}
	}
	want := []string{"start of the PROJECT GUTENBERG EBOOK", "Chapter one.", "It is a truth universally acknowledged.", "The end."}
	if !reflect.DeepEqual(texts, want) {
		t.Errorf("sentences %q, want %q", texts, want)
	}
	if got, err := f.Sentences("* * *\n\n!!!\n\n~~~~~\n", cfg); err != nil || len(got) != 0 {
		t.Errorf("marks alone: %+v, %v; want nothing to say", got, err)
	}
}
