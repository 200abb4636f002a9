package results

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ttsgen/ttsgen/internal/atomicfile"
	"github.com/ttsgen/ttsgen/internal/shard"
)

func openDir(t *testing.T, dir string, force bool) *Dir {
	t.Helper()
	return openShard(t, dir, shard.Spec{}, force)
}

// finishedAt is the time tests' rows are recorded at (Row.Finished).
var finishedAt = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// openShard opens dir for shard s with a clock stopped at finishedAt.
func openShard(t *testing.T, dir string, s shard.Spec, force bool) *Dir {
	t.Helper()
	d, err := OpenShard(dir, s, force)
	if err != nil {
		t.Fatalf("OpenShard(%s): %v", s, err)
	}
	d.now = func() time.Time { return finishedAt }
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
	var rows []Row
	for _, line := range fileLines(t, dir) {
		if line == "" {
			continue
		}
		var r Row
		dec := json.NewDecoder(strings.NewReader(line))
		if strict {
			dec.DisallowUnknownFields()
		}
		if err := dec.Decode(&r); err != nil {
			t.Fatalf("invalid row %q: %v", line, err)
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

// settings is a Settings with one entry, for tests.
func settings(v string) Settings { return Settings{"text": v} }

func TestCheckIsLikeMake(t *testing.T) {
	dir := t.TempDir()
	d := openDir(t, dir, false)
	writeOutput(t, d, "a.wav", "RIFF...")
	writeOutput(t, d, "sub/b.wav", "RIFF...")
	writeOutput(t, d, "gone.wav", "RIFF...")
	writeOutput(t, d, "sized.wav", "RIFF...")
	writeOutput(t, d, "replaced.wav", "RIFF...")
	src := filepath.Join(dir, "m.jsonl")
	mustAppend(t, d, Row{ID: "a", Line: 1, Source: src, Out: "a.wav", Status: StatusOK, Settings: Settings{"text": "h1", "voice": "v"}, Sentences: 2, AudioSeconds: 1.5})
	mustAppend(t, d, Row{ID: "b", Line: 2, Source: src, Out: "sub/b.wav", Status: StatusOK, Settings: settings("h2")})
	mustAppend(t, d, Row{ID: "gone", Line: 3, Source: src, Out: "gone.wav", Status: StatusOK, Settings: settings("h3")})
	mustAppend(t, d, Row{ID: "sized", Line: 6, Source: src, Out: "sized.wav", Status: StatusOK, Settings: settings("h6"), Bytes: 7})
	mustAppend(t, d, Row{ID: "replaced", Line: 7, Source: src, Out: "replaced.wav", Status: StatusOK, Settings: settings("h7"), Bytes: 7})
	mustAppend(t, d, Row{ID: "bad", Line: 4, Source: src, Out: "bad.wav", Status: StatusError, Error: "line 4: boom"})
	mustAppend(t, d, Row{ID: "old", Line: 5, Source: src, Out: "old.wav", Status: StatusOK}) // an older ttsgen's row: no settings
	writeOutput(t, d, "bad.wav", "RIFF...")                                                  // a stray file does not make an error row done
	writeOutput(t, d, "old.wav", "RIFF...")
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(dir, "gone.wav"))
	os.WriteFile(filepath.Join(dir, "sub", "b.wav"), nil, 0o644) // truncated by hand
	os.WriteFile(filepath.Join(dir, "replaced.wav"), []byte("RIFF, another batch's"), 0o644)

	for _, force := range []bool{false, true} {
		d = openDir(t, dir, force)
		for _, tc := range []struct {
			id, out  string
			settings Settings
			want     bool
			why      string
		}{
			{"a", "a.wav", Settings{"voice": "v", "text": "h1"}, true, "ok row, same settings, WAV present"},
			{"a", "a.wav", Settings{"text": "h1", "voice": "w"}, false, "a setting changed"},
			{"a", "a.wav", Settings{"text": "h1", "voice": "v", "format": "wav"}, false, "a setting was added"},
			{"a", "a.wav", nil, false, "no settings"},
			{"a", "elsewhere/a.wav", Settings{"text": "h1", "voice": "v"}, false, "another out path"},
			{"b", "sub/b.wav", settings("h2"), false, "WAV is empty"},
			{"gone", "gone.wav", settings("h3"), false, "WAV missing"},
			{"sized", "sized.wav", settings("h6"), true, "WAV of the size its row records"},
			{"replaced", "replaced.wav", settings("h7"), false, "WAV replaced since: not the size its row records"},
			{"bad", "bad.wav", nil, false, "error row"},
			{"old", "old.wav", nil, false, "row without settings"},
			{"new", "new.wav", settings("h5"), false, "never seen"},
			{"", "", nil, false, "no id"},
		} {
			done, err := d.Check(Row{ID: tc.id, Source: src, Out: tc.out, Settings: tc.settings})
			if want := tc.want && !force; done != want || err != nil {
				t.Errorf("force=%v: Check(%q, %q, %v) = %v, %v; want %v (%s)", force, tc.id, tc.out, tc.settings, done, err, want, tc.why)
			}
		}
		if r, ok := d.Row("a"); !ok || r.Sentences != 2 || r.AudioSeconds != 1.5 || r.Settings["voice"] != "v" {
			t.Errorf("Row(a) = %+v, %v", r, ok)
		}
		d.Close()
	}
}

// Check refuses what would overwrite another input's recorded output, and says how to fix it.
func TestCheckRefusesToOverwriteAnotherInputsItem(t *testing.T) {
	dir := t.TempDir()
	d := openDir(t, dir, false)
	a, b := filepath.Join(dir, "a.jsonl"), filepath.Join(dir, "b.jsonl")
	writeOutput(t, d, "x.wav", "RIFF...")
	writeOutput(t, d, "shared.wav", "RIFF...")
	mustAppend(t, d, Row{ID: "x", Line: 1, Source: a, Out: "x.wav", Status: StatusOK, Settings: settings("one")})
	mustAppend(t, d, Row{ID: "s", Line: 2, Source: a, Out: "shared.wav", Status: StatusOK, Settings: settings("two")})
	mustAppend(t, d, Row{ID: "e", Line: 3, Source: a, Out: "e.wav", Status: StatusError, Error: "boom"})
	idTaken := fmt.Sprintf(`item "x" is already recorded in %s, from %s line 1, with other text or settings: give this item its own "id", write into another folder, or use --force to replace it`, filepath.Join(dir, FileName), a)
	outTaken := fmt.Sprintf(`output "shared.wav" is already recorded in %s for item "s", from %s line 2: give this item its own "out" (or "id"), or write into another folder`, filepath.Join(dir, FileName), a)
	for _, tc := range []struct {
		name    string
		row     Row
		force   bool
		done    bool
		wantErr string
	}{
		{"same id, other input, other text", Row{ID: "x", Source: b, Out: "x.wav", Settings: settings("other")}, false, false, idTaken},
		{"same id, other input, other out", Row{ID: "x", Source: b, Out: "y.wav", Settings: settings("one")}, false, false, idTaken},
		{"same id, other input, forced", Row{ID: "x", Source: b, Out: "x.wav", Settings: settings("other")}, true, false, ""},
		{"same id, other input, same text: done", Row{ID: "x", Source: b, Out: "x.wav", Settings: settings("one")}, false, true, ""},
		{"same id, same input, edited: redone", Row{ID: "x", Source: a, Out: "x.wav", Settings: settings("edited")}, false, false, ""},
		{"same input given relatively", Row{ID: "x", Source: relTo(t, a), Out: "x.wav", Settings: settings("edited")}, false, false, ""},
		{"same id as an error row", Row{ID: "e", Source: b, Out: "e.wav", Settings: settings("new")}, false, false, ""},
		{"another id's out", Row{ID: "new", Source: b, Out: "shared.wav", Settings: settings("two")}, false, false, outTaken},
		{"another id's out, cleaned", Row{ID: "new", Source: a, Out: "./shared.wav", Settings: settings("two")}, false, false, strings.Replace(outTaken, `"shared.wav"`, `"./shared.wav"`, 1)},
		{"another id's out, forced", Row{ID: "new", Source: b, Out: "shared.wav", Settings: settings("two")}, true, false, outTaken},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d.force = tc.force
			done, err := d.Check(tc.row)
			if done != tc.done || (err == nil) != (tc.wantErr == "") || (err != nil && err.Error() != tc.wantErr) {
				t.Errorf("Check = %v, %v\nwant  %v, %q", done, err, tc.done, tc.wantErr)
			}
		})
	}
}

