package results

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
)

func openDir(t *testing.T, dir string, force bool) *Dir {
	t.Helper()
	d, err := Open(dir, force)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// writeOutput writes content to out through Resolve and WriteFile.
func writeOutput(t *testing.T, d *Dir, out, content string) string {
	t.Helper()
	p, err := d.Resolve(out)
	if err != nil {
		t.Fatalf("Resolve(%q): %v", out, err)
	}
	if err := d.WriteFile(p, func(w io.Writer) error {
		_, err := io.WriteString(w, content)
		return err
	}); err != nil {
		t.Fatalf("WriteFile: %v", err)
	}
	return p
}

func mustAppend(t *testing.T, d *Dir, r Row) {
	t.Helper()
	if err := d.Append(r); err != nil {
		t.Fatalf("Append(%+v): %v", r, err)
	}
}

// fileRows parses results.jsonl strictly: every line must be a whole row
// with no fields beyond Row's.
func fileRows(t *testing.T, dir string) []Row { return readRowsFile(t, dir, true) }

func readRowsFile(t *testing.T, dir string, strict bool) []Row {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, FileName))
	if err != nil {
		t.Fatal(err)
	}
	if len(data) > 0 && data[len(data)-1] != '\n' {
		t.Fatalf("%s does not end with a newline", FileName)
	}
	var rows []Row
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		var r Row
		dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		if strict {
			dec.DisallowUnknownFields()
		}
		if err := dec.Decode(&r); err != nil {
			t.Fatalf("invalid row %q: %v", sc.Text(), err)
		}
		rows = append(rows, r)
	}
	return rows
}

func tempFiles(t *testing.T, dir string) []string {
	t.Helper()
	var found []string
	filepath.WalkDir(dir, func(p string, e os.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(e.Name(), TempPrefix) {
			found = append(found, p)
		}
		return nil
	})
	return found
}

func TestResumeDone(t *testing.T) {
	dir := t.TempDir()
	d := openDir(t, dir, false)
	writeOutput(t, d, "a.wav", "RIFF...")
	writeOutput(t, d, "sub/b.wav", "RIFF...")
	writeOutput(t, d, "gone.wav", "RIFF...")
	mustAppend(t, d, Row{ID: "a", Line: 1, Out: "a.wav", Status: StatusOK, Hash: "h1", Sentences: 2, AudioSeconds: 1.5})
	mustAppend(t, d, Row{ID: "b", Line: 2, Out: "sub/b.wav", Status: StatusOK, Hash: "h2"})
	mustAppend(t, d, Row{ID: "gone", Line: 3, Out: "gone.wav", Status: StatusOK, Hash: "h3"})
	mustAppend(t, d, Row{ID: "bad", Line: 4, Out: "bad.wav", Status: StatusError, Error: "line 4: boom", Hash: "h4"})
	writeOutput(t, d, "bad.wav", "RIFF...") // a stray file does not make an error row done
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(dir, "gone.wav"))
	os.WriteFile(filepath.Join(dir, "sub", "b.wav"), nil, 0o644) // truncated by hand

	d = openDir(t, dir, false)
	for _, tc := range []struct {
		id, hash string
		want     bool
		why      string
	}{
		{"a", "h1", true, "ok row, same hash, WAV present"},
		{"a", "other", false, "item edited since"},
		{"a", "", false, "hash missing"},
		{"b", "h2", false, "WAV is empty"},
		{"gone", "h3", false, "WAV missing"},
		{"bad", "h4", false, "error row"},
		{"new", "h5", false, "never seen"},
		{"", "", false, "no id"},
	} {
		if got := d.Done(tc.id, tc.hash); got != tc.want {
			t.Errorf("Done(%q, %q) = %v, want %v (%s)", tc.id, tc.hash, got, tc.want, tc.why)
		}
	}
	if r, ok := d.Row("a"); !ok || r.Sentences != 2 || r.AudioSeconds != 1.5 {
		t.Errorf("Row(a) = %+v, %v", r, ok)
	}
	d.Done("a", "h1") // asking twice counts once
	mustAppend(t, d, Row{ID: "gone", Out: "gone.wav", Status: StatusOK, Hash: "h3"})
	mustAppend(t, d, Row{ID: "bad", Out: "bad.wav", Status: StatusError, Error: "again"})
	if got, want := d.Summary(), (Summary{OK: 1, Errors: 1, Skipped: 1}); got != want {
		t.Errorf("Summary = %+v, want %+v", got, want)
	}

	// force starts over.
	d.Close()
	d = openDir(t, dir, true)
	if d.Done("a", "h1") {
		t.Error("Done after Open(force) = true, want false")
	}
	if rows := fileRows(t, dir); len(rows) != 0 {
		t.Errorf("results file after force holds %d rows, want 0", len(rows))
	}
}

