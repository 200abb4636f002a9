package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"os"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

func sampleReport() Report {
	return Report{Mode: "closed-loop", Concurrency: 4, Device: "cpu", Voice: "en_US-test",
		Requests: 80, Errors: 1, FirstError: "boom", Sentences: new(120), AudioSeconds: 400, WallSeconds: 20,
		Speed: 20, RTF: 0.05, QPS: 3.95, LatencyMS: Percentiles{100, 200, 300},
		FirstAudioMS: Percentiles{10, 20, 30}, PeakRSSBytes: 300 << 20}
}

func TestWriteJSONKeys(t *testing.T) {
	base := []string{"mode", "concurrency", "rate_per_second", "device", "voice", "requests", "errors",
		"first_error", "sentences", "audio_seconds", "wall_seconds", "speed", "rtf", "qps",
		"latency_ms", "first_audio_ms", "peak_rss_bytes", "cpu_seconds", "system_cpu_seconds"}
	compared := sampleReport()
	compared.CompareTo(Report{Mode: "closed-loop", Concurrency: 1, Speed: 8})
	tests := []struct {
		name     string
		report   Report
		wantKeys []string
	}{
		{"plain", sampleReport(), base},
		{"with baseline", compared, append(slices.Clone(base), "baseline", "speedup")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := tt.report.WriteJSON(&buf); err != nil {
				t.Fatal(err)
			}
			dec := json.NewDecoder(&buf)
			var got map[string]json.RawMessage
			if err := dec.Decode(&got); err != nil {
				t.Fatalf("decoding %q: %v", buf.String(), err)
			}
			if dec.More() {
				t.Errorf("more than one JSON value written")
			}
			if keys := slices.Sorted(maps.Keys(got)); !slices.Equal(keys, slices.Sorted(slices.Values(tt.wantKeys))) {
				t.Errorf("keys = %v, want %v", keys, slices.Sorted(slices.Values(tt.wantKeys)))
			}
			var pct map[string]float64
			if err := json.Unmarshal(got["latency_ms"], &pct); err != nil || len(pct) != 3 || pct["p90"] != 200 {
				t.Errorf("latency_ms = %s, want {p50,p90,p99} with p90 200", got["latency_ms"])
			}
			if tt.report.Baseline != nil {
				var baseline map[string]json.RawMessage
				json.Unmarshal(got["baseline"], &baseline)
				if len(baseline) != len(base) || string(got["speedup"]) != "2.5" {
					t.Errorf("baseline has %d keys (want %d), speedup %s (want 2.5)", len(baseline), len(base), got["speedup"])
				}
			}
		})
	}
}

func TestWriteTable(t *testing.T) {
	withBaseline := sampleReport()
	withBaseline.CompareTo(Report{Mode: "closed-loop", Concurrency: 1, Speed: 8})
	openUnknownRSS := sampleReport()
	openUnknownRSS.Mode, openUnknownRSS.Concurrency, openUnknownRSS.RatePerSecond = "open-loop", 0, 3.5
	openUnknownRSS.PeakRSSBytes = 0
	tests := []struct {
		name      string
		report    Report
		wantLines []string // in this order, each a prefix of some line
	}{
		{"with baseline", withBaseline, []string{
			"speed        20.00x real time",
			"speedup      2.50x over baseline (8.00x real time, closed loop, concurrency 1)",
			"rtf          0.0500",
			"qps          3.95 requests/s",
			"latency      p50 100.0 ms  p90 200.0 ms  p99 300.0 ms",
			"first audio  p50 10.0 ms  p90 20.0 ms  p99 30.0 ms",
			"load         closed loop, concurrency 4",
			"requests     80 (1 failed)",
			"first error  boom",
			"peak RSS     300.0 MiB",
			"device       cpu",
			"voice        en_US-test",
		}},
		{"open loop, unknown RSS", openUnknownRSS, []string{
			"speed ", "rtf ", "load         open loop, 3.5 requests/s", "peak RSS     unknown",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := tt.report.WriteTable(&buf); err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(buf.String(), "\n")
			if !strings.HasPrefix(lines[0], "speed ") {
				t.Errorf("first line %q, want the speed ratio first", lines[0])
			}
			next := 0
			for _, want := range tt.wantLines {
				for next < len(lines) && !strings.HasPrefix(lines[next], want) {
					next++
				}
				if next == len(lines) {
					t.Fatalf("line %q missing or out of order in:\n%s", want, buf.String())
				}
			}
		})
	}
}

