//go:build unix

package textnorm

import (
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// adversarialInputs build texts of about n bytes that stress one code path each.
var adversarialInputs = map[string]func(n int) string{
	"words without punctuation": func(n int) string { return strings.Repeat("lorem ipsum dolor ", n/18) },
	"one long word":             func(n int) string { return strings.Repeat("a", n) },
	"one long number":           func(n int) string { return strings.Repeat("7", n) },
	"dotted run":                func(n int) string { return strings.Repeat("a.", n/2) },
	"abbreviations":             func(n int) string { return strings.Repeat("Dr. St. e.g. ", n/13) },
	"digit list":                func(n int) string { return strings.Repeat("1,", n/2) },
	"glued digits and letters":  func(n int) string { return strings.Repeat("x1", n/2) },
	"ampersands":                func(n int) string { return strings.Repeat("&a", n/2) },
	"colons":                    func(n int) string { return strings.Repeat("1:", n/2) },
	"dashes":                    func(n int) string { return strings.Repeat("1-", n/2) },
	"address":                   func(n int) string { return "www." + strings.Repeat("a.", n/2) + "com" },
	"money and units":           func(n int) string { return strings.Repeat("$5 10 km 3:30 pm ", n/17) },
	"emoji":                     func(n int) string { return strings.Repeat("🙂", n/4) },
}

// cpuTime is the CPU time this process has used. The test measures CPU time, not wall time, so
// that other work on a shared machine does not make it fail.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// pipeline runs what callers run and reports the CPU time and bytes allocated.
func pipeline(doc string) (time.Duration, uint64) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	start := cpuTime()
	for _, s := range append(Sentences(doc), doc) {
		SplitLong(Normalize(s), 400)
	}
	elapsed := cpuTime() - start
	runtime.ReadMemStats(&after)
	return elapsed, after.TotalAlloc - before.TotalAlloc
}

// TestLinearTime runs each adversarial 1 MB input through Sentences, Normalize and SplitLong (so
// each text is normalised twice): it must not blow up (10 s of CPU at most), allocate a bounded multiple
// of its size, and take about sixteen times as long as a sixteenth of it (quadratic code would take
// 256 times; the bound of 48 leaves room for garbage-collector noise).
func TestLinearTime(t *testing.T) {
	if testing.Short() {
		t.Skip("timing test")
	}
	const size = 1 << 20
	for name, build := range adversarialInputs {
		t.Run(name, func(t *testing.T) {
			small, large := build(size/16), build(size)
			best := func(doc string) (time.Duration, uint64) {
				bestT, bestB := time.Duration(1<<62), uint64(0)
				for range 2 {
					d, b := pipeline(doc)
					if d < bestT {
						bestT, bestB = d, b
					}
				}
				return bestT, bestB
			}
			smallT, _ := best(small)
			largeT, largeB := best(large)
			t.Logf("%d bytes: %v CPU, %d MB allocated; 1/16 of it: %v", len(large), largeT, largeB>>20, smallT)
			if largeT > 10*time.Second { // catastrophic only: the growth check below is the real test; CI machines are loaded
				t.Errorf("%s: %v for 1 MB, want under 10s", name, largeT)
			}
			if largeT > 48*smallT+20*time.Millisecond {
				t.Errorf("%s: 1 MB took %v but 64 KB took %v: not linear", name, largeT, smallT)
			}
			if largeB > 200*size {
				t.Errorf("%s: allocated %d MB for 1 MB of input", name, largeB>>20)
			}
		})
	}
}
