package cmd

import (
	"strings"
	"testing"
)

// Raw phonemes reach the output as written, and each line is read without its surrounding white space, as Piper's
// command line reads it: the space after the block at the end of the line adds no space phoneme.
func TestPhonemizeRawPhonemes(t *testing.T) {
	isolate(t)
	for _, flags := range [][]string{{"--no-normalize"}, nil} {
		args := append([]string{"phonemize", "--json"}, flags...)
		r := run(t, "  Say [[ ˈaɪ ]]  \n[[ bˈiː ]], then 2.\n", args...)
		if r.code != 0 {
			t.Fatalf("%v: exit %d: %s", flags, r.code, r.errOut)
		}
		lines := strings.Split(strings.TrimSpace(r.out), "\n")
		// s ˈ e ɪ ␠ ˈ a ɪ
		if len(lines) != 2 || !strings.Contains(lines[0], `"phonemes":"sˈeɪ ˈaɪ","ids":[1,0,31,0,120,0,18,0,74,0,3,0,120,0,14,0,74,0,2]`) {
			t.Errorf("%v: %s", flags, r.out)
		}
		// espeak-ng reads ", then 2." on its own, where the comma follows no word and ends no clause.
		if len(lines) == 2 && !strings.Contains(lines[1], `"phonemes":"bˈiːðˈɛn tˈuː."`) {
			t.Errorf("%v: second line %s", flags, lines[1])
		}
	}
}
