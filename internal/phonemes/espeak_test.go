package phonemes

import (
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"
)

// newTestEspeak initialises libespeak-ng with its default data, failing the test if it cannot.
func newTestEspeak(t testing.TB) *Espeak {
	t.Helper()
	e, err := NewEspeak("")
	if err != nil {
		t.Fatalf("NewEspeak: %v", err)
	}
	return e
}

// The phoneme bodies come from libespeak-ng 1.51 (cross-checked with `espeak-ng -q --ipa -v en-us`,
// which prints one line per clause); the marks, spaces and sentence breaks are Piper's rules applied
// by hand to the clause terminators espeak-ng's ReadClause returns for these texts.
func TestPhonemizeMatchesPiper(t *testing.T) {
	e := newTestEspeak(t)
	tests := []struct {
		name  string
		text  string
		voice string
		want  []string
	}{
		{"statement", "This is a test.", "en-us", []string{"ðɪs ɪz ɐ tˈɛst."}},
		{"question", "Is it raining?", "en-us", []string{"ɪz ɪt ɹˈeɪnɪŋ?"}},
		{"exclamation", "What a day!", "en-us", []string{"wˌʌt ɐ dˈeɪ!"}},
		{"no final punctuation", "Hello world", "en-us", []string{"həlˈoʊ wˈɜːld"}},
		{"comma colon semicolon", "First, second: third; fourth.", "en-us",
			[]string{"fˈɜːst, sˈɛkənd: θˈɜːd; fˈoːɹθ."}},
		// The mark and space of , : ; follow every clause, the last one included.
		{"final comma", "Hello world,", "en-us", []string{"həlˈoʊ wˈɜːld, "}},
		{"final colon", "As follows:", "en-us", []string{"æz fˈɑːloʊz: "}},
		{"final semicolon", "One; two;", "en-us", []string{"wˈʌn; tˈuː; "}},
		{"terminators", "Hello, world. How are you?", "en-us",
			[]string{"həlˈoʊ, wˈɜːld.", "hˈaʊ ɑːɹ juː?"}},
		{"three sentences", "One. Two? Three!", "en-us", []string{"wˈʌn.", "tˈuː?", "θɹˈiː!"}},
		// The closing quote after "hi." is read as the start of the next clause.
		{"quotes", `He said "hi." Then left.`, "en-us", []string{"hiː sˈɛd hˈaɪ.", "ðˈɛn lˈɛft."}},
		// The lone closing quote is a clause of its own with no phonemes: an empty sentence, dropped.
		{"closing quote at end", `She said "hi."`, "en-us", []string{"ʃiː sˈɛd hˈaɪ."}},
		{"numbers", "I have 42 apples and 3.5 pears.", "en-us",
			[]string{"aɪ hæv fˈoːɹɾi tˈuː ˈæpəlz ænd θɹˈiː pɔɪnt fˈaɪv pˈɛɹz."}},
		{"currency and year", "It costs $5, in 1999.", "en-us",
			[]string{"ɪt kˈɔsts dˈɑːlɚ fˈaɪv, ɪn nˈaɪntiːnhˈʌndɹɪd nˈaɪnti nˈaɪn."}},
		{"french words in english", "Café au lait. Bonjour!", "en-us", []string{"kæfˈeɪ ˌoʊ lˈeɪt.", "bɔːnʒˈʊɹ!"}},
		// espeak-ng reads "weekend" in English inside French and marks it "(en)...(fr)".
		{"language flags removed", "Le weekend.", "fr", []string{"lə- wiːkˈɛnd."}},
		// German "ich" gives precomposed ç (U+00E7), which Piper decomposes into c + U+0327.
		{"NFD", "ich", "de", []string{"ɪc\u0327"}},
		// ReadClause takes the first mark of a run of punctuation as the terminator.
		{"question then exclamation", "Hello?!", "en-us", []string{"həlˈoʊ?"}},
		// Three dots are an ellipsis: a clause end whose terminator Piper maps to nothing, so the
		// clauses are joined without even a space.
		{"ellipsis", "Wait... what?", "en-us", []string{"wˈeɪtwˌʌt?"}},
		// A blank line after a full stop is a paragraph end: new sentence, no mark.
		{"paragraph", "Hello.\n\nWorld.", "en-us", []string{"həlˈoʊ", "wˈɜːld."}},
		{"em dash", "a — b", "en-us", []string{"ˈeɪ; bˈiː"}},
		{"abbreviation ends clause", "Mr. Smith", "en-us", []string{"mˈɪstɚ.", "smˈɪθ"}},
		{"lowercase after dot continues", "see e.g. this.", "en-us", []string{"sˈiː fˌɔːɹɛɡzˈæmpəl ðˈɪs."}},
		// libespeak-ng 1.51 would read past the end of the text here; see cleanText.
		{"two final dots", "Hello..", "en-us", []string{"həlˈoʊ."}},
		{"text after two final dots is not affected", "E.g", "en-us", []string{"ˌiːdʒˈiː"}},
		// U+0001 would start an espeak-ng embedded command; "\x01B" at the end of a text hangs it.
		{"embedded command at end", "Hello.\x01B", "en-us", []string{"həlˈoʊ.", "bˈiː"}},
		{"pushed-back last letter", "Hello. W", "en-us", []string{"həlˈoʊ.", "dˈʌbəljˌuː"}},
		{"empty", "", "en-us", nil},
		{"punctuation only", "?! ... .,;", "en-us", nil},
		{"spaces only", " \n\t ", "en-us", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := e.Phonemize(tt.text, tt.voice)
			if err != nil {
				t.Fatalf("Phonemize(%q, %q): %v", tt.text, tt.voice, err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Phonemize(%q, %q)\n got %q\nwant %q", tt.text, tt.voice, got, tt.want)
			}
		})
	}
}