// An item's timestamps file is its output as its audio is: no other item may take it as its own timestamps file or
// audio, nor the other way round, whether the row is this run's, read back from the results file, or another results
// file's (a shard reading results.jsonl); the item itself may, and a later row of it that moves its files frees them.
func TestCheckRefusesAnotherItemsTimestampsFile(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.jsonl"), filepath.Join(dir, "b.jsonl")
	d := openDir(t, dir, false)
	writeOutput(t, d, "foo.wav", "RIFF...")
	writeOutput(t, d, "foo.json", "{}")
	mustAppend(t, d, Row{ID: "foo", Line: 1, Source: a, Out: "foo.wav", TimestampsOut: "foo.json", Status: StatusOK, Settings: settings("one")})
	recorded := filepath.Join(dir, FileName)
	stampsTaken := fmt.Sprintf(`timestamps file "foo.json" (of output "foo.flac") is already recorded in %s for item "foo", from %s line 1: give this item its own "out" (or "id"), or write into another folder`, recorded, a)
	audioTaken := fmt.Sprintf(`output "foo.json" is already recorded in %s for item "foo", from %s line 1: give this item its own "out" (or "id"), or write into another folder`, recorded, a)
	check := func(d *Dir, how string) {
		t.Helper()
		for _, tc := range []struct {
			name    string
			row     Row
			wantErr string
		}{
			{"another id's timestamps file", Row{ID: "bar", Source: b, Out: "foo.flac", TimestampsOut: "foo.json", Settings: settings("two")}, stampsTaken},
			{"another id's timestamps file as audio", Row{ID: "bar", Source: b, Out: "foo.json", Settings: settings("two")}, audioTaken},
			{"its own, from another format", Row{ID: "foo", Source: a, Out: "foo.flac", TimestampsOut: "foo.json", Settings: settings("edited")}, ""},
			{"another id, another name", Row{ID: "bar", Source: b, Out: "bar.flac", TimestampsOut: "bar.json", Settings: settings("two")}, ""},
		} {
			_, err := d.Check(tc.row)
			if (err == nil) != (tc.wantErr == "") || (err != nil && err.Error() != tc.wantErr) {
				t.Errorf("%s: %s: Check = %v\nwant %q", how, tc.name, err, tc.wantErr)
			}
		}
	}
	check(d, "appended")
	d.Close()
	d = openDir(t, dir, true)
	check(d, "read back, forced")
	d.Close()
	owner := s1of2
	if !owner.Owns("foo") {
		owner = s2of2
	}
	s := openShard(t, dir, owner, false)
	check(s, "another results file's")
	s.Close()
	d = openDir(t, dir, false)
	mustAppend(t, d, Row{ID: "foo", Line: 1, Source: a, Out: "foo.wav", Status: StatusOK, Settings: settings("no timestamps")})
	if _, err := d.Check(Row{ID: "bar", Source: b, Out: "foo.flac", TimestampsOut: "foo.json", Settings: settings("two")}); err != nil {
		t.Errorf("foo's row records no timestamps file any more: %v", err)
	}
}

