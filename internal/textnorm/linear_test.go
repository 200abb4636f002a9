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
	"abbreviations":             func(n int) string { return strings.Repeat("Dr. St. e.g. Apt. 4B Co. Ltd. ", n/30) },
	"digit list":                func(n int) string { return strings.Repeat("1,", n/2) },
	"glued digits and letters":  func(n int) string { return strings.Repeat("x1", n/2) },
	"ampersands":                func(n int) string { return strings.Repeat("&a", n/2) },
	"colons":                    func(n int) string { return strings.Repeat("1:", n/2) },
	"dashes":                    func(n int) string { return strings.Repeat("1-", n/2) },
	"slashes":                   func(n int) string { return strings.Repeat("1/", n/2) },
	"durations":                 func(n int) string { return strings.Repeat("1h 30m ", n/7) },
	"address":                   func(n int) string { return "www." + strings.Repeat("a.", n/2) + "com" },
	"money and units":           func(n int) string { return strings.Repeat("$5 10 km 3:30 pm 31/02/2020 ", n/28) },
	"emoji":                     func(n int) string { return strings.Repeat("🙂", n/4) },
	"ellipses":                  func(n int) string { return strings.Repeat("a... b…c . . . d.. ", n/20) },
	"markdown links and marks":  func(n int) string { return strings.Repeat("[a](b) ![c](d \"t\") **e** `f` ~~g~~ ", n/38) },
	"unclosed links":            func(n int) string { return strings.Repeat("[a](b", n/5) },
	"markdown lines":            func(n int) string { return strings.Repeat("# a\n- b\n> > c\n```go\n1. d\n---\ne\n", n/34) },
}

// cpuTime is the CPU time this process has used: other work on a shared machine does not count.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// work runs what callers run (Sentences, then Normalize and SplitLong on each sentence and on the whole text) over
// doc, times times, and reports the CPU time, the number of allocations and the bytes allocated.
func work(doc string, times int) (cpu time.Duration, mallocs, bytes uint64) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	start := cpuTime()
	for range times {
		for _, s := range append(Sentences(doc), doc) {
			SplitLong(Normalize(s), 400)
		}
	}
	cpu = cpuTime() - start
	runtime.ReadMemStats(&after)
	return cpu, after.Mallocs - before.Mallocs, after.TotalAlloc - before.TotalAlloc
}

// TestLinearTime compares the work of each adversarial 512 KB text with the work of a 2 KB text of the same kind read
// 256 times: the same number of bytes, so linear code does about the same work both ways, and quadratic code 256
// times as much on the large text. The allocation counts are exact (the same every run) and must agree within 3x.
// The CPU times are the best of two runs on each side, taken in turns so that a change in the machine's load
// weighs on both, and about equally long, so timer granularity weighs alike too; they must agree within 4x. The
// large text must also stay under 10 s of CPU and 200 bytes allocated per byte.
func TestLinearTime(t *testing.T) {
	if testing.Short() {
		t.Skip("reads 30 MB of text")
	}
	const size, parts = 1 << 19, 256
	for name, build := range adversarialInputs {
		t.Run(name, func(t *testing.T) {
			large, small := build(size), build(size/parts)
			times := max(1, len(large)/max(1, len(small)))
			largeT, smallT := time.Duration(1<<62), time.Duration(1<<62)
			var largeM, largeB, smallM uint64
			for range 2 {
				var d time.Duration
				d, largeM, largeB = work(large, 1)
				largeT = min(largeT, d)
				d, smallM, _ = work(small, times)
				smallT = min(smallT, d)
			}
			t.Logf("%d bytes once: %v CPU, %d allocations, %d MB; %d bytes %d times: %v CPU, %d allocations",
				len(large), largeT, largeM, largeB>>20, len(small), times, smallT, smallM)
			if largeT > 10*time.Second {
				t.Errorf("%v of CPU for %d bytes, want under 10 s", largeT, len(large))
			}
			if largeM > 3*smallM+1000 {
				t.Errorf("not linear: %d allocations for %d bytes, %d for the same bytes in %d pieces", largeM, len(large), smallM, times)
			}
			if largeT > 4*smallT+20*time.Millisecond {
				t.Errorf("not linear: %v of CPU for %d bytes, %v for the same bytes in %d pieces", largeT, len(large), smallT, times)
			}
			if largeB > 200*size {
				t.Errorf("allocated %d MB for %d bytes of input", largeB>>20, len(large))
			}
		})
	}
}
