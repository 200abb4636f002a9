package textnorm

import (
	"reflect"
	"testing"
)

// Emphasis, code marks, links and images are read as their words: espeak-ng read "*important*" as "asterisk
// important asterisk" and spelled a link's address. Marks that are not markup stay: inside a word, alone, "~" before
// a number.
func TestNormalizeReadsInlineMarkdown(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"This is *important* and **bold** text.", "This is important and bold text."},
		{"***very*** _x_ __y__ ~~gone~~ word", "very x y gone word"},
		{"*this is a phrase* here", "this is a phrase here"},
		{"The **2024** report", "The twenty twenty-four report"},
		{"**Note:** read it", "Note: read it"},
		{`He said "*quoted*" (*a*) and *b*.`, `He said "quoted" (a) and b.`},
		{"*5 stars* for **$5**", "five stars for five dollars"},
		{"**_both_**", "both"},
		{"Use `ls -la` or ``a`b`` here", "Use ls -la or a`b here"},
		{"See [the docs](https://example.com/docs).", "See the docs."},
		{`See [the docs](https://example.com/docs "The docs") now`, "See the docs now"},
		{"[text](<my url>) and [wiki](https://w.org/A_(b)) ok", "text and wiki ok"},
		{"![A cat](cat.png) sits.", "A cat sits."},
		{"![](x.png) Hello", "Hello"},
		{"[![build](https://img.example/x.svg)](https://ci.example) passes", "build passes"},
		{"[**bold link**](x) and *[a link](y)*", "bold link and a link"},
		{"*Wait...*what", "Wait, what"},
		// not markup
		{"5 * 3", "five times three"},
		{"a*b", "a*b"},
		{"a * b", "a * b"},
		{"*", ""},
		{"Press * now", "Press * now"},
		{"snake_case_name", "snake_case_name"},
		{"~5 km", "about five kilometers"},
		{"~~~ Fin ~~~", "Fin"},
		{"*** START ***", "start"},
		{"C# and F#", "C# and F#"},
		{"#1 hit", "number one hit"},
		{"x > y", "x greater than y"},
		{"It was -5 degrees", "It was minus five degrees"},
		{"[sic] f(x) and [a](b c)", "[sic] f(x) and [a](b c)"},
		{"www.example.com/_next/a", "w w w dot example dot com slash underscore next slash a"},
	} {
		if got := Normalize(c.in); got != c.want {
			t.Errorf("Normalize(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// A sentence's mark inside emphasis ends the sentence, as one inside quotes does; an abbreviation inside it does not.
func TestSentencesEndInsideEmphasis(t *testing.T) {
	for in, want := range map[string][]string{
		"**Note.** Read this.":       {"**Note.**", "Read this."},
		"*Really?* Yes.":             {"*Really?*", "Yes."},
		"Ask **Dr.** Smith. Then go": {"Ask **Dr.** Smith.", "Then go"},
		"Press * Then go":            {"Press * Then go"},
	} {
		if got := Sentences(in); !reflect.DeepEqual(got, want) {
			t.Errorf("Sentences(%q) = %q, want %q", in, got, want)
		}
	}
}
