package cmd

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ttsgen/ttsgen/internal/results"
	"github.com/ttsgen/ttsgen/internal/shard"
)

// resultsFixture is a folder two shards wrote into for a manifest of 6 items: one item failed, one has no row, and
// shard 2's file ends with a line cut off by a killed writer.
func resultsFixture(t *testing.T) (in, out string, failed, missing string) {
	t.Helper()
	dir := t.TempDir()
	var m strings.Builder
	files := map[int]*strings.Builder{1: {}, 2: {}}
	for i := range 6 {
		id := fmt.Sprintf("p%d", i)
		fmt.Fprintf(&m, `{"id":%q,"text":"Item %d."}`+"\n", id, i)
		k := shard.Of(id, 2)
		switch {
		case i == 0:
			failed = id
			fmt.Fprintf(files[k], `{"id":%q,"line":%d,"out":"%s.wav","status":"error","error":"device lost","shard":"%d/2","finished":"2026-01-02T03:04:0%dZ"}`+"\n", id, i+1, id, k, i)
		case i == 1:
			missing = id
		default:
			fmt.Fprintf(files[k], `{"id":%q,"line":%d,"out":"%s.wav","status":"ok","audio_seconds":900,"shard":"%d/2","finished":"2026-01-02T03:04:0%dZ"}`+"\n", id, i+1, id, k, i)
		}
	}
	files[2].WriteString(`{"id":"p9","line":9,"out":"p9.wav","sta`) // no newline: its writer was killed
	in = writeFile(t, filepath.Join(dir, "in.jsonl"), m.String())
	out = filepath.Join(dir, "out")
	for k, b := range files {
		writeFile(t, filepath.Join(out, fmt.Sprintf("results.%d-of-2.jsonl", k)), b.String())
	}
	return in, out, failed, missing
}

// `results merge` folds the shards into results.jsonl, says per shard what is ok, failed and missing, warns about
// the cut line without merging it, exits 1 for the failed and missing items, and merging again changes nothing.
func TestResultsMergeCommand(t *testing.T) {
	isolate(t)
	in, out, failed, missing := resultsFixture(t)
	r := run(t, "", "results", "merge", out, "--inputs", in)
	if r.code != ExitFailure || !strings.Contains(r.errOut, "1 item failed, 1 item missing") {
		t.Errorf("merge: exit %d, stderr %q; want 1 and the failed and missing item said", r.code, r.errOut)
	}
	for _, want := range []string{out + ": 6 items: 4 ok, 1 failed, 1 missing; 1.00 h of audio", "  shard 1/2: ", "  shard 2/2: ",
		"merged into " + filepath.Join(out, "results.jsonl")} {
		if !strings.Contains(r.out, want) {
			t.Errorf("report:\n%s\nwant %q", r.out, want)
		}
	}
	if want := ": not merged: a line that is not a ttsgen row (it stays in results.2-of-2.jsonl): unexpected end of JSON input; it has no newline: cut off by an interrupted run?"; !strings.Contains(r.errOut, "warning: "+filepath.Join(out, "results.2-of-2.jsonl")+" line ") || !strings.Contains(r.errOut, want) {
		t.Errorf("stderr %q, want a warning about the cut line (%q)", r.errOut, want)
	}
	merged, err := os.ReadFile(filepath.Join(out, "results.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if lines := strings.Count(string(merged), "\n"); lines != 5 || strings.Contains(string(merged), "p9") ||
		!strings.Contains(string(merged), `"id":"`+failed+`"`) || strings.Contains(string(merged), `"id":"`+missing+`"`) {
		t.Errorf("results.jsonl:\n%s\nwant the 5 rows, not the cut line", merged)
	}
	if again := run(t, "", "results", "merge", out, "--inputs", in); again.code != ExitFailure {
		t.Errorf("second merge: exit %d: %s", again.code, again.errOut)
	}
	if again, _ := os.ReadFile(filepath.Join(out, "results.jsonl")); string(again) != string(merged) {
		t.Errorf("merging again changed results.jsonl:\n%s", again)
	}
	for _, name := range []string{"results.1-of-2.jsonl", "results.2-of-2.jsonl"} {
		if _, err := os.Stat(filepath.Join(out, name)); err != nil {
			t.Errorf("%s: %v; a merge leaves the shard files without --remove-shards", name, err)
		}
	}
	if q := run(t, "", "results", "merge", out, "-q"); strings.Contains(q.errOut, "warning") || !strings.Contains(q.errOut, "1 item failed") {
		t.Errorf("merge -q: stderr %q; want no warnings, and the failure said", q.errOut)
	}
}

// `results DIR --json` reports in JSON, and the inputs may follow DIR after --inputs.
func TestResultsSummaryJSON(t *testing.T) {
	isolate(t)
	in, out, _, _ := resultsFixture(t)
	extra := writeFile(t, filepath.Join(filepath.Dir(in), "more.jsonl"), `{"id":"q1","text":"One more."}`+"\n")
	r := run(t, "", "results", out, "--json", "--inputs", in, extra)
	var rep struct {
		Items, OK, Error, Missing int
		AudioHours                float64 `json:"audio_hours"`
		InputsChecked             bool    `json:"inputs_checked"`
		PerShard                  []struct {
			Shard            string
			Ran              bool
			Items, OK, Error int
			Missing          int
		} `json:"per_shard"`
	}
	if err := json.Unmarshal([]byte(r.out), &rep); err != nil {
		t.Fatalf("--json output %q: %v", r.out, err)
	}
	if r.code != ExitFailure || rep.Items != 7 || rep.OK != 4 || rep.Error != 1 || rep.Missing != 2 || rep.AudioHours != 1 ||
		!rep.InputsChecked || len(rep.PerShard) != 2 {
		t.Errorf("exit %d, report %+v", r.code, rep)
	}
	items := 0
	for _, s := range rep.PerShard {
		items += s.Items
		if !s.Ran || s.Items != s.OK+s.Error+s.Missing {
			t.Errorf("shard %+v", s)
		}
	}
	if items != 7 {
		t.Errorf("the shards hold %d items, want all 7", items)
	}
	if _, err := os.Stat(filepath.Join(out, "results.jsonl")); err == nil {
		t.Error("`results DIR` wrote results.jsonl")
	}
}

// A corpus whose every item is ok exits 0.
func TestResultsAllOK(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "results.jsonl"), `{"id":"a","out":"a.wav","status":"ok","audio_seconds":1}`+"\n")
	if r := run(t, "", "results", dir); r.code != 0 || !strings.Contains(r.out, "1 item: 1 ok, 0 failed;") {
		t.Errorf("exit %d, out %q, stderr %q", r.code, r.out, r.errOut)
	}
}