// The "language flags removed" case above only means something if espeak-ng really flags the word.
func TestEspeakEmitsLanguageFlags(t *testing.T) {
	newTestEspeak(t)
	espeakMu.Lock()
	defer espeakMu.Unlock()
	if err := setVoice("fr"); err != nil {
		t.Fatal(err)
	}
	clauses, err := textToClauses("Le weekend.")
	if err != nil {
		t.Fatal(err)
	}
	if len(clauses) != 1 || clauses[0].phonemes != "lə- (en)wiːkˈɛnd(fr)" {
		t.Fatalf("raw clauses = %+v, want one clause %q", clauses, "lə- (en)wiːkˈɛnd(fr)")
	}
}

func TestPhonemizeUnknownVoice(t *testing.T) {
	e := newTestEspeak(t)
	_, err := e.Phonemize("Hello.", "xx-nonexistent")
	if err == nil || !strings.Contains(err.Error(), `"xx-nonexistent"`) {
		t.Fatalf("Phonemize with unknown voice: err = %v, want an error naming the voice", err)
	}
	// A failed voice change must not leave the previous voice half-selected.
	got, err := e.Phonemize("Hello.", "en-us")
	if err != nil || !reflect.DeepEqual(got, []string{"həlˈoʊ."}) {
		t.Fatalf("Phonemize after failed voice change = %q, %v", got, err)
	}
}

func TestNewEspeakConflictingDataPath(t *testing.T) {
	newTestEspeak(t)
	if _, err := NewEspeak("/nonexistent/espeak-data"); err == nil || !strings.Contains(err.Error(), "/nonexistent/espeak-data") {
		t.Fatalf("NewEspeak with a second data path: err = %v, want an error naming it", err)
	}
}

// Voices alternate between goroutines; each result must belong to its own voice.
func TestPhonemizeConcurrentVoices(t *testing.T) {
	e := newTestEspeak(t)
	want := map[string][]string{"en-us": {"wˈiːkɛnd."}, "fr": {"wiːkˈɛnd."}, "de": {"ɪc\u0327."}}
	texts := map[string]string{"en-us": "weekend.", "fr": "weekend.", "de": "ich."}
	var wg sync.WaitGroup
	errs := make(chan string, 300)
	for i := 0; i < 300; i++ {
		voice := []string{"en-us", "fr", "de"}[i%3]
		wg.Add(1)
		go func() {
			defer wg.Done()
			got, err := e.Phonemize(texts[voice], voice)
			if err != nil || !reflect.DeepEqual(got, want[voice]) {
				errs <- voice + ": " + strings.Join(got, "|")
			}
		}()
	}
	wg.Wait()
	close(errs)
	for msg := range errs {
		t.Error(msg)
	}
}

func TestPhonemizeCleansText(t *testing.T) {
	e := newTestEspeak(t)
	tests := []struct{ name, text string }{
		{"NUL", "Hello\x00world."},
		{"invalid UTF-8", "Hello\xffworld."},
		{"replacement char", "Hello\uFFFDworld."},
		{"embedded command", "Hello\x01world."},
		{"control character", "Hello\x1bworld."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := e.Phonemize(tt.text, "en-us")
			if err != nil || !reflect.DeepEqual(got, []string{"həlˈoʊ wˈɜːld."}) {
				t.Fatalf("Phonemize(%q) = %q, %v; want the text read as two words", tt.text, got, err)
			}
		})
	}
}

// loadTestIDMap reads the standard en_US phoneme_id_map of Piper's test voice.
func loadTestIDMap(t testing.TB) map[string][]int64 {
	t.Helper()
	data, err := os.ReadFile("../../testdata/piper-test-voice/test_voice.onnx.json")
	if err != nil {
		t.Fatalf("Piper test voice config: %v", err)
	}
	var config struct {
		PhonemeIDMap map[string][]int64 `json:"phoneme_id_map"`
	}
	if err := json.Unmarshal(data, &config); err != nil {
		t.Fatalf("decode test voice config: %v", err)
	}
	return config.PhonemeIDMap
}

