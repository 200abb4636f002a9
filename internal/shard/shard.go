// Package shard gives each of N workers a deterministic, disjoint share of one corpus: an item belongs to the shard
// its stable id hashes to, whatever the order of the inputs, so that workers started by Kubernetes Indexed Jobs or
// Slurm job arrays split a manifest among them without talking to each other.
package shard

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Spec is shard Index of Count (1 <= Index <= Count). The zero Spec is "no sharding": it owns every item.
type Spec struct{ Index, Count int }

// Forms is what Parse accepts, for error messages and --help.
const Forms = `K/N with 1 <= K <= N (e.g. 2/4), or K-of-N`

// Parse reads a --shard value.
func Parse(s string) (Spec, error) {
	k, n, ok := strings.Cut(strings.TrimSpace(s), "/")
	if !ok {
		k, n, ok = strings.Cut(strings.TrimSpace(s), "-of-")
	}
	index, err1 := strconv.Atoi(k)
	count, err2 := strconv.Atoi(n)
	if !ok || err1 != nil || err2 != nil {
		return Spec{}, fmt.Errorf("shard %q: want %s", s, Forms)
	}
	return Spec{Index: index, Count: count}.check(fmt.Sprintf("shard %q", s))
}

func (s Spec) check(what string) (Spec, error) {
	switch {
	case s.Count < 1:
		return Spec{}, fmt.Errorf("%s: the shard count must be at least 1; want %s", what, Forms)
	case s.Index < 1 || s.Index > s.Count:
		return Spec{}, fmt.Errorf("%s: shard %d is outside 1..%d; want %s", what, s.Index, s.Count, Forms)
	}
	return s, nil
}

// Enabled says whether s splits the work at all.
func (s Spec) Enabled() bool { return s.Count > 0 }

// String is "K/N", or "" for no sharding.
func (s Spec) String() string {
	if !s.Enabled() {
		return ""
	}
	return fmt.Sprintf("%d/%d", s.Index, s.Count)
}

// FileTag is "K-of-N", for names of files a shard owns (results.K-of-N.jsonl).
func (s Spec) FileTag() string { return fmt.Sprintf("%d-of-%d", s.Index, s.Count) }

// Of is the shard (1..count) that id belongs to: the first 8 bytes of its SHA-256, modulo count. A cryptographic
// hash, because ids of one corpus are often alike ("p1", "p2", ...) and must still spread evenly.
func Of(id string, count int) int {
	sum := sha256.Sum256([]byte(id))
	return int(binary.BigEndian.Uint64(sum[:8])%uint64(count)) + 1
}

// Owns says whether the item with this id is s's to do.
func (s Spec) Owns(id string) bool { return !s.Enabled() || Of(id, s.Count) == s.Index }

// ErrNoCount says that a Kubernetes index was found without the number of shards, which Kubernetes does not pass.
var ErrNoCount = errors.New("JOB_COMPLETION_INDEX is set but the number of shards is not: pass --shard-count N or set TTSGEN_SHARD_COUNT (the Job's completions)")

// FromEnv finds the shard a scheduler gave this process: Kubernetes Indexed Jobs set JOB_COMPLETION_INDEX (0-based;
// the count, the Job's completions, comes from count or TTSGEN_SHARD_COUNT); Slurm job arrays set
// SLURM_ARRAY_TASK_ID, SLURM_ARRAY_TASK_COUNT, SLURM_ARRAY_TASK_MIN and _MAX (and _STEP for --array=A-B:S). from names
// what was read, for the progress line and errors. No scheduler: the zero Spec and "".
func FromEnv(getenv func(string) string, count int) (s Spec, from string, err error) {
	if idx := getenv("JOB_COMPLETION_INDEX"); idx != "" {
		from = "JOB_COMPLETION_INDEX=" + idx
		i, err := strconv.Atoi(idx)
		if err != nil {
			return Spec{}, from, fmt.Errorf("%s is not a number", from)
		}
		if count == 0 {
			if c := getenv("TTSGEN_SHARD_COUNT"); c != "" {
				if count, err = strconv.Atoi(c); err != nil {
					return Spec{}, from, fmt.Errorf("TTSGEN_SHARD_COUNT=%s is not a number", c)
				}
			}
		}
		if count == 0 {
			return Spec{}, from, ErrNoCount
		}
		s, err = Spec{Index: i + 1, Count: count}.check(from)
		return s, from, err
	}
	id := getenv("SLURM_ARRAY_TASK_ID")
	if id == "" {
		return Spec{}, "", nil
	}
	from = "SLURM_ARRAY_TASK_ID=" + id
	number := func(name string, def int) (int, error) {
		v := getenv(name)
		if v == "" {
			if def < 0 {
				return 0, fmt.Errorf("%s is set but %s is not", from, name)
			}
			return def, nil
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			return 0, fmt.Errorf("%s=%s is not a number", name, v)
		}
		return n, nil
	}
	task, err := number("SLURM_ARRAY_TASK_ID", -1)
	if err != nil {
		return Spec{}, from, err
	}
	total, err := number("SLURM_ARRAY_TASK_COUNT", -1)
	if err != nil {
		return Spec{}, from, err
	}
	first, err := number("SLURM_ARRAY_TASK_MIN", -1)
	if err != nil {
		return Spec{}, from, err
	}
	step, err := number("SLURM_ARRAY_TASK_STEP", 1)
	if err != nil {
		return Spec{}, from, err
	}
	// An array given as a list (--array=0,2,5) has no step that its tasks follow: SLURM_ARRAY_TASK_MAX shows it,
	// on every task alike, where the task's own id shows it only on some (5 would be shard 6 of 3).
	last, err := number("SLURM_ARRAY_TASK_MAX", first+max(step, 1)*(total-1))
	if err != nil {
		return Spec{}, from, err
	}
	if step < 1 || (task-first)%step != 0 || last != first+step*(total-1) {
		return Spec{}, from, fmt.Errorf("%s of an array of %d tasks from %d to %d by %d: not an evenly spaced array "+
			"(use --array=A-B or A-B:S)", from, total, first, last, step)
	}
	if count != 0 && count != total {
		return Spec{}, from, fmt.Errorf("%s: --shard-count %d disagrees with SLURM_ARRAY_TASK_COUNT=%d", from, count, total)
	}
	s, err = Spec{Index: (task-first)/step + 1, Count: total}.check(from)
	return s, from, err
}
