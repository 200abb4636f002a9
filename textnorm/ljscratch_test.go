package textnorm

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"testing"
	"unicode"
)

func words(s string) string {
	s = strings.ToLower(s)
	s = strings.Map(func(r rune) rune {
		if unicode.IsLetter(r) || r == '\'' {
			return r
		}
		return ' '
	}, s)
	return strings.Join(strings.Fields(s), " ")
}

func TestLJScratch(t *testing.T) {
	f, _ := os.Open("/work/shared/data/ljspeech-part1/metadata.csv")
	sc := bufio.NewScanner(f)
	out, _ := os.Create("/tmp/ljdiff.txt")
	diff, changed := 0, 0
	for sc.Scan() {
		parts := strings.Split(strings.TrimRight(sc.Text(), "\r"), "|")
		raw, norm := parts[1], parts[2]
		if raw == norm {
			continue
		}
		changed++
		got := Normalize(raw)
		if words(got) != words(norm) {
			diff++
			fmt.Fprintf(out, "RAW  %s\nWANT %s\nGOT  %s\n\n", raw, norm, got)
		}
	}
	t.Logf("changed %d, differ %d", changed, diff)
}
