package gpu

import (
	"fmt"
	"runtime"

	"golang.org/x/sys/unix"
)

// WorkerThreads is how an engine's workers meet the operating system's threads; see Options.WorkerThreads.
type WorkerThreads string

const (
	WorkerThreadsDefault WorkerThreads = ""       // the device's default (DefaultWorkerThreads)
	WorkerThreadsFree    WorkerThreads = "free"   // whichever OS thread Go's scheduler gives the worker, run to run
	WorkerThreadsLocked  WorkerThreads = "locked" // one OS thread per worker (runtime.LockOSThread)
	WorkerThreadsPinned  WorkerThreads = "pinned" // that thread bound to one core of the process's CPU set each
)

// DefaultWorkerThreads is how workers meet OS threads on device d unless told otherwise. On the CPU each worker
// runs its own one-thread ONNX Runtime session, and a session's Run computes on the calling thread. A goroutine
// calls C on whichever OS thread runs it at the time, so one sentence's head and tail tiles (tail.go) can run on
// several threads, which Linux places on several cores, each with a cold cache; a worker locked to its thread
// stays on one core while the core is free. Elsewhere workers mostly wait for the GPU.
func DefaultWorkerThreads(d Device) WorkerThreads {
	if d == DeviceCPU {
		return WorkerThreadsLocked
	}
	return WorkerThreadsFree
}

func checkWorkerThreads(w WorkerThreads) error {
	switch w {
	case WorkerThreadsDefault, WorkerThreadsFree, WorkerThreadsLocked, WorkerThreadsPinned:
		return nil
	}
	return fmt.Errorf("gpu: unknown worker threads %q (want %s, %s or %s)", w, WorkerThreadsFree, WorkerThreadsLocked, WorkerThreadsPinned)
}

// allowedCores lists the cores this process may run on, in order (nil when the system will not say).
func allowedCores() []int {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return nil
	}
	var cores []int
	for c := 0; len(cores) < set.Count(); c++ {
		if set.IsSet(c) {
			cores = append(cores, c)
		}
	}
	return cores
}

// bindWorkerThread ties the calling goroutine, worker number worker, to its OS thread as e.workerThreads says;
// the returned function undoes it. A core that cannot be bound is reported (Logf) and left to the system.
func (e *Engine) bindWorkerThread(worker int) (unbind func()) {
	if e.workerThreads != WorkerThreadsLocked && e.workerThreads != WorkerThreadsPinned {
		return func() {}
	}
	runtime.LockOSThread()
	if e.workerThreads == WorkerThreadsPinned && len(e.cores) > 0 {
		var set unix.CPUSet
		set.Set(e.cores[worker%len(e.cores)])
		if err := unix.SchedSetaffinity(0, &set); err != nil { // 0: the calling thread
			e.logf("gpu: worker %d: binding its thread to core %d: %v", worker, e.cores[worker%len(e.cores)], err)
		}
	}
	// Unlocking a thread whose CPU set was narrowed would hand it back to Go's scheduler pinned; a locked goroutine
	// that exits takes its thread with it instead.
	return func() {
		if e.workerThreads == WorkerThreadsLocked {
			runtime.UnlockOSThread()
		}
	}
}
