package results

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ttsgen/ttsgen/internal/shard"
)

var (
	noShards = shard.Spec{}
	s1of2    = shard.Spec{Index: 1, Count: 2}
	s2of2    = shard.Spec{Index: 2, Count: 2}
	s1of3    = shard.Spec{Index: 1, Count: 3}
)

// Shards of one job run side by side in one folder; a second process of the same shard, and a run without shards
// beside shards (either way round), is refused, as is a merge while any of them runs.
func TestShardLocks(t *testing.T) {
	for _, tc := range []struct {
		held    []shard.Spec
		open    shard.Spec
		wantErr string // "" = it opens
	}{
		{[]shard.Spec{s1of2}, s2of2, ""},
		{[]shard.Spec{s1of2}, s1of2, "shard 1/2 of output directory DIR is in use by another ttsgen batch (of the same shard)"},
		{[]shard.Spec{s1of2}, noShards, "output directory DIR is in use by another ttsgen batch (or shards of one, or a results merge)"},
		{[]shard.Spec{noShards}, s1of2, "output directory DIR is in use by another ttsgen batch without --shard (or a results merge): shards run only beside shards"},
	} {
		name := func(s shard.Spec) string {
			if !s.Enabled() {
				return "no shards"
			}
			return s.String()
		}
		var held []string
		for _, s := range tc.held {
			held = append(held, name(s))
		}
		t.Run(fmt.Sprintf("%s then %s", strings.Join(held, ","), name(tc.open)), func(t *testing.T) {
			dir := t.TempDir()
			for _, s := range tc.held {
				openShard(t, dir, s, false)
			}
			d, err := OpenShard(dir, tc.open, false)
			if err == nil {
				d.Close()
			}
			want := strings.ReplaceAll(tc.wantErr, "DIR", dir)
			if (err == nil) != (want == "") || (err != nil && err.Error() != want) {
				t.Fatalf("OpenShard(%s) beside %v: %v, want %q", tc.open, tc.held, err, want)
			}
			if _, err := Merge(dir, MergeOptions{}); err == nil || !strings.Contains(err.Error(), "in use by another ttsgen batch") {
				t.Errorf("Merge beside %v: %v, want it refused", tc.held, err)
			}
		})
	}
}

// idsOf returns n ids that shard s owns.
func idsOf(s shard.Spec, n int) []string {
	var ids []string
	for i := 0; len(ids) < n; i++ {
		if id := fmt.Sprintf("p%d", i); s.Owns(id) {
			ids = append(ids, id)
		}
	}
	return ids
}

// rowLine is a row as a results file holds it.
func rowLine(t *testing.T, r Row) string {
	t.Helper()
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(b) + "\n"
}

// A shard writes its own file, stamped with its shard and time, and takes as done what results.jsonl (of a run
// without shards, or a merge) finished of its items, without changing it; between two rows of an item, the later
// one counts, wherever it stands in the file.
func TestShardReadsOtherResultsFiles(t *testing.T) {
	dir := t.TempDir()
	mine, theirs := idsOf(s1of2, 3), idsOf(s2of2, 1)
	for _, id := range append(slices.Clone(mine), theirs...) {
		os.WriteFile(filepath.Join(dir, id+".wav"), []byte("RIFF"), 0o644)
	}
	ok := func(id string, at time.Time) Row {
		return Row{ID: id, Out: id + ".wav", Status: StatusOK, Settings: settings("v1"), Finished: at}
	}
	older, newer := finishedAt.Add(-time.Hour), finishedAt.Add(time.Hour)
	// The later row of mine[2] comes first in the file.
	plain := rowLine(t, ok(mine[0], older)) + rowLine(t, ok(theirs[0], older)) + rowLine(t, ok(mine[2], newer)) +
		rowLine(t, ok(mine[1], older)) +
		rowLine(t, Row{ID: mine[2], Out: mine[2] + ".wav", Status: StatusError, Error: "old failure", Finished: older})
	os.WriteFile(filepath.Join(dir, FileName), []byte(plain), 0o644)

	d := openShard(t, dir, s1of2, false)
	for _, id := range mine {
		if done, err := d.Check(ok(id, time.Time{})); !done || err != nil {
			t.Errorf("Check(%s) = %v, %v; another results file finished it", id, done, err)
		}
	}
	if r, found := d.Row(theirs[0]); found {
		t.Errorf("shard 1/2 took in a row of shard 2/2's item: %+v", r)
	}
	mustAppend(t, d, Row{ID: mine[0], Out: mine[0] + ".wav", Status: StatusError, Error: "retried"})
	if r, _ := d.Row(mine[0]); r.Error != "retried" || r.Shard != "1/2" || !r.Finished.Equal(finishedAt) {
		t.Errorf("after a later row of its own: Row = %+v", r)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, FileName)); string(got) != plain {
		t.Errorf("the shard changed %s:\n%s", FileName, got)
	}
	if got := fileLines(t, dir, FileFor(s1of2)); len(got) != 1 || !strings.Contains(got[0], `"shard":"1/2","finished":"2026-01-02T03:04:05Z"`) {
		t.Errorf("%s = %q, want one row stamped with its shard and time", FileFor(s1of2), got)
	}
}

