package manifest

import (
	"bytes"
	"context"
	"fmt"
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

	f.Fuzz(func(t *testing.T, data []byte) {
		for _, limit := range []int{MaxLineBytes, 24} {
			checkScan(t, data, limit)
		}
	})
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
	lines := bytes.Count(data, []byte("\n"))
	if len(data) > 0 && data[len(data)-1] != '\n' {
		lines++
	}
	if len(items) != lines {
		t.Fatalf("limit %d: %d items for %d lines", limit, len(items), lines)
	}
	ids, outs := map[string]bool{}, map[string]bool{}
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
		if it.Err != nil {
			if !strings.HasPrefix(it.Err.Error(), prefix) {
				t.Errorf("Err %q does not start with %q", it.Err, prefix)
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
		if outs[out] {
			t.Fatalf("output %q used by two valid items", out)
		}
		outs[out] = true
		checkRange(t, "length_scale", it.LengthScale, false, MaxLengthScale)
		checkRange(t, "noise_scale", it.NoiseScale, true, MaxNoise)
		checkRange(t, "noise_w", it.NoiseW, true, MaxNoise)
		if h := it.Hash(); len(h) != 32 || h != it.Hash() {
			t.Fatalf("Hash %q is not a stable 32-digit digest", h)
		}
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