func TestLastRowWinsAndFileIsCompacted(t *testing.T) {
	dir := t.TempDir()
	d := openDir(t, dir, false)
	writeOutput(t, d, "a.wav", "x")
	mustAppend(t, d, Row{ID: "a", Out: "a.wav", Status: StatusError, Error: "first try"})
	mustAppend(t, d, Row{ID: "b", Out: "b.wav", Status: StatusError, Error: "no"})
	mustAppend(t, d, Row{ID: "a", Out: "a.wav", Status: StatusOK, Hash: "h"})
	mustAppend(t, d, Row{Source: "m.jsonl", Line: 7, Status: StatusError, Error: "line 7: invalid JSON"})
	mustAppend(t, d, Row{Source: "m.jsonl", Line: 7, Status: StatusError, Error: "line 7: empty line"})
	if !d.Done("a", "h") {
		t.Error("Done(a) = false after its ok row replaced the error row")
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	rows := fileRows(t, dir)
	got := []string{}
	for _, r := range rows {
		got = append(got, fmt.Sprintf("%s/%d:%s:%s", r.ID, r.Line, r.Status, r.Error))
	}
	want := []string{"b/0:error:no", "a/0:ok:", "/7:error:line 7: empty line"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("compacted rows = %q, want %q", got, want)
	}
	if err := d.Append(Row{ID: "c", Out: "c.wav", Status: StatusOK}); !errors.Is(err, errClosed) {
		t.Errorf("Append after Close: %v, want %v", err, errClosed)
	}
}

func TestOpenRepairsACrashedResultsFile(t *testing.T) {
	dir := t.TempDir()
	good := `{"id":"a","line":1,"out":"a.wav","status":"ok","sentences":1,"audio_seconds":1,"hash":"h"}`
	content := good + "\n" +
		`{"id":"a","line":1,"out":"a.wav","status":"error","error":"old"}` + "\n" + // superseded by the next one
		good + "\n" +
		"not json\n" +
		`{"id":"x","status":"weird"}` + "\n" +
		`{"id":"b","line":2,"out":"b.wav","sta` // torn by a crash
	os.WriteFile(filepath.Join(dir, FileName), []byte(content), 0o644)
	os.WriteFile(filepath.Join(dir, "a.wav"), []byte("x"), 0o644)
	os.MkdirAll(filepath.Join(dir, "sub"), 0o755)
	stale := []string{filepath.Join(dir, TempPrefix+"123"), filepath.Join(dir, "sub", TempPrefix+"456")}
	for _, p := range stale {
		os.WriteFile(p, []byte("half a wav"), 0o644)
	}

	d := openDir(t, dir, false)
	if left := tempFiles(t, dir); len(left) != 0 {
		t.Errorf("stale temp files left after Open: %q", left)
	}
	wantWarnings := []string{
		"removed 2 temp file(s) left by an interrupted run",
		"results.jsonl line 4: dropped an unreadable row: invalid character 'o' in literal null (expecting 'u')",
		`results.jsonl line 5: dropped an unreadable row: unknown status "weird" (want "ok" or "error")`,
		"results.jsonl line 6: dropped a row cut off by an interrupted run",
	}
	if got := d.Warnings(); fmt.Sprint(got) != fmt.Sprint(wantWarnings) {
		t.Errorf("Warnings =\n%q\nwant\n%q", got, wantWarnings)
	}
	if rows := fileRows(t, dir); len(rows) != 1 || rows[0].ID != "a" || rows[0].Status != StatusOK {
		t.Errorf("compacted on Open to %+v, want the single ok row for a", rows)
	}
	if !d.Done("a", "h") {
		t.Error("Done(a) = false")
	}
	mustAppend(t, d, Row{ID: "b", Out: "b.wav", Status: StatusError, Error: "x"})
	if rows := fileRows(t, dir); len(rows) != 2 {
		t.Errorf("after one more append the file holds %d rows, want 2", len(rows))
	}
}

func TestOneBatchPerDirectory(t *testing.T) {
	dir := t.TempDir()
	d := openDir(t, dir, false)
	_, err := Open(dir, false)
	if want := fmt.Sprintf("output directory %s is in use by another ttsgen batch", dir); err == nil || err.Error() != want {
		t.Fatalf("second Open: %v, want %q", err, want)
	}
	d.Close()
	d2, err := Open(dir, false)
	if err != nil {
		t.Fatalf("Open after Close: %v", err)
	}
	d2.Close()
}

func TestResolve(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "out")
	outside := filepath.Join(root, "elsewhere")
	os.MkdirAll(outside, 0o755)
	d := openDir(t, dir, false)
	os.MkdirAll(filepath.Join(dir, "real"), 0o755)
	os.Symlink(outside, filepath.Join(dir, "escape"))
	os.Symlink("real", filepath.Join(dir, "alias"))
	os.Symlink(filepath.Join(outside, "x.wav"), filepath.Join(dir, "file-link.wav"))
	os.Symlink(filepath.Join(root, "missing"), filepath.Join(dir, "dangling"))
	os.WriteFile(filepath.Join(dir, "plain"), nil, 0o644)

	for _, tc := range []struct {
		out, want, wantErr string
	}{
		{out: "a.wav", want: filepath.Join(dir, "a.wav")},
		{out: "deep/er/b.wav", want: filepath.Join(dir, "deep/er/b.wav")},
		{out: "./c//d.wav", want: filepath.Join(dir, "c/d.wav")},
		{out: "alias/e.wav", want: filepath.Join(dir, "alias/e.wav")},
		{out: "../escaped.wav", wantErr: `output "../escaped.wav": must not contain ".."`},
		{out: "a/../../x.wav", wantErr: `output "a/../../x.wav": must not contain ".."`},
		{out: "/abs.wav", wantErr: `output "/abs.wav": must be a relative path`},
		{out: "", wantErr: `output "": empty path`},
		{out: ".", wantErr: `output ".": names the output directory itself`},
		{out: "results.jsonl", wantErr: `output "results.jsonl": would overwrite results.jsonl`},
		{out: "x/.ttsgen-tmp-1", wantErr: `output "x/.ttsgen-tmp-1": must not use the reserved prefix ".ttsgen-"`},
		{out: "escape/x.wav", wantErr: fmt.Sprintf(`output "escape/x.wav": escape is a symlink to %s, outside the output directory`, outside)},
		{out: "file-link.wav", wantErr: `output "file-link.wav": file-link.wav is a symlink that cannot be followed: lstat ` + filepath.Join(outside, "x.wav") + `: no such file or directory`},
		{out: "dangling/x.wav", wantErr: `output "dangling/x.wav": dangling is a symlink that cannot be followed: lstat ` + filepath.Join(root, "missing") + `: no such file or directory`},
		{out: "plain/x.wav", wantErr: `output "plain/x.wav": plain exists and is not a folder`},
		{out: "real", wantErr: `output "real" is an existing folder`},
	} {
		got, err := d.Resolve(tc.out)
		if tc.wantErr != "" {
			if err == nil || err.Error() != tc.wantErr {
				t.Errorf("Resolve(%q) error = %v\nwant %q", tc.out, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("Resolve(%q) = %q, %v; want %q", tc.out, got, err, tc.want)
			continue
		}
		if info, err := os.Stat(filepath.Dir(got)); err != nil || !info.IsDir() {
			t.Errorf("Resolve(%q) did not create its folder: %v", tc.out, err)
		}
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Errorf("something was created outside the output directory: %v", entries)
	}
	// Once the file exists outside, the symlink to it is followable but still refused.
	os.WriteFile(filepath.Join(outside, "x.wav"), []byte("x"), 0o644)
	if _, err := d.Resolve("file-link.wav"); err == nil || !strings.Contains(err.Error(), "outside the output directory") {
		t.Errorf("Resolve of a symlinked file outside: %v", err)
	}
}

func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	d := openDir(t, dir, false)
	target, err := d.Resolve("x.wav")
	if err != nil {
		t.Fatal(err)
	}
	// An earlier version of the output must survive a failed rewrite.
	os.WriteFile(target, []byte("old"), 0o644)
	failWith := func(err error) func(io.Writer) error {
		return func(w io.Writer) error {
			io.WriteString(w, "partial")
			return err
		}
	}
	var tempName string
	for _, tc := range []struct {
		name    string
		fn      func(io.Writer) error
		wantErr string
		is      error
	}{
		{"fn fails", failWith(errors.New("encoder broke")), "writing " + filepath.Join(dir, "x.wav") + ": encoder broke", nil},
		{"ENOSPC", failWith(syscall.ENOSPC), "writing " + filepath.Join(dir, "x.wav") + ": no space left on device", syscall.ENOSPC},
		{"ENOSPC from the file", func(w io.Writer) error {
			tempName = w.(*os.File).Name()
			return &os.PathError{Op: "write", Path: tempName, Err: syscall.ENOSPC}
		}, "writing " + filepath.Join(dir, "x.wav") + ": no space left on device", syscall.ENOSPC},
		{"fn closes the file", func(w io.Writer) error { return w.(*os.File).Close() },
			"writing " + filepath.Join(dir, "x.wav") + ": keeping the replaced file's permissions: file already closed", os.ErrClosed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := d.WriteFile(target, tc.fn)
			if err == nil || err.Error() != tc.wantErr {
				t.Fatalf("err = %v\nwant %q", err, tc.wantErr)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("errors.Is(err, %v) = false", tc.is)
			}
			if left := tempFiles(t, dir); len(left) != 0 {
				t.Errorf("temp files left: %q", left)
			}
			if data, _ := os.ReadFile(target); string(data) != "old" {
				t.Errorf("target holds %q after a failed write, want the old content", data)
			}
		})
	}
	if !strings.HasPrefix(filepath.Base(tempName), TempPrefix) || filepath.Dir(tempName) != dir {
		t.Errorf("temp file %q is not a %s* file in the target's folder", tempName, TempPrefix)
	}

	// Success: content in place, seekable writer, readable permissions.
	err = d.WriteFile(target, func(w io.Writer) error {
		ws := w.(io.WriteSeeker)
		io.WriteString(ws, "RIFF0000data")
		ws.Seek(4, io.SeekStart)
		_, err := io.WriteString(ws, "1234")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	info, _ := os.Stat(target)
	if data, _ := os.ReadFile(target); string(data) != "RIFF1234data" || info.Mode().Perm() != 0o644 {
		t.Errorf("written %q mode %v, want RIFF1234data 0644", data, info.Mode().Perm())
	}
	if err := d.WriteFile(filepath.Join(t.TempDir(), "y.wav"), failWith(nil)); err == nil || !strings.Contains(err.Error(), "not a file inside the output directory") {
		t.Errorf("WriteFile outside the directory: %v", err)
	}
}

func TestWriteFilePanicLeavesNoTempFile(t *testing.T) {
	dir := t.TempDir()
	d := openDir(t, dir, false)
	target, _ := d.Resolve("p.wav")
	func() {
		defer func() { recover() }()
		d.WriteFile(target, func(io.Writer) error { panic("encoder bug") })
	}()
	if left := tempFiles(t, dir); len(left) != 0 {
		t.Errorf("temp files left after a panic: %q", left)
	}
}

func TestConcurrentAppend(t *testing.T) {
	dir := t.TempDir()
	d := openDir(t, dir, false)
	const workers, each = 16, 50
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				id := fmt.Sprintf("w%d-%d", w, i)
				r := Row{ID: id, Out: id + ".wav", Status: StatusOK, Error: strings.Repeat("é", i*20), Hash: "h"}
				if err := d.Append(r); err != nil {
					t.Error(err)
					return
				}
				d.Summary()
			}
		}()
	}
	wg.Wait()
	if got := d.Summary(); got.OK != workers*each {
		t.Errorf("Summary.OK = %d, want %d", got.OK, workers*each)
	}
	d.Close()
	rows := fileRows(t, dir)
	seen := map[string]bool{}
	for _, r := range rows {
		if seen[r.ID] {
			t.Fatalf("id %s appears twice", r.ID)
		}
		seen[r.ID] = true
	}
	if len(rows) != workers*each {
		t.Errorf("file holds %d rows, want %d", len(rows), workers*each)
	}
}