// An item done without timestamps is not done for a run that asks for them: it is made again, so that a re-run
// with --timestamps gives every item its file; nor is one whose timestamps file has gone. One whose file is there,
// even empty (subtitles of a silent item), is done.
func TestCheckRedoesAnItemWithoutItsTimestamps(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a.jsonl")
	d := openDir(t, dir, false)
	defer d.Close()
	writeOutput(t, d, "plain.wav", "RIFF...")
	mustAppend(t, d, Row{ID: "plain", Line: 1, Source: a, Out: "plain.wav", Status: StatusOK, Settings: settings("one")})
	writeOutput(t, d, "timed.wav", "RIFF...")
	writeOutput(t, d, "timed.srt", "")
	mustAppend(t, d, Row{ID: "timed", Line: 2, Source: a, Out: "timed.wav", TimestampsOut: "timed.srt", Status: StatusOK, Settings: settings("one")})
	for _, tc := range []struct {
		name string
		row  Row
		done bool
	}{
		{"made without timestamps, asked for none", Row{ID: "plain", Line: 1, Source: a, Out: "plain.wav", Settings: settings("one")}, true},
		{"made without timestamps, asked for them", Row{ID: "plain", Line: 1, Source: a, Out: "plain.wav", TimestampsOut: "plain.srt", Settings: settings("one")}, false},
		{"made with them, file there", Row{ID: "timed", Line: 2, Source: a, Out: "timed.wav", TimestampsOut: "timed.srt", Settings: settings("one")}, true},
		{"made with them, asked for another format", Row{ID: "timed", Line: 2, Source: a, Out: "timed.wav", TimestampsOut: "timed.json", Settings: settings("one")}, false},
		{"made with them, asked for none", Row{ID: "timed", Line: 2, Source: a, Out: "timed.wav", Settings: settings("one")}, true},
	} {
		done, err := d.Check(tc.row)
		if err != nil || done != tc.done {
			t.Errorf("%s: Check = %v, %v; want done %v", tc.name, done, err, tc.done)
		}
	}
	if err := os.Remove(filepath.Join(dir, "timed.srt")); err != nil {
		t.Fatal(err)
	}
	if done, _ := d.Check(Row{ID: "timed", Line: 2, Source: a, Out: "timed.wav", TimestampsOut: "timed.srt", Settings: settings("one")}); done {
		t.Error("timed.srt was removed, and the item is still done")
	}
}

