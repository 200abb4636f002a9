package bench

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// Every timing test runs inside a synctest bubble: time is virtual and jumps
// straight to the next timer once all goroutines are blocked, so a fake synth
// that sleeps 300 ms "takes" exactly 300 ms and the tests run instantly.

const ms = time.Millisecond

// div divides at run time: Go folds constant expressions exactly, which can
// differ in the last bit from the float64 division the code under test does.
func div(a, b float64) float64 { return a / b }

// sleepSynth is a fake synthesiser: text "D" or "D/F" takes D ms, reports
// first audio after F ms (if given), and makes one second of audio in one
// sentence. Text "fail" fails at once.
func sleepSynth(ctx context.Context, text string) (Outcome, error) {
	if text == "fail" {
		return Outcome{}, errors.New("voice exploded")
	}
	took, first, _ := strings.Cut(text, "/")
	d, err := strconv.Atoi(took)
	if err != nil {
		return Outcome{}, fmt.Errorf("fake synth: bad text %q", text)
	}
	out := Outcome{AudioSeconds: 1, Sentences: 1}
	if first != "" {
		f, _ := strconv.Atoi(first)
		out.FirstAudio = time.Duration(f) * ms
	}
	select {
	case <-ctx.Done():
		return Outcome{}, ctx.Err()
	case <-time.After(time.Duration(d) * ms):
		return out, nil
	}
}

func TestRunStatistics(t *testing.T) {
	tests := []struct {
		name    string
		texts   []string
		load    Load
		want    Report
		wantErr string
	}{{
		// Two workers: 100 then 200 on one, 300 on the other, then 400 from t=300.
		name:  "closed loop, two workers",
		texts: []string{"100", "300", "200", "400"},
		load:  Load{Concurrency: 2},
		want: Report{Mode: "closed-loop", Concurrency: 2, Requests: 4, Sentences: new(4),
			AudioSeconds: 4, WallSeconds: 0.7, Speed: div(4, 0.7), RTF: div(0.7, 4), QPS: div(4, 0.7),
			LatencyMS:    Percentiles{P50: 200, P90: 400, P99: 400},
			FirstAudioMS: Percentiles{P50: 200, P90: 400, P99: 400}},
	}, {
		name:  "sequential by default, first audio reported by synth",
		texts: []string{"100/10", "300/30", "200", "400/40"},
		load:  Load{},
		want: Report{Mode: "closed-loop", Concurrency: 1, Requests: 4, Sentences: new(4),
			AudioSeconds: 4, WallSeconds: 1, Speed: 4, RTF: 0.25, QPS: 4,
			LatencyMS:    Percentiles{P50: 200, P90: 400, P99: 400},
			FirstAudioMS: Percentiles{P50: 30, P90: 200, P99: 200}},
	}, {
		// Ten requests cycle over two texts; warmup calls take time but are not counted.
		name:  "requests beyond the texts reuse them; warmup excluded",
		texts: []string{"100", "900"},
		load:  Load{Concurrency: 1, Requests: 10, Warmup: 3},
		want: Report{Mode: "closed-loop", Concurrency: 1, Requests: 10, Sentences: new(10),
			AudioSeconds: 10, WallSeconds: 5, Speed: 2, RTF: 0.5, QPS: 2,
			LatencyMS:    Percentiles{P50: 100, P90: 900, P99: 900},
			FirstAudioMS: Percentiles{P50: 100, P90: 900, P99: 900}},
	}, {
		name:  "errors counted, first kept, excluded from latency",
		texts: []string{"100", "fail", "300", "fail"},
		load:  Load{Concurrency: 1},
		want: Report{Mode: "closed-loop", Concurrency: 1, Requests: 4, Errors: 2,
			FirstError: "voice exploded", ErrorsByStatus: map[string]int{"other": 2}, Sentences: new(2), AudioSeconds: 2,
			WallSeconds: 0.4, Speed: div(2, 0.4), RTF: div(0.4, 2), QPS: div(2, 0.4),
			LatencyMS:    Percentiles{P50: 100, P90: 300, P99: 300},
			FirstAudioMS: Percentiles{P50: 100, P90: 300, P99: 300}},
	}, {
		// Arrivals at 0,100,..,400 ms, each taking 250 ms: all overlap, none queue.
		name:  "open loop keeps its schedule",
		texts: []string{"250", "250", "250", "250", "250"},
		load:  Load{Rate: 10},
		want: Report{Mode: "open-loop", RatePerSecond: 10, Requests: 5, Sentences: new(5),
			AudioSeconds: 5, WallSeconds: 0.65, Speed: div(5, 0.65), RTF: div(0.65, 5), QPS: div(5, 0.65),
			LatencyMS:    Percentiles{P50: 250, P90: 250, P99: 250},
			FirstAudioMS: Percentiles{P50: 250, P90: 250, P99: 250}},
	}, {
		// Cap of 2: requests 2..4 arrive while 0 and 1 (1 s each) are in flight.
		name:  "open loop drops arrivals over the outstanding cap",
		texts: []string{"1000", "1000", "1000", "1000", "1000"},
		load:  Load{Rate: 10, MaxOutstanding: 2},
		want: Report{Mode: "open-loop", RatePerSecond: 10, Requests: 5, Errors: 3,
			FirstError:     "request 2 dropped: 2 requests already outstanding",
			ErrorsByStatus: map[string]int{"other": 3},
			Sentences:      new(2), AudioSeconds: 2, WallSeconds: 1.1, Speed: div(2, 1.1), RTF: div(1.1, 2), QPS: div(2, 1.1),
			LatencyMS:    Percentiles{P50: 1000, P90: 1000, P99: 1000},
			FirstAudioMS: Percentiles{P50: 1000, P90: 1000, P99: 1000}},
	}, {
		name:    "every request failing is an error",
		texts:   []string{"fail", "fail"},
		load:    Load{Concurrency: 2},
		wantErr: "bench: all 2 requests failed; first: voice exploded",
	}, {
		name:    "failing warmup is an error",
		texts:   []string{"fail", "100"},
		load:    Load{Warmup: 1},
		wantErr: "bench: warmup request 0: voice exploded",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				got, err := Run(t.Context(), tt.texts, tt.load, sleepSynth)
				if tt.wantErr != "" {
					if err == nil || err.Error() != tt.wantErr {
						t.Fatalf("Run error = %v, want %q", err, tt.wantErr)
					}
					return
				}
				if err != nil {
					t.Fatalf("Run: %v", err)
				}
				if got.PeakRSSBytes < 0 {
					t.Errorf("PeakRSSBytes = %d, want >= 0", got.PeakRSSBytes)
				}
				got.PeakRSSBytes = 0                        // depends on the process, checked in TestPeakRSS
				got.CPUSeconds, got.SystemCPUSeconds = 0, 0 // real CPU time, checked in TestCPUSecondsCountsTheRequestsWork
				if len(got.PerRequest) != tt.want.Requests {
					t.Errorf("%d per-request records, want %d", len(got.PerRequest), tt.want.Requests)
				}
				got.PerRequest = nil // checked in TestPerRequestRecords
				if !reflect.DeepEqual(got, tt.want) {
					t.Errorf("Run report\n got %+v\nwant %+v", got, tt.want)
				}
			})
		})
	}
}

