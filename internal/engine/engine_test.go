package engine

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ttsgen/ttsgen/internal/ort/orttest"

	"github.com/advancedclimatesystems/gonnx/onnx"
	"github.com/ttsgen/ttsgen/internal/onnxgraph"
	"github.com/ttsgen/ttsgen/internal/ort"
	"github.com/ttsgen/ttsgen/internal/vits"
	"google.golang.org/protobuf/proto"
)

// fakeHop is the samples per frame of the fake voice.
const fakeHop = 4

// fakeRunner stands in for an ORT session. Every phoneme lasts one frame, and an item's samples all equal its
// first phoneme id, so a test can tell which request's audio came back and how long it is.
type fakeRunner struct {
	mu      sync.Mutex
	batches []batchInput
	started chan batchInput           // if set, receives each batch as it starts
	gate    chan struct{}             // if set, each run waits for one value from it
	fail    func(in batchInput) error // if set, decides a run's error
	closed  bool
}

func (r *fakeRunner) run(in batchInput) (batchOutput, error) {
	r.mu.Lock()
	r.batches = append(r.batches, in)
	r.mu.Unlock()
	if r.started != nil {
		r.started <- in
	}
	if r.gate != nil {
		<-r.gate
	}
	if r.fail != nil {
		if err := r.fail(in); err != nil {
			return batchOutput{}, err
		}
	}
	samples := in.width * fakeHop
	out := batchOutput{audio: make([]float32, in.size*samples), frames: make([]float32, in.size*in.width)}
	for b := range in.size {
		for p := range int(in.lengths[b]) {
			out.frames[b*in.width+p] = 1
		}
		for s := range int(in.lengths[b]) * fakeHop {
			out.audio[b*samples+s] = float32(in.ids[b*in.width])
		}
	}
	return out, nil
}

func (r *fakeRunner) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed = true
	return nil
}

func (r *fakeRunner) recorded() []batchInput {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.batches)
}

// fakeBackend hands out one shared fakeRunner and fails the probes listed in probeErr.
type fakeBackend struct {
	runner   *fakeRunner
	probeErr map[ort.Device]error
}

func (b *fakeBackend) probe(d ort.Device, auto bool) error { return b.probeErr[d] }

func (b *fakeBackend) newRunner([]byte, vits.ModelIO, ort.Device, int) (runner, error) {
	return b.runner, nil
}

func (b *fakeBackend) newGraphRunner([]byte, []string, []string, ort.Device, int) (graphRunner, error) {
	return nil, errors.New("fake backend: no split voices")
}

// identityGraph is y = Identity(x): an ONNX graph that is no voice.
func identityGraph(t *testing.T) []byte {
	t.Helper()
	data, err := proto.Marshal(&onnx.ModelProto{IrVersion: 8, OpsetImport: []*onnx.OperatorSetIdProto{{Version: 15}},
		Graph: &onnx.GraphProto{Name: "identity", Input: []*onnx.ValueInfoProto{onnxgraph.FloatTensor("x")},
			Output: []*onnx.ValueInfoProto{onnxgraph.FloatTensor("y")},
			Node:   []*onnx.NodeProto{{Name: "id", OpType: "Identity", Input: []string{"x"}, Output: []string{"y"}}}}})
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// fakeEngine starts an engine on a fake backend. With workers 1 the order of batches is deterministic.
func fakeEngine(t *testing.T, opts Options, r *fakeRunner) (*Engine, *Model) {
	t.Helper()
	if opts.Device == "" {
		opts.Device = ort.DeviceCPU
	}
	e, err := newEngine(opts, &fakeBackend{runner: r})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	m, err := e.Load("fake", orttest.FakeVoice(t, true, true), ModelConfig{SampleRate: 22050, NumSpeakers: 4})
	if err != nil {
		t.Fatal(err)
	}
	return e, m
}

// plug submits a request and waits until the single worker is running it (held at r.gate), so that what is
// submitted next waits in the queue.
func plug(t *testing.T, e *Engine, m *Model, r *fakeRunner) <-chan Result {
	t.Helper()
	res := e.Submit(context.Background(), m, Request{IDs: []int64{100}})
	select {
	case <-r.started:
	case <-time.After(5 * time.Second):
		t.Fatal("plug request never started")
	}
	return res
}

func await(t *testing.T, ch <-chan Result) Result {
	t.Helper()
	select {
	case res := <-ch:
		return res
	case <-time.After(5 * time.Second):
		t.Fatal("no result within 5 s")
		return Result{}
	}
}

func ids(first int64, n int) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = first
	}
	return out
}

