package shard

import (
	"fmt"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want Spec
		err  string
	}{
		{"1/4", Spec{1, 4}, ""},
		{"4/4", Spec{4, 4}, ""},
		{" 2-of-3 ", Spec{2, 3}, ""},
		{"1/1", Spec{1, 1}, ""},
		{"0/4", Spec{}, "shard 0 is outside 1..4"},
		{"5/4", Spec{}, "shard 5 is outside 1..4"},
		{"1/0", Spec{}, "the shard count must be at least 1"},
		{"-1/4", Spec{}, "outside 1..4"},
		{"garbage", Spec{}, `shard "garbage": want K/N`},
		{"1/", Spec{}, "want K/N"},
		{"a/b", Spec{}, "want K/N"},
	} {
		got, err := Parse(tt.in)
		if tt.err == "" && (err != nil || got != tt.want) {
			t.Errorf("Parse(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
		if tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err) || !strings.Contains(err.Error(), Forms)) {
			t.Errorf("Parse(%q) error %v; want %q and the accepted forms", tt.in, err, tt.err)
		}
	}
}

// 100,000 ids of the shape corpora use ("p0", "p1", ...) spread over 7 shards within 2% of equal; every id lands in
// exactly one shard; the assignment depends on the id alone.
func TestAssignmentIsBalancedDisjointCompleteAndStable(t *testing.T) {
	const ids, count = 100000, 7
	per := make([]int, count+1)
	for i := range ids {
		id := fmt.Sprintf("p%d", i)
		owners := 0
		for k := 1; k <= count; k++ {
			if (Spec{k, count}).Owns(id) {
				owners++
				per[k]++
			}
		}
		if owners != 1 {
			t.Fatalf("id %s is owned by %d shards", id, owners)
		}
	}
	for k := 1; k <= count; k++ {
		if d := float64(per[k])/(ids/count) - 1; d > 0.02 || d < -0.02 {
			t.Errorf("shard %d/%d has %d of %d ids (%+.1f%% from equal)", k, count, per[k], ids, 100*d)
		}
	}
	// Fixed values: a change of hash would move every item of a half-done sharded corpus to another worker.
	if got := []int{Of("p0", 4), Of("p1", 4), Of("chapter-01", 4)}; fmt.Sprint(got) != "[1 4 1]" {
		t.Errorf("Of = %v; the assignment must never change", got)
	}
	if !(Spec{}).Owns("anything") {
		t.Error("no sharding must own every item")
	}
}

func TestFromEnv(t *testing.T) {
	for _, tt := range []struct {
		name  string
		env   map[string]string
		count int
		want  Spec
		err   string
	}{
		{"none", nil, 0, Spec{}, ""},
		{"kubernetes with --shard-count", map[string]string{"JOB_COMPLETION_INDEX": "0"}, 4, Spec{1, 4}, ""},
		{"kubernetes with TTSGEN_SHARD_COUNT", map[string]string{"JOB_COMPLETION_INDEX": "3", "TTSGEN_SHARD_COUNT": "4"}, 0, Spec{4, 4}, ""},
		{"kubernetes without a count", map[string]string{"JOB_COMPLETION_INDEX": "1"}, 0, Spec{}, "--shard-count N or set TTSGEN_SHARD_COUNT"},
		{"kubernetes index past the count", map[string]string{"JOB_COMPLETION_INDEX": "4"}, 4, Spec{}, "shard 5 is outside 1..4"},
		{"kubernetes garbage", map[string]string{"JOB_COMPLETION_INDEX": "x"}, 4, Spec{}, "not a number"},
		{"slurm from 0", map[string]string{"SLURM_ARRAY_TASK_ID": "2", "SLURM_ARRAY_TASK_COUNT": "8", "SLURM_ARRAY_TASK_MIN": "0"}, 0, Spec{3, 8}, ""},
		{"slurm from 1", map[string]string{"SLURM_ARRAY_TASK_ID": "1", "SLURM_ARRAY_TASK_COUNT": "8", "SLURM_ARRAY_TASK_MIN": "1"}, 0, Spec{1, 8}, ""},
		{"slurm with a step", map[string]string{"SLURM_ARRAY_TASK_ID": "10", "SLURM_ARRAY_TASK_COUNT": "3", "SLURM_ARRAY_TASK_MIN": "6", "SLURM_ARRAY_TASK_STEP": "2"}, 0, Spec{3, 3}, ""},
		{"slurm with its max", map[string]string{"SLURM_ARRAY_TASK_ID": "10", "SLURM_ARRAY_TASK_COUNT": "3", "SLURM_ARRAY_TASK_MIN": "6", "SLURM_ARRAY_TASK_MAX": "10", "SLURM_ARRAY_TASK_STEP": "2"}, 0, Spec{3, 3}, ""},
		// --array=0,2,5: refused on every task, not only on those whose ids fall outside
		{"slurm list, first task", map[string]string{"SLURM_ARRAY_TASK_ID": "0", "SLURM_ARRAY_TASK_COUNT": "3", "SLURM_ARRAY_TASK_MIN": "0", "SLURM_ARRAY_TASK_MAX": "5", "SLURM_ARRAY_TASK_STEP": "1"}, 0, Spec{}, "not an evenly spaced array"},
		{"slurm list, second task", map[string]string{"SLURM_ARRAY_TASK_ID": "2", "SLURM_ARRAY_TASK_COUNT": "3", "SLURM_ARRAY_TASK_MIN": "0", "SLURM_ARRAY_TASK_MAX": "5", "SLURM_ARRAY_TASK_STEP": "1"}, 0, Spec{}, "not an evenly spaced array"},
		{"slurm without its count", map[string]string{"SLURM_ARRAY_TASK_ID": "1", "SLURM_ARRAY_TASK_MIN": "1"}, 0, Spec{}, "SLURM_ARRAY_TASK_COUNT is not"},
		{"slurm count disagrees", map[string]string{"SLURM_ARRAY_TASK_ID": "1", "SLURM_ARRAY_TASK_COUNT": "8", "SLURM_ARRAY_TASK_MIN": "1"}, 4, Spec{}, "disagrees"},
	} {
		got, _, err := FromEnv(func(k string) string { return tt.env[k] }, tt.count)
		if tt.err == "" && (err != nil || got != tt.want) {
			t.Errorf("%s: FromEnv = %v, %v; want %v", tt.name, got, err, tt.want)
		}
		if tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)) {
			t.Errorf("%s: FromEnv error %v; want %q", tt.name, err, tt.err)
		}
	}
}
