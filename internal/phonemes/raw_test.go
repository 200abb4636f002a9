package phonemes

import (
	"reflect"
	"testing"
)

func TestSplitRaw(t *testing.T) {
	tests := []struct {
		name string
		text string
		want []Part
	}{
		{"no block", "Hello world.", []Part{{Text: "Hello world."}}},
		{"block between words", "Say [[ həlˈoʊ ]] now.", []Part{
			{Text: "Say "},
			{Text: "[[ həlˈoʊ ]]", Raw: true, Phonemes: "həlˈoʊ", SpaceBefore: true, SpaceAfter: true},
			{Text: " now."},
		}},
		{"no spaces around", "a[[b]]c", []Part{
			{Text: "a"}, {Text: "[[b]]", Raw: true, Phonemes: "b"}, {Text: "c"},
		}},
		// Blocks side by side have an empty part of words between them, as in Piper.
		{"adjacent blocks", "[[a]][[ b c ]]", []Part{
			{Text: ""}, {Text: "[[a]]", Raw: true, Phonemes: "a"}, {Text: ""},
			{Text: "[[ b c ]]", Raw: true, Phonemes: "b c"}, {Text: ""},
		}},
		// The shortest block wins, and only an ASCII space counts as a space before or after.
		{"shortest match", "x\t[[a]] ]] y", []Part{
			{Text: "x\t"}, {Text: "[[a]]", Raw: true, Phonemes: "a", SpaceAfter: true}, {Text: " ]] y"},
		}},
		{"empty block", "[[]]", []Part{{Text: ""}, {Text: "[[]]", Raw: true}, {Text: ""}}},
		{"white space trimmed like Python's strip", "[[\u00a0\u001f ə \t]]", []Part{
			{Text: ""}, {Text: "[[\u00a0\u001f ə \t]]", Raw: true, Phonemes: "ə"}, {Text: ""},
		}},
		{"a block does not span lines", "[[ a\nb ]]", []Part{{Text: "[[ a\nb ]]"}}},
		{"unclosed", "[[ a ] b", []Part{{Text: "[[ a ] b"}}},
		{"single brackets", "[a] [ b ]", []Part{{Text: "[a] [ b ]"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := SplitRaw(tt.text); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("SplitRaw(%q)\n got %+v\nwant %+v", tt.text, got, tt.want)
			}
		})
	}
}