// Each measured request's record says what it was sent, what it made and how long it took, warmup left out.
func TestPerRequestRecords(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		texts := []string{"100/10", "fail", "300"}
		synth := func(ctx context.Context, text string) (Outcome, error) {
			out, err := sleepSynth(ctx, text)
			if err == nil {
				out.Phonemes = len(text)
			}
			return out, err
		}
		got, err := Run(t.Context(), texts, Load{Requests: 4, Warmup: 1}, synth)
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
		// The warmup request is not recorded; the measured ones start again at the first text.
		want := []RequestRecord{
			{Request: 0, Text: "100/10", Phonemes: new(6), Sentences: new(1), AudioSeconds: 1, LatencyMS: 100, FirstAudioMS: 10},
			{Request: 1, Text: "fail", Phonemes: new(0), Sentences: new(0), Error: "voice exploded"},
			{Request: 2, Text: "300", Phonemes: new(3), Sentences: new(1), AudioSeconds: 1, LatencyMS: 300, FirstAudioMS: 300},
			{Request: 3, Text: "100/10", Phonemes: new(6), Sentences: new(1), AudioSeconds: 1, LatencyMS: 100, FirstAudioMS: 10},
		}
		if !reflect.DeepEqual(got.PerRequest, want) {
			t.Errorf("per-request records\n got %+v\nwant %+v", got.PerRequest, want)
		}
	})
}

