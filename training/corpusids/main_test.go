package main

import (
	"errors"
	"strings"
	"testing"
)

func TestConvert(t *testing.T) {
	idMap := map[string][]int64{"_": {0}, "^": {1}, "$": {2}, " ": {3}, "a": {14}, "b": {15}, ".": {10}}
	// A fake phonemizer: one "sentence" per '/'-separated part, phonemes = the text itself.
	fake := func(text string) ([]string, error) {
		if text == "boom" {
			return nil, errors.New("espeak failed")
		}
		return strings.Split(text, "/"), nil
	}
	tests := []struct {
		name, in, want, wantErr string
		wantN                   int
		wantMissing             []string
	}{
		{name: "normalized column, BOS pad ... EOS", in: "X1|raw|ab.\n", want: "X1|1 0 14 0 15 0 10 0 2|ab.\n", wantN: 1},
		{name: "sentences concatenated, mapped once", in: "X2|raw|a./b.\n", want: "X2|1 0 14 0 10 0 15 0 10 0 2|a./b.\n", wantN: 1},
		{name: "unknown phonemes skipped and reported once", in: "X3|r|azz\nX4|r|z\n", want: "X3|1 0 14 0 2|azz\nX4|1 0 2|z\n", wantN: 2, wantMissing: []string{"z"}},
		{name: "too few fields", in: "X5|only\n", wantErr: "metadata line 1: want ID|text|normalized, got 2 fields"},
		{name: "phonemizer error names the utterance", in: "X6|r|boom\n", wantErr: "phonemizing X6: espeak failed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out strings.Builder
			n, missing, err := convert(strings.NewReader(tt.in), &out, fake, idMap)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if out.String() != tt.want || n != tt.wantN || strings.Join(missing, ",") != strings.Join(tt.wantMissing, ",") {
				t.Errorf("got %q n=%d missing=%q, want %q n=%d missing=%q", out.String(), n, missing, tt.want, tt.wantN, tt.wantMissing)
			}
		})
	}
}