func TestTakeBatch(t *testing.T) {
	slow := Scales{Noise: 0.667, Length: 1.5, NoiseW: 0.8}
	type queued struct {
		length int
		scales Scales
		other  bool // of a second model
	}
	tests := []struct {
		name     string
		queue    []queued
		maxBatch int
		budget   int
		want     [][]int // indices into queue, batch by batch
	}{
		{"caps at MaxBatch, oldest first", []queued{{5, Scales{}, false}, {5, Scales{}, false}, {5, Scales{}, false},
			{5, Scales{}, false}, {5, Scales{}, false}}, 2, 1000, [][]int{{0, 1}, {2, 3}, {4}}},
		{"only equal scales share a batch", []queued{{5, Scales{}, false}, {5, slow, false}, {5, Scales{}, false},
			{5, slow, false}}, 4, 1000, [][]int{{0, 2}, {1, 3}}},
		{"only one model per batch", []queued{{5, Scales{}, false}, {5, Scales{}, true}, {5, Scales{}, false}},
			4, 1000, [][]int{{0, 2}, {1}}},
		{"nearest lengths to the oldest", []queued{{10, Scales{}, false}, {50, Scales{}, false}, {11, Scales{}, false},
			{49, Scales{}, false}}, 2, 1000, [][]int{{0, 2}, {1, 3}}},
		{"phoneme budget: batch x longest", []queued{{40, Scales{}, false}, {41, Scales{}, false}, {20, Scales{}, false},
			{5, Scales{}, false}}, 4, 80, [][]int{{0, 2}, {1}, {3}}},
		{"over-budget sentence runs alone", []queued{{500, Scales{}, false}, {5, Scales{}, false}}, 4, 90,
			[][]int{{0}, {1}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := &Engine{}
			m1 := &Model{name: "one", maxBatch: tt.maxBatch, maxBatchPhonemes: tt.budget}
			m2 := &Model{name: "two", maxBatch: tt.maxBatch, maxBatchPhonemes: tt.budget}
			index := map[*item]int{}
			for i, q := range tt.queue {
				it := &item{model: m1, req: Request{IDs: ids(int64(i), q.length), Scales: q.scales}}
				if q.other {
					it.model = m2
				}
				index[it] = i
				e.pending = append(e.pending, it)
			}
			var got [][]int
			for len(e.pending) > 0 {
				var batch []int
				for _, it := range e.takeBatchLocked() {
					if it.state != stateRunning {
						t.Errorf("item %d taken but in state %d", index[it], it.state)
					}
					batch = append(batch, index[it])
				}
				got = append(got, batch)
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("batches %v, want %v", got, tt.want)
			}
		})
	}
}

func TestEngineDeliversEachItemItsOwnAudio(t *testing.T) {
	r := &fakeRunner{started: make(chan batchInput, 16), gate: make(chan struct{})}
	e, m := fakeEngine(t, Options{Threads: 1, Tuning: Tuning{MaxBatch: 3}}, r)
	plugged := plug(t, e, m, r)
	lengths := []int{7, 3, 5, 9, 4}
	var results []<-chan Result
	for i, n := range lengths {
		results = append(results, e.Submit(context.Background(), m, Request{IDs: ids(int64(i+1), n), Speaker: int64(i % 4)}))
	}
	close(r.gate)
	if res := await(t, plugged); res.Err != nil || len(res.Audio) != fakeHop {
		t.Fatalf("plug: %d samples, err %v", len(res.Audio), res.Err)
	}
	for i, ch := range results {
		res := await(t, ch)
		if res.Err != nil {
			t.Fatalf("item %d: %v", i, res.Err)
		}
		if len(res.Audio) != lengths[i]*fakeHop {
			t.Errorf("item %d: %d samples, want %d", i, len(res.Audio), lengths[i]*fakeHop)
		}
		for _, s := range res.Audio {
			if s != float32(i+1) {
				t.Fatalf("item %d got sample %v, which is another item's audio", i, s)
			}
		}
		if res.Queued.IsZero() || res.Started.Before(res.Queued) || res.Finished.Before(res.Started) {
			t.Errorf("item %d: times out of order: queued %v started %v finished %v", i, res.Queued, res.Started, res.Finished)
		}
	}
	var sizes []int
	for _, b := range r.recorded() {
		sizes = append(sizes, b.size)
		for i := range b.size {
			if want := (b.ids[i*b.width] - 1) % 4; b.ids[i*b.width] != 100 && b.speakers[i] != want {
				t.Errorf("batch row %d has speaker %d, want %d", i, b.speakers[i], want)
			}
		}
	}
	// Plug alone, then the 5 queued: the oldest (7) with its two nearest (9, 5), then the rest (3, 4).
	if fmt.Sprint(sizes) != "[1 3 2]" {
		t.Errorf("batch sizes %v, want [1 3 2]", sizes)
	}
}

