package phonemes

import (
	"bufio"
	"os"
	"strings"
	"testing"
)

// ljSpeechTexts reads the LJSpeech transcripts (second column) the other packages train on.
func ljSpeechTexts(tb testing.TB) []string {
	f, err := os.Open("../../testdata/ljspeech/metadata-sample.csv")
	if err != nil {
		tb.Fatalf("LJSpeech sample: %v", err)
	}
	defer f.Close()
	var texts []string
	scanner := bufio.NewScanner(f)
	for scanner.Scan() {
		if fields := strings.Split(scanner.Text(), "|"); len(fields) >= 2 {
			texts = append(texts, fields[1])
		}
	}
	return texts
}

// BenchmarkPhonemizeLJSpeech measures Phonemize plus IDs over LJSpeech lines, reporting lines/s.
func BenchmarkPhonemizeLJSpeech(b *testing.B) {
	texts := ljSpeechTexts(b)
	e := newTestEspeak(b)
	idMap := loadTestIDMap(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		sentences, err := e.Phonemize(texts[i%len(texts)], "en-us")
		if err != nil {
			b.Fatal(err)
		}
		for _, s := range sentences {
			IDs(s, idMap)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "lines/s")
}
