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

// The marks Markdown puts at the start of a line are not read, and its structure ends sentences: a heading is a
// sentence of its own, a bullet item (or a numbered item that starts a list or follows an item) starts one, a fence,
// a rule and a quote's empty line end a paragraph. Marks elsewhere, or not followed by a space, stay.
func TestSentencesReadMarkdownLines(t *testing.T) {
	for _, c := range []struct {
		name, in string
		want     []string
	}{
		{"heading", "# Heading", []string{"Heading"}},
		{"heading then its paragraph", "# Title\nBody text.", []string{"Title", "Body text."}},
		{"heading levels and closing marks", "## Part one ##\n###### Six\nText", []string{"Part one", "Six", "Text"}},
		{"heading after a line", "Some text\n## Next part\nMore.", []string{"Some text", "Next part", "More."}},
		{"bullets", "* item one\n* item two\n- item three.\n+ four", []string{"item one", "item two", "item three.", "four"}},
		{"bullets after a line, wrapped item", "Buy:\n- milk\n- eggs and\nmore eggs\n\nDone.",
			[]string{"Buy:", "milk", "eggs and more eggs", "Done."}},
		{"nested bullets", "- fruit\n  - apples\n    * red ones", []string{"fruit", "apples", "red ones"}},
		{"task boxes", "- [ ] write it\n- [x] test it", []string{"write it", "test it"}},
		{"numbered items", "1. milk\n2. eggs\n3. bread", []string{"1. milk", "2. eggs", "3. bread"}},
		{"numbered list after a line", "Steps:\n1. mix\n2) bake", []string{"Steps:", "1. mix", "2) bake"}},
		{"quote", "> quoted line", []string{"quoted line"}},
		{"quote over lines, empty quote line, nested", "> A quote\n> goes on.\n>\n> > Nested one",
			[]string{"A quote goes on.", "Nested one"}},
		{"quoted heading and item", "> # Title\n> - item", []string{"Title", "item"}},
		{"code fence", "Run it:\n```bash\nmake build\n```\nThen test.", []string{"Run it:", "make build", "Then test."}},
		{"tilde fence", "~~~\ncode\n~~~~", []string{"code"}},
		{"rules and underlines", "Title\n=====\nText\n\n---\n\n* * *\nEnd", []string{"Title", "Text", "End"}},
		{"marks alone", "#\n>\n-", []string{"-"}},
		{"windows line ends", "# Head\r\nBody\r\n- a\r\n- b", []string{"Head", "Body", "a", "b"}},
		// not line marks
		{"hashtag and number sign", "#1 hit\n#tag here", []string{"#1 hit #tag here"}},
		{"sharp", "C# and F#", []string{"C# and F#"}},
		{"negative number", "It was\n-5 degrees", []string{"It was -5 degrees"}},
		{"a year that starts a wrapped line", "He was born in\n1984. Then he left.", []string{"He was born in 1984.", "Then he left."}},
		{"greater than", "x > y\n>5% of them", []string{"x > y >5% of them"}},
		{"a lone star", "Press\n*\nnow", []string{"Press * now"}},
		{"emphasis at a line's start", "*Really* now\n**Bold** too", []string{"*Really* now **Bold** too"}},
		{"marks with words", "~~~ Fin ~~~\n```code```", []string{"~~~ Fin ~~~ ```code```"}},
		{"numbered items on one line", "1. Mix the flour. 2. Add water.", []string{"1. Mix the flour.", "2. Add water."}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := Sentences(c.in); !reflect.DeepEqual(got, c.want) {
				t.Errorf("Sentences(%q)\n got  %q\n want %q", c.in, got, c.want)
			}
		})
	}
}

// What a listener hears of the examples that were read with their marks.
func TestReadMarkdownDocument(t *testing.T) {
	doc := "# Heading\n\nThis is *important* and **bold** text.\n\n* item one\n* item two\n\n> quoted line\n\n" +
		"See [the docs](https://example.com/docs).\n\n```go\nx := 5 * 3\n```\n"
	want := []string{"Heading", "This is important and bold text.", "item one", "item two", "quoted line",
		"See the docs.", "x := five times three"}
	if got := read(doc); !reflect.DeepEqual(got, want) {
		t.Errorf("read(%q)\n got  %q\n want %q", doc, got, want)
	}
}

// markupSeeds seed FuzzNormalize and FuzzSentences with Markdown and ellipses.
var markupSeeds = []string{
	"# Title\nBody text.\n\n* item one\n- [x] item two\n> > quoted *line*\n```go\nx := 5 * 3\n```\n1. a\n2) b\n---",
	"This is ***very*** _x_ __y__ ~~gone~~ `code` [the docs](https://e.com/a_(b) \"t\") ![](x.png) [![a](b)](c)",
	"Wait... what. Wait…what . . . I do not know... [...] src/.../x 5*3 5 × 3 a*b",
}
