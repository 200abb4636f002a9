package timestamps

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ttsgen/ttsgen/internal/audio/decodetest"
)

// idMap gives every phoneme the tests use an id, with Piper's reserved ones first.
func idMap() map[string][]int64 {
	m := map[string][]int64{"_": {0}, "^": {1}, "$": {2}, " ": {3}}
	next := int64(4)
	for _, r := range "ɪnðəhˈˌaʊstkɔwʌθzdɚfvɑːlɹuɛmeɡɐæjiɾŋboʃ.,?!;:" {
		if _, ok := m[string(r)]; !ok {
			m[string(r)] = []int64{next}
			next++
		}
	}
	return m
}

// dictionary is espeak-ng's phonemes for each word said alone, as the tests' phonemizer gives them.
var dictionary = map[string]string{
	"in": "ɪn", "the": "ðə", "house": "hˈaʊs", "it": "ɪt", "cost": "kˈɔst", "one": "wˈʌn", "thousand": "θˈaʊzənd",
	"two": "tˈuː", "hundred": "hˈʌndɹɪd", "five": "fˈaɪv", "dollars": "dˈɑːlɚz", "doctor": "dˈɑːktɚ",
	"smith": "smˈɪθ", "dr": "dˈɑːktɚ", "arrived": "ɐɹˈaɪvd", "well": "wˈɛl", "she": "ʃiː", "said": "sˈɛd", "it's": "ɪts",
	"fine": "fˈaɪn", "yes": "jˈɛs", "no": "nˈoʊ", "hmm": "",
}

func phonemize(word string) (string, error) {
	p, ok := dictionary[strings.ToLower(word)]
	if !ok {
		return "", errors.New("not in the test dictionary: " + word)
	}
	return p, nil
}

// frameRate: with 100 samples a frame at 1 kHz, a frame is 0.1 s.
const (
	rate      = 1000
	perFrame  = 100
	frameSecs = 0.1
)

// unit makes a unit of phonemes whose every id lasts one frame, so that id i starts at i x 0.1 s after start.
func unit(source, text, phonemes string, start int64) Unit {
	m := idMap()
	ids := append([]int64{}, m["^"][0], m["_"][0])
	for _, r := range phonemes {
		ids = append(ids, m[string(r)][0], m["_"][0])
	}
	ids = append(ids, m["$"][0])
	d := make([]float32, len(ids))
	for i := range d {
		d[i] = 1
	}
	return Unit{Source: source, Text: text, Phonemes: phonemes, IDs: ids, Durations: d, Start: start, Samples: len(ids) * perFrame}
}

func build(t *testing.T, units ...Unit) Timeline {
	t.Helper()
	b := NewAligner(idMap(), rate, phonemize).NewBuilder()
	for _, u := range units {
		if err := b.Add(u); err != nil {
			t.Fatal(err)
		}
	}
	return b.Timeline()
}

func near(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }

// espeak-ng runs "in the" into one phoneme word: each word still gets its own phonemes' frames. A word after a
// space starts with the space (the voice starts its first sound there), and ends with its last phoneme's pad.
// Ids are ^0 _1 ɪ2 _3 n4 _5 ð6 _7 ə8 _9 (space)10 _11 h12 _13 ˈ14 _15 a16 _17 ʊ18 _19 s20 _21 .22 _23 $24.
func TestWordsRunTogetherByEspeakAreTimedApart(t *testing.T) {
	tl := build(t, unit("", "in the house.", "ɪnðə hˈaʊs.", 0))
	want := []Word{
		{Word: "in", Text: "in", Start: 0.2, End: 0.6},
		{Word: "the", Text: "the", Start: 0.6, End: 1.0},
		{Word: "house", Text: "house", Start: 1.0, End: 2.2},
	}
	checkWords(t, tl.Words, want)
	if len(tl.Sentences) != 1 || tl.Sentences[0] != (Sentence{Text: "in the house.", Start: 0.2, End: 2.2}) {
		t.Errorf("sentences %+v", tl.Sentences)
	}
}

func checkWords(t *testing.T, got, want []Word) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("words %+v\nwant %+v", got, want)
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.Word != w.Word || g.Text != w.Text || !near(g.Start, w.Start) || !near(g.End, w.End) {
			t.Errorf("word %d: %+v, want %+v", i, g, w)
		}
	}
}

