package timestamps

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ttsgen/ttsgen/internal/audio/decodetest"
)

// cueWords are espeak-ng's phonemes for the words of the cue tests, beside the other tests' dictionary.
var cueWords = map[string]string{
	"is": "ɪz", "very": "vˈɛɹi", "good": "ɡˈʊd", "isn't": "ˈɪzənt", "if": "ɪf", "a<b": "ɐbˈiː", "then": "ðˈɛn",
	"b>a": "bˈiːɐ", "go": "ɡˈoʊ", "from": "fɹʌm", "a-->b": "ɐbˈiː", "now": "nˈaʊ", "r&d": "ɑːɹdˈiː",
}

// buildCues times units with frames of 10 ms, as in speech, so that a sentence fits a cue.
func buildCues(t *testing.T, units ...Unit) Timeline {
	t.Helper()
	b := NewAligner(idMap(), 10*rate, func(word string) (string, error) {
		if p, ok := cueWords[strings.ToLower(word)]; ok {
			return p, nil
		}
		return phonemize(word)
	}).NewBuilder()
	for _, u := range units {
		if err := b.Add(u); err != nil {
			t.Fatal(err)
		}
	}
	return b.Timeline()
}

// writeCueTexts writes tl in f and reads back each cue's text: the lines after its timing line.
func writeCueTexts(t *testing.T, f Format, tl Timeline) (out string, texts []string) {
	t.Helper()
	var buf bytes.Buffer
	if err := Write(&buf, f, tl); err != nil {
		t.Fatalf("writing %s: %v", f, err)
	}
	for _, block := range strings.Split(strings.TrimSpace(buf.String()), "\n\n") {
		lines := strings.Split(block, "\n")
		for i, l := range lines {
			if strings.Contains(l, " --> ") {
				texts = append(texts, strings.Join(lines[i+1:], "\n"))
				break
			}
		}
	}
	return buf.String(), texts
}

// Two tokens spelled the same are two words of a cue ("very very"); the words one token is spoken as are one
// ("1,205").
func TestCuesKeepRepeatedWords(t *testing.T) {
	tl := buildCues(t,
		unit("", "It is very very good, isn't it?", "ɪt ɪz vˈɛɹi vˈɛɹi ɡˈʊd, ˈɪzənt ɪt?", 0),
		unit("It cost 1,205 dollars.", "It cost one thousand two hundred five dollars.",
			"ɪt kˈɔst wˈʌn θˈaʊzənd tˈuː hˈʌndɹɪd fˈaɪv dˈɑːlɚz.", 10000))
	want := "It is very very good|isn't it|It cost 1,205 dollars"
	for _, f := range []Format{SRT, VTT} {
		out, texts := writeCueTexts(t, f, tl)
		if got := strings.Join(texts, "|"); got != want {
			t.Errorf("%s cues %q, want %q:\n%s", f, got, want, out)
		}
	}
}

// WebVTT cue text is escaped: a player reads "<" as a tag ("If a<b then b>a" shows as "If aa") and "&" as a
// character reference, and "-->" may not be in a cue at all. ffmpeg reads the escaped text back as written.
// SRT text stays as written: ffmpeg's SRT decoder shows entities as they are.
func TestVTTEscapesCueText(t *testing.T) {
	tl := buildCues(t,
		unit("", "If a<b then b>a.", "ɪf ɐbˈiː ðˈɛn bˈiːɐ.", 0),
		unit("", "Go from A-->B now.", "ɡˈoʊ fɹʌm ɐbˈiː nˈaʊ.", 10000),
		unit("", "R&D is fine.", "ɑːɹdˈiː ɪz fˈaɪn.", 20000))
	written := []string{"If a<b then b>a", "Go from A-->B now", "R&D is fine"}

	out, texts := writeCueTexts(t, VTT, tl)
	want := []string{"If a&lt;b then b&gt;a", "Go from A--&gt;B now", "R&amp;D is fine"}
	if strings.Join(texts, "|") != strings.Join(want, "|") {
		t.Errorf("WebVTT cues %q, want %q:\n%s", texts, want, out)
	}
	for _, text := range texts {
		if strings.Contains(text, "-->") || strings.ContainsAny(text, "<>") {
			t.Errorf("WebVTT cue text %q has a tag or an arrow", text)
		}
	}
	path := filepath.Join(t.TempDir(), "x.vtt")
	if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := decodedCues(t, path); strings.Join(got, "|") != strings.Join(written, "|") {
		t.Errorf("ffmpeg reads the WebVTT cues as %q, want %q:\n%s", got, written, out)
	}

	out, texts = writeCueTexts(t, SRT, tl)
	if strings.Join(texts, "|") != strings.Join(written, "|") {
		t.Errorf("SRT cues %q, want them as written, %q:\n%s", texts, written, out)
	}
}

// decodedCues is each cue's text as ffmpeg decodes a subtitle file, converted to ASS.
func decodedCues(t *testing.T, path string) []string {
	t.Helper()
	out, err := exec.Command(decodetest.Tool(t, "ffmpeg"), "-hide_banner", "-loglevel", "error", "-i", path,
		"-f", "ass", "pipe:1").Output()
	if err != nil {
		t.Fatalf("ffmpeg could not decode %s: %v", filepath.Base(path), err)
	}
	var texts []string
	for _, line := range strings.Split(string(out), "\n") {
		if rest, ok := strings.CutPrefix(line, "Dialogue: "); ok {
			// Text is the last of an ASS event's ten fields, and may itself have commas.
			if fields := strings.SplitN(rest, ",", 10); len(fields) == 10 {
				texts = append(texts, strings.TrimRight(fields[9], "\r"))
			}
		}
	}
	return texts
}