// TestSubmitBlocksWhenQueueIsFull runs in a synctest bubble: time is virtual, and synctest.Wait says when every
// goroutine of the engine and the test is blocked, so a Submit still blocked then is blocked for good.
func TestSubmitBlocksWhenQueueIsFull(t *testing.T) {
	synctest.Test(t, testSubmitBlocksWhenQueueIsFull)
}

func testSubmitBlocksWhenQueueIsFull(t *testing.T) {
	r := &fakeRunner{started: make(chan batchInput, 16), gate: make(chan struct{})}
	e, m := fakeEngine(t, Options{Threads: 1, QueueSize: 2, Tuning: Tuning{MaxBatch: 1}}, r)
	plugged := plug(t, e, m, r)                                            // holds place 1 while it runs
	waiting := e.Submit(context.Background(), m, Request{IDs: []int64{2}}) // place 2: the queue is now full

	// A Submit with a deadline gives up with the deadline's error instead of queueing.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	if res := await(t, e.Submit(ctx, m, Request{IDs: []int64{3}})); !errors.Is(res.Err, context.DeadlineExceeded) {
		t.Fatalf("Submit on a full queue: err %v, want DeadlineExceeded", res.Err)
	}

	// A Submit without one waits until a place frees up.
	admitted := make(chan (<-chan Result))
	go func() { admitted <- e.Submit(context.Background(), m, Request{IDs: []int64{4}}) }()
	synctest.Wait()
	select {
	case <-admitted:
		t.Fatal("Submit returned while the queue was full")
	default:
	}
	r.gate <- struct{}{} // the plug finishes and frees its place
	await(t, plugged)
	var late <-chan Result
	select {
	case late = <-admitted:
	case <-time.After(5 * time.Second):
		t.Fatal("Submit still blocked after a place freed up")
	}
	close(r.gate)
	for _, ch := range []<-chan Result{waiting, late} {
		if res := await(t, ch); res.Err != nil {
			t.Fatal(res.Err)
		}
	}
	for _, b := range r.recorded() {
		if b.ids[0] == 3 {
			t.Error("the request that gave up on the full queue was run anyway")
		}
	}
}

func TestCancelledRequestsLeaveTheQueue(t *testing.T) {
	r := &fakeRunner{started: make(chan batchInput, 16), gate: make(chan struct{})}
	e, m := fakeEngine(t, Options{Threads: 1, QueueSize: 4, Tuning: Tuning{MaxBatch: 4}}, r)
	plugged := plug(t, e, m, r)
	ctx, cancel := context.WithCancel(context.Background())
	var cancelled []<-chan Result
	for i := range 3 {
		cancelled = append(cancelled, e.Submit(ctx, m, Request{IDs: []int64{int64(10 + i)}}))
	}
	cancel()
	// They leave while the worker is still busy with the plug, and free their places in the queue.
	for i, ch := range cancelled {
		if res := await(t, ch); !errors.Is(res.Err, context.Canceled) || res.Audio != nil {
			t.Errorf("cancelled request %d: err %v, %d samples; want context.Canceled, no audio", i, res.Err, len(res.Audio))
		}
	}
	kept := e.Submit(context.Background(), m, Request{IDs: []int64{20}})
	close(r.gate)
	await(t, plugged)
	if res := await(t, kept); res.Err != nil {
		t.Fatal(res.Err)
	}
	for _, b := range r.recorded() {
		for i := range b.size {
			if id := b.ids[i*b.width]; id >= 10 && id < 13 {
				t.Errorf("cancelled request %d was run", id)
			}
		}
	}
	// A request whose context is already done never queues.
	if res := await(t, e.Submit(ctx, m, Request{IDs: []int64{1}})); !errors.Is(res.Err, context.Canceled) {
		t.Errorf("Submit with a done context: err %v, want context.Canceled", res.Err)
	}
}