func TestAppendRefusesMalformedRows(t *testing.T) {
	d := openDir(t, t.TempDir(), false)
	for _, tc := range []struct {
		row  Row
		want string
	}{
		{Row{ID: "a", Out: "a.wav", Status: "done"}, `recording result for "a": unknown status "done" (want "ok" or "error")`},
		{Row{ID: "a", Status: StatusOK}, `recording result for "a": an "ok" row needs an id and an out path`},
		{Row{Status: StatusError, Error: "x"}, `recording result for "": a row needs an id or a source`},
	} {
		if err := d.Append(tc.row); err == nil || err.Error() != tc.want {
			t.Errorf("Append(%+v) = %v, want %q", tc.row, err, tc.want)
		}
	}
}

func TestWriteErrorNamesDirectoryAsGiven(t *testing.T) {
	root := t.TempDir()
	t.Chdir(root)
	d := openDir(t, "out", false)
	p, _ := d.Resolve("x.wav")
	err := d.WriteFile(p, func(io.Writer) error { return syscall.ENOSPC })
	if want := "writing out/x.wav: no space left on device"; err == nil || err.Error() != want {
		t.Errorf("err = %v, want %q", err, want)
	}
}

// fullDisk lets the first okWrites writes through, then writes half of each
// row and fails with ENOSPC, like a disk that has just filled up.
type fullDisk struct {
	*os.File
	okWrites int
}

