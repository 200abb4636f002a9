package manifest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"path"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzScanManifest feeds arbitrary bytes to the manifest reader, once with
// the real line limit and once with a tiny one (to exercise over-long lines),
// and checks the guarantees in the package documentation.
func FuzzScanManifest(f *testing.F) {
	for _, tc := range singleLineCases {
		f.Add([]byte(tc.line + "\n"))
	}
	f.Add([]byte("{\"text\":\"a\"}\n\n{\"id\":\"1\",\"text\":\"b\"}\r\n[1]\n{\"id\":\"x\",\"text\":\"c\",\"out\":\"1.wav\"}"))
	f.Add([]byte("\n\n\n"))
	f.Add([]byte("\xff\xfe{\"text\":\"x\"}\n"))
	f.Add([]byte("{\"text\":\"a\"}\r{\"text\":\"b\"}\r\n\n\r{\"text\":\"c\"}\r"))

	f.Fuzz(func(t *testing.T, data []byte) {
		for _, limit := range []int{MaxLineBytes, 24} {
			checkScan(t, data, limit)
		}
		checkStdinLikeFile(t, data)
	})
}

// checkStdinLikeFile reads data as "-" (through the stream reader, as standard input is) and checks that it gives
// the items a file gives (one whose default ids start as stdin's do).
func checkStdinLikeFile(t *testing.T, data []byte) {
	describe := func(source string, r io.Reader) []string {
		var got []string
		run := newRunState()
		err := run.scanManifest(context.Background(), source, r, func(it Item) error {
			got = append(got, fmt.Sprintf("%d %q %q %v", it.Line, it.ID, it.Text, it.Err))
			return nil
		})
		if err != nil {
			t.Fatalf("scanManifest(%s) returned %v", source, err)
		}
		return got
	}
	stream, err := OpenInput(context.Background(), stdinName, bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close()
	fromFile, fromStdin := describe("stdin.jsonl", bytes.NewReader(data)), describe(stdinName, stream)
	if fmt.Sprint(fromFile) != fmt.Sprint(fromStdin) {
		t.Fatalf("read as a file:\n%q\nread as stdin:\n%q", fromFile, fromStdin)
	}
}

func checkScan(t *testing.T, data []byte, limit int) {
	run := newRunState()
	run.maxLine = limit
	var items []Item
	err := run.scanManifest(context.Background(), "f.jsonl", bytes.NewReader(data), func(it Item) error {
		items = append(items, it)
		return nil
	})
	if err != nil {
		t.Fatalf("scanManifest returned %v", err)
	}
	text, err := io.ReadAll(NewTextReader(bytes.NewReader(data))) // lines are the decoded text's (UTF-16 with a BOM)
	if err != nil {
		t.Fatal(err)
	}
	// A line ends at "\n", "\r\n" or a lone "\r".
	text = bytes.ReplaceAll(bytes.ReplaceAll(text, []byte("\r\n"), []byte("\n")), []byte("\r"), []byte("\n"))
	lines := bytes.Count(text, []byte("\n"))
	if len(text) > 0 && text[len(text)-1] != '\n' {
		lines++
	}
	if len(items) != lines {
		t.Fatalf("limit %d: %d items for %d lines", limit, len(items), lines)
	}
	ids := map[string]bool{}
	for i, it := range items {
		prefix := fmt.Sprintf("line %d: ", i+1)
		if it.Line != i+1 || it.Source != "f.jsonl" {
			t.Fatalf("item %d has line %d source %q", i, it.Line, it.Source)
		}
		if it.ID != "" {
			if ids[it.ID] {
				t.Fatalf("id %q yielded twice", it.ID)
			}
			ids[it.ID] = true
		}
		if it.Err != nil { // it says what is wrong; Line says where (as with Warnings)
			if it.Err.Error() == "" || strings.HasPrefix(it.Err.Error(), prefix) {
				t.Errorf("Err %q is empty or repeats its line number", it.Err)
			}
			continue
		}
		if it.ID == "" || strings.TrimSpace(it.Text) == "" || !utf8.ValidString(it.Text) {
			t.Fatalf("valid item with id %q text %q", it.ID, it.Text)
		}
		out := it.OutPath()
		if path.IsAbs(out) || strings.HasPrefix(out, "../") || strings.Contains(out, "/../") || path.Clean(out) != out ||
			len(path.Ext(out)) < 2 || strings.ContainsAny(out, "\x00\n") {
			t.Fatalf("valid item with unsafe output path %q", out)
		}
		checkRange(t, "length_scale", it.LengthScale, false, MaxLengthScale)
		checkRange(t, "noise_scale", it.NoiseScale, true, MaxNoise)
		checkRange(t, "noise_w", it.NoiseW, true, MaxNoise)
	}
}

func checkRange(t *testing.T, name string, v *float32, zeroAllowed bool, max float32) {
	if v == nil {
		return
	}
	if *v > max || *v < 0 || (*v == 0 && !zeroAllowed) || *v != *v {
		t.Fatalf("valid item with %s = %v", name, *v)
	}
}
