package results

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/ttsgen/ttsgen/internal/shard"
)

// lockFiles lists the .ttsgen-lock* files in dir.
func lockFiles(t *testing.T, dir string) []string {
	t.Helper()
	got, err := filepath.Glob(filepath.Join(dir, lockName+"*"))
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range got {
		got[i] = filepath.Base(p)
	}
	return got
}

// A refused shard, and a refused merge, leave the folder as they found it: no lock file of theirs.
func TestRefusedRunsLeaveNoLockFile(t *testing.T) {
	s1of4 := shard.Spec{Index: 1, Count: 4}
	s2of3 := shard.Spec{Index: 2, Count: 3}
	write := func(t *testing.T, dir string, s shard.Spec) {
		t.Helper()
		line := rowLine(t, Row{ID: idsOf(s, 1)[0], Out: "x.wav", Status: StatusOK, Shard: s.String()})
		if err := os.WriteFile(filepath.Join(dir, FileFor(s)), []byte(line), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("shard beside another count", func(t *testing.T) {
		dir := t.TempDir()
		write(t, dir, s1of4)
		if _, err := OpenShard(dir, s1of3, false); !errors.Is(err, ErrShardCounts) {
			t.Fatalf("OpenShard(1/3) beside shards of 4: %v, want ErrShardCounts", err)
		}
		if got := lockFiles(t, dir); len(got) > 0 {
			t.Errorf("the refused shard left %q", got)
		}
	})
	t.Run("shard whose results file cannot be read", func(t *testing.T) {
		dir := t.TempDir()
		if err := os.Mkdir(filepath.Join(dir, FileFor(s1of3)), 0o755); err != nil {
			t.Fatal(err)
		}
		if _, err := OpenShard(dir, s1of3, false); err == nil {
			t.Fatal("OpenShard opened a results file that is a folder")
		}
		if got := lockFiles(t, dir); len(got) > 0 {
			t.Errorf("the refused shard left %q", got)
		}
	})
	t.Run("merge of an empty folder", func(t *testing.T) {
		dir := t.TempDir()
		if _, err := Merge(dir, MergeOptions{}); !errors.Is(err, ErrNoResults) {
			t.Fatalf("Merge of an empty folder: %v, want ErrNoResults", err)
		}
		if got := lockFiles(t, dir); len(got) > 0 {
			t.Errorf("the refused merge left %q", got)
		}
	})
	t.Run("merge of two counts", func(t *testing.T) {
		dir := t.TempDir()
		write(t, dir, s1of4)
		write(t, dir, s2of3)
		if _, err := Merge(dir, MergeOptions{RemoveShards: true}); !errors.Is(err, ErrShardCounts) {
			t.Fatalf("Merge of two counts: %v, want ErrShardCounts", err)
		}
		if got := lockFiles(t, dir); len(got) > 0 {
			t.Errorf("the refused merge left %q", got)
		}
	})
	t.Run("a lock file that was there stays", func(t *testing.T) {
		dir := t.TempDir()
		write(t, dir, s1of4)
		openShard(t, dir, s1of4, false).Close() // leaves .ttsgen-lock and .ttsgen-lock.1-of-4, as a run does
		before := lockFiles(t, dir)
		if _, err := OpenShard(dir, s1of3, false); !errors.Is(err, ErrShardCounts) {
			t.Fatalf("OpenShard(1/3) beside shards of 4: %v, want ErrShardCounts", err)
		}
		if got := lockFiles(t, dir); !slices.Equal(got, before) {
			t.Errorf("lock files %q after the refused shard, want %q as before", got, before)
		}
	})
}

// A lock file is never taken away while another process (here: another open file) holds it, and one that was
// removed and created again is locked anew, not the removed one.
func TestLockFilesHeldElsewhereStay(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, lockName)
	first, err := lockAt(path, true) // creates it
	if err != nil {
		t.Fatal(err)
	}
	second, err := lockAt(path, true) // a shard beside it
	if err != nil {
		t.Fatal(err)
	}
	if !first.created || second.created {
		t.Fatalf("created: %v, %v; want true, false", first.created, second.created)
	}
	first.release(true) // refused, but a sibling holds the lock
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("the lock file a sibling holds was removed: %v", err)
	}
	if removeLockFile(path) {
		t.Fatal("removeLockFile removed a lock file that is held")
	}
	if _, err := lockAt(path, false); !errors.Is(err, errLocked) && err != nil {
		t.Fatalf("exclusive lock beside a shared one: %v", err)
	}
	second.release(false)
	if !removeLockFile(path) {
		t.Fatal("removeLockFile kept a lock file nobody holds")
	}

	// One who opened the file before it went, and locks it after, locks nothing: isFileAt tells.
	held, err := lockAt(path, false)
	if err != nil {
		t.Fatal(err)
	}
	racer, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer racer.Close()
	held.release(true)
	again, err := lockAt(path, false)
	if err != nil {
		t.Fatal(err)
	}
	defer again.release(false)
	if same, err := isFileAt(racer, path); err != nil || same {
		t.Errorf("isFileAt of a removed lock file: %v, %v; want false", same, err)
	}
	if same, err := isFileAt(again.f, path); err != nil || !same {
		t.Errorf("isFileAt of the lock file: %v, %v; want true", same, err)
	}
}

// Merge --remove-shards takes away the lock files of shards whose results file is gone (its own merged ones, and a
// refused or older run's), never one that is held or whose shard file stays.
func TestMergeRemoveShardsRemovesStaleShardLocks(t *testing.T) {
	dir, _ := mergeFixture(t) // shards of 2; results.2-of-2.jsonl holds a line that is not a row, so it stays
	openShard(t, dir, s1of2, false).Close()
	openShard(t, dir, s2of2, false).Close()
	stale := shardLockName(s1of3) // what a refused shard of another count left
	if err := os.WriteFile(filepath.Join(dir, stale), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, startOverLockName), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	s3of3 := shard.Spec{Index: 3, Count: 3}
	held, err := lockAt(filepath.Join(dir, shardLockName(s3of3)), false) // held: it stays
	if err != nil {
		t.Fatal(err)
	}
	defer held.release(false)
	if _, err := Merge(dir, MergeOptions{RemoveShards: true}); err != nil {
		t.Fatal(err)
	}
	// The start-over lock stays: a shard file (2/2) stays.
	want := []string{lockName, shardLockName(s2of2), shardLockName(s3of3), startOverLockName}
	if got := lockFiles(t, dir); !slices.Equal(got, want) {
		t.Errorf("lock files %q after merge --remove-shards, want %q", got, want)
	}
	// Once no shard file is left, the start-over lock goes too.
	if err := os.Remove(filepath.Join(dir, FileFor(s2of2))); err != nil {
		t.Fatal(err)
	}
	if _, err := Merge(dir, MergeOptions{RemoveShards: true}); err != nil {
		t.Fatal(err)
	}
	want = []string{lockName, shardLockName(s3of3)}
	if got := lockFiles(t, dir); !slices.Equal(got, want) {
		t.Errorf("lock files %q after the second merge, want %q", got, want)
	}
}