func TestResultsUsageErrors(t *testing.T) {
	isolate(t)
	_, out, _, _ := resultsFixture(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"results"}, "needs DIR"},
		{[]string{"results", "merge"}, "needs DIR"},
		{[]string{"results", filepath.Join(out, "nowhere")}, "is not a batch's output folder: no such file or directory"},
		{[]string{"results", filepath.Join(out, "results.1-of-2.jsonl")}, "is not a batch's output folder: not a folder"},
		{[]string{"results", out, "in.jsonl"}, "give the batch's inputs after --inputs"},
		{[]string{"results", "merge", out, "--inputs", "missing.jsonl"}, "input missing.jsonl: no such file or directory"},
		{[]string{"results", out, "--remove-shards"}, "unknown flag: --remove-shards"},
	} {
		if r := run(t, "", tc.args...); r.code != ExitUsage || !strings.Contains(r.errOut, tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want %d and %q", tc.args, r.code, r.errOut, ExitUsage, tc.want)
		}
	}
}

// Issue 20, items 14 and 15: a failed item is an error (-q never hides it) that names its input, line and id; the
// summary counts in English.
func TestBatchMessages(t *testing.T) {
	dir := isolate(t)
	clearSchedulerEnv(t)
	needORT(t)
	for _, tc := range []struct {
		name     string
		manifest string
		args     []string
		code     int
		want     []string
		unwanted []string
	}{
		{"one item", `{"id":"a","text":"Hello."}` + "\n", nil, 0,
			[]string{"1 item: 1 ok, 0 failed, 0 skipped (already done); 1 sentence, "}, []string{"1 items", "1 sentences"}},
		{"no items", "", nil, 0, []string{"0 items: 0 ok, 0 failed, 0 skipped (already done); 0 sentences, "}, nil},
		{"a failed item, quiet", `{"id":"a","text":"Hello."}` + "\n" + `{"id":"b","text":"Bye.","voice":"nowhere"}` + "\n", []string{"-q"}, ExitFailure,
			[]string{`error: IN:2: item "b": finding its voice: `, "ttsgen: 1 of 2 items failed"}, []string{"warning", "writing", "2 items:"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := writeFile(t, filepath.Join(dir, tc.name, "in.jsonl"), tc.manifest)
			r := run(t, "", append([]string{"batch", in, "-o", filepath.Join(dir, tc.name, "out"), "--voice", tinyVoice}, tc.args...)...)
			if r.code != tc.code {
				t.Errorf("exit %d, want %d; stderr:\n%s", r.code, tc.code, r.errOut)
			}
			for _, want := range tc.want {
				if !strings.Contains(r.errOut, strings.ReplaceAll(want, "IN", in)) {
					t.Errorf("stderr:\n%s\nwant %q", r.errOut, want)
				}
			}
			for _, unwanted := range tc.unwanted {
				if strings.Contains(r.errOut, unwanted) {
					t.Errorf("stderr:\n%s\nhas %q", r.errOut, unwanted)
				}
			}
		})
	}
}

