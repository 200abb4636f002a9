package cmd

import (
	"bytes"
	"path/filepath"
	"testing"
	"unicode/utf16"
)

// utf16File is s in UTF-16 with a byte-order mark, as Windows Notepad saves "Unicode" text.
func utf16File(s string, bigEndian bool) string {
	var b bytes.Buffer
	for _, u := range append([]uint16{0xFEFF}, utf16.Encode([]rune(s))...) {
		if bigEndian {
			b.Write([]byte{byte(u >> 8), byte(u)})
		} else {
			b.Write([]byte{byte(u), byte(u >> 8)})
		}
	}
	return b.String()
}

// A text file in UTF-16 with a byte-order mark, or in UTF-8 with one, gives the phonemes and ids of the same text
// in plain UTF-8, from --file and from standard input, with and without normalisation (without it espeak-ng used
// to get UTF-16's NUL bytes and spell the text letter by letter).
func TestPhonemizeReadsByteOrderMarks(t *testing.T) {
	dir := isolate(t)
	const text = "“Café crème,” she said.\r\nNaïve résumé.\r\n"
	for _, flags := range [][]string{{"--no-normalize"}, nil} {
		args := append([]string{"phonemize", "--json"}, flags...)
		want := run(t, text, args...)
		if want.code != 0 || want.out == "" {
			t.Fatalf("%v plain UTF-8: exit %d: %s", flags, want.code, want.errOut)
		}
		for name, content := range map[string]string{
			"utf16le.txt": utf16File(text, false),
			"utf16be.txt": utf16File(text, true),
			"utf8bom.txt": "\uFEFF" + text,
		} {
			path := writeFile(t, filepath.Join(dir, name), content)
			if got := run(t, "", append(args, "--file", path)...); got.code != 0 || got.out != want.out {
				t.Errorf("%v --file %s: exit %d: %s\ngot  %s\nwant %s", flags, name, got.code, got.errOut, got.out, want.out)
			}
			if got := run(t, content, args...); got.code != 0 || got.out != want.out {
				t.Errorf("%v stdin %s: exit %d: %s\ngot  %s\nwant %s", flags, name, got.code, got.errOut, got.out, want.out)
			}
		}
	}
}
