package manifest

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"golang.org/x/text/encoding/unicode"
)

// utf16Bytes is s in UTF-16 with a byte-order mark, as Windows Notepad saves "Unicode" text.
func utf16Bytes(s string, bigEndian bool) []byte {
	order := unicode.LittleEndian
	if bigEndian {
		order = unicode.BigEndian
	}
	out, err := unicode.UTF16(order, unicode.UseBOM).NewEncoder().String(s)
	if err != nil {
		panic(err)
	}
	return []byte(out)
}

// A text file saved by Windows Notepad as "Unicode" (UTF-16 with a byte-order mark) or as UTF-8 with a byte-order
// mark reads as the same text as plain UTF-8: a .txt document and a manifest alike, whatever is in them.
func TestScanReadsByteOrderMarks(t *testing.T) {
	const doc = "“Café crème,” she said.\r\nNaïve résumé — 5 €.\r\n"
	const manifest = "{\"id\":\"a\",\"text\":\"Café crème.\"}\r\n{\"id\":\"b\",\"text\":\"Ünïcödé ✓\"}\r\n"
	for name, encode := range map[string]func(string) []byte{
		"UTF-16LE":  func(s string) []byte { return utf16Bytes(s, false) },
		"UTF-16BE":  func(s string) []byte { return utf16Bytes(s, true) },
		"UTF-8 BOM": func(s string) []byte { return append([]byte("\uFEFF"), s...) },
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			d := writeFile(t, dir, "notes.txt", string(encode(doc)))
			m := writeFile(t, dir, "prompts.jsonl", string(encode(manifest)))
			items, err := scanAll(t, d, m)
			if err != nil {
				t.Fatal(err)
			}
			want := []struct{ id, text string }{{"notes", doc}, {"a", "Café crème."}, {"b", "Ünïcödé ✓"}}
			if len(items) != len(want) {
				t.Fatalf("%d items, want %d: %+v", len(items), len(want), items)
			}
			for i, w := range want {
				if it := items[i]; it.Err != nil || it.ID != w.id || it.Text != w.text {
					t.Errorf("item %d = {%q %q %v}, want {%q %q}", i, it.ID, it.Text, it.Err, w.id, w.text)
				}
			}
		})
	}
}