// TestCloseWhileBusy runs in a synctest bubble (see TestSubmitBlocksWhenQueueIsFull).
func TestCloseWhileBusy(t *testing.T) {
	synctest.Test(t, testCloseWhileBusy)
}

func testCloseWhileBusy(t *testing.T) {
	r := &fakeRunner{started: make(chan batchInput, 16), gate: make(chan struct{})}
	e, m := fakeEngine(t, Options{Threads: 1, QueueSize: 3, Tuning: Tuning{MaxBatch: 1}}, r)
	running := plug(t, e, m, r)
	queued := e.Submit(context.Background(), m, Request{IDs: []int64{2}})
	closed := make(chan error)
	go func() { closed <- e.Close() }()

	// Queued work fails at once; running work finishes before Close returns.
	if res := await(t, queued); !errors.Is(res.Err, ErrClosed) {
		t.Errorf("queued request: err %v, want ErrClosed", res.Err)
	}
	synctest.Wait()
	select {
	case <-closed:
		t.Fatal("Close returned while a batch was still running")
	default:
	}
	close(r.gate)
	if res := await(t, running); res.Err != nil || len(res.Audio) != fakeHop {
		t.Errorf("running request: %d samples, err %v; want %d samples", len(res.Audio), res.Err, fakeHop)
	}
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	if !r.closed {
		t.Error("Close did not free the sessions")
	}
	if err := e.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if res := await(t, e.Submit(context.Background(), m, Request{IDs: []int64{3}})); !errors.Is(res.Err, ErrClosed) {
		t.Errorf("Submit after Close: err %v, want ErrClosed", res.Err)
	}
	if _, err := e.Load("late", orttest.FakeVoice(t, true, false), ModelConfig{}); !errors.Is(err, ErrClosed) {
		t.Errorf("Load after Close: err %v, want ErrClosed", err)
	}
}

func TestFailingItemFailsAlone(t *testing.T) {
	r := &fakeRunner{started: make(chan batchInput, 16), gate: make(chan struct{}),
		fail: func(in batchInput) error {
			if slices.Contains(in.ids, 99) {
				return errors.New("phoneme id 99 out of range")
			}
			return nil
		}}
	e, m := fakeEngine(t, Options{Threads: 1, Tuning: Tuning{MaxBatch: 4}}, r)
	plugged := plug(t, e, m, r)
	good1 := e.Submit(context.Background(), m, Request{IDs: []int64{1, 1}})
	bad := e.Submit(context.Background(), m, Request{IDs: []int64{99, 1}})
	good2 := e.Submit(context.Background(), m, Request{IDs: []int64{2, 2}})
	close(r.gate)
	await(t, plugged)
	for name, ch := range map[string]<-chan Result{"good1": good1, "good2": good2} {
		if res := await(t, ch); res.Err != nil || len(res.Audio) != 2*fakeHop {
			t.Errorf("%s: %d samples, err %v", name, len(res.Audio), res.Err)
		}
	}
	res := await(t, bad)
	if res.Err == nil || !strings.Contains(res.Err.Error(), `voice "fake" on cpu: phoneme id 99 out of range`) {
		t.Errorf("bad item: err %v", res.Err)
	}
}

func TestSubmitRejectsInvalidRequests(t *testing.T) {
	r := &fakeRunner{}
	e, m := fakeEngine(t, Options{Threads: 1}, r)
	_, other := fakeEngine(t, Options{Threads: 1}, &fakeRunner{})
	tests := []struct {
		name  string
		model *Model
		req   Request
		want  string
	}{
		{"speaker too high", m, Request{IDs: []int64{1}, Speaker: 4}, `voice "fake": speaker 4 out of range: voice "fake" has 4 speaker(s)`},
		{"negative speaker", m, Request{IDs: []int64{1}, Speaker: -1}, "speaker -1 out of range"},
		{"no phonemes", m, Request{}, "empty phoneme id sequence"},
		{"model of another engine", other, Request{IDs: []int64{1}}, "model was not loaded by this engine"},
		{"nil model", nil, Request{IDs: []int64{1}}, "model was not loaded by this engine"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := await(t, e.Submit(context.Background(), tt.model, tt.req))
			if res.Err == nil || !strings.Contains(res.Err.Error(), tt.want) {
				t.Errorf("err %v, want it to contain %q", res.Err, tt.want)
			}
		})
	}
	if len(r.recorded()) != 0 {
		t.Errorf("invalid requests reached the device: %d batches", len(r.recorded()))
	}
}