func (f *fullDisk) Write(p []byte) (int, error) {
	if f.okWrites > 0 {
		f.okWrites--
		return f.File.Write(p)
	}
	n, _ := f.File.Write(p[:len(p)/2])
	return n, syscall.ENOSPC
}

func TestAppendOnFullDiskLeavesNoTornRow(t *testing.T) {
	dir := t.TempDir()
	d := openDir(t, dir, false)
	disk := &fullDisk{File: d.file.(*os.File), okWrites: 1}
	d.file = disk
	mustAppend(t, d, Row{ID: "a", Out: "a.wav", Status: StatusOK})
	err := d.Append(Row{ID: "b", Out: "b.wav", Status: StatusOK})
	if want := "appending to " + filepath.Join(dir, FileName) + ": no space left on device"; err == nil || err.Error() != want || !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("Append on a full disk: %v, want %q", err, want)
	}
	if _, ok := d.Row("b"); ok {
		t.Error("the failed row was recorded in memory")
	}
	disk.okWrites = 1 // space was freed
	mustAppend(t, d, Row{ID: "c", Out: "c.wav", Status: StatusOK})
	rows := fileRows(t, dir) // fails on any torn line
	if len(rows) != 2 || rows[0].ID != "a" || rows[1].ID != "c" {
		t.Errorf("rows after a failed append = %+v, want a and c", rows)
	}
	if got := d.Summary(); got.OK != 2 {
		t.Errorf("Summary.OK = %d, want 2", got.OK)
	}
}

func BenchmarkAppend(b *testing.B) {
	d, err := Open(b.TempDir(), false)
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	i := 0
	for b.Loop() {
		i++
		if err := d.Append(Row{ID: fmt.Sprint(i), Out: "x.wav", Status: StatusOK, Hash: "0123456789abcdef0123456789abcdef", Sentences: 3, AudioSeconds: 7.5}); err != nil {
			b.Fatal(err)
		}
	}
}
