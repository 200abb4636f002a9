package cmd

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

type resultRow struct {
	ID           string            `json:"id"`
	Line         int               `json:"line"`
	Source       string            `json:"source"`
	Out          string            `json:"out"`
	Status       string            `json:"status"`
	Error        string            `json:"error"`
	Sentences    int               `json:"sentences"`
	AudioSeconds float64           `json:"audio_seconds"`
	Format       string            `json:"format"`
	Bytes        int64             `json:"bytes"`
	Settings     map[string]string `json:"settings"`
}

func readRows(t *testing.T, dir string) []resultRow {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "results.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows []resultRow
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var r resultRow
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("results.jsonl line %q: %v", sc.Text(), err)
		}
		rows = append(rows, r)
	}
	return rows
}

func writeFile(t *testing.T, path, content string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestBatchManifestWithBrokenLines(t *testing.T) {
	dir := isolate(t)
	needORT(t)
	manifest := writeFile(t, filepath.Join(dir, "in.jsonl"), strings.Join([]string{
		`{"id": "a", "text": "The first good line."}`,
		`{"id": "b", "text": `, // broken JSON
		`{"text": "Third line, id from the line number."}`,
		``, // blank line
		`{"id": "e", "text": "Escaping.", "out": "../escaped.wav"}`,
		`{"id": "f", "text": "Fine again.", "out": "sub/f.wav", "length_scale": 1.5}`,
		`{"id": "g", "text": "Unknown voice.", "voice": "no-such-voice"}`,
	}, "\n")+"\n")
	out := filepath.Join(dir, "out")
	r := run(t, "", "batch", manifest, "-o", out, "--voice", tinyVoice)
	if r.code != ExitFailure {
		t.Fatalf("exit %d, want 1 (some items failed); stderr: %s", r.code, r.errOut)
	}
	rows := readRows(t, out)
	if len(rows) != 7 {
		t.Fatalf("%d rows, want one per line (7): %+v", len(rows), rows)
	}
	byLine := map[int]resultRow{}
	for _, row := range rows {
		byLine[row.Line] = row
	}
	for line, wantOK := range map[int]bool{1: true, 2: false, 3: true, 4: false, 5: false, 6: true, 7: false} {
		row := byLine[line]
		if (row.Status == "ok") != wantOK {
			t.Errorf("line %d: %+v, want ok=%v", line, row, wantOK)
		}
		if !wantOK && !strings.Contains(r.errOut, fmt.Sprintf("in.jsonl:%d: ", line)) {
			t.Errorf("stderr does not name line %d: %s", line, r.errOut)
		}
	}
	if byLine[3].ID != "in-3" || byLine[3].Out != "in-3.wav" {
		t.Errorf("line 3 row %+v: id should default to the manifest's name and the line number", byLine[3])
	}
	for _, name := range []string{"a.wav", "in-3.wav", "sub/f.wav"} {
		samples, _ := readWAVFile(t, filepath.Join(out, name))
		if len(samples) < 1000 || rms(samples) < 100 {
			t.Errorf("%s: %d samples, rms %.0f", name, len(samples), rms(samples))
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "escaped.wav")); err == nil {
		t.Error("an out path escaped the output folder")
	}
	if f := byLine[6]; f.AudioSeconds <= 0 || f.Out != "sub/f.wav" {
		t.Errorf("f: %+v", f)
	}
}

func TestBatchResumesAndRedoesEditedItems(t *testing.T) {
	dir := isolate(t)
	needORT(t)
	path := filepath.Join(dir, "in.jsonl")
	writeFile(t, path, `{"id":"one","text":"First item."}`+"\n"+`{"id":"two","text":"Second item."}`+"\n")
	out := filepath.Join(dir, "out")
	if r := run(t, "", "batch", path, "-o", out, "--voice", tinyVoice); r.code != 0 {
		t.Fatalf("first run: exit %d: %s", r.code, r.errOut)
	}
	writeFile(t, path, `{"id":"one","text":"First item."}`+"\n"+`{"id":"two","text":"Second item, edited."}`+"\n")
	r := run(t, "", "batch", path, "-o", out, "--voice", tinyVoice)
	if r.code != 0 || !strings.Contains(r.errOut, "1 skipped") {
		t.Fatalf("second run: exit %d, want 1 skipped: %s", r.code, r.errOut)
	}
	rows := readRows(t, out)
	ok := map[string]int{}
	for _, row := range rows {
		if row.Status == "ok" {
			ok[row.ID]++
		}
	}
	if ok["one"] != 1 || ok["two"] != 1 {
		t.Errorf("ok rows per id = %v, want exactly one each: %+v", ok, rows)
	}
	// Other settings change the audio: nothing may be skipped.
	r = run(t, "", "batch", path, "-o", out, "--voice", tinyVoice, "--length-scale", "1.5")
	if r.code != 0 || !strings.Contains(r.errOut, "2 ok, 0 failed, 0 skipped") {
		t.Errorf("--length-scale 1.5 re-run: exit %d: %s", r.code, r.errOut)
	}
	r = run(t, "", "batch", path, "-o", out, "--voice", tinyVoice, "--force")
	if r.code != 0 || !strings.Contains(r.errOut, "2 ok") {
		t.Errorf("--force: exit %d: %s", r.code, r.errOut)
	}
}

func TestBatchTextFilesAndFolders(t *testing.T) {
	dir := isolate(t)
	needORT(t)
	writeFile(t, filepath.Join(dir, "docs", "alpha.txt"), "Alpha is a document. It has two sentences.")
	writeFile(t, filepath.Join(dir, "docs", "beta.txt"), "Beta has one.")
	single := writeFile(t, filepath.Join(dir, "gamma.txt"), "Gamma stands alone.")
	out := filepath.Join(dir, "out")
	r := run(t, "", "batch", filepath.Join(dir, "docs"), single, "-o", out, "--voice", tinyVoice)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.errOut)
	}
	for _, name := range []string{"alpha.wav", "beta.wav", "gamma.wav"} {
		if _, err := os.Stat(filepath.Join(out, name)); err != nil {
			t.Error(err)
		}
	}
	rows := readRows(t, out)
	if len(rows) != 3 {
		t.Fatalf("rows %+v", rows)
	}
	for _, row := range rows {
		if row.ID == "alpha" && row.Sentences != 2 {
			t.Errorf("alpha: %d sentences, want 2", row.Sentences)
		}
	}
}