// relTo returns path relative to the working directory.
func relTo(t *testing.T, path string) string {
	wd, _ := os.Getwd()
	rel, err := filepath.Rel(wd, path)
	if err != nil {
		t.Fatal(err)
	}
	return rel
}

// A failed retry of a good item keeps the good output's row, noting the failure; without a good output the error
// row stands.
func TestKeepGood(t *testing.T) {
	dir := t.TempDir()
	d := openDir(t, dir, false)
	writeOutput(t, d, "good.wav", "RIFF...")
	good := Row{ID: "good", Line: 1, Source: "/m.jsonl", Out: "good.wav", Status: StatusOK, Sentences: 3, Settings: settings("v1")}
	mustAppend(t, d, good)
	mustAppend(t, d, Row{ID: "lost", Out: "lost.wav", Status: StatusOK, Settings: settings("v1")}) // its WAV is gone
	mustAppend(t, d, Row{ID: "failed", Out: "failed.wav", Status: StatusError, Error: "before"})
	for _, tc := range []struct {
		attempt, want Row
	}{
		{Row{ID: "good", Line: 2, Out: "good.wav", Status: StatusError, Error: "voice not found"},
			Row{ID: "good", Line: 1, Source: "/m.jsonl", Out: "good.wav", Status: StatusOK, Sentences: 3, Settings: settings("v1"), RetryError: "voice not found", Finished: finishedAt}},
		{Row{ID: "lost", Out: "lost.wav", Status: StatusError, Error: "x"}, Row{ID: "lost", Out: "lost.wav", Status: StatusError, Error: "x"}},
		{Row{ID: "failed", Out: "failed.wav", Status: StatusError, Error: "again"}, Row{ID: "failed", Out: "failed.wav", Status: StatusError, Error: "again"}},
		{Row{ID: "new", Out: "new.wav", Status: StatusError, Error: "x"}, Row{ID: "new", Out: "new.wav", Status: StatusError, Error: "x"}},
		{Row{Source: "/m.jsonl", Line: 9, Status: StatusError, Error: "bad line"}, Row{Source: "/m.jsonl", Line: 9, Status: StatusError, Error: "bad line"}},
	} {
		got := d.KeepGood(tc.attempt)
		if fmt.Sprintf("%+v", got) != fmt.Sprintf("%+v", tc.want) {
			t.Errorf("KeepGood(%+v)\n= %+v\nwant %+v", tc.attempt, got, tc.want)
		}
		if !got.Failed() {
			t.Errorf("KeepGood(%+v).Failed() = false", tc.attempt)
		}
	}
	mustAppend(t, d, d.KeepGood(Row{ID: "good", Out: "good.wav", Status: StatusError, Error: "voice not found"}))
	if done, err := d.Check(good); !done || err != nil {
		t.Errorf("after a failed retry, Check(good) = %v, %v; the good output is still done", done, err)
	}
}

