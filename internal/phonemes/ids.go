package phonemes

import (
	"strings"

	"golang.org/x/text/unicode/norm"
)

// The phoneme_id_map keys Piper reserves for padding, beginning and end of sentence.
const (
	Pad = "_"
	BOS = "^"
	EOS = "$"
)

// IDs maps one sentence's phonemes to model input ids in Piper's layout; unknown phonemes are skipped
// and returned (each distinct one once, in order of first appearance).
//
// The layout is BOS, Pad, then each phoneme's ids followed by Pad, then EOS: ^ _ p1 _ p2 _ ... pn _ $.
// Each Unicode code point is one phoneme, as in Piper, so multi-character keys of the map (Piper's
// diphthong entries such as "aɪ") are never used. A map without "^", "_" or "$" simply contributes no
// ids for them.
func IDs(phonemes string, idMap map[string][]int64) (ids []int64, missing []string) {
	ids = make([]int64, 0, 2*len(phonemes)+3)
	ids = append(ids, idMap[BOS]...)
	ids = append(ids, idMap[Pad]...)
	var seen map[string]bool
	for _, r := range phonemes {
		phoneme := string(r)
		phonemeIDs, ok := idMap[phoneme]
		if !ok {
			if !seen[phoneme] {
				if seen == nil {
					seen = make(map[string]bool)
				}
				seen[phoneme] = true
				missing = append(missing, phoneme)
			}
			continue
		}
		ids = append(ids, phonemeIDs...)
		ids = append(ids, idMap[Pad]...)
	}
	ids = append(ids, idMap[EOS]...)
	return ids, missing
}

// Text returns the "text" phoneme type's sentences (code points after NFD; split the same way at
// . ? !).
//
// Piper's text phoneme type uses the text's own characters as phonemes. A sentence ends after a run
// of . ? ! that is followed by white space or the end of the text, so "3.5" and "e.g." stay whole;
// the marks stay with their sentence, the white space between sentences is dropped, and sentences
// that are empty after trimming are left out. (piper1-gpl itself hands a text voice the whole input
// as one sentence; each sentence here holds the same code points, only the breaks are added.)
func Text(text string) []string {
	var sentences []string
	runes := []rune(norm.NFD.String(text))
	start := 0
	for i := 0; i < len(runes); i++ {
		if !isSentenceMark(runes[i]) {
			continue
		}
		end := i + 1
		for end < len(runes) && isSentenceMark(runes[end]) {
			end++
		}
		i = end - 1
		if end < len(runes) && !isSpace(runes[end]) {
			continue
		}
		if s := strings.TrimSpace(string(runes[start:end])); s != "" {
			sentences = append(sentences, s)
		}
		start = end
	}
	if s := strings.TrimSpace(string(runes[start:])); s != "" {
		sentences = append(sentences, s)
	}
	return sentences
}

func isSentenceMark(r rune) bool { return r == '.' || r == '?' || r == '!' }