func TestDeviceSelection(t *testing.T) {
	broken := errors.New("provider missing")
	tests := []struct {
		name     string
		device   ort.Device
		probeErr map[ort.Device]error
		want     ort.Device
		wantErr  string
		wantLog  string
	}{
		{"auto prefers cuda", ort.DeviceAuto, nil, ort.DeviceCUDA, "", ""},
		{"auto falls back to webgpu", ort.DeviceAuto, map[ort.Device]error{ort.DeviceCUDA: broken}, ort.DeviceWebGPU, "", ""},
		{"auto falls back to cpu with a warning", "", map[ort.Device]error{ort.DeviceCUDA: broken, ort.DeviceWebGPU: broken},
			ort.DeviceCPU, "", "no GPU provider started, using cpu (cuda: provider missing; webgpu: provider missing)"},
		{"explicit cuda fails clearly", ort.DeviceCUDA, map[ort.Device]error{ort.DeviceCUDA: broken}, "", "device cuda does not start: provider missing", ""},
		{"explicit webgpu fails clearly", ort.DeviceWebGPU, map[ort.Device]error{ort.DeviceWebGPU: broken}, "", "device webgpu does not start", ""},
		{"cpu needs no probe", ort.DeviceCPU, map[ort.Device]error{ort.DeviceCPU: broken}, ort.DeviceCPU, "", ""},
		{"unknown device", "tpu", nil, "", `unknown device "tpu"`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var logs []string
			logf := func(format string, args ...any) { logs = append(logs, fmt.Sprintf(format, args...)) }
			e, err := newEngine(Options{Device: tt.device, Logf: logf}, &fakeBackend{runner: &fakeRunner{}, probeErr: tt.probeErr})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close()
			if e.Device() != tt.want {
				t.Errorf("device %s, want %s", e.Device(), tt.want)
			}
			checkLog(t, logs, tt.wantLog)
		})
	}
}

// checkLog fails t unless the lines logged contain want, or, when want is "", nothing was logged.
func checkLog(t *testing.T, logs []string, want string) {
	t.Helper()
	got := strings.Join(logs, "\n")
	if !strings.Contains(got, want) || (want == "") != (got == "") {
		t.Errorf("log %q, want %q", got, want)
	}
}

func TestWorkerLayout(t *testing.T) {
	tests := []struct {
		name                           string
		opts                           Options
		workers, sessions, maxBatch, q int
	}{
		// The queue holds four batches for every worker, and at least 64 sentences.
		{"cpu: one single-thread session per thread", Options{Device: ort.DeviceCPU, Threads: 16}, 16, 16, DefaultCPUMaxBatch, 64},
		{"cpu: threads per session", Options{Device: ort.DeviceCPU, Threads: 16, Tuning: Tuning{ThreadsPerSession: 4, MaxBatch: 2}}, 4, 4, 2, 64},
		{"cpu: large batches", Options{Device: ort.DeviceCPU, Threads: 8, Tuning: Tuning{MaxBatch: 16}}, 8, 8, 16, 4 * 8 * 16},
		{"engine: one shared session, batches in flight", Options{Device: ort.DeviceCUDA, Threads: 4, Tuning: Tuning{DecoderWindow: -1}}, DefaultInFlight, 1, DefaultGPUMaxBatch, 4 * DefaultInFlight * DefaultGPUMaxBatch},
		{"gpu, decoder windows: a CPU worker per thread", Options{Device: ort.DeviceWebGPU, Threads: 16}, 16, 1, DefaultGPUMaxBatch, 4 * 16 * DefaultGPUMaxBatch},
		{"explicit queue size", Options{Device: ort.DeviceCPU, Threads: 2, QueueSize: 5}, 2, 2, DefaultCPUMaxBatch, 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := newEngine(tt.opts, &fakeBackend{runner: &fakeRunner{}})
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close()
			if e.workers != tt.workers || e.sessionsPerModel != tt.sessions || e.maxBatch != tt.maxBatch || e.QueueSize() != tt.q {
				t.Errorf("workers %d sessions %d maxBatch %d queue %d; want %d %d %d %d",
					e.workers, e.sessionsPerModel, e.maxBatch, e.QueueSize(), tt.workers, tt.sessions, tt.maxBatch, tt.q)
			}
		})
	}
	if _, err := newEngine(Options{Tuning: Tuning{MaxBatch: -1}}, &fakeBackend{}); err == nil || !strings.Contains(err.Error(), "MaxBatch is -1") {
		t.Errorf("negative MaxBatch: err %v", err)
	}
	for _, tile := range []int{-2, maxTailTile + 1} {
		if _, err := newEngine(Options{Tuning: Tuning{TailTile: tile}}, &fakeBackend{}); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("TailTile is %d", tile)) {
			t.Errorf("TailTile %d: err %v", tile, err)
		}
	}
	for _, opts := range []Options{
		{Device: ort.DeviceCPU, Tuning: Tuning{AcousticDevice: ort.DeviceWebGPU}},
		{Device: ort.DeviceWebGPU, Tuning: Tuning{TextDevice: ort.DeviceCUDA}},
	} {
		if _, err := newEngine(opts, &fakeBackend{}); err == nil || !strings.Contains(err.Error(), "it runs on the engine's device") {
			t.Errorf("%+v: err %v, want a part placed on a device the engine does not use refused", opts, err)
		}
	}
}

