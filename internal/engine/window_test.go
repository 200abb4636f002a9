package engine

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ttsgen/ttsgen/internal/ort"
	"github.com/ttsgen/ttsgen/internal/ort/orttest"
	"github.com/ttsgen/ttsgen/internal/vits"
)

func TestWindowCutAndPlace(t *testing.T) {
	w := windowing{frames: 2, margin: 1}
	// 2 channels x 3 frames: channel 0 = 1 2 3, channel 1 = 4 5 6.
	s := w.newStrip([][]float32{{1, 2, 3, 4, 5, 6}}, []int{3}, 2)
	tests := []struct {
		k          int
		want, mask string
	}{
		{0, "[0 1 2 3 0 4 5 6]", "[0 1 1 1]"}, // left margin before the sentence is zero, its mask off
		{1, "[2 3 0 0 5 6 0 0]", "[1 1 0 0]"}, // frames past the end are zero
	}
	if w.count(s.length) != 2 {
		t.Fatalf("count(%d) = %d, want 2", s.length, w.count(s.length))
	}
	for _, tt := range tests {
		dst, mask := make([]float32, 2*w.span()), make([]float32, w.span())
		for i := range dst {
			dst[i] = -1 // cutWindow must overwrite stale data
		}
		for i := range mask {
			mask[i] = -1
		}
		w.cutWindow(dst, mask, s, tt.k)
		if fmt.Sprint(dst) != tt.want || fmt.Sprint(mask) != tt.mask {
			t.Errorf("window %d: %v mask %v, want %s mask %s", tt.k, dst, mask, tt.want, tt.mask)
		}
	}
	audio := make([]float32, 3*2) // 3 frames, hop 2
	for k, decoded := range [][]float32{{9, 9, 1, 1, 2, 2, 9, 9}, {9, 9, 3, 3, 8, 8, 9, 9}} {
		if err := w.placeWindow(audio, decoded, s, 0, 2, k); err != nil {
			t.Fatal(err)
		}
	}
	if fmt.Sprint(audio) != "[1 1 2 2 3 3]" {
		t.Errorf("stitched %v, want [1 1 2 2 3 3]", audio)
	}
	if err := w.placeWindow(audio, make([]float32, 5), s, 0, 2, 0); err == nil {
		t.Error("placeWindow took a window of the wrong size")
	}
}

// Sentences in a strip sit margin frames apart; a window holding the end of one and the start of the next gives
// each its own samples.
func TestStripOfSentences(t *testing.T) {
	w := windowing{frames: 4, margin: 1}
	// One channel: sentence A = 1 2 3 (3 frames), B = 4 5 6 7 8 (5 frames), C = 9 (1 frame).
	s := w.newStrip([][]float32{{1, 2, 3}, {4, 5, 6, 7, 8}, {9}}, []int{3, 5, 1}, 1)
	if fmt.Sprint(s.latent) != "[1 2 3 0 4 5 6 7 8 0 9]" || fmt.Sprint(s.mask) != "[1 1 1 0 1 1 1 1 1 0 1]" {
		t.Fatalf("strip %v mask %v", s.latent, s.mask)
	}
	if n := w.count(s.length); n != 3 {
		t.Fatalf("%d windows for a strip of %d frames, want 3", n, s.length)
	}
	for i, want := range [][2]int{{0, 0}, {1, 2}, {2, 2}} {
		if first, last := w.windows(s, i); first != want[0] || last != want[1] {
			t.Errorf("sentence %d: windows %d-%d, want %d-%d", i, first, last, want[0], want[1])
		}
	}
	dst, mask := make([]float32, w.span()), make([]float32, w.span())
	w.cutWindow(dst, mask, s, 1) // strip frames 4-7, read from 3 to 8
	if fmt.Sprint(dst) != "[0 4 5 6 7 8]" || fmt.Sprint(mask) != "[0 1 1 1 1 1]" {
		t.Errorf("window 1: %v mask %v", dst, mask)
	}
	// Decode as the identity with hop 1: every sentence gets back its own frames.
	audio := [][]float32{make([]float32, 3), make([]float32, 5), make([]float32, 1)}
	for k := range w.count(s.length) {
		dst, mask := make([]float32, w.span()), make([]float32, w.span())
		w.cutWindow(dst, mask, s, k)
		for i := range audio {
			if err := w.placeWindow(audio[i], dst, s, i, 1, k); err != nil {
				t.Fatal(err)
			}
		}
	}
	if fmt.Sprint(audio) != "[[1 2 3] [4 5 6 7 8] [9]]" {
		t.Errorf("sentences back from the strip: %v", audio)
	}
}

