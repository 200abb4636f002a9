package cmd

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// lockFilesIn lists the .ttsgen-lock* files in dir.
func lockFilesIn(t *testing.T, dir string) []string {
	t.Helper()
	got, err := filepath.Glob(filepath.Join(dir, ".ttsgen-lock*"))
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range got {
		got[i] = filepath.Base(p)
	}
	return got
}

// A refused shard and a refused merge leave no lock file behind, and merge --remove-shards takes away what an older
// refused shard left: out/ holds shards of 4 when shard 1/3 is asked for.
func TestRefusedRunsLeaveNoLockFiles(t *testing.T) {
	dir := isolate(t)
	clearSchedulerEnv(t)
	in := filepath.Join(dir, "in.jsonl")
	out := filepath.Join(dir, "out")
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string]string{
		in: `{"id":"a","text":"Hello."}` + "\n",
		filepath.Join(out, "results.1-of-4.jsonl"): `{"id":"b","line":2,"out":"b.wav","status":"ok","shard":"1/4"}` + "\n",
	} {
		if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if r := run(t, "", "batch", in, "-o", out, "--voice", tinyVoice, "--shard", "1/3"); r.code != ExitUsage {
		t.Fatalf("batch --shard 1/3 beside shards of 4: exit %d, stderr %q; want %d", r.code, r.errOut, ExitUsage)
	}
	if got := lockFilesIn(t, out); len(got) > 0 {
		t.Errorf("the refused shard left %q", got)
	}

	if err := os.WriteFile(filepath.Join(out, ".ttsgen-lock.1-of-3"), nil, 0o644); err != nil { // as older versions left
		t.Fatal(err)
	}
	r := run(t, "", "results", "merge", out, "--remove-shards")
	if r.code != ExitFailure || !strings.Contains(r.out, "removed results.1-of-4.jsonl") {
		t.Fatalf("results merge --remove-shards: exit %d, out %q, stderr %q; want %d (3 shards have not run)", r.code,
			r.out, r.errOut, ExitFailure)
	}
	if got := lockFilesIn(t, out); !slices.Equal(got, []string{".ttsgen-lock"}) { // the folder's, as a batch's
		t.Errorf("lock files after merge --remove-shards: %q, want only .ttsgen-lock", got)
	}

	empty := filepath.Join(dir, "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"results", "merge", empty}, {"results", empty}, {"results", empty, "--inputs", in}} {
		r := run(t, "", args...)
		if want := empty + " is not a batch's output folder: it has no results files"; r.code != ExitUsage || !strings.Contains(r.errOut, want) {
			t.Errorf("%q: exit %d, stderr %q; want %d and %q", args, r.code, r.errOut, ExitUsage, want)
		}
		if got := lockFilesIn(t, empty); len(got) > 0 {
			t.Errorf("%q left %q", args, got)
		}
	}
	help := strings.Join(strings.Fields(run(t, "", "results", "--help").out), " ")
	if want := "2 usage error (DIR not there, or without results files)"; !strings.Contains(help, want) {
		t.Errorf("results --help does not say %q", want)
	}
}

// A batch with a --voice that is not there is refused before its output folder is touched: no folder, no lock file,
// no empty results.jsonl.
func TestBatchWithAMissingVoiceLeavesNoFolder(t *testing.T) {
	dir := isolate(t)
	in := writeFile(t, filepath.Join(dir, "in.txt"), "Hello.\n")
	out := filepath.Join(dir, "out")
	r := run(t, "", "batch", in, "-o", out, "--voice", "nobody")
	if r.code != ExitUsage || !strings.Contains(r.errOut, `voice not found: "nobody"`) {
		t.Fatalf("batch --voice nobody: exit %d, stderr %q; want %d saying the voice is not found", r.code, r.errOut, ExitUsage)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("the refused batch made %s (%v)", out, err)
	}
}