// A line that could not be read as an item has a row keyed by its input and line; the row of the item that line
// becomes once fixed replaces it, and the file is compacted to that row.
func TestAFixedLinesItemReplacesItsLinesRow(t *testing.T) {
	dir := t.TempDir()
	d := openDir(t, dir, false)
	mustAppend(t, d, Row{Source: "m.jsonl", Line: 2, Status: StatusError, Error: "line 2: invalid JSON"})
	mustAppend(t, d, Row{Source: "m.jsonl", Line: 3, Status: StatusError, Error: "line 3: invalid JSON"})
	writeOutput(t, d, "m-2.wav", "x")
	mustAppend(t, d, Row{ID: "m-2", Source: "m.jsonl", Line: 2, Out: "m-2.wav", Status: StatusOK})
	mustAppend(t, d, Row{ID: "m-3", Source: "other.jsonl", Line: 3, Status: StatusError, Error: "no voice"})
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range fileRows(t, dir) {
		got = append(got, fmt.Sprintf("%s %s:%d %s", r.ID, r.Source, r.Line, r.Status))
	}
	want := []string{" m.jsonl:3 error", "m-2 m.jsonl:2 ok", "m-3 other.jsonl:3 error"}
	if !slices.Equal(got, want) {
		t.Errorf("rows %q, want %q: line 2's own row gone, line 3's (still broken) and another input's kept", got, want)
	}
}