// A line that could not be read as an item has an error row keyed by its input and line; once the line is fixed and
// its item made, that row is the past. And with --inputs the report is about the inputs' items alone. Here the two
// rows of line 2 are in two shards' files (an id-less line's shard is not its item's).
func TestResultsForgetsFixedLinesAndCountsTheInputsItems(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	in := writeFile(t, filepath.Join(dir, "m.jsonl"), `{"text":"One."}`+"\n"+`{"text":"Two, fixed."}`+"\n")
	out := filepath.Join(dir, "out")
	rows := []string{
		fmt.Sprintf(`{"line":2,"source":%q,"status":"error","error":"line 2: invalid JSON","finished":"2026-01-02T03:04:00Z"}`, in),
		fmt.Sprintf(`{"id":"m-1","line":1,"source":%q,"out":"m-1.wav","status":"ok","audio_seconds":1,"finished":"2026-01-02T03:04:01Z"}`, in),
		fmt.Sprintf(`{"id":"m-2","line":2,"source":%q,"out":"m-2.wav","status":"ok","audio_seconds":1,"finished":"2026-01-02T03:05:00Z"}`, in),
		`{"id":"other","line":1,"source":"other.jsonl","out":"other.wav","status":"error","error":"no voice","finished":"2026-01-02T03:04:02Z"}`,
	}
	files := map[int]*strings.Builder{1: {}, 2: {}}
	broken := shard.Of(results.Row{Source: in, Line: 2}.ShardKey(), 2) // the shard of the id-less row
	files[broken].WriteString(rows[0] + "\n")
	for _, row := range rows[1:] {
		files[3-broken].WriteString(row + "\n") // the other shard's file
	}
	for k, b := range files {
		writeFile(t, filepath.Join(out, fmt.Sprintf("results.%d-of-2.jsonl", k)), b.String())
	}
	r := run(t, "", "results", out, "--inputs", in)
	if r.code != 0 || !strings.Contains(r.out, out+": 2 items: 2 ok") {
		t.Errorf("exit %d, report %q, stderr %q; want 0 and 2 ok", r.code, r.out, r.errOut)
	}
	if want := "1 row of items that are not in the inputs (another input's, or a line since removed) not counted"; !strings.Contains(r.errOut, want) {
		t.Errorf("stderr %q, want %q", r.errOut, want)
	}
	if r := run(t, "", "results", out); r.code != ExitFailure || !strings.Contains(r.out, "3 items: 2 ok, 1 failed") {
		t.Errorf("without --inputs: exit %d, report %q; want every row counted but the fixed line's", r.code, r.out)
	}
}

// After a merge that removed the shards' files, a shard run again writes its file anew: the other shards' rows in
// results.jsonl say that they ran, and every item is done, so the folder is complete, with or without --inputs.
func TestResultsAfterRemovedShardsAndOneRunAgain(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	var m, merged, again strings.Builder
	for i := range 4 {
		id := fmt.Sprintf("p%d", i)
		fmt.Fprintf(&m, `{"id":%q,"text":"Item %d."}`+"\n", id, i)
		k := shard.Of(id, 2)
		row := fmt.Sprintf(`{"id":%q,"line":%d,"out":"%s.wav","status":"ok","audio_seconds":1,"shard":"%d/2","finished":"2026-01-02T03:04:0%dZ"}`+"\n", id, i+1, id, k, i)
		merged.WriteString(row)
		if k == 1 {
			again.WriteString(strings.Replace(row, "2026-01-02", "2026-01-03", 1)) // shard 1 run again: each item skipped
		}
	}
	in := writeFile(t, filepath.Join(dir, "in.jsonl"), m.String())
	out := filepath.Join(dir, "out")
	writeFile(t, filepath.Join(out, "results.jsonl"), merged.String())
	writeFile(t, filepath.Join(out, "results.1-of-2.jsonl"), again.String())
	for _, args := range [][]string{{"results", out}, {"results", out, "--inputs", in}} {
		if r := run(t, "", args...); r.code != 0 || strings.Contains(r.out, "has not run") {
			t.Errorf("%v: exit %d, report %q", args, r.code, r.out)
		}
	}
}
