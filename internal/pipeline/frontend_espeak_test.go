package pipeline

import (
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/ttsgen/ttsgen/internal/phonemes"
	"github.com/ttsgen/ttsgen/internal/voices"
)

func testFrontend(t *testing.T, normalize bool) (*Frontend, *voices.Config, *[]string) {
	t.Helper()
	esp, err := phonemes.NewEspeak("")
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile("../../testdata/tiny-voice/tiny.onnx.json")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := voices.ParseConfig(data)
	if err != nil {
		t.Fatal(err)
	}
	var warnings []string
	f := &Frontend{Espeak: esp, Normalize: normalize, Warnf: func(format string, args ...any) {
		warnings = append(warnings, format)
	}}
	return f, cfg, &warnings
}

func TestFrontendNormalisesBeforePhonemizing(t *testing.T) {
	f, cfg, _ := testFrontend(t, true)
	got, err := f.Sentences("Dr. Smith paid $5. It was 3.5% more!", cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Text != "Doctor Smith paid five dollars." || !strings.Contains(got[1].Text, "three point five percent") {
		t.Fatalf("sentences = %+v", got)
	}
	for _, s := range got {
		if s.IDs[0] != 1 || s.IDs[1] != 0 || s.IDs[len(s.IDs)-1] != 2 {
			t.Errorf("%q: ids %v do not follow Piper's ^ _ ... $ layout", s.Text, s.IDs)
		}
	}
}

func TestFrontendWithoutNormalisationSendsTextAsIs(t *testing.T) {
	f, cfg, _ := testFrontend(t, false)
	got, err := f.Sentences("Hello there. How are you?", cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Phonemes != "həlˈoʊ ðˈɛɹ." || !strings.HasSuffix(got[1].Phonemes, "?") {
		t.Fatalf("sentences = %+v", got)
	}
}

// Hostile text: every input gives sentences or nothing, never a panic, never a sentence over the phoneme cap,
// never a lost word.
func TestFrontendHostileText(t *testing.T) {
	inputs := map[string]string{
		"empty":             "",
		"punctuation only":  "?!... --- ;;; \"\"",
		"control chars":     "Hello\x00\x07 wor\x1bld\x7f.",
		"emoji and scripts": "Hello 👋🏽 world. Привет мир. 你好世界. مرحبا",
		"invalid utf-8":     "Hello \xff\xfe world.",
		"no punctuation":    strings.Repeat("the quick brown fox jumps over the lazy dog ", 2000),
		"one endless word":  strings.Repeat("a", 20000),
	}
	for _, normalize := range []bool{true, false} {
		f, cfg, _ := testFrontend(t, normalize)
		for name, text := range inputs {
			got, err := f.Sentences(text, cfg)
			if err != nil {
				t.Errorf("normalize=%v %s: %v", normalize, name, err)
				continue
			}
			for _, s := range got {
				if n := len([]rune(s.Phonemes)); n > DefaultMaxPhonemes {
					t.Errorf("normalize=%v %s: a sentence of %d phonemes (cap %d)", normalize, name, n, DefaultMaxPhonemes)
				}
			}
			if name == "no punctuation" {
				words := 0
				for _, s := range got {
					words += strings.Count(s.Phonemes, "ðə")
				}
				if words != 4000 { // "the" twice per repetition: nothing dropped
					t.Errorf("normalize=%v: %d of 4000 'the' kept across %d sentences", normalize, words, len(got))
				}
			}
		}
	}
}

func TestFrontendWarnsOncePerMissingPhoneme(t *testing.T) {
	f, cfg, warnings := testFrontend(t, false)
	delete(cfg.PhonemeIDMap, "ə")
	for range 3 {
		if _, err := f.Sentences("Hello there, a banana.", cfg); err != nil {
			t.Fatal(err)
		}
	}
	if len(*warnings) != 1 {
		t.Errorf("warnings = %q, want exactly one", *warnings)
	}
}

// countingPhonemizer phonemizes with espeak-ng and counts its calls.
type countingPhonemizer struct {
	phonemes.Phonemizer
	calls int
}

func (c *countingPhonemizer) Phonemize(text, voice string) ([]string, error) {
	c.calls++
	return c.Phonemizer.Phonemize(text, voice)
}

// Stream phonemizes a text a sentence at a time as it is consumed, and gives what Sentences gives.
func TestFrontendStreamPhonemizesAsItIsConsumed(t *testing.T) {
	f, cfg, _ := testFrontend(t, true)
	counter := &countingPhonemizer{Phonemizer: f.Espeak}
	f.Espeak = counter
	text := "The first sentence. The second one! And a third?"
	for s, err := range f.Stream(f.Split(text), cfg) {
		if err != nil || s.Text != "The first sentence." {
			t.Fatalf("first sentence %+v, err %v", s, err)
		}
		break
	}
	if counter.calls != 1 {
		t.Errorf("%d phonemizer calls to take the first of three sentences; want 1", counter.calls)
	}
	all, err := f.Sentences(text, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var streamed []Sentence
	for s, err := range f.Stream(f.Split(text), cfg) {
		if err != nil {
			t.Fatal(err)
		}
		streamed = append(streamed, s)
	}
	if len(all) != 3 || !reflect.DeepEqual(all, streamed) {
		t.Errorf("Sentences gave %d sentences, Stream %d; want the same 3", len(all), len(streamed))
	}
}

// Without normalisation espeak-ng finds the sentences of the text it gets whole; each sentence has its own text
// (and, as its own source, that text), not the whole text's, also where a block of raw phonemes joins two of them.
func TestFrontendWithoutNormalisationGivesEachSentenceItsText(t *testing.T) {
	f, cfg, _ := testFrontend(t, false)
	got, err := f.Sentences("Dr. Smith paid $5. How are you? [[ bˈiː ]] Then 2. Done", cfg)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"Dr.", "Smith paid $5.", "How are you? [[ bˈiː ]] Then 2.", "Done"}
	var texts, sources []string
	for _, s := range got {
		texts, sources = append(texts, s.Text), append(sources, s.Source)
	}
	if !reflect.DeepEqual(texts, want) || !reflect.DeepEqual(sources, want) {
		t.Errorf("texts %q\nsources %q\nwant both %q", texts, sources, want)
	}
	// One sentence keeps the text as it went to espeak-ng.
	if got, err := f.Sentences("Hello there.", cfg); err != nil || len(got) != 1 || got[0].Text != "Hello there." {
		t.Errorf("one sentence: %+v, %v", got, err)
	}
}