// The words a number is spoken as belong to the number as written; the sentence's text is the original.
func TestNumberWordsKeepTheirToken(t *testing.T) {
	tl := build(t, unit("It cost 1,205 dollars.", "It cost one thousand two hundred five dollars.",
		"ɪt kˈɔst wˈʌn θˈaʊzənd tˈuː hˈʌndɹɪd fˈaɪv dˈɑːlɚz.", 0))
	var texts, words []string
	for _, w := range tl.Words {
		texts = append(texts, w.Text)
		words = append(words, w.Word)
	}
	if got := strings.Join(words, " "); got != "It cost one thousand two hundred five dollars" {
		t.Errorf("spoken words %q", got)
	}
	if got := strings.Join(texts, "|"); got != "It|cost|1,205|1,205|1,205|1,205|1,205|dollars" {
		t.Errorf("texts %q", got)
	}
	if tl.Sentences[0].Text != "It cost 1,205 dollars." {
		t.Errorf("sentence %q", tl.Sentences[0].Text)
	}
	// "one" starts with the space before it, after ^ _ ɪ _ t _ (space) _ k _ ˈ _ ɔ _ s _ t _: at id 18.
	if w := tl.Words[2]; !near(w.Start, 18*frameSecs) {
		t.Errorf("%q starts at %v, want %v", w.Word, w.Start, 18*frameSecs)
	}
	for i := 1; i < len(tl.Words); i++ {
		if tl.Words[i].Start < tl.Words[i-1].End || tl.Words[i].End <= tl.Words[i].Start+frameSecs {
			t.Errorf("words %d and %d overlap or are empty: %+v %+v", i-1, i, tl.Words[i-1], tl.Words[i])
		}
	}
}

func TestAbbreviationsKeepTheirToken(t *testing.T) {
	tl := build(t, unit("Dr. Smith arrived.", "Doctor Smith arrived.", "dˈɑːktɚ smˈɪθ ɐɹˈaɪvd.", 0))
	if tl.Words[0].Word != "Doctor" || tl.Words[0].Text != "Dr." || tl.Words[2].Text != "arrived" {
		t.Errorf("words %+v", tl.Words)
	}
}

// Each sentence is timed from where its audio starts in the output (after the silence between sentences); a
// piece that espeak-ng cuts in two goes on where the first part stopped.
func TestSeveralSentencesAndSentenceSilence(t *testing.T) {
	first := unit("Yes.", "Yes.", "jˈɛs.", 0)
	silence := int64(500) // 0.5 s
	second := unit("Yes.", "Yes.", "jˈɛs.", int64(first.Samples)+silence)
	third := unit("No, no.", "No, no.", "nˈoʊ,", second.Start+int64(second.Samples)+silence)
	fourth := unit("No, no.", "No, no.", "nˈoʊ.", third.Start+int64(third.Samples)+silence)
	tl := build(t, first, second, third, fourth)
	var words []string
	for _, w := range tl.Words {
		words = append(words, w.Word)
	}
	if got := strings.Join(words, " "); got != "Yes Yes No no" {
		t.Fatalf("words %q", got)
	}
	// j starts at id 2 of each unit (no space before a unit's first word).
	for i, u := range []Unit{first, second, third, fourth} {
		want := float64(u.Start)/rate + 2*frameSecs
		if !near(tl.Words[i].Start, want) {
			t.Errorf("word %d starts at %v, want %v (its unit starts at %v s)", i, tl.Words[i].Start, want, float64(u.Start)/rate)
		}
	}
	if len(tl.Sentences) != 4 || tl.Sentences[1].Text != "Yes." || tl.Sentences[2].Text != "No," || tl.Sentences[3].Text != "no." {
		t.Errorf("sentences %+v", tl.Sentences)
	}
}

// Quotes and clause marks are not words; the words keep their tokens without them, and a cue ends at a comma.
func TestPunctuation(t *testing.T) {
	text := `"Well," she said, "it's fine."`
	tl := build(t, unit(text, text, "wˈɛl, ʃiː sˈɛd, ɪts fˈaɪn.", 0))
	var got []string
	for _, w := range tl.Words {
		got = append(got, w.Word+"/"+w.Text)
	}
	if strings.Join(got, " ") != "Well/Well she/she said/said it's/it's fine/fine" {
		t.Errorf("words %q", got)
	}
	var texts []string
	for _, c := range cues(tl) {
		texts = append(texts, c.text)
	}
	if strings.Join(texts, "|") != "Well|she said|it's fine" {
		t.Errorf("cues %q", texts)
	}
}

// A word espeak-ng says nothing for takes no time, where the word before it ends.
func TestSilentWord(t *testing.T) {
	tl := build(t, unit("", "yes hmm no.", "jˈɛs nˈoʊ.", 0))
	if len(tl.Words) != 3 || tl.Words[1].Word != "hmm" || tl.Words[1].Start != tl.Words[0].End || tl.Words[1].End != tl.Words[1].Start {
		t.Errorf("words %+v", tl.Words)
	}
	if tl.Words[2].Start < tl.Words[0].End || tl.Words[2].End <= tl.Words[2].Start {
		t.Errorf("no is %v..%v, yes ends at %v", tl.Words[2].Start, tl.Words[2].End, tl.Words[0].End)
	}
}

