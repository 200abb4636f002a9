package bench

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"
)

// percentiles uses the nearest-rank method: the p-th percentile of n sorted
// samples is the one at 1-based rank ceil(p/100 * n). It always returns a
// value that was observed, which keeps small runs honest (no interpolation).
// No samples gives zeros.
func percentiles(samples []time.Duration) Percentiles {
	if len(samples) == 0 {
		return Percentiles{}
	}
	sorted := slices.Clone(samples)
	slices.Sort(sorted)
	at := func(p float64) float64 {
		rank := int(math.Ceil(p / 100 * float64(len(sorted))))
		return durationMS(sorted[max(rank, 1)-1])
	}
	return Percentiles{P50: at(50), P90: at(90), P99: at(99)}
}

func durationMS(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// peakRSS returns this process's peak resident set size, or 0 where
// /proc/self/status is unavailable (anything but Linux).
func peakRSS() int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	n, err := parseVmHWM(f)
	if err != nil {
		return 0
	}
	return n
}

// processCPU is the CPU time (user + system) and the system part of it that
// this process has used so far; zeros where getrusage fails.
func processCPU() (total, system time.Duration) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), time.Duration(ru.Stime.Nano())
}

// parseVmHWM reads the "VmHWM:   1234 kB" line of a /proc/PID/status file.
func parseVmHWM(r io.Reader) (int64, error) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:")
		if !ok {
			continue
		}
		fields := strings.Fields(rest)
		if len(fields) != 2 || fields[1] != "kB" {
			return 0, fmt.Errorf("reading peak RSS: unexpected VmHWM line %q", sc.Text())
		}
		kb, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("reading peak RSS: %w", err)
		}
		return kb * 1024, nil
	}
	if err := sc.Err(); err != nil {
		return 0, fmt.Errorf("reading peak RSS: %w", err)
	}
	return 0, fmt.Errorf("reading peak RSS: no VmHWM line")
}

// WriteJSON writes r as exactly one JSON object followed by a newline.
func (r Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		return fmt.Errorf("writing bench report as JSON: %w", err)
	}
	return nil
}

// WriteTable writes r as an aligned two-column table, ratios first because
// they are what people compare; the report of an interrupted run says so
// before any figure.
func (r Report) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	row := func(name, format string, args ...any) {
		fmt.Fprintf(tw, "%s\t%s\n", name, fmt.Sprintf(format, args...))
	}
	if r.Interrupted {
		row("partial report", "%s: every figure is of those alone", r.interruption())
	}
	row("speed", "%.2fx real time", r.Speed)
	if b := r.Baseline; b != nil {
		partial := ""
		if b.Interrupted {
			partial = "; partial: the baseline was " + b.interruption()
		}
		row("speedup", "%.2fx over baseline (%.2fx real time, %s%s)", r.Speedup, b.Speed, b.load(), partial)
	}
	row("rtf", "%.4f", r.RTF)
	row("qps", "%.2f requests/s", r.QPS)
	row("latency", "%s", r.LatencyMS)
	row("first audio", "%s", r.FirstAudioMS)
	row("load", "%s", r.load())
	if r.Interrupted {
		row("requests", "%d of %d planned (%d failed)", r.Requests, r.RequestsPlanned, r.Errors)
	} else {
		row("requests", "%d (%d failed)", r.Requests, r.Errors)
	}
	if len(r.ErrorsByStatus) > 0 {
		var byStatus []string
		for _, status := range slices.Sorted(maps.Keys(r.ErrorsByStatus)) {
			byStatus = append(byStatus, fmt.Sprintf("%s: %d", status, r.ErrorsByStatus[status]))
		}
		row("errors by status", "%s", strings.Join(byStatus, ", "))
	}
	if r.FirstError != "" {
		row("first error", "%s", r.FirstError)
	}
	if r.Sentences != nil {
		row("sentences", "%d", *r.Sentences)
	} else {
		row("sentences", "unknown (a speech server does not say how it split the texts)")
	}
	row("audio", "%.2f s", r.AudioSeconds)
	row("wall", "%.2f s", r.WallSeconds)
	// The CPU time and peak RSS are this process's: of a speech server driven over HTTP, the client's alone.
	cpu, rss := "cpu", "peak RSS"
	if r.Server != "" {
		cpu, rss = "cpu (this client)", "peak RSS (this client)"
	}
	switch {
	case r.Interrupted: // the CPU time counts the work on the requests cut off, which the wall time does not
		row(cpu, "%.1f s, %.1f s of it in the kernel (the requests cut off included)", r.CPUSeconds, r.SystemCPUSeconds)
	case r.WallSeconds > 0:
		row(cpu, "%.1f s, %.1f s of it in the kernel (%.1f cores busy)", r.CPUSeconds, r.SystemCPUSeconds, r.CPUSeconds/r.WallSeconds)
	}
	if r.PeakRSSBytes > 0 {
		row(rss, "%.1f MiB", float64(r.PeakRSSBytes)/(1<<20))
	} else {
		row(rss, "unknown")
	}
	if r.Device != "" {
		row("device", "%s", r.Device)
	}
	if r.Server != "" {
		row("server", "%s", r.Server)
	}
	if r.Voice != "" {
		row("voice", "%s", r.Voice)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("writing bench report table: %w", err)
	}
	return nil
}

func (p Percentiles) String() string {
	return fmt.Sprintf("p50 %.1f ms  p90 %.1f ms  p99 %.1f ms", p.P50, p.P90, p.P99)
}

// interruption says how far an interrupted run got, in words.
func (r Report) interruption() string {
	return fmt.Sprintf("interrupted after %d of %d requests", r.Requests, r.RequestsPlanned)
}

// load describes how the requests were offered, in words.
func (r Report) load() string {
	if r.Mode == OpenLoop {
		return fmt.Sprintf("open loop, %g requests/s", r.RatePerSecond)
	}
	return fmt.Sprintf("closed loop, concurrency %d", r.Concurrency)
}
