package cmd

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ttsgen/ttsgen/internal/shard"
)

// schedulerVariables are what shard.FromEnv reads; tests clear them, in case they run inside a Kubernetes Job or a
// Slurm array.
var schedulerVariables = []string{"JOB_COMPLETION_INDEX", "TTSGEN_SHARD_COUNT", "SLURM_ARRAY_TASK_ID",
	"SLURM_ARRAY_TASK_COUNT", "SLURM_ARRAY_TASK_MIN", "SLURM_ARRAY_TASK_STEP"}

func clearSchedulerEnv(t *testing.T) {
	t.Helper()
	for _, v := range schedulerVariables {
		t.Setenv(v, "")
	}
}

// shardRow is what the shard tests read of a row.
type shardRow struct {
	ID     string `json:"id"`
	Status string `json:"status"`
	Shard  string `json:"shard"`
}

func readShardRows(t *testing.T, path string) []shardRow {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rows []shardRow
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if line == "" {
			continue
		}
		var r shardRow
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("%s: line %q: %v", path, line, err)
		}
		rows = append(rows, r)
	}
	return rows
}

// A wrong shard, from the flag or the environment, is a usage error that names what is accepted, said before
// anything is made.
func TestBatchShardUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{
		{"0/4", nil, []string{"--shard", "0/4"}, shard.Forms},
		{"5/4", nil, []string{"--shard", "5/4"}, "shard 5 is outside 1..4; want " + shard.Forms},
		{"1/0", nil, []string{"--shard", "1/0"}, "the shard count must be at least 1; want " + shard.Forms},
		{"garbage", nil, []string{"--shard", "two of four"}, `--shard: shard "two of four": want ` + shard.Forms},
		{"flag and count disagree", nil, []string{"--shard", "1/4", "--shard-count", "3"}, "--shard 1/4 and --shard-count 3 disagree"},
		{"count without an index", nil, []string{"--shard-count", "4"}, "JOB_COMPLETION_INDEX is not set"},
		{"index without a count", map[string]string{"JOB_COMPLETION_INDEX": "1"}, nil, "TTSGEN_SHARD_COUNT"},
		{"index beyond the count", map[string]string{"JOB_COMPLETION_INDEX": "4"}, []string{"--shard-count", "4"}, "JOB_COMPLETION_INDEX=4: shard 5 is outside 1..4"},
		{"slurm without a count", map[string]string{"SLURM_ARRAY_TASK_ID": "3", "SLURM_ARRAY_TASK_MIN": "0"}, nil, "SLURM_ARRAY_TASK_COUNT"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := isolate(t)
			clearSchedulerEnv(t)
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			in := writeFile(t, filepath.Join(dir, "in.jsonl"), `{"id":"a","text":"Hello."}`+"\n")
			out := filepath.Join(dir, "out")
			r := run(t, "", append([]string{"batch", in, "-o", out, "--voice", tinyVoice}, tc.args...)...)
			if r.code != ExitUsage || !strings.Contains(r.errOut, tc.want) {
				t.Errorf("exit %d, stderr %q; want %d and %q", r.code, r.errOut, ExitUsage, tc.want)
			}
			if _, err := os.Stat(out); err == nil {
				t.Error("the output folder was created for a run that could not start")
			}
		})
	}
}

// The shard comes from --shard or from the scheduler's variables; the summary says which shard ran and from where,
// its rows go to its own results file and record the shard.
func TestBatchShardFromFlagOrEnvironment(t *testing.T) {
	needORT(t)
	for _, tc := range []struct {
		name  string
		env   map[string]string
		args  []string
		shard shard.Spec
		from  string
	}{
		{"flag", nil, []string{"--shard", "2/3"}, shard.Spec{Index: 2, Count: 3}, "--shard"},
		{"flag over the environment", map[string]string{"JOB_COMPLETION_INDEX": "0", "TTSGEN_SHARD_COUNT": "3"}, []string{"--shard", "3/3"}, shard.Spec{Index: 3, Count: 3}, "--shard"},
		{"kubernetes with --shard-count", map[string]string{"JOB_COMPLETION_INDEX": "1"}, []string{"--shard-count", "3"}, shard.Spec{Index: 2, Count: 3}, "JOB_COMPLETION_INDEX=1"},
		{"kubernetes with TTSGEN_SHARD_COUNT", map[string]string{"JOB_COMPLETION_INDEX": "0", "TTSGEN_SHARD_COUNT": "3"}, nil, shard.Spec{Index: 1, Count: 3}, "JOB_COMPLETION_INDEX=0"},
		{"slurm", map[string]string{"SLURM_ARRAY_TASK_ID": "7", "SLURM_ARRAY_TASK_COUNT": "3", "SLURM_ARRAY_TASK_MIN": "5"}, nil, shard.Spec{Index: 3, Count: 3}, "SLURM_ARRAY_TASK_ID=7"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := isolate(t)
			clearSchedulerEnv(t)
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			var m strings.Builder
			var owned []string
			for i := range 12 {
				id := fmt.Sprintf("p%02d", i)
				fmt.Fprintf(&m, `{"id":%q,"text":"Item %d."}`+"\n", id, i)
				if tc.shard.Owns(id) {
					owned = append(owned, id)
				}
			}
			in := writeFile(t, filepath.Join(dir, "in.jsonl"), m.String())
			out := filepath.Join(dir, "out")
			r := run(t, "", append([]string{"batch", in, "-o", out, "--voice", tinyVoice, "--threads", "1"}, tc.args...)...)
			file := filepath.Join(out, fmt.Sprintf("results.%s.jsonl", tc.shard.FileTag()))
			want := fmt.Sprintf("shard %s (%s): %d items: %d ok, 0 failed, 0 skipped (already done); %d sentences", tc.shard,
				tc.from, len(owned), len(owned), len(owned))
			if r.code != 0 || !strings.Contains(r.errOut, want) || !strings.Contains(r.errOut, "results in "+file) {
				t.Fatalf("exit %d, stderr:\n%s\nwant %q and results in %s", r.code, r.errOut, want, file)
			}
			var ids []string
			for _, row := range readShardRows(t, file) {
				if row.Shard != tc.shard.String() {
					t.Errorf("row %+v does not record shard %s", row, tc.shard)
				}
				ids = append(ids, row.ID)
			}
			if slices.Sort(ids); !slices.Equal(ids, owned) {
				t.Errorf("rows %v, want the shard's items %v", ids, owned)
			}
		})
	}
}

