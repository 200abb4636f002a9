package results

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// FuzzOpenResults treats arbitrary bytes as a results.jsonl left by an
// earlier run (crashed, hand-edited, another tool's): Open must keep working,
// keep every line that is not a row it can read byte for byte and in order,
// and leave one row per item.
func FuzzOpenResults(f *testing.F) {
	f.Add([]byte(`{"id":"a","out":"a.wav","status":"ok","settings":{"text":"h"}}` + "\n"))
	f.Add([]byte(`{"id":"a","out":"a.wav","status":"ok"}` + "\n" + `{"id":"a","out":"a.wav","status":"error","error":"x"}`))
	f.Add([]byte(`{"source":"m.jsonl","line":3,"status":"error","error":"line 3: empty line"}` + "\n\n{\"id\":"))
	f.Add([]byte("\x00\xff\n[]\n{}\nnull\n"))
	f.Add([]byte(`{"id":"b","out":"b.wav","status":"ok","from_the_future":1}` + "\n"))
	f.Add([]byte(`{"id":"fuzz-new","out":"n.wav","status":"ok"}` + "\n" + `{"id":"c","out":"n.wav","status":"ok"}` + "\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, FileName), data, 0o644); err != nil {
			t.Fatal(err)
		}
		d, err := Open(dir, false)
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		if _, err := d.Check(Row{ID: "fuzz-new", Out: "new.wav", Settings: Settings{"k": "v"}}); err != nil {
			t.Fatalf("Check: %v", err)
		}
		if err := d.Append(Row{ID: "fuzz-new", Out: "new.wav", Status: StatusError, Error: "x"}); err != nil {
			t.Fatalf("Append: %v", err)
		}
		if err := d.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
		after, err := os.ReadFile(filepath.Join(dir, FileName))
		if err != nil {
			t.Fatal(err)
		}
		if len(after) == 0 || after[len(after)-1] != '\n' {
			t.Fatalf("%s does not end with a newline: %q", FileName, after)
		}
		var unreadable [][]byte
		for _, line := range splitLines(data) {
			if _, _, err := parseRow(line); err != nil {
				unreadable = append(unreadable, line)
			}
		}
		keys := map[string]bool{}
		next := 0
		for _, line := range splitLines(after) {
			if next < len(unreadable) && bytes.Equal(line, unreadable[next]) {
				next++
				continue
			}
			r, _, err := parseRow(line)
			if err != nil {
				t.Fatalf("line %q is neither a row nor one of the input's unreadable lines, in order", line)
			}
			if keys[r.key()] {
				t.Fatalf("two rows for %q", r.key())
			}
			keys[r.key()] = true
		}
		if next != len(unreadable) {
			t.Fatalf("the input's unreadable line %q was not kept", unreadable[next])
		}
		if !keys[Row{ID: "fuzz-new"}.key()] {
			t.Fatal("the appended row is missing")
		}
	})
}

// splitLines cuts data into lines without their "\n"; a last line without one is still a line.
func splitLines(data []byte) [][]byte {
	lines := bytes.SplitAfter(data, []byte("\n"))
	if len(lines[len(lines)-1]) == 0 {
		lines = lines[:len(lines)-1]
	}
	for i, l := range lines {
		lines[i] = bytes.TrimSuffix(l, []byte("\n"))
	}
	return lines
}