// A single-server fake makes open-loop queueing visible: arrivals stay on
// their 100 ms schedule while each waits for the previous 250 ms job.
func TestOpenLoopMeasuresQueueing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		server := make(chan struct{}, 1)
		start := time.Now()
		var mu sync.Mutex
		var arrivals []time.Duration
		synth := func(ctx context.Context, text string) (Outcome, error) {
			mu.Lock()
			arrivals = append(arrivals, time.Since(start))
			mu.Unlock()
			server <- struct{}{}
			defer func() { <-server }()
			time.Sleep(250 * ms)
			return Outcome{AudioSeconds: 2, Sentences: 1}, nil
		}
		got, err := Run(t.Context(), make([]string, 5), Load{Rate: 10}, synth)
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
		want := []time.Duration{0, 100 * ms, 200 * ms, 300 * ms, 400 * ms}
		if fmt.Sprint(arrivals) != fmt.Sprint(want) {
			t.Errorf("arrivals = %v, want %v", arrivals, want)
		}
		// Latencies 250, 400, 550, 700, 850 ms; the last finishes at 1250 ms.
		if want := (Percentiles{P50: 550, P90: 850, P99: 850}); got.LatencyMS != want {
			t.Errorf("latency = %+v, want %+v", got.LatencyMS, want)
		}
		if got.WallSeconds != 1.25 || got.Speed != 10/1.25 {
			t.Errorf("wall, speed = %v, %v; want 1.25, 8", got.WallSeconds, got.Speed)
		}
	})
}

func TestRunStopsWithContext(t *testing.T) {
	for _, load := range []Load{{Concurrency: 3}, {Rate: 10}} {
		t.Run(fmt.Sprintf("%+v", load), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx, cancel := context.WithTimeout(t.Context(), 250*ms)
				defer cancel()
				start := time.Now()
				_, err := Run(ctx, []string{"100"}, Load{Concurrency: load.Concurrency, Rate: load.Rate, Requests: 1000}, sleepSynth)
				if !errors.Is(err, context.DeadlineExceeded) {
					t.Fatalf("Run error = %v, want deadline exceeded", err)
				}
				if took := time.Since(start); took != 250*ms {
					t.Errorf("Run returned after %v, want 250ms", took)
				}
			})
		})
	}
}

// A run whose context ends part-way (Ctrl-C) reports what completed before then, marked Interrupted: the figures of
// those requests alone, over the time they took; a request cut off in flight is neither counted nor an error.
func TestRunInterruptedReportsWhatCompleted(t *testing.T) {
	tests := []struct {
		name    string
		texts   []string
		load    Load
		stop    time.Duration
		want    Report
		wantErr string
	}{{
		// Two workers: 0-3 answered at 100 and 200 ms; 4 and 5 in flight at 250 ms.
		name:  "closed loop",
		texts: []string{"100"},
		load:  Load{Concurrency: 2, Requests: 1000},
		stop:  250 * ms,
		want: Report{Mode: "closed-loop", Concurrency: 2, Requests: 4, Interrupted: true, RequestsPlanned: 1000,
			Sentences: new(4), AudioSeconds: 4, WallSeconds: 0.2, Speed: 20, RTF: 0.05, QPS: 20,
			LatencyMS: Percentiles{100, 100, 100}, FirstAudioMS: Percentiles{100, 100, 100}},
		wantErr: "bench: interrupted after 4 of 1000 requests: context deadline exceeded",
	}, {
		// Failures answered before the stop are failures; the last answer (request 3's) ends the wall time.
		name:  "closed loop, failures answered before the stop",
		texts: []string{"100", "fail"},
		load:  Load{Concurrency: 1, Requests: 1000},
		stop:  250 * ms,
		want: Report{Mode: "closed-loop", Concurrency: 1, Requests: 4, Interrupted: true, RequestsPlanned: 1000,
			Errors: 2, FirstError: "voice exploded", ErrorsByStatus: map[string]int{"other": 2},
			Sentences: new(2), AudioSeconds: 2, WallSeconds: 0.2, Speed: 10, RTF: 0.1, QPS: 10,
			LatencyMS: Percentiles{100, 100, 100}, FirstAudioMS: Percentiles{100, 100, 100}},
		wantErr: "bench: interrupted after 4 of 1000 requests: context deadline exceeded",
	}, {
		// Arrivals every 100 ms taking 250 ms: 0 and 1 answered at 250 and 350 ms, 2 and 3 in flight at 375.
		name:  "open loop",
		texts: []string{"250"},
		load:  Load{Rate: 10, Requests: 1000},
		stop:  375 * ms,
		want: Report{Mode: "open-loop", RatePerSecond: 10, Requests: 2, Interrupted: true, RequestsPlanned: 1000,
			Sentences: new(2), AudioSeconds: 2, WallSeconds: 0.35, Speed: div(2, 0.35), RTF: div(0.35, 2),
			QPS: div(2, 0.35), LatencyMS: Percentiles{250, 250, 250}, FirstAudioMS: Percentiles{250, 250, 250}},
		wantErr: "bench: interrupted after 2 of 1000 requests: context deadline exceeded",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx, cancel := context.WithTimeout(t.Context(), tt.stop)
				defer cancel()
				got, err := Run(ctx, tt.texts, tt.load, sleepSynth)
				if !errors.Is(err, context.DeadlineExceeded) || err.Error() != tt.wantErr {
					t.Errorf("Run error = %v, want %q", err, tt.wantErr)
				}
				if len(got.PerRequest) != tt.want.Requests {
					t.Fatalf("%d per-request records, want one per completed request: %d", len(got.PerRequest), tt.want.Requests)
				}
				for i, r := range got.PerRequest {
					if r.Request != i {
						t.Errorf("record %d is of request %d", i, r.Request)
					}
				}
				got.PerRequest, got.PeakRSSBytes, got.CPUSeconds, got.SystemCPUSeconds = nil, 0, 0, 0
				if !reflect.DeepEqual(got, tt.want) {
					t.Errorf("Run report\n got %+v\nwant %+v", got, tt.want)
				}
			})
		})
	}
}

