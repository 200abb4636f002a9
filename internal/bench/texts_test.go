package bench

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/text/encoding/unicode"
)

func TestReadTexts(t *testing.T) {
	tests := []struct {
		name, content string
		want          []string
		wantErr       string
	}{
		{"plain lines", "\uFEFFHello there.\n\n  Second line.  \r\nThird\n", []string{"Hello there.", "Second line.", "Third"}, ""},
		{"ljspeech uses normalized text", "LJ001-0001|Dr. Smith, 1850.|Doctor Smith, eighteen fifty.\r\n" +
			"LJ001-0002|in being comparatively modern.|\r\n",
			[]string{"Doctor Smith, eighteen fifty.", "in being comparatively modern."}, ""},
		{"a stray pipe keeps plain reading", "a | b | c\nplain line\n", []string{"a | b | c", "plain line"}, ""},
		{"empty file", "\n  \n", nil, "no non-empty lines"},
		{"ljspeech entry without text", "LJ1|x|y\nLJ2||\n", nil, "entry LJ2 has no text"},
		{"UTF-16 with a byte-order mark", utf16LE("Café crème.\r\nSecond line.\r\n"), []string{"Café crème.", "Second line."}, ""},
		{"Windows-1252", "Fine line.\nCaf\xe9 cr\xe8me.\n", nil, "invalid UTF-8 on line 2, column 4 (byte 0xE9): save the text as UTF-8 (from Windows-1252 or Latin-1: iconv -f WINDOWS-1252 -t UTF-8)"},
		{"old Mac line breaks", "One.\rTwo.\r\rThree.\r\nFour.", []string{"One.", "Two.", "Three.", "Four."}, ""},
		{"very long line", strings.Repeat("word ", 30000) + "end\n", []string{strings.Repeat("word ", 30000) + "end"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "texts.txt")
			if err := os.WriteFile(path, []byte(tt.content), 0o600); err != nil {
				t.Fatal(err)
			}
			got, err := ReadTexts(path)
			if tt.wantErr != "" {
				if err == nil || !strings.HasSuffix(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), path) {
					t.Fatalf("ReadTexts error = %v, want one naming the file and ending %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("ReadTexts: %v", err)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("ReadTexts = %q, want %q", got, tt.want)
			}
		})
	}
}

// utf16LE is s in UTF-16 with a byte-order mark, as Windows Notepad saves "Unicode" text.
func utf16LE(s string) string {
	out, err := unicode.UTF16(unicode.LittleEndian, unicode.UseBOM).NewEncoder().String(s)
	if err != nil {
		panic(err)
	}
	return out
}

func TestReadTextsMissingFile(t *testing.T) {
	_, err := ReadTexts(filepath.Join(t.TempDir(), "absent.txt"))
	if !errors.Is(err, fs.ErrNotExist) || !strings.HasPrefix(err.Error(), "reading texts: ") {
		t.Errorf("ReadTexts error = %v, want a wrapped not-exist error", err)
	}
}

// LJSpeech's metadata format (ID|raw|normalized) loads as its normalized texts.
func TestReadTextsLJSpeechMetadata(t *testing.T) {
	got, err := ReadTexts("../../testdata/ljspeech/metadata-sample.csv")
	if err != nil {
		t.Fatal(err)
	}
	const second = "Printing, then, for our purpose, may be considered as the art of making books by means of movable types."
	if len(got) != 1638 || got[1] != second {
		t.Errorf("got %d texts, second %q; want 1638, %q", len(got), got[1], second)
	}
}