func TestLastRowWinsAndFileIsCompacted(t *testing.T) {
	dir := t.TempDir()
	d := openDir(t, dir, false)
	writeOutput(t, d, "a.wav", "x")
	mustAppend(t, d, Row{ID: "a", Out: "a.wav", Status: StatusError, Error: "first try"})
	mustAppend(t, d, Row{ID: "b", Out: "b.wav", Status: StatusError, Error: "no"})
	mustAppend(t, d, Row{ID: "a", Out: "a.wav", Status: StatusOK, Settings: settings("h")})
	mustAppend(t, d, Row{Source: "m.jsonl", Line: 7, Status: StatusError, Error: "line 7: invalid JSON"})
	mustAppend(t, d, Row{Source: "m.jsonl", Line: 7, Status: StatusError, Error: "line 7: empty line"})
	if done, _ := d.Check(Row{ID: "a", Out: "a.wav", Settings: settings("h")}); !done {
		t.Error("Check(a) = not done after its ok row replaced the error row")
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

// Lines that are not rows ttsgen can read (another tool's, hand-edited, cut off by a crash) are kept byte for byte
// and in place, through compaction on Open and Close and more appends, each named in a warning; rows of a newer
// version keep their unknown fields.
func TestOpenKeepsLinesItCannotRead(t *testing.T) {
	dir := t.TempDir()
	good := `{"id":"a","line":1,"out":"a.wav","status":"ok","sentences":1,"audio_seconds":1,"settings":{"text":"h"}}`
	future := `{"id":"f","out":"f.wav","status":"ok","from_the_future":{"x": 1}}`
	content := good + "\n" +
		`{"id":"a","line":1,"out":"a.wav","status":"error","error":"old"}` + "\n" + // superseded by the next one
		good + "\n" +
		"not json\n" +
		"\n" +
		`{"id":"x","status":"weird"}` + "\n" +
		future + "\n" +
		`  {"id":"hand",  "note":"by hand"}  ` + "\n" +
		`{"id":"b","line":2,"out":"b.wav","sta` // torn by a crash
	os.WriteFile(filepath.Join(dir, FileName), []byte(content), 0o644)
	os.WriteFile(filepath.Join(dir, "a.wav"), []byte("x"), 0o644)

	d := openDir(t, dir, false)
	file := filepath.Join(dir, FileName)
	wantWarnings := []string{
		file + " line 4: kept a line that is not a ttsgen row: invalid character 'o' in literal null (expecting 'u')",
		file + ` line 6: kept a line that is not a ttsgen row: unknown status "weird" (want "ok" or "error")`,
		file + ` line 8: kept a line that is not a ttsgen row: unknown status "" (want "ok" or "error")`,
		file + " line 9: kept a line that is not a ttsgen row: unexpected end of JSON input; it has no newline: cut off by an interrupted run?",
	}
	if got := d.Warnings(); fmt.Sprint(got) != fmt.Sprint(wantWarnings) {
		t.Errorf("Warnings =\n%q\nwant\n%q", got, wantWarnings)
	}
	kept := []string{"not json", "", `{"id":"x","status":"weird"}`, future, `  {"id":"hand",  "note":"by hand"}  `, `{"id":"b","line":2,"out":"b.wav","sta`}
	want := append([]string{good}, kept...)
	if got := fileLines(t, dir); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("compacted on Open to\n%q\nwant\n%q", got, want)
	}
	if done, _ := d.Check(Row{ID: "a", Out: "a.wav", Settings: settings("h")}); !done {
		t.Error("Check(a) = not done")
	}
	mustAppend(t, d, Row{ID: "b", Out: "b.wav", Status: StatusError, Error: "x"})
	mustAppend(t, d, Row{ID: "a", Out: "a.wav", Status: StatusError, Error: "x"})
	mustAppend(t, d, Row{ID: "f", Out: "f.wav", Status: StatusError, Error: "redone"})
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	got := fileLines(t, dir)
	want = append(slices.Clone(kept[:3]), kept[4:]...) // the future row was superseded by ttsgen's own
	want = append(want, `{"id":"b","line":0,"out":"b.wav","status":"error","error":"x","sentences":0,"audio_seconds":0,"finished":"2026-01-02T03:04:05Z"}`,
		`{"id":"a","line":0,"out":"a.wav","status":"error","error":"x","sentences":0,"audio_seconds":0,"finished":"2026-01-02T03:04:05Z"}`,
		`{"id":"f","line":0,"out":"f.wav","status":"error","error":"redone","sentences":0,"audio_seconds":0,"finished":"2026-01-02T03:04:05Z"}`)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("after appends and Close:\n%q\nwant\n%q", got, want)
	}
}

// fileLines is the lines of results.jsonl (or of the results file name), which must each end with a newline.
func fileLines(t *testing.T, dir string, name ...string) []string {
	t.Helper()
	file := FileName
	if len(name) > 0 {
		file = name[0]
	}
	data, err := os.ReadFile(filepath.Join(dir, file))
	if err != nil {
		t.Fatal(err)
	}
	if len(data) > 0 && data[len(data)-1] != '\n' {
		t.Fatalf("%s does not end with a newline", file)
	}
	if len(data) == 0 {
		return nil
	}
	return strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
}

// --force redoes every item, but a row stays until its item is done again: a forced run that stops early leaves the
// rows of the items it did not reach.
func TestForceKeepsRowsUntilRedone(t *testing.T) {
	dir := t.TempDir()
	d := openDir(t, dir, false)
	for _, id := range []string{"a", "b", "c"} {
		writeOutput(t, d, id+".wav", "RIFF...")
		mustAppend(t, d, Row{ID: id, Out: id + ".wav", Status: StatusOK, Settings: settings(id)})
	}
	d.Close()
	d = openDir(t, dir, true)
	if rows := fileRows(t, dir); len(rows) != 3 {
		t.Fatalf("Open(force) left %d rows, want all 3", len(rows))
	}
	for _, id := range []string{"a", "b", "c"} {
		if done, err := d.Check(Row{ID: id, Out: id + ".wav", Settings: settings(id)}); done || err != nil {
			t.Errorf("Check(%s) with force = %v, %v; want to redo it", id, done, err)
		}
	}
	mustAppend(t, d, Row{ID: "a", Out: "a.wav", Status: StatusOK, Settings: settings("a2")})
	d.Close() // as if the forced run stopped here
	var got []string
	for _, r := range fileRows(t, dir) {
		got = append(got, r.ID+":"+r.Settings["text"])
	}
	if want := []string{"b:b", "c:c", "a:a2"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("rows after a forced run stopped early: %v, want %v", got, want)
	}
}