func TestVoiceWithoutDurationsAndMismatchedIDs(t *testing.T) {
	b := NewAligner(idMap(), rate, phonemize).NewBuilder()
	u := unit("", "yes.", "jˈɛs.", 0)
	u.Durations = nil
	if err := b.Add(u); !errors.Is(err, ErrNoDurations) {
		t.Errorf("a voice without durations: %v", err)
	}
	u = unit("", "yes.", "jˈɛs.", 0)
	u.IDs = u.IDs[:len(u.IDs)-2]
	if err := b.Add(u); err == nil || !strings.Contains(err.Error(), "do not follow its phonemes") {
		t.Errorf("ids that are not the phonemes': %v", err)
	}
}

// The durations are the voice's frames, not necessarily whole numbers of samples apart: a unit's samples are
// spread over its frames.
func TestUnevenDurations(t *testing.T) {
	u := unit("", "in the house.", "ɪnðə hˈaʊs.", 1000)
	for i := range u.Durations {
		u.Durations[i] = 0
	}
	u.Durations[0] = 4 // ^: the voice's own lead-in
	u.Durations[2] = 2 // ɪ
	u.Durations[12] = 3
	u.Durations[20] = 1
	u.Samples = 10 * 256
	tl := build(t, u)
	// "in" starts after the 4 frames of ^ (and the empty pad): 1 s + 4 x 256 samples at 1 kHz.
	if !near(tl.Words[0].Start, 1+1.024) || !near(tl.Words[2].Start, 1+6*0.256) || !near(tl.Words[2].End, 1+10*0.256) {
		t.Errorf("words %+v", tl.Words)
	}
}

// JSON has the fields the tools expect; SRT and WebVTT are subtitles ffprobe reads, a cue a few words.
func TestWriteFormats(t *testing.T) {
	b := NewAligner(idMap(), 10*rate, phonemize).NewBuilder() // frames of 10 ms, as in speech
	for _, u := range []Unit{
		unit("It cost 1,205 dollars.", "It cost one thousand two hundred five dollars.",
			"ɪt kˈɔst wˈʌn θˈaʊzənd tˈuː hˈʌndɹɪd fˈaɪv dˈɑːlɚz.", 0),
		unit("Dr. Smith arrived.", "Doctor Smith arrived.", "dˈɑːktɚ smˈɪθ ɐɹˈaɪvd.", 10000),
	} {
		if err := b.Add(u); err != nil {
			t.Fatal(err)
		}
	}
	tl := b.Timeline()
	var js bytes.Buffer
	if err := Write(&js, JSON, tl); err != nil {
		t.Fatal(err)
	}
	var back struct {
		Words []struct {
			Word, Text string
			Start, End *float64
		}
		Sentences []struct {
			Text       string
			Start, End *float64
		}
	}
	if err := json.Unmarshal(js.Bytes(), &back); err != nil || len(back.Words) != 11 || len(back.Sentences) != 2 ||
		back.Words[3].Text != "1,205" || back.Words[3].Start == nil || back.Sentences[1].Text != "Dr. Smith arrived." {
		t.Fatalf("JSON %s (%v)", js.String(), err)
	}
	dir := t.TempDir()
	for _, f := range []Format{SRT, VTT} {
		var buf bytes.Buffer
		if err := Write(&buf, f, tl); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, "x"+f.Ext())
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		codec := map[Format]string{SRT: "subrip", VTT: "webvtt"}[f]
		if got := decodetest.Probe(t, path, "stream=codec_name"); got != codec {
			t.Errorf("ffprobe reads %s as %q, want %q", f, got, codec)
		}
		if got, want := decodetest.ProbeAll(t, path, "packet=pts_time"), cues(tl); len(got) != len(want) {
			t.Errorf("ffprobe finds %d cues in the %s, want %d:\n%s", len(got), f, len(want), buf.String())
		}
		if !strings.Contains(buf.String(), "It cost 1,205 dollars") || strings.Count(buf.String(), "1,205") != 1 {
			t.Errorf("%s: the number shows once, as written:\n%s", f, buf.String())
		}
	}
	var srt bytes.Buffer
	_ = Write(&srt, SRT, Timeline{Words: []Word{{Word: "hi", Text: "hi", Start: 3661.5, End: 3662.25}}, Sentences: []Sentence{{Text: "hi"}}})
	if srt.String() != "1\n01:01:01,500 --> 01:01:02,250\nhi\n\n" {
		t.Errorf("SRT %q", srt.String())
	}
}

