package cmd

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
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

// Help examples are pasted into a shell as they are: inside double quotes a shell expands "$5" (an empty positional
// parameter), so "paid $5." would say "paid ." Every command's examples quote such text with single quotes.
func TestHelpExamplesKeepDollarAmounts(t *testing.T) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for i, line := range strings.Split(c.Example, "\n") {
			if pos := expandedDollarDigit(line); pos >= 0 {
				t.Errorf("%s: example line %d has $ and a digit unquoted or inside double quotes, which a shell expands "+
					"(quote it with single quotes): %s", c.CommandPath(), i+1, line)
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	root := NewRootCmd(IO{})
	walk(root)
	if expandedDollarDigit(`ttsgen phonemize "paid $5."`) < 0 || expandedDollarDigit(`ttsgen phonemize 'paid $5.' "\$5"`) >= 0 {
		t.Error("expandedDollarDigit misreads the quotes")
	}
}

// expandedDollarDigit is where, in a shell command line, a $ followed by a digit stands inside double quotes (or
// unquoted), where a shell expands it; -1 if nowhere. Single quotes and a backslash keep the $ as it is.
func expandedDollarDigit(line string) int {
	var single, double bool
	for i := 0; i < len(line); i++ {
		switch c := line[i]; {
		case single:
			single = c != '\''
		case c == '\\':
			i++ // the next character is literal
		case c == '\'' && !double:
			single = true
		case c == '"':
			double = !double
		case c == '$' && i+1 < len(line) && line[i+1] >= '0' && line[i+1] <= '9':
			return i
		}
	}
	return -1
}

// Each JSON line's text is its own sentence's, with or without normalisation: without it espeak-ng finds the
// sentences of the line ("Dr." ends one), and each line named the whole input.
func TestPhonemizeJSONTextIsEachSentences(t *testing.T) {
	isolate(t)
	for _, tc := range []struct {
		flags []string
		input string
		want  []string
	}{
		{[]string{"--no-normalize"}, "Dr. Smith paid $5.", []string{"Dr.", "Smith paid $5."}},
		{[]string{"--no-normalize"}, "Hello there. How are you?", []string{"Hello there.", "How are you?"}},
		{nil, "Dr. Smith paid $5. He left at once!", []string{"Doctor Smith paid five dollars.", "He left at once!"}},
		{nil, "Hello there. How are you?", []string{"Hello there.", "How are you?"}},
	} {
		input := tc.input
		r := run(t, "", append(append([]string{"phonemize", "--json"}, tc.flags...), input)...)
		if r.code != 0 {
			t.Fatalf("%v %q: exit %d: %s", tc.flags, input, r.code, r.errOut)
		}
		var texts []string
		for _, line := range strings.Split(strings.TrimSpace(r.out), "\n") {
			var s struct {
				Text string `json:"text"`
			}
			if err := json.Unmarshal([]byte(line), &s); err != nil {
				t.Fatalf("%v %q: line %q: %v", tc.flags, input, line, err)
			}
			texts = append(texts, s.Text)
		}
		if !slices.Equal(texts, tc.want) {
			t.Errorf("phonemize --json %v %q: texts %q, want %q", tc.flags, input, texts, tc.want)
		}
	}
}