// Open removes the temp files of writers that are gone, in subfolders too, and leaves those of live processes: a
// batch running into a subfolder right now keeps its files.
func TestOpenRemovesOnlyDeadWritersTempFiles(t *testing.T) {
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "sub"), 0o755)
	stale := []string{filepath.Join(dir, atomicfile.TempName(dead.Process.Pid)+"1"),
		filepath.Join(dir, "sub", atomicfile.TempName(dead.Process.Pid)+"2")}
	live := filepath.Join(dir, "sub", atomicfile.TempName(os.Getpid())+"3")
	for _, p := range append(stale, live) {
		os.WriteFile(p, []byte("half a wav"), 0o644)
	}
	d := openDir(t, dir, false)
	if left := tempFiles(t, dir); fmt.Sprint(left) != fmt.Sprint([]string{live}) {
		t.Errorf("temp files after Open: %q, want only the live writer's %q", left, live)
	}
	if got, want := d.Warnings(), []string{dir + ": removed 2 temp files left by an interrupted run"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("Warnings = %q, want %q", got, want)
	}
}

func TestOneBatchPerDirectory(t *testing.T) {
	dir := t.TempDir()
	d := openDir(t, dir, false)
	_, err := Open(dir, false)
	if want := fmt.Sprintf("output directory %s is in use by another ttsgen batch (or shards of one, or a results merge)", dir); err == nil || err.Error() != want {
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
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo.wav"), 0o600); err != nil {
		t.Fatal(err)
	}

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
		{out: "results.jsonl", wantErr: `output "results.jsonl": would overwrite the results file results.jsonl`},
		{out: "results.2-of-4.jsonl", wantErr: `output "results.2-of-4.jsonl": would overwrite the results file results.2-of-4.jsonl`},
		{out: "sub/results.jsonl", want: filepath.Join(dir, "sub", "results.jsonl")}, // only the folder's own are reserved
		{out: "x/.ttsgen-tmp-1", wantErr: `output "x/.ttsgen-tmp-1": must not use the reserved prefix ".ttsgen-"`},
		{out: "escape/x.wav", wantErr: fmt.Sprintf(`output "escape/x.wav": escape is a symlink to %s, outside the output directory`, outside)},
		{out: "file-link.wav", wantErr: `output "file-link.wav": file-link.wav is a symlink that cannot be followed: lstat ` + filepath.Join(outside, "x.wav") + `: no such file or directory`},
		{out: "dangling/x.wav", wantErr: `output "dangling/x.wav": dangling is a symlink that cannot be followed: lstat ` + filepath.Join(root, "missing") + `: no such file or directory`},
		{out: "plain/x.wav", wantErr: `output "plain/x.wav": plain exists and is not a folder`},
		{out: "real", wantErr: `output "real" is an existing folder`},
		{out: "fifo.wav", wantErr: `output "fifo.wav" exists and is not a regular file (p---------); outputs are only written as files`},
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
				r := Row{ID: id, Out: id + ".wav", Status: StatusOK, Error: strings.Repeat("é", i*20), Settings: settings(id)}
				if err := d.Append(r); err != nil {
					t.Error(err)
					return
				}
				d.Check(r)
			}
		}()
	}
	wg.Wait()
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
		if err := d.Append(Row{ID: fmt.Sprint(i), Out: "x.wav", Status: StatusOK, Settings: Settings{"text_sha256": "0123456789abcdef0123456789abcdef", "voice": "v"}, Sentences: 3, AudioSeconds: 7.5}); err != nil {
			b.Fatal(err)
		}
	}
}