// Standard input read as a manifest is decoded as a file is, and a stream's text reaches the reader as it comes.
func TestTextReaderDecodesStreams(t *testing.T) {
	stream, err := OpenInput(context.Background(), stdinName, bytes.NewReader(utf16Bytes("{\"text\":\"Grüße\"}\n", false)))
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close()
	var items []Item
	if err := newRunState().scanManifest(context.Background(), stdinName, stream, func(it Item) error {
		items = append(items, it)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(items) != 1 || items[0].Err != nil || items[0].Text != "Grüße" {
		t.Fatalf("items = %+v", items)
	}
	// Text without a byte-order mark passes byte for byte, invalid UTF-8 included (its reader names the line).
	for _, in := range []string{"", "a", "ab", "plain text\n", "caf\xe9\n", "\xef\xbb", "\xff"} {
		got, err := io.ReadAll(NewTextReader(strings.NewReader(in)))
		if err != nil || string(got) != in {
			t.Errorf("NewTextReader(%q) = %q, %v", in, got, err)
		}
	}
}

func TestCheckText(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string // "" = text
	}{
		{"", ""},
		{"Hello there.\r\nGrüße, 日本語, “quotes” — and 🍕.\n", ""},
		{"Caf\xe9 crème", "invalid UTF-8 on line 1, column 4 (byte 0xE9)"},
		{"one\r\ntwo\rthree\n\x93quoted\x94", "invalid UTF-8 on line 4, column 1 (byte 0x93)"},
		{"日本\xe9", "invalid UTF-8 on line 1, column 3 (byte 0xE9)"},
		{"cut at the end \xe6\x97", "invalid UTF-8 on line 1, column 16 (byte 0xE6)"},
		{"ok\nH\x00e\x00", "NUL byte on line 2, column 2: this is binary data"},
		// A binary file is called binary even where a byte that is not UTF-8 comes before its first NUL.
		{"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "NUL byte on line 3, column 1: this is binary data"},
		{"RIFF\x24\x08\x00\x00WAVEfmt ", "NUL byte on line 1, column 7: this is binary data"},
	} {
		err := CheckText([]byte(tc.in))
		var te *TextError
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("CheckText(%q) = %v, want nil", tc.in, err)
		case tc.want != "" && (!errors.As(err, &te) || !strings.HasPrefix(err.Error(), tc.want)):
			t.Errorf("CheckText(%q) = %v, want %s...", tc.in, err, tc.want)
		}
	}
}

// A stream is checked as it is read, whatever its reads cut: the text before the first byte that is not text comes
// through, then the error, which names its line.
func TestCheckedTextStreams(t *testing.T) {
	const good = "Grüße, café.\r\nZweite Zeile — “ok” 🍕\n"
	for name, wrap := range map[string]func(io.Reader) io.Reader{
		"whole":    func(r io.Reader) io.Reader { return r },
		"byte":     iotest.OneByteReader,
		"half":     iotest.HalfReader,
		"data+EOF": iotest.DataErrReader,
	} {
		got, err := io.ReadAll(CheckedText(wrap(strings.NewReader(good))))
		if err != nil || string(got) != good {
			t.Errorf("%s: read %q, %v; want the text whole", name, got, err)
		}
		got, err = io.ReadAll(CheckedText(wrap(strings.NewReader(good + "third \x93line\x94\n"))))
		var te *TextError
		if string(got) != good+"third " || !errors.As(err, &te) || te.Line != 3 || te.Column != 7 || te.Byte != 0x93 {
			t.Errorf("%s: read %q, %v; want the text up to line 3, column 7, then its error", name, got, err)
		}
		got, err = io.ReadAll(CheckedText(wrap(strings.NewReader(good + "\xe6\x97"))))
		if string(got) != good || !errors.As(err, &te) || te.Line != 3 || te.Column != 1 {
			t.Errorf("%s: a character cut by the end: read %q, %v", name, got, err)
		}
	}
}

// A .txt file that is no text (a binary file renamed, UTF-16 without a byte-order mark, Windows-1252) is an error
// item naming the line; the other files of the folder are read.
func TestScanRefusesDocumentsThatAreNotText(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "a-fine.txt", "Fine.\n")
	writeFile(t, dir, "b-sound.txt", "RIFF\x24\x08\x00\x00WAVEfmt \x10\x00\x00\x00")
	writeFile(t, dir, "c-utf16.txt", "H\x00i\x00.\x00\n\x00")
	writeFile(t, dir, "d-cp1252.txt", "Fine.\n\x93Quoted.\x94\n")
	items, err := scanAll(t, dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"",
		"NUL byte on line 1, column 7: this is binary data, not text",
		"NUL byte on line 1, column 2: this is binary data, not text",
		"invalid UTF-8 on line 2, column 1 (byte 0x93)",
	}
	if len(items) != len(want) {
		t.Fatalf("%d items: %+v", len(items), items)
	}
	for i, w := range want {
		if got := errText(items[i]); w == "" && got != "" || !strings.HasPrefix(got, w) || w != "" && items[i].Text != "" {
			t.Errorf("%s: error %q, text %q; want %q...", items[i].Source, got, items[i].Text, w)
		}
	}
}

// A manifest's lines end at "\n", "\r\n" or a lone "\r" (old Mac OS files), numbered as an editor numbers them; a
// manifest of lone "\r" was one line, one error for all its items.
func TestScanManifestLineBreaks(t *testing.T) {
	items := scanText(t, "{\"text\":\"a\"}\r{\"text\":\"b\"}\r\n{\"text\":\"c\"}\n\r{\"text\":\"d\"}\r")
	want := []struct {
		line      int
		text, err string
	}{{1, "a", ""}, {2, "b", ""}, {3, "c", ""}, {4, "", "empty line"}, {5, "d", ""}}
	if len(items) != len(want) {
		t.Fatalf("%d items: %+v", len(items), items)
	}
	for i, w := range want {
		if it := items[i]; it.Line != w.line || it.Text != w.text || errText(it) != w.err {
			t.Errorf("item %d = {%d %q %q}, want %+v", i, it.Line, it.Text, errText(it), w)
		}
	}

	// A stream's line that ends at "\r" is read without waiting for what comes after it.
	pr, pw := io.Pipe()
	got := make(chan Item)
	go newRunState().scanManifest(context.Background(), "m.jsonl", pr, func(it Item) error { got <- it; return nil })
	go pw.Write([]byte("{\"text\":\"first\"}\r"))
	select {
	case it := <-got:
		if it.Text != "first" || it.Err != nil {
			t.Errorf("first item %+v", it)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a line ended by \\r waits for the next byte")
	}
	pw.Close()
}
