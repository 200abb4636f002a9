package gpu

import (
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// threadCores runs f on a new goroutine bound as worker 0 of e, and returns the cores its thread may then use.
func threadCores(t *testing.T, e *Engine) []int {
	t.Helper()
	got := make(chan []int)
	go func() {
		defer e.bindWorkerThread(0)()
		var set unix.CPUSet
		if err := unix.SchedGetaffinity(0, &set); err != nil {
			t.Error(err)
		}
		var cores []int
		for c := 0; len(cores) < set.Count(); c++ {
			if set.IsSet(c) {
				cores = append(cores, c)
			}
		}
		got <- cores
	}()
	return <-got
}

func TestWorkerThreads(t *testing.T) {
	all := allowedCores()
	if len(all) == 0 {
		t.Fatal("no cores allowed")
	}
	last := all[len(all)-1]
	pinned := &Engine{workerThreads: WorkerThreadsPinned, cores: []int{last}, logf: t.Logf}
	if got := threadCores(t, pinned); len(got) != 1 || got[0] != last {
		t.Errorf("a pinned worker's thread may run on cores %v; want [%d]", got, last)
	}
	for _, w := range []WorkerThreads{WorkerThreadsLocked, WorkerThreadsFree} {
		e := &Engine{workerThreads: w, cores: []int{last}, logf: t.Logf}
		if got := threadCores(t, e); len(got) != len(all) {
			t.Errorf("a %s worker's thread may run on cores %v; want all of %v", w, got, all)
		}
	}
	if got := DefaultWorkerThreads(DeviceCPU); got != WorkerThreadsLocked {
		t.Errorf("CPU workers default to %q threads; want locked", got)
	}
	_, err := newEngine(Options{Device: DeviceCPU, WorkerThreads: "sticky"}, &fakeBackend{})
	if err == nil || !strings.Contains(err.Error(), `unknown worker threads "sticky"`) {
		t.Errorf("an unknown WorkerThreads gave error %v", err)
	}
}