func TestRunRejectsBadInput(t *testing.T) {
	tests := []struct {
		name  string
		texts []string
		load  Load
		synth SynthFunc
		want  string
	}{
		{"no texts", nil, Load{}, sleepSynth, "bench: no texts to send"},
		{"no synth", []string{"a"}, Load{}, nil, "bench: no synthesis function"},
		{"negative rate", []string{"a"}, Load{Rate: -1}, sleepSynth, "bench: negative load setting"},
		{"negative requests", []string{"a"}, Load{Requests: -2}, sleepSynth, "bench: negative load setting"},
		{"both modes", []string{"a"}, Load{Rate: 1, Concurrency: 2}, sleepSynth, "bench: set either a concurrency"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Run(t.Context(), tt.texts, tt.load, tt.synth)
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("Run error = %v, want prefix %q", err, tt.want)
			}
		})
	}
}

func TestCompareTo(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		texts := []string{"100", "300", "200", "400"}
		concurrent, err := Run(t.Context(), texts, Load{Concurrency: 2}, sleepSynth)
		if err != nil {
			t.Fatal(err)
		}
		sequential, err := Run(t.Context(), texts, Load{Concurrency: 1}, sleepSynth)
		if err != nil {
			t.Fatal(err)
		}
		sequential.CompareTo(Report{Speed: 1}) // must not nest into the new report
		concurrent.CompareTo(sequential)
		if want := div(4, 0.7) / 4; concurrent.Speedup != want {
			t.Errorf("Speedup = %v, want %v", concurrent.Speedup, want)
		}
		if concurrent.Baseline == nil || concurrent.Baseline.WallSeconds != 1 || concurrent.Baseline.Baseline != nil {
			t.Errorf("Baseline = %+v, want the sequential run without its own baseline", concurrent.Baseline)
		}
	})
}

func TestPercentilesNearestRank(t *testing.T) {
	seq := func(n int) []time.Duration { // 1..n ms, shuffled order must not matter
		out := make([]time.Duration, n)
		for i := range out {
			out[(i*7)%n] = time.Duration(i+1) * ms
		}
		return out
	}
	tests := []struct {
		samples []time.Duration
		want    Percentiles
	}{
		{nil, Percentiles{}},
		{[]time.Duration{5 * ms}, Percentiles{5, 5, 5}},
		{seq(10), Percentiles{5, 9, 10}},
		{seq(100), Percentiles{50, 90, 99}},
		{seq(101), Percentiles{51, 91, 100}},
		{[]time.Duration{1500 * time.Microsecond, 500 * time.Microsecond}, Percentiles{0.5, 1.5, 1.5}},
	}
	for _, tt := range tests {
		if got := percentiles(tt.samples); got != tt.want {
			t.Errorf("percentiles(%d samples) = %+v, want %+v", len(tt.samples), got, tt.want)
		}
	}
}
