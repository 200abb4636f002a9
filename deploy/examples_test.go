// Package deploy holds ready-to-use examples for running ttsgen on many machines; this test keeps them valid.
package deploy

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// The corpus Job and its merge Job: in two files, so that the merge starts only when it is applied, after the
// corpus Job has ended; and the corpus Job goes on past an index that failed, so that it ends and the merge runs.
func TestKubernetesIndexedJobIsValid(t *testing.T) {
	type container struct {
		Args []string `yaml:"args"`
		Env  []struct{ Name, Value string }
	}
	type doc struct {
		Kind     string `yaml:"kind"`
		Metadata struct{ Name string }
		Spec     struct {
			BackoffLimit     *int   `yaml:"backoffLimit"`
			MaxFailedIndexes *int   `yaml:"maxFailedIndexes"`
			CompletionMode   string `yaml:"completionMode"`
			Completions      int    `yaml:"completions"`
			Parallelism      int    `yaml:"parallelism"`
			Template         struct {
				Spec struct {
					Containers []container `yaml:"containers"`
				}
			}
		}
	}
	var jobs []doc
	for _, file := range []string{"kubernetes/indexed-job.yaml", "kubernetes/merge-job.yaml"} {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		dec := yaml.NewDecoder(bytes.NewReader(data))
		n := 0
		for {
			var d doc
			if err := dec.Decode(&d); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			if d.Kind == "Job" {
				jobs, n = append(jobs, d), n+1
			}
		}
		if n != 1 {
			t.Fatalf("%s holds %d Jobs; want one, so that each starts only when its file is applied", file, n)
		}
	}
	job := jobs[0]
	if m := job.Spec.MaxFailedIndexes; m != nil && *m < job.Spec.Completions {
		t.Errorf("corpus Job maxFailedIndexes %d: one index whose batch had a failed item would stop the others "+
			"and the Job would never complete for the merge", *m)
	}
	if job.Spec.CompletionMode != "Indexed" || job.Spec.Completions < 2 || job.Spec.Parallelism < 1 {
		t.Errorf("corpus Job spec: %+v", job.Spec)
	}
	c := job.Spec.Template.Spec.Containers[0]
	count := ""
	for _, e := range c.Env {
		if e.Name == "TTSGEN_SHARD_COUNT" {
			count = e.Value
		}
	}
	if count != strconv.Itoa(job.Spec.Completions) || len(c.Args) == 0 || c.Args[0] != "batch" || !slices.Contains(c.Args, "-o") {
		t.Errorf("corpus container: args %v, TTSGEN_SHARD_COUNT %q; want a batch with -o and the count = completions %d",
			c.Args, count, job.Spec.Completions)
	}
	// The merge counts the items no pod made: it reads the corpus Job's inputs, from its folder, and fails once.
	checkMergeReadsBatchInputs(t, c.Args, jobs[1].Spec.Template.Spec.Containers[0].Args)
	if jobs[1].Spec.BackoffLimit == nil || *jobs[1].Spec.BackoffLimit != 0 {
		t.Errorf("merge Job backoffLimit %v; want 0: a merge that finds items missing says so once", jobs[1].Spec.BackoffLimit)
	}
}

// checkMergeReadsBatchInputs checks that merge (a ttsgen command line) is `results merge OUT --inputs IN...` for the
// folder and inputs of batch (a command line holding a ttsgen batch), so that it counts the items no shard made.
func checkMergeReadsBatchInputs(t *testing.T, batch, merge []string) {
	t.Helper()
	inputs, out := batchArgs(batch)
	if len(inputs) == 0 || len(merge) < 3 || merge[0] != "results" || merge[1] != "merge" || merge[2] != out ||
		!slices.Equal(flagValues(merge, "--inputs"), inputs) {
		t.Errorf("merge %q after batch %q; want results merge %s --inputs %q", merge, batch, out, inputs)
	}
}

// batchArgs is a batch command line's inputs (the arguments after "batch" up to the first flag) and its -o.
func batchArgs(args []string) (inputs []string, out string) {
	i := slices.Index(args, "batch") + 1
	for ; i < len(args) && !strings.HasPrefix(args[i], "-"); i++ {
		inputs = append(inputs, args[i])
	}
	if vs := flagValues(args, "-o"); len(vs) > 0 {
		out = vs[0]
	}
	return inputs, out
}

// flagValues is what follows flag in args, up to the next flag.
func flagValues(args []string, flag string) []string {
	i := slices.Index(args, flag)
	if i < 0 {
		return nil
	}
	var vs []string
	for _, a := range args[i+1:] {
		if strings.HasPrefix(a, "-") {
			break
		}
		vs = append(vs, a)
	}
	return vs
}

