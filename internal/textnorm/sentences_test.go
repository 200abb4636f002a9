package textnorm

import (
	"reflect"
	"strings"
	"testing"
)

// sentenceCases also seed FuzzSentences.
var sentenceCases = []struct {
	name string
	in   string
	want []string
}{
	{"plain", "One. Two! Three? Four", []string{"One.", "Two!", "Three?", "Four"}},
	{"titles", "Dr. Smith met Mr. Jones and Mrs. Brown. They talked.",
		[]string{"Dr. Smith met Mr. Jones and Mrs. Brown.", "They talked."}},
	{"military titles", "He shot at Maj. Gen. Walker. Lt. Col. Day saw it.",
		[]string{"He shot at Maj. Gen. Walker.", "Lt. Col. Day saw it."}},
	{"saint and mount", "We saw St. Louis and Mt. Everest. Then home.",
		[]string{"We saw St. Louis and Mt. Everest.", "Then home."}},
	{"latin", "Fruit, e.g. apples, i.e. round ones, vs. others. Done.",
		[]string{"Fruit, e.g. apples, i.e. round ones, vs. others.", "Done."}},
	{"etc before a capital ends", "Apples, pears, etc. The rest are bad.",
		[]string{"Apples, pears, etc.", "The rest are bad."}},
	{"etc before lower case continues", "Apples, pears, etc. are fruit.", []string{"Apples, pears, etc. are fruit."}},
	{"initialism", "The U.S. Army is big. So is the U.K. Navy.",
		[]string{"The U.S. Army is big.", "So is the U.K. Navy."}},
	{"meridiem before a capital ends", "We met at 5 p.m. Then we left.", []string{"We met at 5 p.m.", "Then we left."}},
	{"meridiem before lower case continues", "At 5 p.m. we left.", []string{"At 5 p.m. we left."}},
	{"initials", "J. R. R. Tolkien wrote it. C. S. Lewis too.",
		[]string{"J. R. R. Tolkien wrote it.", "C. S. Lewis too."}},
	{"decimals", "Pi is 3.14 or so. E is 2.72.", []string{"Pi is 3.14 or so.", "E is 2.72."}},
	{"numbered items", "1. Mix the flour. 2. Add water.", []string{"1. Mix the flour.", "2. Add water."}},
	{"number abbreviations", "See No. 5 and p. 12. The answer was no. Then he left.",
		[]string{"See No. 5 and p. 12.", "The answer was no.", "Then he left."}},
	{"number ending a sentence", "I counted to 10. Then I stopped.", []string{"I counted to 10.", "Then I stopped."}},
	{"label abbreviations before a label", "Apt. 4B, Bldg. C, Vol. II and Sept. 11. Then Apt. The end.",
		[]string{"Apt. 4B, Bldg. C, Vol. II and Sept. 11.", "Then Apt.", "The end."}},
	{"company abbreviations", "Acme Co. Ltd. and Smith Bros. & Co. won. Apple Inc. Announced it.",
		[]string{"Acme Co. Ltd. and Smith Bros. & Co. won.", "Apple Inc.", "Announced it."}},
	{"street abbreviations", "Take Fifth Ave. NW to Elm St. Suite 5. Meet at 5th St. The end.",
		[]string{"Take Fifth Ave. NW to Elm St. Suite 5.", "Meet at 5th St.", "The end."}},
	{"degrees", "He earned a B.A. He then left. The B.A. Program is new.",
		[]string{"He earned a B.A.", "He then left.", "The B.A. Program is new."}},
	{"saint and fort", "St. Louis and Ft. Worth. Mt. St. Helens.", []string{"St. Louis and Ft. Worth.", "Mt. St. Helens."}},
	{"units after numbers", "He is 5 ft. 3 in. tall. It weighs 5 lb. The box.",
		[]string{"He is 5 ft. 3 in. tall.", "It weighs 5 lb.", "The box."}},
	{"ellipsis", "Well... I think so. Maybe… Yes.", []string{"Well... I think so.", "Maybe… Yes."}},
	{"url and email", "See www.example.com. Mail john@example.org. Bye.",
		[]string{"See www.example.com.", "Mail john@example.org.", "Bye."}},
	{"url inside", "Go to example.com/a.b now. Ok.", []string{"Go to example.com/a.b now.", "Ok."}},
	{"quote after period", `He said "Hello." Then he left.`, []string{`He said "Hello."`, "Then he left."}},
	{"curly quotes", "She said “Stop!” He stopped.", []string{"She said “Stop!”", "He stopped."}},
	{"question in quotes continues", `"Really?" she asked. Yes.`, []string{`"Really?" she asked.`, "Yes."}},
	{"parentheses", "(This is inside.) Next one. (And this.)",
		[]string{"(This is inside.)", "Next one.", "(And this.)"}},
	{"paragraph breaks always end", "A heading\n\nThe text starts here\nand goes on.",
		[]string{"A heading", "The text starts here and goes on."}},
	{"windows line ends", "One\r\ntwo\r\n\r\nThree.", []string{"One two", "Three."}},
	{"blank line with spaces", "One\n \t \nTwo", []string{"One", "Two"}},
	{"whitespace collapses", "  Lots   of\tspace .  Here ", []string{"Lots of space .", "Here"}},
	{"interrobang run", "What?! No way!!! Ok", []string{"What?!", "No way!!!", "Ok"}},
	{"empty", "", nil},
	{"only whitespace", " \n\n\t ", nil},
	{"control characters dropped", "Bell\a here.\x00 Next.", []string{"Bell here.", "Next."}},
	{"page, vertical tab and NEL break lines", "End of a page.\fNext page\fgoes on.\vA line\u0085and the next.",
		[]string{"End of a page.", "Next page goes on.", "A line and the next."}},
	{"terminal colours dropped", "\x1b[1;31mError:\x1b[0m disk full.\x1b[K Next\x1b[.",
		[]string{"Error: disk full.", "Next[."}},
	{"form feed between paragraphs", "Chapter 1\n\f\nIt began.", []string{"Chapter 1", "It began."}},
	{"invalid utf-8 dropped", "Bad \xff\xfe byte. Good.", []string{"Bad byte.", "Good."}},
	{"other scripts pass", "Привет. 日本語です。 Ok.", []string{"Привет.", "日本語です。", "Ok."}},
}

func TestSentences(t *testing.T) {
	for _, c := range sentenceCases {
		t.Run(c.name, func(t *testing.T) {
			if got := Sentences(c.in); !reflect.DeepEqual(got, c.want) {
				t.Errorf("Sentences(%q)\n got  %q\n want %q", c.in, got, c.want)
			}
		})
	}
}

// TestSentencesKeepWords checks that splitting loses no words: the sentences joined with
// spaces are the document's words (after cleaning).
func TestSentencesKeepWords(t *testing.T) {
	for _, c := range sentenceCases {
		got := strings.Join(Sentences(c.in), " ")
		want := strings.Join(strings.Fields(clean(c.in)), " ")
		if got != want {
			t.Errorf("Sentences(%q) joined = %q, want %q", c.in, got, want)
		}
	}
}