// mergeFixture is a folder as a sharded job leaves it: results.jsonl from an earlier run without shards (rows of an
// older version without "finished", a line by hand), two shards' files, one of them redoing an item of results.jsonl
// and one cut off by a killed writer.
func mergeFixture(t *testing.T) (dir string, want []string) {
	t.Helper()
	dir = t.TempDir()
	at := func(m int) time.Time { return finishedAt.Add(time.Duration(m) * time.Minute) }
	a, b := idsOf(s1of2, 3), idsOf(s2of2, 3)
	old := Row{ID: a[0], Source: "/in/m.jsonl", Line: 9, Out: a[0] + ".wav", Status: StatusError, Error: "old"}
	redone := Row{ID: a[0], Source: "/in/m.jsonl", Line: 9, Out: a[0] + ".wav", Status: StatusOK, AudioSeconds: 3600, Shard: "1/2", Finished: at(1)}
	okA1 := Row{ID: a[1], Source: "/in/m.jsonl", Line: 2, Out: a[1] + ".wav", Status: StatusOK, AudioSeconds: 1800, Shard: "1/2", Finished: at(2)}
	failA2 := Row{ID: a[2], Source: "/in/m.jsonl", Line: 3, Out: a[2] + ".wav", Status: StatusError, Error: "device lost", Shard: "1/2", Finished: at(3)}
	okB0 := Row{ID: b[0], Source: "/in/m.jsonl", Line: 1, Out: b[0] + ".wav", Status: StatusOK, AudioSeconds: 1800, Shard: "2/2", Finished: at(1)}
	broken := Row{Source: "/in/m.jsonl", Line: 7, Status: StatusError, Error: "line 7: invalid JSON"}
	// b[2] was redone by a later run without shards: its row in results.jsonl is later than the shard's.
	failB2 := Row{ID: b[2], Source: "/in/m.jsonl", Line: 4, Out: b[2] + ".wav", Status: StatusError, Error: "x", Shard: "2/2", Finished: at(0)}
	okB2 := Row{ID: b[2], Source: "/in/m.jsonl", Line: 4, Out: b[2] + ".wav", Status: StatusOK, Finished: at(9)}
	byHand := "a note by hand\n"
	cut := rowLine(t, Row{ID: b[1], Out: b[1] + ".wav", Status: StatusOK, Shard: "2/2", Finished: at(5)})
	cut = cut[:len(cut)/2]
	write := func(name string, lines ...string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(strings.Join(lines, "")), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(FileName, rowLine(t, old), byHand, rowLine(t, broken), rowLine(t, okB2))
	write(FileFor(s1of2), rowLine(t, Row{ID: a[1], Out: a[1] + ".wav", Status: StatusError, Error: "first try", Shard: "1/2", Finished: at(0)}),
		rowLine(t, redone), rowLine(t, okA1), rowLine(t, failA2))
	write(FileFor(s2of2), rowLine(t, okB0), rowLine(t, failB2), cut)
	// Sorted by input, line and id, after the line that is not a row.
	want = []string{strings.TrimSuffix(byHand, "\n")}
	for _, r := range []Row{okB0, okA1, failA2, okB2, broken, redone} {
		want = append(want, strings.TrimSuffix(rowLine(t, r), "\n"))
	}
	return dir, want
}

// Merge folds every results file into results.jsonl: the latest row per item (by "finished", across files), the
// lines of results.jsonl that are not rows kept, a cut last line of a shard's file never merged; merging again
// changes nothing, byte for byte.
func TestMerge(t *testing.T) {
	dir, want := mergeFixture(t)
	a, b := idsOf(s1of2, 3), idsOf(s2of2, 3)
	expected := []Row{{ID: a[0], Source: "/in/m.jsonl", Line: 9}, {ID: a[1]}, {ID: a[2]}, {ID: b[0]}, {ID: b[1]}, {ID: b[2]},
		{Source: "/in/m.jsonl", Line: 7}}
	rep, err := Merge(dir, MergeOptions{Expected: expected})
	if err != nil {
		t.Fatal(err)
	}
	if got := fileLines(t, dir, FileName); !slices.Equal(got, want) {
		t.Errorf("merged results.jsonl:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	first, _ := os.ReadFile(filepath.Join(dir, FileName))
	wantWarnings := []string{
		filepath.Join(dir, FileName) + " line 2: kept a line that is not a ttsgen row: invalid character 'a' looking for beginning of value",
		filepath.Join(dir, FileFor(s2of2)) + " line 3: not merged: a line that is not a ttsgen row (it stays in results.2-of-2.jsonl): unexpected end of JSON input; it has no newline: cut off by an interrupted run?",
	}
	if !slices.Equal(rep.Warnings, wantWarnings) {
		t.Errorf("warnings:\n%s\nwant\n%s", strings.Join(rep.Warnings, "\n"), strings.Join(wantWarnings, "\n"))
	}
	wantTally := Tally{Items: 7, OK: 4, Error: 2, Missing: 1, AudioSeconds: 7200, AudioHours: 2}
	if rep.Tally != wantTally || rep.Shards != 2 || !rep.InputsChecked || rep.Complete() {
		t.Errorf("report %+v, want %+v over 2 shards, not complete", rep, wantTally)
	}
	per := map[string]Tally{}
	for _, s := range rep.PerShard {
		per[s.Shard] = s.Tally
	}
	// The broken line (no id) belongs to the shard its input and line hash to.
	brokenShard := shard.Of(Row{Source: "/in/m.jsonl", Line: 7}.ShardKey(), 2)
	want1 := Tally{Items: 3, OK: 2, Error: 1, AudioSeconds: 5400, AudioHours: 1.5}
	want2 := Tally{Items: 3, OK: 2, Missing: 1, AudioSeconds: 1800, AudioHours: 0.5}
	if brokenShard == 1 {
		want1.Items, want1.Error = 4, 2
	} else {
		want2.Items, want2.Error = 4, 1
	}
	if per["1/2"] != want1 || per["2/2"] != want2 {
		t.Errorf("per shard %+v, want 1/2 %+v and 2/2 %+v", per, want1, want2)
	}

	if _, err := Merge(dir, MergeOptions{Expected: expected}); err != nil {
		t.Fatal(err)
	}
	if again, _ := os.ReadFile(filepath.Join(dir, FileName)); string(again) != string(first) {
		t.Errorf("merging again changed results.jsonl:\n%s\nwas\n%s", again, first)
	}
}

// With RemoveShards, the merged shards' files and locks go; a file with a line that could not be merged stays.
func TestMergeRemoveShards(t *testing.T) {
	dir, _ := mergeFixture(t)
	openShard(t, dir, s1of2, false).Close() // leaves its lock file
	rep, err := Merge(dir, MergeOptions{RemoveShards: true})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(rep.Removed, []string{FileFor(s1of2)}) {
		t.Errorf("removed %q, want only %s", rep.Removed, FileFor(s1of2))
	}
	for name, want := range map[string]bool{FileFor(s1of2): false, shardLockName(s1of2): false, FileFor(s2of2): true, FileName: true} {
		if _, err := os.Stat(filepath.Join(dir, name)); (err == nil) != want {
			t.Errorf("%s exists: %v, want %v", name, err == nil, want)
		}
	}
	if last := rep.Warnings[len(rep.Warnings)-1]; last != filepath.Join(dir, FileFor(s2of2))+": not removed: it holds 1 line that ttsgen cannot read as rows" {
		t.Errorf("last warning %q", last)
	}
	// A shard run again after its file went reads its rows in results.jsonl.
	d := openShard(t, dir, s1of2, false)
	if r, ok := d.Row(idsOf(s1of2, 2)[1]); !ok || r.Status != StatusOK {
		t.Errorf("shard 1/2 after the merge removed its file: Row = %+v, %v; want the merged ok row", r, ok)
	}
}

// Summarize counts without inputs what the rows say, and a shard of the folder's count without a results file as
// not run; it reads without locking, beside a running shard.
func TestSummarize(t *testing.T) {
	dir := t.TempDir()
	s2of3 := shard.Spec{Index: 2, Count: 3}
	os.WriteFile(filepath.Join(dir, FileFor(s1of3)), []byte(rowLine(t, Row{ID: idsOf(s1of3, 1)[0], Out: "x.wav", Status: StatusOK, AudioSeconds: 90})), 0o644)
	openShard(t, dir, s2of3, false) // running, nothing done yet
	rep, err := Summarize(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(rep)
	want := `{"dir":"` + dir + `","shards":3,"inputs_checked":false,"items":1,"ok":1,"error":0,"missing":0,"retry_errors":0,` +
		`"audio_seconds":90,"audio_hours":0.025,"per_shard":[` +
		`{"shard":"1/3","file":"results.1-of-3.jsonl","ran":true,"items":1,"ok":1,"error":0,"missing":0,"retry_errors":0,"audio_seconds":90,"audio_hours":0.025},` +
		`{"shard":"2/3","file":"results.2-of-3.jsonl","ran":true,"items":0,"ok":0,"error":0,"missing":0,"retry_errors":0,"audio_seconds":0,"audio_hours":0},` +
		`{"shard":"3/3","file":"results.3-of-3.jsonl","ran":false,"items":0,"ok":0,"error":0,"missing":0,"retry_errors":0,"audio_seconds":0,"audio_hours":0}],` +
		`"warnings":null}`
	if string(got) != want {
		t.Errorf("Summarize =\n%s\nwant\n%s", got, want)
	}
	if rep.Complete() {
		t.Error("Complete() with a shard that has not run")
	}
	if _, err := Summarize(t.TempDir(), nil); err == nil || !strings.Contains(err.Error(), "has no results files") {
		t.Errorf("Summarize of an empty folder: %v", err)
	}
}

// Shards of different counts split the items differently: a shard is refused where another count's results files
// are, naming both files and the ways out, without creating its own; a merge of a folder that holds two counts is
// refused without writing; with force a shard starts over, removing the other count's files once none of their
// shards runs.
func TestOneShardCountPerFolder(t *testing.T) {
	s1of4 := shard.Spec{Index: 1, Count: 4}
	old := rowLine(t, Row{ID: idsOf(s1of4, 1)[0], Out: "x.wav", Status: StatusOK})
	oldFolder := func(t *testing.T) string {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, FileFor(s1of4)), []byte(old), 0o644)
		return dir
	}

	dir := oldFolder(t)
	_, err := OpenShard(dir, s1of3, false)
	if !errors.Is(err, ErrShardCounts) {
		t.Fatalf("OpenShard(1/3) beside results.1-of-4.jsonl: %v, want ErrShardCounts", err)
	}
	for _, want := range []string{"results.1-of-4.jsonl", "results.1-of-3.jsonl", "another folder",
		"ttsgen results merge " + dir + " --remove-shards", "--force to start over"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, FileFor(s1of3))); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the refused shard left its results file: %v", err)
	}
	if d, err := OpenShard(dir, shard.Spec{Index: 3, Count: 4}, false); err != nil {
		t.Errorf("a shard of the folder's own count: %v", err)
	} else {
		d.Close()
	}

	t.Run("merge", func(t *testing.T) {
		dir := oldFolder(t)
		os.WriteFile(filepath.Join(dir, FileFor(s1of3)), []byte(rowLine(t, Row{ID: idsOf(s1of3, 1)[0], Out: "y.wav", Status: StatusOK})), 0o644)
		_, err := Merge(dir, MergeOptions{})
		if !errors.Is(err, ErrShardCounts) || !strings.Contains(err.Error(), "results.1-of-3.jsonl and results.1-of-4.jsonl") ||
			!strings.Contains(err.Error(), "--force") {
			t.Errorf("Merge of two counts: %v, want ErrShardCounts naming both files", err)
		}
		if _, err := os.Stat(filepath.Join(dir, FileName)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the refused merge wrote %s: %v", FileName, err)
		}
		if _, err := Summarize(dir, nil); err != nil { // reading changes nothing, and is not refused
			t.Errorf("Summarize: %v", err)
		}
		// The way out the error gives: one count at a time.
		aside := t.TempDir()
		os.Rename(filepath.Join(dir, FileFor(s1of3)), filepath.Join(aside, FileFor(s1of3)))
		if _, err := Merge(dir, MergeOptions{RemoveShards: true}); err != nil {
			t.Fatalf("merge of the count left: %v", err)
		}
		os.Rename(filepath.Join(aside, FileFor(s1of3)), filepath.Join(dir, FileFor(s1of3)))
		if _, err := Merge(dir, MergeOptions{}); err != nil {
			t.Fatalf("merge of the count moved back: %v", err)
		}
		merged, _ := os.ReadFile(filepath.Join(dir, FileName))
		if !strings.Contains(string(merged), `"x.wav"`) || !strings.Contains(string(merged), `"y.wav"`) {
			t.Errorf("results.jsonl after merging one count at a time:\n%s\nwant the rows of both", merged)
		}
	})

	t.Run("force starts over", func(t *testing.T) {
		dir := oldFolder(t)
		running := openShard(t, dir, shard.Spec{Index: 2, Count: 4}, false)
		if _, err := OpenShard(dir, s1of3, true); err == nil || !strings.Contains(err.Error(), "shard 2/4 runs there") {
			t.Fatalf("OpenShard(1/3, force) beside a running shard 2/4: %v, want it refused", err)
		}
		if _, err := os.Stat(filepath.Join(dir, FileFor(s1of4))); err != nil {
			t.Errorf("the refused start-over removed %s: %v", FileFor(s1of4), err)
		}
		if _, err := os.Stat(filepath.Join(dir, FileFor(s1of3))); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the refused start-over left its results file: %v", err)
		}
		running.Close()
		d := openShard(t, dir, s1of3, true)
		if w := d.Warnings(); len(w) != 1 || !strings.Contains(w[0], "removed results.1-of-4.jsonl, results.2-of-4.jsonl") {
			t.Errorf("warnings %q, want the removed files named", w)
		}
		for _, name := range []string{FileFor(s1of4), shardLockName(s1of4), FileFor(shard.Spec{Index: 2, Count: 4})} {
			if _, err := os.Stat(filepath.Join(dir, name)); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("%s is still there: %v", name, err)
			}
		}
		d.Close()
		if _, err := Merge(dir, MergeOptions{}); err != nil {
			t.Errorf("Merge after starting over: %v", err)
		}
	})
}