func TestFormatOf(t *testing.T) {
	for path, want := range map[string]Format{"a.json": JSON, "b.SRT": SRT, "c/d.vtt": VTT} {
		if got, err := FormatOf(path); err != nil || got != want {
			t.Errorf("FormatOf(%q) = %q, %v", path, got, err)
		}
	}
	if _, err := FormatOf("x.txt"); err == nil {
		t.Error("x.txt accepted")
	}
}

// Without normalisation the whole text goes to espeak-ng, which finds the sentences: each unit speaks the next
// words of the one text, and a sentence's last word loses the full stop that an abbreviation keeps.
func TestWithoutNormalisation(t *testing.T) {
	text := "Yes. Dr. Smith, no."
	first := unit(text, text, "jˈɛs.", 0)
	second := unit(text, text, "dˈɑːktɚ smˈɪθ, nˈoʊ.", int64(first.Samples))
	tl := build(t, first, second)
	var got []string
	for _, w := range tl.Words {
		got = append(got, w.Word+"/"+w.Text)
	}
	if strings.Join(got, " ") != "Yes/Yes Dr/Dr. Smith/Smith no/no" {
		t.Errorf("words %q", got)
	}
	if len(tl.Sentences) != 2 || tl.Sentences[0].Text != "Yes." || tl.Sentences[1].Text != "Dr. Smith, no." {
		t.Errorf("sentences %+v", tl.Sentences)
	}
}

// A sentence too long to phonemize at once comes as several texts of one source: each text's words are the source's
// tokens after the last text's, and each unit's sentence is its own part of the source, not the whole again.
func TestALongSentencesTextsGoOnWhereTheLastEnded(t *testing.T) {
	const source = "In the house it cost 1,205 dollars, in the house it cost 200 dollars."
	tl := build(t,
		unit(source, "In the house it cost one thousand two hundred five dollars,",
			"ɪn ðə hˈaʊs ɪt kˈɔst wˈʌn θˈaʊzənd tˈuː hˈʌndɹɪd fˈaɪv dˈɑːlɚz,", 0),
		unit(source, "in the house it cost two hundred dollars.", "ɪn ðə hˈaʊs ɪt kˈɔst tˈuː hˈʌndɹɪd dˈɑːlɚz.", 5000))
	var texts []string
	for _, w := range tl.Words[11:] {
		texts = append(texts, w.Text)
	}
	if got := strings.Join(texts, " "); got != "in the house it cost 200 200 dollars" {
		t.Errorf("the second text's words show as %q; want them from the source's second half", got)
	}
	if len(tl.Sentences) != 2 || tl.Sentences[0].Text != "In the house it cost 1,205 dollars," ||
		tl.Sentences[1].Text != "in the house it cost 200 dollars." {
		t.Errorf("sentences %+v; want the source's two halves", tl.Sentences)
	}
	// The same sentence twice is two sentences, each the whole source.
	tl = build(t, unit("It cost 5 dollars.", "It cost five dollars.", "ɪt kˈɔst fˈaɪv dˈɑːlɚz.", 0),
		unit("It cost 5 dollars.", "It cost five dollars.", "ɪt kˈɔst fˈaɪv dˈɑːlɚz.", 5000))
	if len(tl.Sentences) != 2 || tl.Sentences[1].Text != "It cost 5 dollars." || tl.Words[6].Text != "5" {
		t.Errorf("a sentence said twice: %+v", tl)
	}
}

// The words of a block of phonemes are timed by its phonemes as written (espeak-ng would read them as letters), and
// show as written; the words after the block are timed too.
func TestABlockOfPhonemesIsTimedAsWritten(t *testing.T) {
	const source = "She said [[ həlˈoʊ ]] well."
	tl := build(t, unit(source, source, "ʃiː sˈɛd həlˈoʊ wˈɛl.", 0))
	var texts []string
	for _, w := range tl.Words {
		texts = append(texts, w.Text)
	}
	if got := strings.Join(texts, " "); got != "She said həlˈoʊ well" || len(tl.Sentences) != 1 || tl.Sentences[0].Text != source {
		t.Errorf("words %q, sentences %+v", got, tl.Sentences)
	}
}

// A pictograph is a word: espeak-ng reads it by name ("❤" is "red heart"), so it is timed and shown, and the words
// after it keep their own text.
func TestAPictographIsAWord(t *testing.T) {
	b := NewAligner(idMap(), rate, func(word string) (string, error) {
		if word == "❤" {
			return "ɹˈɛd hˈɑːɹt", nil
		}
		return phonemize(word)
	}).NewBuilder()
	const text = "She ❤ well."
	if err := b.Add(unit("", text, "ʃiː ɹˈɛd hˈɑːɹt wˈɛl.", 0)); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, w := range b.Timeline().Words {
		got = append(got, w.Word+"="+w.Text)
	}
	if strings.Join(got, " ") != "She=She ❤=❤ well=well" {
		t.Errorf("words %q", got)
	}
}
