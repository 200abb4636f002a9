package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/text/encoding/unicode"
)

// utf16File is s in UTF-16 with a byte-order mark, as Windows Notepad saves "Unicode" text.
func utf16File(s string, bigEndian bool) string {
	order := unicode.LittleEndian
	if bigEndian {
		order = unicode.BigEndian
	}
	out, err := unicode.UTF16(order, unicode.UseBOM).NewEncoder().String(s)
	if err != nil {
		panic(err)
	}
	return out
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

// Text that is not UTF-8 (a file saved as Windows-1252) or not text at all (a WAV or PNG given by mistake) stops
// synth and phonemize before any audio, with an error naming the file (or standard input, or the arguments) and the
// line: its bytes were dropped (café read "caf") or read aloud (a WAV as 25 minutes of "R I F F ... data").
func TestSynthRefusesTextThatIsNotText(t *testing.T) {
	dir := isolate(t)
	needORT(t)
	wav := filepath.Join(dir, "hello.wav")
	if r := run(t, "", "synth", "--voice", tinyVoice, "Hello.", "-o", wav); r.code != 0 {
		t.Fatalf("a WAV to give by mistake: exit %d: %s", r.code, r.errOut)
	}
	cp1252 := writeFile(t, filepath.Join(dir, "notes.txt"), "Fine.\n\x93Caf\xe9,\x94 she said.\n")
	png := writeFile(t, filepath.Join(dir, "photo.png"), "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x01\x00")
	for _, tc := range []struct {
		name, stdin string
		args        []string
		want        string
	}{
		{"synth --file cp1252", "", []string{"synth", "--file", cp1252},
			"reading text file " + cp1252 + ": invalid UTF-8 on line 2, column 1 (byte 0x93)"},
		{"synth --file wav", "", []string{"synth", "--file", wav}, "reading text file " + wav + ": NUL byte on line 1, column "},
		{"synth --file png", "", []string{"synth", "--file", png}, "reading text file " + png + ": NUL byte on line 3, column 1"},
		{"synth stdin", "Fine.\n\x93Caf\xe9,\x94 she said.\n", []string{"synth"},
			"reading text from standard input: invalid UTF-8 on line 2, column 1 (byte 0x93)"},
		{"synth argument", "", []string{"synth", "Caf\xe9."}, "the text given as arguments: invalid UTF-8 on line 1, column 4"},
		{"phonemize --file", "", []string{"phonemize", "--file", cp1252},
			"reading text file " + cp1252 + ": invalid UTF-8 on line 2, column 1 (byte 0x93)"},
		{"phonemize stdin", "\x00\x01", []string{"phonemize"}, "reading text from standard input: NUL byte on line 1, column 1"},
	} {
		out := filepath.Join(dir, "out.wav")
		args := tc.args
		if args[0] == "synth" {
			args = append(args, "--voice", tinyVoice, "-o", out)
		}
		r := run(t, tc.stdin, args...)
		if r.code != ExitFailure || !strings.Contains(r.errOut, tc.want) || r.out != "" {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit %d and %q", tc.name, r.code, r.out, r.errOut, ExitFailure, tc.want)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%s: wrote %s", tc.name, out)
			os.Remove(out)
		}
	}
}

// In a batch, a .txt file that is not text is an error row naming its line; the other items are spoken.
func TestBatchRecordsDocumentsThatAreNotText(t *testing.T) {
	dir := isolate(t)
	needORT(t)
	in := filepath.Join(dir, "in")
	writeFile(t, filepath.Join(in, "good.txt"), "Hello there.\n")
	writeFile(t, filepath.Join(in, "sound.txt"), "RIFF\x24\x08\x00\x00WAVEfmt \x10\x00\x00\x00")
	writeFile(t, filepath.Join(in, "utf16.txt"), "H\x00i\x00.\x00\n\x00")
	out := filepath.Join(dir, "out")
	r := run(t, "", "batch", in, "-o", out, "--voice", tinyVoice)
	if r.code != ExitFailure {
		t.Fatalf("exit %d: %s", r.code, r.errOut)
	}
	want := map[string]string{
		"good":  "",
		"sound": "reading its input: NUL byte on line 1, column 7: this is binary data, not text",
		"utf16": "reading its input: NUL byte on line 1, column 2: this is binary data, not text",
	}
	rows := readRows(t, out)
	if len(rows) != len(want) {
		t.Fatalf("rows %+v", rows)
	}
	for _, row := range rows {
		w, ok := want[row.ID]
		switch {
		case !ok:
			t.Errorf("unexpected row %+v", row)
		case w == "" && (row.Status != "ok" || row.AudioSeconds <= 0):
			t.Errorf("%s: %+v, want ok with audio", row.ID, row)
		case w != "" && (row.Status != "error" || !strings.HasPrefix(row.Error, w)):
			t.Errorf("%s: status %s, error %q; want %q...", row.ID, row.Status, row.Error, w)
		case w != "" && !strings.Contains(r.errOut, row.Source):
			t.Errorf("%s: stderr does not name %s: %s", row.ID, row.Source, r.errOut)
		}
	}
}