// The shards of a new count start together, as a Job's or an array's do: with force, every one of them starts over
// (one removes the old count's files, the others find them gone), and none is refused as if an old shard ran. The
// race this guards against shows within a few hundred rounds.
func TestShardsOfANewCountStartOverTogether(t *testing.T) {
	for round := range 300 {
		dir := t.TempDir()
		for k := 1; k <= 4; k++ {
			s := shard.Spec{Index: k, Count: 4}
			os.WriteFile(filepath.Join(dir, FileFor(s)), []byte(rowLine(t, Row{ID: idsOf(s, 1)[0], Out: "x.wav", Status: StatusOK})), 0o644)
		}
		var wg sync.WaitGroup
		errs := make([]error, 3)
		for k := 1; k <= 3; k++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				d, err := OpenShard(dir, shard.Spec{Index: k, Count: 3}, true)
				if err == nil {
					err = d.Close()
				}
				errs[k-1] = err
			}()
		}
		wg.Wait()
		for k, err := range errs {
			if err != nil {
				t.Fatalf("round %d: shard %d/3 with force: %v", round, k+1, err)
			}
		}
		for k := 1; k <= 4; k++ {
			if _, err := os.Stat(filepath.Join(dir, FileFor(shard.Spec{Index: k, Count: 4}))); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("round %d: %s is still there: %v", round, FileFor(shard.Spec{Index: k, Count: 4}), err)
			}
		}
	}
}
