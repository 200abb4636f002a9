package textnorm

import (
	"reflect"
	"testing"
)

// An ellipsis is a pause: espeak-ng read "Wait... what" (and "Wait ... what", "Wait… what", "Wait...what") as one word,
// "wˈeɪtwˌʌt". Between words it is a comma ("wˈeɪt, wˌʌt"), at the end a full stop; next to another mark or before
// any word it goes; in a path or code it stays.
func TestNormalizePausesAtEllipses(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"Wait... what", "Wait, what"},
		{"Wait ... what", "Wait, what"},
		{"Wait… what", "Wait, what"},
		{"Wait...what", "Wait, what"},
		{"Ellipsis...and more", "Ellipsis, and more"},
		{"Wait . . . what", "Wait, what"},
		{"Wait. . . what", "Wait, what"},
		{"Well... I think so.", "Well, I think so."},
		{`"Wait..." he said.`, `"Wait," he said.`},
		{"(wait...) no", "(wait,) no"},
		{"I do not know...", "I do not know."},
		{"I do not know . . .", "I do not know."},
		{"I do not know…", "I do not know."},
		{"Hmm....", "Hmm."},
		{"Really?... Yes", "Really? Yes"},
		{"Wait...?", "Wait?"},
		{"Yes..., no", "Yes, no"},
		{"...and then", "and then"},
		{`"...and then"`, `"and then"`},
		{"…", ""},
		// not ellipses, or not pauses
		{"a.. b", "a.. b"},
		{"src/.../main.go", "src/.../main.go"},
		{"f(...)", "f(...)"},
		{"see [...] here", "see [...] here"},
		{"He left . Then", "He left . Then"},
	} {
		if got := Normalize(c.in); got != c.want {
			t.Errorf("Normalize(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// An ellipsis of spaced periods does not end a sentence at its first period, as "..." does not.
func TestSentencesKeepSpacedEllipses(t *testing.T) {
	for in, want := range map[string][]string{
		"I wonder . . . Maybe so. Next.": {"I wonder . . . Maybe so.", "Next."},
		"Wait. . . What now? Ok.":        {"Wait. . . What now?", "Ok."},
		"He left . Then he came.":        {"He left .", "Then he came."},
	} {
		if got := Sentences(in); !reflect.DeepEqual(got, want) {
			t.Errorf("Sentences(%q) = %q, want %q", in, got, want)
		}
	}
}
