// Package deploy holds ready-to-use examples for running ttsgen on many machines; this test keeps them valid.
package deploy

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"testing"

	"go.yaml.in/yaml/v3"
)

func TestKubernetesIndexedJobIsValid(t *testing.T) {
	data, err := os.ReadFile("kubernetes/indexed-job.yaml")
	if err != nil {
		t.Fatal(err)
	}
	type container struct {
		Args []string `yaml:"args"`
		Env  []struct{ Name, Value string }
	}
	type doc struct {
		Kind     string `yaml:"kind"`
		Metadata struct{ Name string }
		Spec     struct {
			CompletionMode string `yaml:"completionMode"`
			Completions    int    `yaml:"completions"`
			Parallelism    int    `yaml:"parallelism"`
			Template       struct {
				Spec struct {
					Containers []container `yaml:"containers"`
				}
			}
		}
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var jobs []doc
	for {
		var d doc
		if err := dec.Decode(&d); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("indexed-job.yaml: %v", err)
		}
		if d.Kind == "Job" {
			jobs = append(jobs, d)
		}
	}
	if len(jobs) != 2 {
		t.Fatalf("want the corpus Job and the merge Job, got %d Jobs", len(jobs))
	}
	job := jobs[0]
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
	if merge := jobs[1].Spec.Template.Spec.Containers[0].Args; len(merge) < 2 || merge[0] != "results" || merge[1] != "merge" {
		t.Errorf("merge Job args %v", merge)
	}
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