func TestLoadInspectsTheGraph(t *testing.T) {
	tests := []struct {
		name         string
		graph        func(t *testing.T) []byte
		cfg          ModelConfig
		wantMaxBatch int
		wantErr      string
		wantLog      string
	}{
		{"ceil: batches", func(t *testing.T) []byte { return orttest.FakeVoice(t, true, false) }, ModelConfig{}, 3, "", ""},
		{"no ceil: one at a time", func(t *testing.T) []byte { return orttest.FakeVoice(t, false, false) }, ModelConfig{}, 1, "",
			`voice "v" has no duration Ceil node; running it one sentence at a time`},
		{"not onnx", func(*testing.T) []byte { return []byte("RIFF....WAVEfmt ") }, ModelConfig{}, 0, `loading voice "v": not an ONNX model`, ""},
		{"empty", func(*testing.T) []byte { return nil }, ModelConfig{}, 0, `loading voice "v": not an ONNX model: no graph nodes`, ""},
		{"speakers without sid", func(t *testing.T) []byte { return orttest.FakeVoice(t, true, false) }, ModelConfig{NumSpeakers: 3}, 0,
			`config says 3 speakers but the graph has no "sid" input`, ""},
		{"a graph that is no voice", identityGraph, ModelConfig{}, 0,
			`not a Piper voice graph: no input "input"`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var logs []string
			logf := func(format string, args ...any) { logs = append(logs, fmt.Sprintf(format, args...)) }
			e, err := newEngine(Options{Device: ort.DeviceCPU, Threads: 1, Logf: logf, Tuning: Tuning{MaxBatch: 3}}, &fakeBackend{runner: &fakeRunner{}})
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close()
			m, err := e.Load("v", tt.graph(t), tt.cfg)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if m.MaxBatch() != tt.wantMaxBatch {
				t.Errorf("MaxBatch %d, want %d", m.MaxBatch(), tt.wantMaxBatch)
			}
			checkLog(t, logs, tt.wantLog)
		})
	}
}

func TestSplitAudio(t *testing.T) {
	tests := []struct {
		name    string
		in      batchInput
		out     batchOutput
		want    string
		wantErr string
	}{
		{"cut at each item's frames x hop", batchInput{size: 2, width: 2},
			batchOutput{audio: []float32{1, 1, 1, 1, 1, 1, 2, 2, 0, 0, 0, 0}, frames: []float32{2, 1, 1, 0}},
			"[[1 1 1 1 1 1] [2 2]]", ""},
		{"no duration output: whole row", batchInput{size: 1, width: 3}, batchOutput{audio: []float32{5, 6, 7}}, "[[5 6 7]]", ""},
		{"no duration output, batch of 2", batchInput{size: 2, width: 1}, batchOutput{audio: []float32{5, 6}}, "",
			"batch of 2 without a duration output"},
		{"ragged output", batchInput{size: 2, width: 1}, batchOutput{audio: []float32{1, 2, 3}, frames: []float32{1, 1}}, "",
			"output has 3 samples, not a whole number per item of a batch of 2"},
		{"frames of the wrong shape", batchInput{size: 1, width: 2}, batchOutput{audio: []float32{1, 2}, frames: []float32{1}}, "",
			"duration output has 1 values, want 2"},
		{"hop not whole", batchInput{size: 1, width: 1}, batchOutput{audio: []float32{1, 2, 3}, frames: []float32{2}}, "",
			"output of 3 samples per item is not a whole number of 2 frames"},
		{"no frames at all", batchInput{size: 1, width: 1}, batchOutput{audio: []float32{0, 0}, frames: []float32{0}}, "[[]]", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := splitAudio(tt.in, tt.out)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(got) != tt.want {
				t.Errorf("got %v, want %s", got, tt.want)
			}
		})
	}
}