func TestScriptsParse(t *testing.T) {
	for _, script := range []string{"slurm/ttsgen-array.sbatch", "parallel/shards.sh"} {
		if out, err := exec.Command("bash", "-n", script).CombinedOutput(); err != nil {
			t.Errorf("bash -n %s: %v\n%s", script, err, out)
		}
	}
	data, _ := os.ReadFile("slurm/ttsgen-array.sbatch")
	if !bytes.Contains(data, []byte("#SBATCH --array=")) {
		t.Error("the sbatch script declares no array")
	}
}

// stubCommands puts commands named names in a folder first on PATH: each appends its name and arguments, one per
// line, to the file it returns, and exits with $STATUS_<NAME> (0 when unset).
func stubCommands(t *testing.T, names ...string) (log string) {
	t.Helper()
	dir := t.TempDir()
	log = filepath.Join(dir, "calls")
	for _, name := range names {
		script := fmt.Sprintf("#!/bin/sh\nprintf '%%s\\n' %q \"$@\" >> %q\necho >> %q\nexit ${STATUS_%s:-0}\n",
			name, log, log, strings.ToUpper(name))
		if err := os.WriteFile(filepath.Join(dir, name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	return log
}

// calls reads a stub log: each call's command line, as words.
func calls(t *testing.T, log string) [][]string {
	t.Helper()
	data, err := os.ReadFile(log)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	var out [][]string
	for _, call := range strings.Split(strings.TrimSpace(string(data)), "\n\n") {
		if call != "" {
			out = append(out, strings.Split(call, "\n"))
		}
	}
	return out
}

// runStatus runs cmd and returns its exit status.
func runStatus(t *testing.T, cmd *exec.Cmd) int {
	t.Helper()
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("%s: %v\n%s", cmd, err, out)
	}
	return cmd.ProcessState.ExitCode()
}

// shards.sh merges with the input its shards read, so that the items no shard made are missing, and exits as the
// merge does, whatever the shards did.
func TestParallelScriptMergesWithTheShardsInputs(t *testing.T) {
	for _, tc := range []struct{ shards, merge, want string }{
		{"0", "0", "0"}, // every item ok
		{"2", "1", "1"}, // two shards failed: items failed or missing
		{"0", "1", "1"}, // the shards ran, yet items are missing
		{"1", "0", "0"}, // a shard failed once, and its items were made on a later run
	} {
		log := stubCommands(t, "parallel", "ttsgen")
		t.Setenv("STATUS_PARALLEL", tc.shards)
		t.Setenv("STATUS_TTSGEN", tc.merge)
		got := runStatus(t, exec.Command("bash", "parallel/shards.sh", "in/prompts.jsonl", "out/", "4"))
		if strconv.Itoa(got) != tc.want {
			t.Errorf("shards exit %s, merge exits %s: the script exits %d, want %s", tc.shards, tc.merge, got, tc.want)
		}
		c := calls(t, log)
		if len(c) != 2 || c[0][0] != "parallel" || c[1][0] != "ttsgen" {
			t.Fatalf("calls %q; want parallel, then ttsgen", c)
		}
		checkMergeReadsBatchInputs(t, c[0], c[1][1:])
	}
}

// The sbatch script's tasks and the merge job its header shows read the same IN, from the same OUT.
func TestSlurmMergeReadsTheArraysInputs(t *testing.T) {
	log := stubCommands(t, "srun", "ttsgen")
	t.Setenv("IN", "/shared/prompts.jsonl")
	t.Setenv("OUT", "/shared/out")
	if code := runStatus(t, exec.Command("bash", "slurm/ttsgen-array.sbatch")); code != 0 {
		t.Fatalf("the array task exits %d", code)
	}
	data, _ := os.ReadFile("slurm/ttsgen-array.sbatch")
	var wrap string
	for _, line := range strings.Split(string(data), "\n") {
		if _, after, ok := strings.Cut(line, "--wrap '"); ok && strings.Contains(line, "--dependency") {
			wrap = strings.TrimSuffix(strings.TrimSpace(after), "'")
		}
	}
	if wrap == "" {
		t.Fatal("the sbatch script shows no merge job (sbatch --dependency=... --wrap '...')")
	}
	t.Setenv("STATUS_TTSGEN", "1") // items missing: the merge job fails
	if code := runStatus(t, exec.Command("bash", "-c", wrap)); code != 1 {
		t.Errorf("the merge job %q exits %d when the merge exits 1", wrap, code)
	}
	c := calls(t, log)
	if len(c) != 2 || c[0][0] != "srun" || c[1][0] != "ttsgen" {
		t.Fatalf("calls %q; want srun, then ttsgen", c)
	}
	checkMergeReadsBatchInputs(t, c[0], c[1][1:])
}