func TestPhonemizeToIDs(t *testing.T) {
	e := newTestEspeak(t)
	idMap := loadTestIDMap(t)
	got, err := e.Phonemize("Hello, world. How are you?", "en-us")
	if err != nil {
		t.Fatal(err)
	}
	want := [][]int64{
		{1, 0, 20, 0, 59, 0, 24, 0, 120, 0, 27, 0, 100, 0, 8, 0, 3, 0, 35, 0, 120, 0, 62, 0, 122, 0, 24, 0, 17, 0, 10, 0, 2},
		{1, 0, 20, 0, 120, 0, 14, 0, 100, 0, 3, 0, 51, 0, 122, 0, 88, 0, 3, 0, 22, 0, 33, 0, 122, 0, 13, 0, 2},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d sentences %q, want %d", len(got), got, len(want))
	}
	for i, sentence := range got {
		ids, missing := IDs(sentence, idMap)
		if len(missing) != 0 || !reflect.DeepEqual(ids, want[i]) {
			t.Errorf("IDs(%q) = %v, missing %q\nwant %v", sentence, ids, missing, want[i])
		}
	}
}

// TestLongWords: libespeak-ng 1.51 smashes its stack on a word of ~200 bytes (the process dies; found by
// FuzzPhonemize), so words longer than maxWordBytes are broken before it sees them; ordinary words are untouched.
func TestLongWords(t *testing.T) {
	e := newTestEspeak(t)
	for _, text := range []string{"a." + strings.Repeat("ab", 100), strings.Repeat("r", 1000), strings.Repeat("é", 150) + " x"} {
		sentences, err := e.Phonemize(text, "en-us")
		if err != nil || len(sentences) == 0 {
			t.Errorf("Phonemize(%d bytes): %q, %v", len(text), sentences, err)
		}
	}
	word := strings.Repeat("é", 120) // 240 bytes of two-byte runes
	got := breakLongWords("x " + word + " y")
	for _, piece := range strings.Fields(got) {
		if len(piece) > maxWordBytes || !utf8.ValidString(piece) {
			t.Errorf("piece of %d bytes (valid UTF-8: %v) in %q", len(piece), utf8.ValidString(piece), got)
		}
	}
	if strings.ReplaceAll(got, " ", "") != "x"+word+"y" {
		t.Errorf("breaking lost or added characters: %q", got)
	}
	if text := "Supercalifragilisticexpialidocious, said Mary Poppins."; breakLongWords(text+strings.Repeat(" ", 80)) != text+strings.Repeat(" ", 80) {
		t.Errorf("a text of ordinary words changed")
	}
}

// Sentences says which text each sentence is: the characters espeak-ng read for it, without the white space around
// them; a quote that closes a sentence stays with it, and the text of a sentence without phonemes joins the one
// before it. The phonemes are Phonemize's.
func TestSentencesSayEachSentencesText(t *testing.T) {
	e := newTestEspeak(t)
	for _, tt := range []struct {
		text string
		want []string
	}{
		{"Dr. Smith paid $5.", []string{"Dr.", "Smith paid $5."}},
		{"  Hello there.  How are you?\n", []string{"Hello there.", "How are you?"}},
		{"One, two; three: four. five", []string{"One, two; three: four. five"}}, // a lower-case word goes on
		{`"Hi." "There." he said. (Aside.) Next!`, []string{`"Hi."`, `"There."`, "he said.", "(Aside.)", "Next!"}},
		{`He said "hi." Then left.`, []string{`He said "hi."`, "Then left."}},
		{`Hi. "`, []string{`Hi. "`}},
		{"Wait... what?", []string{"Wait... what?"}},
		{"No mark at the end", []string{"No mark at the end"}},
		{"", nil},
	} {
		got, err := e.Sentences(tt.text, "en-us")
		if err != nil {
			t.Fatal(err)
		}
		var texts []string
		for _, s := range got {
			texts = append(texts, s.Text)
		}
		if !reflect.DeepEqual(texts, tt.want) {
			t.Errorf("Sentences(%q): texts %q, want %q", tt.text, texts, tt.want)
		}
		phonemes, err := e.Phonemize(tt.text, "en-us")
		if err != nil || len(phonemes) != len(got) {
			t.Fatalf("Phonemize(%q) = %q, %v; Sentences gave %d", tt.text, phonemes, err, len(got))
		}
		for i := range got {
			if got[i].Phonemes != phonemes[i] {
				t.Errorf("Sentences(%q)[%d].Phonemes = %q, Phonemize's %q", tt.text, i, got[i].Phonemes, phonemes[i])
			}
		}
	}
}
