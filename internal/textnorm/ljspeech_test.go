package textnorm

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"
)

// ljspeechPath is a sample of LJSpeech's transcript list (see its README): the raw text and a
// normalised reading of each of 1,638 public-domain sentences.
var ljspeechPath = filepath.Join("..", "..", "testdata", "ljspeech", "metadata-sample.csv")

type ljLine struct{ raw, normalized string }

func readLJSpeech(t *testing.T) []ljLine {
	t.Helper()
	f, err := os.Open(ljspeechPath)
	if err != nil {
		t.Fatalf("LJSpeech sample: %v", err)
	}
	defer f.Close()
	var lines []ljLine
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		parts := strings.Split(strings.TrimRight(sc.Text(), "\r"), "|")
		if len(parts) != 3 {
			t.Fatalf("reading %s: line %q has %d fields, want 3", ljspeechPath, sc.Text(), len(parts))
		}
		lines = append(lines, ljLine{parts[1], parts[2]})
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("reading %s: %v", ljspeechPath, err)
	}
	return lines
}

// spokenWords lower-cases s and keeps only its words, for comparing readings that differ in
// punctuation or hyphenation.
func spokenWords(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && r != '\'' })
}

// joinInitialisms writes "U.S.S.R." as "USSR", as Normalize does, so that the comparison sees one word.
func joinInitialisms(s string) string {
	fields := strings.Fields(s)
	for k, f := range fields {
		core := strings.TrimRight(strings.TrimLeft(f, openers), trailingPunct)
		if isInitialism(core) {
			fields[k] = strings.ReplaceAll(core, ".", "")
		}
	}
	return strings.Join(fields, " ")
}

// expansionWords are the words Normalize may add to prose that LJSpeech leaves alone (it keeps
// "Mr.", "e.g.", "a.m." as written).
var expansionWords = setOf("mister", "missus", "doctor", "doctors", "saint", "et", "cetera", "for", "example",
	"that", "is", "namely", "reverend", "honorable", "lieutenant", "company", "incorporated", "messers", "junior",
	"senior", "am", "pm", "us", "mp", "re", "dc", "nra", "aaa", "esquire", "professor", "general", "captain",
	"colonel", "sergeant", "major", "governor", "limited", "brothers", "mount", "street", "versus", "the", "first",
	"second", "third", "fourth", "al", "number", "page", "pages", "volume", "chapter", "figure", "compare",
	"approximately", "avenue", "road", "also", "known", "as", "uk", "un", "usa", "phd", "ma", "ba", "llb", "lld",
	"kc", "qc", "md", "figures", "senator", "representative", "president", "superintendent", "admiral", "father",
	"drive", "madame", "fort", "volumes", "section", "sections")

// TestLJSpeechProseUnchanged runs Normalize over the LJSpeech sentences that need no normalisation
// (LJSpeech's own reading equals the raw text) and checks that every word it adds is an
// abbreviation's expansion: ordinary prose must come through untouched.
func TestLJSpeechProseUnchanged(t *testing.T) {
	checked := 0
	for _, l := range readLJSpeech(t) {
		if l.raw != l.normalized {
			continue
		}
		checked++
		got := Normalize(l.raw)
		remaining := map[string]int{}
		for _, w := range spokenWords(joinInitialisms(l.raw)) {
			remaining[w]++
		}
		for _, w := range spokenWords(got) {
			if remaining[w] > 0 {
				remaining[w]--
				continue
			}
			if !expansionWords[w] {
				t.Errorf("Normalize(%q)\n = %q\n added %q", l.raw, got, w)
				break
			}
		}
	}
	if checked < 1400 {
		t.Fatalf("checked %d unchanged LJSpeech lines, want over 1400", checked)
	}
}

// TestLJSpeechAgreement compares Normalize with LJSpeech's readings of the sentences that need
// normalising. The two differ by design in places (LJSpeech says "the fourteenth June", keeps
// "Mr." and reads digits of money with commas), so this guards against regressions rather than
// demanding equality.
func TestLJSpeechAgreement(t *testing.T) {
	agree, total := 0, 0
	for _, l := range readLJSpeech(t) {
		if l.raw == l.normalized {
			continue
		}
		total++
		if strings.Join(spokenWords(Normalize(l.raw)), " ") == strings.Join(spokenWords(l.normalized), " ") {
			agree++
		}
	}
	t.Logf("%d of %d normalised LJSpeech lines read the same as LJSpeech", agree, total)
	if agree*100 < total*62 {
		t.Errorf("only %d of %d LJSpeech lines agree, want at least 62%%", agree, total)
	}
}
