package pipeline

import (
	"reflect"
	"testing"
)

// Text as users' files hold it gives the phoneme ids of the plain text it stands for: full-width digits (which
// espeak-ng dropped), full-width and mathematical letters and ligatures (which it read as code points), circled
// numbers (dropped).
func TestFrontendReadsCompatibilityFormsAsTheirText(t *testing.T) {
	f, cfg, _ := testFrontend(t, true)
	for in, same := range map[string]string{
		"I have ３ apples and ２０ pears.": "I have 3 apples and 20 pears.",
		"Hello ＡＢＣ, the ﬃ ﬆyle.":        "Hello ABC, the ffi style.",
		"Step ② of 𝟑, 𝐛𝐨𝐥𝐝𝐥𝐲.":          "Step 2 of 3, boldly.",
	} {
		got, err := f.Sentences(in, cfg)
		if err != nil {
			t.Fatal(err)
		}
		want, err := f.Sentences(same, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) || len(got) == 0 {
			t.Fatalf("%q: %d sentences, %q: %d", in, len(got), same, len(want))
		}
		for i := range got {
			if !reflect.DeepEqual(got[i].IDs, want[i].IDs) {
				t.Errorf("%q: %s (ids %v)\nwant %s (ids %v)", in, got[i].Phonemes, got[i].IDs, want[i].Phonemes, want[i].IDs)
			}
		}
	}
}