func TestAutoIsQuietWhenNoGPUProviderExists(t *testing.T) {
	var warnings []string
	logf := func(format string, args ...any) { warnings = append(warnings, format) }
	missing := &fakeBackend{probeErr: map[ort.Device]error{ort.DeviceCUDA: ort.ErrProviderMissing, ort.DeviceWebGPU: ort.ErrProviderMissing}}
	if d, err := selectDevice(ort.DeviceAuto, missing, logf); err != nil || d != ort.DeviceCPU || len(warnings) != 0 {
		t.Errorf("no GPU provider at all: device %s, err %v, warnings %q; want cpu and silence", d, err, warnings)
	}
	broken := &fakeBackend{probeErr: map[ort.Device]error{ort.DeviceCUDA: ort.ErrProviderMissing, ort.DeviceWebGPU: errors.New("adapter lost")}}
	if d, err := selectDevice(ort.DeviceAuto, broken, logf); err != nil || d != ort.DeviceCPU || len(warnings) != 1 {
		t.Errorf("a GPU provider that fails: device %s, err %v, warnings %q; want cpu and one warning", d, err, warnings)
	}
	if _, err := selectDevice(ort.DeviceWebGPU, broken, logf); err == nil || !strings.Contains(err.Error(), "adapter lost") {
		t.Errorf("explicit webgpu that fails: %v, want the reason", err)
	}
}

// echoRunner is a fakeRunner that keeps no record of its batches.
type echoRunner struct{ fakeRunner }

func (r *echoRunner) run(in batchInput) (batchOutput, error) {
	out, err := r.fakeRunner.run(in)
	r.mu.Lock()
	r.batches = nil
	r.mu.Unlock()
	return out, err
}

type echoBackend struct{ fakeBackend }

func (b *echoBackend) newRunner([]byte, vits.ModelIO, ort.Device, int) (runner, error) {
	return &echoRunner{}, nil
}

// TestMemoryStaysBoundedOverAHundredThousandSentences sends 100,000 sentences through the engine from 16
// submitters that each keep 64 in flight (so the bounded queue is full and Submit blocks), and checks that the
// heap after them is what it was after the first 10,000: the engine keeps nothing of finished requests.
func TestMemoryStaysBoundedOverAHundredThousandSentences(t *testing.T) {
	if testing.Short() {
		t.Skip("100k requests")
	}
	e, err := newEngine(Options{Device: ort.DeviceCPU, Threads: 4, QueueSize: 256, Tuning: Tuning{MaxBatch: 8}}, &echoBackend{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	m, err := e.Load("fake", orttest.FakeVoice(t, true, false), ModelConfig{SampleRate: 22050})
	if err != nil {
		t.Fatal(err)
	}
	heap := func() uint64 {
		var ms runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	send := func(total int) {
		var wg sync.WaitGroup
		for g := range 16 {
			wg.Go(func() {
				inFlight := make(chan (<-chan Result), 64)
				go func() {
					defer close(inFlight)
					for i := g; i < total; i += 16 {
						inFlight <- e.Submit(context.Background(), m, Request{IDs: ids(int64(i%200+3), 20+i%80)})
					}
				}()
				for ch := range inFlight {
					if res := <-ch; res.Err != nil {
						t.Error(res.Err)
						return
					}
				}
			})
		}
		wg.Wait()
	}
	send(10_000)
	after10k := heap()
	send(90_000)
	after100k := heap()
	if after100k > after10k+1<<20 {
		t.Errorf("heap grew from %d KiB after 10,000 sentences to %d KiB after 100,000", after10k>>10, after100k>>10)
	}
	if e.Stats()[0].Items != 100_000 {
		t.Errorf("engine ran %d sentences, want 100,000", e.Stats()[0].Items)
	}
}