// Issue 24's acceptance check: a 120-item manifest run as 4 shards into one folder, two at a time, one shard killed
// with SIGKILL part-way and run again, then merged: 120 WAVs, one ok row per item, the shards disjoint, no temporary
// files, and a second merge changes nothing.
func TestShardsSideBySideKilledResumedAndMerged(t *testing.T) {
	dir := isolate(t)
	clearSchedulerEnv(t)
	needORT(t)
	bin := buildBinary(t)
	const items, count = 120, 4
	var lines []string
	owner := map[string]int{}
	for i := range items {
		id := fmt.Sprintf("item%03d", i)
		lines = append(lines, fmt.Sprintf(`{"id":%q,"text":"This is item %d, a sentence that takes the engine a moment to speak in full."}`, id, i))
		owner[id] = shard.Of(id, count)
	}
	manifest := strings.Join(lines, "\n") + "\n"
	in := writeFile(t, filepath.Join(dir, "in.jsonl"), manifest)
	out := filepath.Join(dir, "out")
	start := time.Now()
	batch := func(k int, input string) *exec.Cmd {
		return exec.Command(bin, "batch", input, "-o", out, "--shard", fmt.Sprintf("%d/%d", k, count),
			"--voice", tinyVoice, "--jobs", "2", "--threads", "1", "-q")
	}
	finish := func(name string, c *exec.Cmd) {
		t.Helper()
		if err := c.Wait(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	var stderr2 bytes.Buffer

	// Shards 1 and 2 side by side. Shard 2 reads the manifest from a pipe that first gives it only half of the
	// lines: killed while its share of the other half is still unread, it is stopped part-way whenever it dies.
	one := batch(1, in)
	two := batch(2, "-")
	two.Stderr = &stderr2
	feed, err := two.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []*exec.Cmd{one, two} {
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
	}
	io.WriteString(feed, strings.Join(lines[:items/2], "\n")+"\n")
	fed := 0 // shard 2's items in the lines it was given: it cannot record more before it is killed
	for _, line := range lines[:items/2] {
		var it struct{ ID string }
		json.Unmarshal([]byte(line), &it)
		if owner[it.ID] == 2 {
			fed++
		}
	}
	file2 := filepath.Join(out, "results.2-of-4.jsonl")
	waitUntil(t, "shard 2 to finish a few items", func() bool { return countLines(file2) >= (fed+1)/2 })
	two.Process.Signal(syscall.SIGKILL)
	two.Wait()
	feed.Close()
	finish("shard 1", one)
	owned2 := 0
	for _, k := range owner {
		if k == 2 {
			owned2++
		}
	}
	before := len(readShardRows(t, file2))
	if before == 0 || before >= owned2 {
		t.Fatalf("the killed shard 2 recorded %d of its %d items; the test needs it stopped part-way\n%s", before, owned2, stderr2.String())
	}

	// Shards 3 and 4 side by side, then shard 2 again, from the file: it finishes its share.
	three, four := batch(3, in), batch(4, in)
	for _, c := range []*exec.Cmd{three, four} {
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
	}
	finish("shard 3", three)
	finish("shard 4", four)
	again := exec.Command(bin, "batch", in, "-o", out, "--shard", "2/4", "--voice", tinyVoice, "--threads", "1")
	msg, err := again.CombinedOutput()
	if err != nil || !strings.Contains(string(msg), fmt.Sprintf("%d ok, 0 failed, %d skipped", owned2-before, before)) {
		t.Fatalf("shard 2 run again: %v, want %d ok and %d skipped:\n%s", err, owned2-before, before, msg)
	}

	merge := exec.Command(bin, "results", "merge", out, "--inputs", in)
	msg, err = merge.CombinedOutput()
	wall := time.Since(start)
	if err != nil || !strings.Contains(string(msg), "120 items: 120 ok, 0 failed, 0 missing") {
		t.Fatalf("merge: %v\n%s", err, msg)
	}
	// The shards are disjoint and each did its own items, each once.
	made := map[string]int{}
	for k := 1; k <= count; k++ {
		for _, r := range readShardRows(t, filepath.Join(out, fmt.Sprintf("results.%d-of-%d.jsonl", k, count))) {
			made[r.ID]++
			if owner[r.ID] != k || r.Shard != fmt.Sprintf("%d/%d", k, count) {
				t.Errorf("shard %d's file has a row of shard %d's item: %+v", k, owner[r.ID], r)
			}
		}
	}
	rows := readShardRows(t, filepath.Join(out, "results.jsonl"))
	okRows := map[string]int{}
	for _, r := range rows {
		if r.Status == "ok" {
			okRows[r.ID]++
		}
	}
	for id := range owner {
		if made[id] != 1 || okRows[id] != 1 {
			t.Errorf("item %s: %d rows in the shards' files, %d ok rows merged; want 1 and 1", id, made[id], okRows[id])
		}
	}
	if len(rows) != items {
		t.Errorf("results.jsonl has %d rows, want %d", len(rows), items)
	}
	checkOutputFolder(t, out, items) // 120 whole WAVs, no temporary files
	merged, _ := os.ReadFile(filepath.Join(out, "results.jsonl"))
	if msg, err := exec.Command(bin, "results", "merge", out).CombinedOutput(); err != nil {
		t.Fatalf("second merge: %v\n%s", err, msg)
	}
	if again, _ := os.ReadFile(filepath.Join(out, "results.jsonl")); !bytes.Equal(again, merged) {
		t.Error("merging again changed results.jsonl")
	}
	t.Logf("%d items, 4 shards (shard 2 killed after %d of its %d items, then run again): %d rows merged, %d WAVs, wall %.1f s",
		items, before, owned2, len(rows), items, wall.Seconds())
}

// A sharded batch into a folder of shards of another count, and a merge of a folder that holds two counts, are
// refused with exit status 2, naming both files and the ways out; nothing is mixed.
func TestShardsOfDifferentCountsAreRefused(t *testing.T) {
	dir := isolate(t)
	clearSchedulerEnv(t)
	in := writeFile(t, filepath.Join(dir, "in.jsonl"), `{"id":"a","text":"Hello."}`+"\n")
	out := filepath.Join(dir, "out")
	old := writeFile(t, filepath.Join(out, "results.1-of-4.jsonl"), `{"id":"b","line":2,"out":"b.wav","status":"ok","shard":"1/4"}`+"\n")

	r := run(t, "", "batch", in, "-o", out, "--voice", tinyVoice, "--shard", "1/3")
	if r.code != ExitUsage {
		t.Errorf("batch --shard 1/3: exit %d, want %d", r.code, ExitUsage)
	}
	for _, want := range []string{"results.1-of-4.jsonl", "results.1-of-3.jsonl", "another folder", "--force to start over"} {
		if !strings.Contains(r.errOut, want) {
			t.Errorf("batch --shard 1/3: stderr %q does not say %q", r.errOut, want)
		}
	}
	if _, err := os.Stat(filepath.Join(out, "results.1-of-3.jsonl")); err == nil {
		t.Error("the refused shard wrote its results file")
	}

	writeFile(t, filepath.Join(out, "results.2-of-3.jsonl"), `{"id":"a","line":1,"out":"a.wav","status":"ok","shard":"2/3"}`+"\n")
	r = run(t, "", "results", "merge", out)
	if r.code != ExitUsage || !strings.Contains(r.errOut, "results.2-of-3.jsonl and results.1-of-4.jsonl") || !strings.Contains(r.errOut, "--force") {
		t.Errorf("merge of two counts: exit %d, stderr %q; want %d naming both files", r.code, r.errOut, ExitUsage)
	}
	if _, err := os.Stat(filepath.Join(out, "results.jsonl")); err == nil {
		t.Error("the refused merge wrote results.jsonl")
	}
	if got, _ := os.ReadFile(old); !strings.Contains(string(got), `"id":"b"`) {
		t.Errorf("%s changed: %q", old, got)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"batch", "--help"}, "a shard is refused (exit status 2) where results files of shards of another count are"},
		{[]string{"results", "merge", "--help"}, "2 usage error, or DIR holds shards of different counts"},
	} {
		if help := strings.Join(strings.Fields(run(t, "", c.args...).out), " "); !strings.Contains(help, c.want) {
			t.Errorf("%q does not say %q", c.args, c.want)
		}
	}
}
