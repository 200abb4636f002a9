package manifest

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
	"unicode/utf16"
)

// utf16Bytes is s in UTF-16 with a byte-order mark, as Windows Notepad saves "Unicode" text.
func utf16Bytes(s string, bigEndian bool) []byte {
	var b bytes.Buffer
	for _, u := range append([]uint16{0xFEFF}, utf16.Encode([]rune(s))...) {
		if bigEndian {
			b.Write([]byte{byte(u >> 8), byte(u)})
		} else {
			b.Write([]byte{byte(u), byte(u >> 8)})
		}
	}
	return b.Bytes()
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