// TestWindowedDecoderMatchesWholeSentence checks the split graph: the acoustic part, then the decoder on fixed
// windows drawn from three sentences at once, stitched, equals the whole graph run on each sentence alone. With no
// margin the windows' edges show (the test's own control).
func TestWindowedDecoderMatchesWholeSentence(t *testing.T) {
	for _, v := range testVoices {
		t.Run(v.name, func(t *testing.T) { testWindowedDecoderMatchesWholeSentence(t, v.path) })
	}
}

func testWindowedDecoderMatchesWholeSentence(t *testing.T, path string) {
	e, m := voiceEngine(t, path, Options{Threads: 1})
	_, split := voiceEngine(t, path, Options{Threads: 1, Tuning: Tuning{DecoderWindow: 32}})
	if !split.Windowed() {
		t.Fatal("voice not split")
	}
	// ttsgen's voices mask their own padding; Piper's do not, and Load masks them.
	if masked, want := split.split.voice.DecoderMasked, path == piperShapedVoicePath; masked != want {
		t.Errorf("decoder masked by Load: %v, want %v", masked, want)
	}
	sv := split.split.voice
	if sv.DecoderSpeaker || sv.IO.HasSpeaker {
		t.Errorf("single-speaker voice split with speaker inputs: %+v", sv.IO)
	}
	acoustic, decoder := split.split.acoustic[0], split.split.decoder[0]

	rng := rand.New(rand.NewPCG(9, 10))
	var batch []*item
	var whole [][]float32
	for _, n := range []int{6, 25, 14} {
		it := &item{model: m, req: Request{IDs: sentence(rng, n), Scales: deterministic}}
		alone, err := e.synthesize(m.runners[0], []*item{it})
		if err != nil {
			t.Fatal(err)
		}
		batch, whole = append(batch, it), append(whole, alone[0])
	}
	in := packBatch(batch, false)
	tests := []struct {
		name     string
		w        windowing
		maxDiff  float64
		minDiff  float64
		nWindows int
	}{
		{"32-frame windows, 16 margin", windowing{frames: 32, margin: 16}, 1e-4, 0, 7},
		{"8-frame windows, 16 margin", windowing{frames: 8, margin: 16}, 1e-4, 0, 64},
		{"no margin shows the seams", windowing{frames: 32, margin: 0}, 10, 1e-3, 7},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			audio, err := decodeWindowed(acoustic, decoder, sv, in, tt.w, tinyHop, tt.nWindows)
			if err != nil {
				t.Fatal(err)
			}
			var worst float64
			for i := range batch {
				if len(audio[i]) != len(whole[i]) {
					t.Fatalf("item %d: %d samples windowed, %d whole", i, len(audio[i]), len(whole[i]))
				}
				worst = max(worst, orttest.MaxAbsDiff(audio[i], whole[i]))
			}
			if worst > tt.maxDiff || worst < tt.minDiff {
				t.Errorf("max difference from the whole-sentence decoder %g, want within [%g, %g]", worst, tt.minDiff, tt.maxDiff)
			}
			t.Logf("max difference %g", worst)
		})
	}
}