// An interrupted run's table says so before any figure, and how far it got; so does a comparison with an
// interrupted baseline. A report without a sentence count says they are unknown.
func TestWriteTableOfAnInterruptedRun(t *testing.T) {
	partial := sampleReport()
	partial.Interrupted, partial.RequestsPlanned, partial.Requests, partial.Sentences = true, 1000, 80, nil
	baseline := sampleReport()
	baseline.Interrupted, baseline.RequestsPlanned, baseline.Requests, baseline.Speed = true, 40, 7, 8
	compared := sampleReport()
	compared.CompareTo(baseline)
	tests := []struct {
		name      string
		report    Report
		wantLines []string // in this order, each a whole line
	}{
		{"interrupted", partial, []string{
			"partial report  interrupted after 80 of 1000 requests: every figure is of those alone",
			"speed           20.00x real time",
			"requests        80 of 1000 planned (1 failed)",
			"sentences       unknown (a speech server does not say how it split the texts)",
			"cpu             0.0 s, 0.0 s of it in the kernel (the requests cut off included)",
		}},
		{"interrupted baseline", compared, []string{
			"speed        20.00x real time",
			"speedup      2.50x over baseline (8.00x real time, closed loop, concurrency 4; partial: the baseline was " +
				"interrupted after 7 of 40 requests)",
			"requests     80 (1 failed)",
			"sentences    120",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := tt.report.WriteTable(&buf); err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(buf.String(), "\n")
			if lines[0] != tt.wantLines[0] {
				t.Errorf("first line %q, want %q", lines[0], tt.wantLines[0])
			}
			next := 0
			for _, want := range tt.wantLines {
				for next < len(lines) && lines[next] != want {
					next++
				}
				if next == len(lines) {
					t.Fatalf("line %q missing or out of order in:\n%s", want, buf.String())
				}
			}
			var js bytes.Buffer
			if err := tt.report.WriteJSON(&js); err != nil {
				t.Fatal(err)
			}
			var back Report
			if err := json.Unmarshal(js.Bytes(), &back); err != nil || !reflect.DeepEqual(back, tt.report) {
				t.Errorf("JSON %s does not read back as the report (%v)", js.String(), err)
			}
		})
	}
}

func TestParseVmHWM(t *testing.T) {
	tests := []struct {
		name, status string
		want         int64
		wantErr      string
	}{
		{"linux", "Name:\tbench\nVmPeak:\t  999 kB\nVmHWM:\t    2048 kB\nVmRSS:\t 1000 kB\n", 2048 * 1024, ""},
		{"missing", "Name:\tbench\n", 0, "reading peak RSS: no VmHWM line"},
		{"odd unit", "VmHWM:\t 12 MB\n", 0, `reading peak RSS: unexpected VmHWM line "VmHWM:\t 12 MB"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseVmHWM(strings.NewReader(tt.status))
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("parseVmHWM = %d, %v; want %d", got, err, tt.want)
			}
		})
	}
}

func TestPeakRSS(t *testing.T) {
	got := peakRSS()
	if _, err := os.Stat("/proc/self/status"); err != nil || runtime.GOOS != "linux" {
		if got != 0 {
			t.Errorf("peakRSS() = %d without /proc, want 0 (unknown)", got)
		}
		return
	}
	// A Go test binary holds at least a megabyte and far less than a terabyte.
	if got < 1<<20 || got > 1<<40 {
		t.Errorf("peakRSS() = %d bytes, implausible", got)
	}
}

// TestCPUSecondsCountsTheRequestsWork: the CPU time a request burns shows up in cpu_seconds. The request
// measures its own thread's CPU time, which the process's can only exceed, however loaded the machine is.
func TestCPUSecondsCountsTheRequestsWork(t *testing.T) {
	var burnt time.Duration
	burn := func(ctx context.Context, text string) (Outcome, error) {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		before := threadCPU(t)
		x := uint64(1)
		for i := range 100_000_000 {
			x = x*6364136223846793005 + uint64(i)
		}
		burnt = threadCPU(t) - before
		return Outcome{AudioSeconds: float64(x%2 + 1), Sentences: 1}, nil
	}
	rep, err := Run(context.Background(), []string{"a"}, Load{Concurrency: 1}, burn)
	if err != nil {
		t.Fatal(err)
	}
	if burnt < 10*time.Millisecond {
		t.Fatalf("the request burnt only %v of CPU; the test proves nothing", burnt)
	}
	if got := time.Duration(rep.CPUSeconds * float64(time.Second)); got < burnt {
		t.Errorf("cpu_seconds %v, less than the %v the request's own thread used", got, burnt)
	}
}

// threadCPU is the calling OS thread's CPU time (getrusage RUSAGE_THREAD, Linux).
func threadCPU(t *testing.T) time.Duration {
	const rusageThread = 1
	var ru syscall.Rusage
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// The report of a speech server driven over HTTP (Server is its URL) measured this process's CPU time and memory:
// the client's, not the server's, and its table says so; the JSON keeps the fields.
func TestWriteTableOfAServerRun(t *testing.T) {
	for _, url := range []string{"http://127.0.0.1:8880", "https://tts.example.com/v1"} {
		r := sampleReport()
		r.Device, r.Server, r.Sentences, r.CPUSeconds, r.SystemCPUSeconds = "", url, nil, 4, 1
		var buf bytes.Buffer
		if err := r.WriteTable(&buf); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(buf.String(), "\n")
		next := 0
		for _, want := range []string{
			"cpu (this client)       4.0 s, 1.0 s of it in the kernel (0.2 cores busy)",
			"peak RSS (this client)  300.0 MiB",
			"server                  " + url,
		} {
			for next < len(lines) && lines[next] != want {
				next++
			}
			if next == len(lines) {
				t.Fatalf("line %q missing or out of order in:\n%s", want, buf.String())
			}
		}
		for _, line := range lines {
			if strings.HasPrefix(line, "cpu ") && !strings.HasPrefix(line, "cpu (this client)") ||
				strings.HasPrefix(line, "peak RSS ") && !strings.HasPrefix(line, "peak RSS (this client)") ||
				strings.HasPrefix(line, "device ") {
				t.Errorf("line %q reads as the server's", line)
			}
		}
	}
}
