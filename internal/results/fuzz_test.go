package results

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzOpenResults treats arbitrary bytes as a results.jsonl left by an
// earlier run (crashed, hand-edited, truncated): Open must repair it into a
// file of whole rows, one per item, and keep working.
func FuzzOpenResults(f *testing.F) {
	f.Add([]byte(`{"id":"a","out":"a.wav","status":"ok","hash":"h"}` + "\n"))
	f.Add([]byte(`{"id":"a","out":"a.wav","status":"ok"}` + "\n" + `{"id":"a","out":"a.wav","status":"error","error":"x"}`))
	f.Add([]byte(`{"source":"m.jsonl","line":3,"status":"error","error":"line 3: empty line"}` + "\n\n{\"id\":"))
	f.Add([]byte("\x00\xff\n[]\n{}\nnull\n"))
	f.Add([]byte(`{"id":"b","out":"b.wav","status":"ok","from_the_future":1}` + "\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, FileName), data, 0o644); err != nil {
			t.Fatal(err)
		}
		d, err := Open(dir, false)
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		if err := d.Append(Row{ID: "fuzz-new", Out: "new.wav", Status: StatusError, Error: "x"}); err != nil {
			t.Fatalf("Append: %v", err)
		}
		if err := d.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
		rows := readRowsFile(t, dir, false) // fails on any line that is not a whole row; rows may carry fields of a newer version
		keys := map[string]bool{}
		for _, r := range rows {
			if err := r.check(); err != nil {
				t.Fatalf("row %+v: %v", r, err)
			}
			if keys[r.key()] {
				t.Fatalf("two rows for %q", r.key())
			}
			keys[r.key()] = true
		}
		if !keys[Row{ID: "fuzz-new"}.key()] {
			t.Fatal("the appended row is missing")
		}
	})
}