// TestContinuousBatching runs the engine in continuous-batching mode: sentences from many goroutines, their
// decoder windows mixed in shared runs; each must come back as that sentence's whole-graph batch-1 audio.
func TestContinuousBatching(t *testing.T) {
	for _, v := range testVoices {
		t.Run(v.name, func(t *testing.T) { testContinuousBatching(t, v.path) })
	}
}

func testContinuousBatching(t *testing.T, path string) {
	ref, refModel := voiceEngine(t, path, Options{Threads: 1})
	e, m := voiceEngine(t, path, Options{Threads: 2, QueueSize: 6, Tuning: Tuning{MaxBatch: 3, DecoderWindow: 16, DecoderBatch: 6}})
	if !m.Windowed() {
		t.Fatal("voice not split for continuous batching")
	}
	recorders := make([]*recordingRunner, len(m.split.decoder))
	for i, d := range m.split.decoder {
		recorders[i] = &recordingRunner{graphRunner: d}
		m.split.decoder[i] = recorders[i]
	}
	sentences, want := aloneReference(t, ref, refModel, rand.New(rand.NewPCG(11, 12)), 8, func(i int) int { return 3 + 6*i })
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := range 4 {
		wg.Go(func() {
			for k := range 6 {
				s := (g*3 + k) % len(sentences)
				res := <-e.Submit(context.Background(), m, Request{IDs: sentences[s], Scales: deterministic})
				switch {
				case res.Err != nil:
					errs <- res.Err
				case len(res.Audio) != len(want[s]):
					errs <- fmt.Errorf("sentence %d: %d samples, want %d", s, len(res.Audio), len(want[s]))
				case orttest.MaxAbsDiff(res.Audio, want[s]) > 1e-4:
					errs <- fmt.Errorf("sentence %d differs from whole-sentence audio by %g", s, orttest.MaxAbsDiff(res.Audio, want[s]))
				case res.Started.Before(res.Queued) || res.Finished.Before(res.Started):
					errs <- fmt.Errorf("sentence %d: times out of order", s)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	sizes := map[int64]bool{}
	for _, r := range recorders {
		r.mu.Lock()
		for _, n := range r.sizes {
			sizes[n] = true
		}
		r.mu.Unlock()
	}
	// Runs are padded to a power of two windows, or to DecoderBatch: a few shapes whatever the load.
	for n := range sizes {
		if n != 1 && n != 2 && n != 4 && n != 6 {
			t.Errorf("a decoder run had %d windows; want 1, 2, 4 or 6 (DecoderBatch)", n)
		}
	}
	if !sizes[6] {
		t.Errorf("no decoder run was full (6 windows): run sizes %v", sizes)
	}
}

// recordingRunner notes the batch size of every decoder run.
type recordingRunner struct {
	graphRunner
	mu     sync.Mutex
	sizes  []int64
	shapes [][]int64 // of the first input
}

func (r *recordingRunner) Run(inputs []ort.Tensor) ([]ort.Tensor, error) {
	r.mu.Lock()
	r.sizes = append(r.sizes, inputs[0].Shape[0])
	r.shapes = append(r.shapes, inputs[0].Shape)
	r.mu.Unlock()
	return r.graphRunner.Run(inputs)
}

func TestContinuousBatchingFallsBackToWholeSentences(t *testing.T) {
	orttest.Need(t)
	var logs []string
	e, err := NewEngine(Options{Device: ort.DeviceCPU, Threads: 1, Logf: func(f string, a ...any) { logs = append(logs, fmt.Sprintf(f, a...)) }, Tuning: Tuning{DecoderWindow: 16}})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	m, err := e.Load("piper-test", orttest.Voice(t, testVoicePath), ModelConfig{SampleRate: 22050})
	if err != nil {
		t.Fatal(err)
	}
	if m.Windowed() || len(logs) == 0 || !strings.Contains(logs[0], `voice "piper-test" runs whole sentences, not decoder windows: no decoder node "/dec/conv_pre/Conv"`) {
		t.Errorf("windowed %v, logs %q", m.Windowed(), logs)
	}
	if res := <-e.Submit(context.Background(), m, Request{IDs: []int64{1, 2}}); res.Err != nil || len(res.Audio) != 22050 {
		t.Errorf("%d samples, err %v", len(res.Audio), res.Err)
	}
}

// deviceRecorder is the ONNX Runtime backend with every GPU session made on the CPU, noting which device and
// threads each split-voice session was asked for: a GPU engine's layout, tested without a GPU.
type deviceRecorder struct {
	ortBackend
	mu       sync.Mutex
	sessions []string // "outputs@device/threads"
}

func (b *deviceRecorder) probe(ort.Device, bool) error { return nil }

func (b *deviceRecorder) newGraphRunner(graph []byte, inputs, outputs []string, d ort.Device, threads int) (graphRunner, error) {
	b.mu.Lock()
	b.sessions = append(b.sessions, fmt.Sprintf("%s@%s/%d", strings.Join(outputs, "+"), d, threads))
	b.mu.Unlock()
	r, err := b.ortBackend.newGraphRunner(graph, inputs, outputs, ort.DeviceCPU, 1)
	if lock := ort.RunLock(d); err == nil && lock != nil {
		r = &serialRunner{graphRunner: r, lock: lock}
	}
	return r, err
}

// serialRunner is a CPU runner whose runs take turns on a GPU's lock, as they would on the device, and count the
// time they hold it.
type serialRunner struct {
	graphRunner
	lock *ort.DeviceLock
	held atomic.Int64
}

func (r *serialRunner) Run(in []ort.Tensor) ([]ort.Tensor, error) {
	r.lock.Lock()
	return r.runLocked(in)
}

func (r *serialRunner) TryRun(in []ort.Tensor) ([]ort.Tensor, error) {
	if !r.lock.TryLockIdle() {
		return nil, ort.ErrDeviceBusy
	}
	return r.runLocked(in)
}

func (r *serialRunner) runLocked(in []ort.Tensor) ([]ort.Tensor, error) {
	defer r.lock.Unlock()
	start := time.Now()
	defer func() { r.held.Add(int64(time.Since(start))) }()
	return r.graphRunner.Run(in)
}

func (r *serialRunner) DeviceTime() time.Duration { return time.Duration(r.held.Load()) }

// gpuLayoutEngine starts an engine laid out for the GPU that opts names, its sessions all on the CPU (see
// deviceRecorder), and loads the voice at path.
func gpuLayoutEngine(t *testing.T, path string, opts Options) (*Engine, *Model, *deviceRecorder) {
	t.Helper()
	b := &deviceRecorder{}
	e, err := newEngine(opts, b)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	m, err := e.Load("voice", orttest.Voice(t, path), ModelConfig{SampleRate: 22050, NumSpeakers: 1})
	if err != nil {
		t.Fatal(err)
	}
	return e, m, b
}

// TestAcousticOnCPU: with AcousticDevice cpu a GPU engine runs the acoustic part on one single-thread CPU session
// per worker (as many workers as Threads) and the decoder on one GPU session, and the audio is unchanged. A VITS
// voice's flow runs apart, on the GPU.
func TestAcousticOnCPU(t *testing.T) {
	const piperAcoustic = "flow_in0+flow_in1+w_ceil"
	const piperText = "text:/Ceil_output_0+text:/Gather_output_0+text:/enc_p/Split_output_0+text:/enc_p/Split_output_1"
	for _, tt := range []struct {
		name, path string
		gpuWorkers int
		text       ort.Device
		sessions   string
	}{
		// First the CPU decoder that probes whether the voice masks its own padding (mask.go), then the engine's;
		// a flow's session last, made at the warm-up's first flow run (rankedRunner).
		{"tiny", tinyVoicePath, 0, ort.DeviceCPU, "[output@cpu/1 latent+w_ceil@cpu/1 latent+w_ceil@cpu/1 latent+w_ceil@cpu/1 output@webgpu/3]"},
		{"piper-shaped", piperShapedVoicePath, 0, ort.DeviceCPU, "[output@cpu/1 " + strings.Repeat(piperAcoustic+"@cpu/1 ", 3) + "output@webgpu/3 latent@webgpu/3]"},
		{"piper-shaped, a GPU acoustic worker too", piperShapedVoicePath, 1, ort.DeviceCPU,
			"[output@cpu/1 " + strings.Repeat(piperAcoustic+"@cpu/1 ", 3) + piperAcoustic + "@webgpu/3 output@webgpu/3 latent@webgpu/3]"},
		// The text encoder and duration predictor on the GPU, the expansion to frames on the CPU (text.go).
		{"piper-shaped, text part on the GPU", piperShapedVoicePath, 0, ort.DeviceWebGPU,
			"[output@cpu/1 " + piperText + "@webgpu/3 " + strings.Repeat(piperAcoustic+"@cpu/1 ", 3) + "output@webgpu/3 latent@webgpu/3]"},
		// Auto: the text part on the GPU when it is free, else on a CPU session of each CPU worker; the GPU worker's
		// expansion on the GPU.
		{"piper-shaped, text part auto, a GPU acoustic worker too", piperShapedVoicePath, 1, ort.DeviceAuto,
			"[output@cpu/1 " + piperText + "@webgpu/3 " + strings.Repeat(piperText+"@cpu/1 ", 3) + strings.Repeat(piperAcoustic+"@cpu/1 ", 3) +
				piperAcoustic + "@webgpu/3 output@webgpu/3 latent@webgpu/3]"},
	} {
		t.Run(tt.name, func(t *testing.T) { testAcousticOnCPU(t, tt.path, tt.gpuWorkers, tt.text, tt.sessions) })
	}
}

func testAcousticOnCPU(t *testing.T, path string, gpuWorkers int, text ort.Device, sessions string) {
	ref, refModel := voiceEngine(t, path, Options{Threads: 1})
	e, m, b := gpuLayoutEngine(t, path, Options{Device: ort.DeviceWebGPU, Threads: 3, Tuning: Tuning{AcousticDevice: ort.DeviceCPU, DecoderWindow: 16, DecoderBatch: 4, AcousticGPUWorkers: gpuWorkers, TextDevice: text}})
	if got := fmt.Sprint(b.sessions); got != sessions || e.Workers() != 3+gpuWorkers {
		t.Errorf("sessions %s with %d workers, want %s with %d", got, e.Workers(), sessions, 3+gpuWorkers)
	}
	// Acoustic batches carry no decoder: they take the split budget, not the whole-sentence one.
	if m.maxBatch != DefaultSplitGPUMaxBatch || m.maxBatchPhonemes != DefaultSplitGPUMaxBatchPhonemes {
		t.Errorf("acoustic batches of %d sentences, %d phonemes; want %d, %d", m.maxBatch, m.maxBatchPhonemes,
			DefaultSplitGPUMaxBatch, DefaultSplitGPUMaxBatchPhonemes)
	}
	if m.split.window.margin != 13 {
		t.Errorf("windows read %d frames of margin, want the tiny voice's decoder reach, 13", m.split.window.margin)
	}
	if warm := e.Stats(); len(warm) != 0 {
		t.Errorf("warm-up runs counted as work: %+v", warm)
	}
	recorder := &recordingRunner{graphRunner: m.split.decoder[0]}
	m.split.decoder[0] = recorder
	// The GPU parts before the decoder: batches of one sentence and of two, of 3, 4 and 32 ids (the provider's
	// programs differ between a batch dimension of 1 and more, and with a dimension's divisibility by 4 and 32).
	var before []*recordingRunner
	for _, part := range [][]graphRunner{m.split.flow, m.split.text} {
		if len(part) > 0 {
			before = append(before, &recordingRunner{graphRunner: part[0]})
			part[0] = before[len(before)-1]
		}
	}

	if err := e.warmUp(m); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(recorder.sizes); got != "[1 2 4]" {
		t.Errorf("warm-up ran the decoder at %s windows, want [1 2 4] (every run size up to DecoderBatch 4)", got)
	}
	if len(m.split.text) > 0 {
		if got := fmt.Sprint(before[len(before)-1].shapes); got != "[[1 3] [1 4] [1 32] [2 3] [2 4] [2 32]]" {
			t.Errorf("warm-up ran the text part on ids of shapes %s", got)
		}
	}
	for _, r := range before {
		if got := fmt.Sprint(r.sizes); got != "[1 1 1 2 2 2]" {
			t.Errorf("warm-up ran a GPU part before the decoder on batches of %s sentences, want [1 1 1 2 2 2]", got)
		}
	}
	if want := map[bool]int{true: 1}[m.split.flow != nil] + map[bool]int{true: 1}[text != ort.DeviceCPU]; len(before) != want {
		t.Errorf("%d GPU parts before the decoder, want %d", len(before), want)
	}
	sentences, audio := aloneReference(t, ref, refModel, rand.New(rand.NewPCG(13, 14)), 6, func(i int) int { return 4 + 7*i })
	sameAudio(t, "whole-sentence audio", submitTogether(t, e, m, sentences), audio, 1e-4)
	stages := map[string]int{}
	for _, st := range e.Stats() {
		stages[st.Stage] = st.Items
		// The device's share: the "GPU" stages hold its lock, the CPU's do not (with GPU acoustic workers, either).
		onGPU := st.Stage != stageAcoustic && st.Stage != stageTextCPU
		if onGPU != (st.DeviceSeconds > 0) && (onGPU || gpuWorkers == 0) {
			t.Errorf("stage %s: %.4f s holding the GPU", st.Stage, st.DeviceSeconds)
		}
	}
	if want := map[bool]int{true: len(sentences)}[text != ort.DeviceCPU]; stages[stageText]+stages[stageTextCPU] != want || stages[stageAcoustic] != len(sentences) {
		t.Errorf("stages %v: want %d sentences through the text part and %d through the acoustic part", stages, want, len(sentences))
	}
}

// TestDeviceDefaults: a WebGPU engine runs decoder windows with the acoustic part on the CPU and its text part
// wherever has time (auto) unless told otherwise, twice the windows per run in float16; a CPU engine runs whole
// sentences; -1 turns windows off.
func TestDeviceDefaults(t *testing.T) {
	for _, tt := range []struct {
		opts                 Options
		window, margin, runs int
		acousticOnCPU        bool
		text                 ort.Device
	}{
		{Options{Device: ort.DeviceWebGPU, Threads: 4}, 512, 12, 8, true, ort.DeviceAuto},
		{Options{Device: ort.DeviceWebGPU, Threads: 4, Precision: PrecisionFloat16}, 512, 12, 16, true, ort.DeviceAuto},
		{Options{Device: ort.DeviceWebGPU, Threads: 4, Precision: PrecisionFloat16, Tuning: Tuning{DecoderBatch: 8}}, 512, 12, 8, true, ort.DeviceAuto},
		// Windows per run follow the window: the same frames per run, unless their margins would take the
		// largest tensor past maxDecoderSpanFrames (4,608 frames; 9,216 in float16).
		{Options{Device: ort.DeviceWebGPU, Threads: 4, Tuning: Tuning{DecoderWindow: 256}}, 256, 12, 16, true, ort.DeviceAuto},
		{Options{Device: ort.DeviceWebGPU, Threads: 4, Tuning: Tuning{DecoderWindow: 128}}, 128, 12, 30, true, ort.DeviceAuto},
		{Options{Device: ort.DeviceWebGPU, Threads: 4, Precision: PrecisionFloat16, Tuning: Tuning{DecoderWindow: 128}}, 128, 12, 60, true, ort.DeviceAuto},
		{Options{Device: ort.DeviceWebGPU, Threads: 4, Tuning: Tuning{DecoderWindow: 64}}, 64, 12, 52, true, ort.DeviceAuto},
		{Options{Device: ort.DeviceWebGPU, Threads: 4, Tuning: Tuning{DecoderWindow: 5000}}, 5000, 12, 1, true, ort.DeviceAuto},
		{Options{Device: ort.DeviceWebGPU, Threads: 4, Tuning: Tuning{DecoderWindow: -1}}, 0, 0, 0, false, ""},
		{Options{Device: ort.DeviceWebGPU, Threads: 4, Tuning: Tuning{AcousticDevice: ort.DeviceWebGPU}}, 512, 12, 8, false, ""},
		{Options{Device: ort.DeviceCPU, Threads: 4}, 0, 0, 0, false, ""},
	} {
		e, err := newEngine(tt.opts, &deviceRecorder{})
		if err != nil {
			t.Fatal(err)
		}
		if e.window.frames != tt.window || e.window.margin != tt.margin || e.decoderBatch != tt.runs ||
			e.acousticOnCPU != tt.acousticOnCPU || e.text != tt.text {
			t.Errorf("%+v: window %d margin %d, %d per run, acoustic on cpu %v, text part on %q; want %d %d %d %v %q", tt.opts,
				e.window.frames, e.window.margin, e.decoderBatch, e.acousticOnCPU, e.text, tt.window, tt.margin, tt.runs,
				tt.acousticOnCPU, tt.text)
		}
		if e.upsampling != UpsamplingPolyphase {
			t.Errorf("%+v: upsampling %q, want polyphase", tt.opts, e.upsampling)
		}
		e.Close()
	}
	// A batch's text part on the CPU: two sentences at a time unless told otherwise; < 0 the whole batch (0).
	for _, tt := range []struct{ opt, want int }{{0, 2}, {5, 5}, {-1, 0}} {
		e, err := newEngine(Options{Device: ort.DeviceWebGPU, Threads: 4, Tuning: Tuning{TextPiece: tt.opt}}, &deviceRecorder{})
		if err != nil {
			t.Fatal(err)
		}
		if e.textPiece != tt.want {
			t.Errorf("TextPiece %d: %d sentences per piece, want %d", tt.opt, e.textPiece, tt.want)
		}
		e.Close()
	}
}

// splitPiperShaped cuts the Piper-shaped test voice as a GPU engine with the acoustic part on the CPU does.
func splitPiperShaped(t *testing.T) *vits.SplitVoice {
	t.Helper()
	sv, _ := splitVoiceAt(t, piperShapedVoicePath)
	return sv
}

// splitVoiceAt cuts the voice at path as a GPU engine with the acoustic part on the CPU does (flow apart).
func splitVoiceAt(t *testing.T, path string) (*vits.SplitVoice, vits.ModelIO) {
	t.Helper()
	graph, io, err := vits.PrepareGraph(orttest.Voice(t, path))
	if err != nil {
		t.Fatal(err)
	}
	sv, err := vits.SplitGraph(graph, true)
	if err != nil {
		t.Fatal(err)
	}
	return sv, io
}

// TestRankedRunner: the runner is made once, at the first run, from the graph with its inputs declared of the
// ranks of that run's tensors; a failure to make it fails every run; close closes what was made.
func TestRankedRunner(t *testing.T) {
	sv := splitPiperShaped(t)
	var made []string
	fake := &fakeGraphRunner{}
	r := newRankedRunner(sv.Flow, sv.FlowInputs, func(g []byte) (graphRunner, error) {
		made = append(made, orttest.InputRanks(orttest.Parse(t, g)))
		return fake, nil
	})
	if r.DeviceTime() != 0 || r.Close() != nil {
		t.Error("a runner not made yet has device time or fails to close")
	}
	in := []ort.Tensor{{Shape: []int64{2, 4, 8}}, {Shape: []int64{2, 8}}}
	for range 2 {
		if _, err := r.Run(in); err != nil {
			t.Fatal(err)
		}
	}
	if fmt.Sprint(made) != "[flow_in0:3 flow_in1:2]" || fake.runs != 2 {
		t.Errorf("made %v, ran %d times; want made once with ranks 3 and 2, run twice", made, fake.runs)
	}
	if err := r.Close(); err != nil || !fake.closed {
		t.Errorf("close: %v, closed %v", err, fake.closed)
	}
	broken := newRankedRunner(sv.Flow, sv.FlowInputs, func([]byte) (graphRunner, error) { return nil, errors.New("no adapter") })
	for range 2 {
		if _, err := broken.TryRun(in); err == nil || !strings.Contains(err.Error(), "no adapter") {
			t.Errorf("a runner that cannot be made: %v", err)
		}
	}
}

// fakeGraphRunner counts its runs and remembers being closed.
type fakeGraphRunner struct {
	runs   int
	closed bool
}

func (f *fakeGraphRunner) Run([]ort.Tensor) ([]ort.Tensor, error)    { f.runs++; return nil, nil }
func (f *fakeGraphRunner) TryRun([]ort.Tensor) ([]ort.Tensor, error) { f.runs++; return nil, nil }
func (f *fakeGraphRunner) DeviceTime() time.Duration                 { return 0 }
func (f *fakeGraphRunner) Close() error                              { f.closed = true; return nil }

func TestStripGroups(t *testing.T) {
	frames := []int{3, 0, 5, 2, 4} // sentence 1 has no audio to decode
	speakers := []int64{0, 1, 1, 0, 2}
	speaker := func(i int) int64 { return speakers[i] }
	for _, tt := range []struct {
		bySpeaker, alone bool
		want             string
	}{
		{false, false, "[[0 2 3 4]]"},
		{true, false, "[[0 3] [2] [4]]"},
		{false, true, "[[0] [2] [3] [4]]"},
		{true, true, "[[0] [2] [3] [4]]"},
	} {
		if got := fmt.Sprint(stripGroups(frames, speaker, tt.bySpeaker, tt.alone)); got != tt.want {
			t.Errorf("by speaker %v, alone %v: %s, want %s", tt.bySpeaker, tt.alone, got, tt.want)
		}
	}
}

// Load's trial sentences are in Piper's pattern and use only phoneme ids every voice has.
func TestTrialSentence(t *testing.T) {
	for _, width := range []int{3, 4, 32, 47} {
		ids := trialSentence(width)
		if len(ids) != width || ids[0] != 1 || ids[width-1] != 2 {
			t.Fatalf("width %d: %v", width, ids)
		}
		for i, id := range ids[1 : width-1] {
			if pad := i%2 == 1; pad && id != 0 || !pad && (id < 3 || id > 12) {
				t.Errorf("width %d: id %d at %d", width, id, i+1)
			}
		}
	}
}

// TestWindowsFirst: a worker decodes waiting windows before taking a batch once a full run is ready, when no
// request waits, or when the engine closes, and only then.
func TestWindowsFirst(t *testing.T) {
	for _, tt := range []struct {
		name             string
		closed           bool
		windows, pending int
		want             bool
	}{
		{"none waiting", false, 0, 3, false},
		{"none waiting, closing", true, 0, 3, false},
		{"a full run", false, 4, 3, true},
		{"a short run, requests waiting", false, 3, 3, false},
		{"a short run, no request waiting", false, 3, 0, true},
		{"a short run, closing", true, 3, 3, true},
	} {
		e := &Engine{device: ort.DeviceWebGPU, decoderBatch: 4, closed: tt.closed,
			windows: make([]window, tt.windows), pending: make([]*item, tt.pending)}
		if got := e.windowsFirstLocked(); got != tt.want {
			t.Errorf("%s: windows first %v", tt.name, got)
		}
	}
}
