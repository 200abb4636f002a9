package engine

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ttsgen/ttsgen/internal/onnxgraph"
	"github.com/ttsgen/ttsgen/internal/ort"
	"github.com/ttsgen/ttsgen/internal/ort/orttest"
	"github.com/ttsgen/ttsgen/internal/vits"
	"google.golang.org/protobuf/proto"
)

// TestCutText: a voice's acoustic part cut at the durations hands over exactly the token-rate tensors the rest
// reads (for Piper's graph: the durations, the noise scale, the encoder's means and log-scales), and the text
// part followed by the expansion gives the acoustic part's outputs for batches of several sentences.
func TestCutText(t *testing.T) {
	orttest.Need(t)
	for _, tt := range []struct {
		name, path string
		edit       func(*testing.T, []byte) []byte // nil: the voice as it is
		boundary   string
		expandSid  bool
	}{
		{"piper-shaped", piperShapedVoicePath, nil, "[/Ceil_output_0 /Gather_output_0 /enc_p/Split_output_0 /enc_p/Split_output_1]", false},
		{"piper-shaped, 3 speakers", piperShaped3VoicePath, nil, "[/Ceil_output_0 /Gather_output_0 /enc_p/Split_output_0 /enc_p/Split_output_1]", true},
		{"tiny", tinyVoicePath, nil, "[/Ceil_output_0 /Mul_5_output_0 /enc/Mul_1_output_0 /enc/blocks.1/Mul_3_output_0]", false},
		// The durations crossing the cut are also one of the acoustic part's outputs.
		{"piper-shaped, Ceil writing w_ceil itself", piperShapedVoicePath, ceilWritesFrames, "[/Gather_output_0 /enc_p/Split_output_0 /enc_p/Split_output_1 w_ceil]", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			voice := orttest.Voice(t, tt.path)
			if tt.edit != nil {
				voice = tt.edit(t, voice)
			}
			graph, io, err := vits.PrepareGraph(voice)
			if err != nil {
				t.Fatal(err)
			}
			sv, err := vits.SplitGraph(graph, true)
			if err != nil {
				t.Fatal(err)
			}
			cut, err := vits.CutText(sv.Acoustic)
			if err != nil {
				t.Fatal(err)
			}
			var crossed []string
			for _, name := range cut.Boundary {
				crossed = append(crossed, strings.TrimPrefix(name, vits.TextBoundaryPrefix))
			}
			if got := fmt.Sprint(crossed); got != tt.boundary {
				t.Errorf("boundary %s, want %s", got, tt.boundary)
			}
			if got := slices.Contains(cut.ExpandInput, vits.InputSpeaker); got != tt.expandSid {
				t.Errorf("expansion inputs %v: reads sid %v, want %v", cut.ExpandInput, got, tt.expandSid)
			}
			if got := fmt.Sprint(cut.TextInputs); got != fmt.Sprint(io.InputNames()) {
				t.Errorf("text part inputs %s, want the voice's %v", got, io.InputNames())
			}

			whole := cpuRunner(t, sv.Acoustic, io.InputNames(), sv.AcousticOutputs())
			text := cpuRunner(t, cut.Text, cut.TextInputs, cut.Boundary)
			expand := cpuRunner(t, cut.Expand, cut.ExpandInput, sv.AcousticOutputs())
			sm := &splitModel{voice: &vits.SplitVoice{IO: io, Text: cut}, text: []graphRunner{text}}

			rng := rand.New(rand.NewPCG(5, 6))
			in := paddedBatch(rng, 30, 12, 21)
			if io.HasSpeaker {
				in.speakers = []int64{2, 0, 1}
			}
			want, err := whole.Run(acousticInputs(in, io))
			if err != nil {
				t.Fatal(err)
			}
			mid, _, err := sm.runText(0, 0, acousticInputs(in, io), time.Now)
			if err != nil {
				t.Fatal(err)
			}
			got, err := expand.Run(mid)
			if err != nil {
				t.Fatal(err)
			}
			for i := range want {
				if !slices.Equal(got[i].Shape, want[i].Shape) {
					t.Fatalf("output %d has shape %v, want %v", i, got[i].Shape, want[i].Shape)
				}
				if d := orttest.MaxAbsDiff(got[i].F32, want[i].F32); d > 1e-5 {
					t.Errorf("output %d differs from the uncut acoustic part by %g", i, d)
				}
			}
			checkTextPieces(t, sm, text, in, mid)
		})
	}
}

// checkTextPieces runs a batch's text part (want: its outputs in one run, as the expansion reads them) in pieces
// on a CPU session, with the GPU busy for the first few tries, and checks the runs and that the outputs join into
// the batch's.
func checkTextPieces(t *testing.T, sm *splitModel, text graphRunner, in batchInput, want []ort.Tensor) {
	t.Helper()
	perRow, ok, err := textPieceOutputs(text, sm.voice.Text, sm.voice.IO)
	if err != nil || !ok {
		t.Fatalf("text part outputs per sentence %v, ok %v, %v: want them known", perRow, ok, err)
	}
	if !slices.Contains(perRow, true) {
		t.Fatalf("text part outputs per sentence %v: want some", perRow)
	}
	sm.textPerRow = perRow
	for _, c := range []struct {
		piece, busy int // sentences per CPU run; GPU tries refused
		want        string
	}{
		{0, 1, "cpu 0-3"},
		{1, 9, "cpu 0-1, cpu 1-2, cpu 2-3"},
		{2, 9, "cpu 0-2, cpu 2-3"},
		{1, 2, "cpu 0-1, cpu 1-2, gpu 2-3"},
		{1, 1, "cpu 0-1, gpu 1-3"},
		{1, 0, "gpu 0-3"},
		{3, 1, "cpu 0-3"},
	} {
		gpu := &busyRunner{graphRunner: text, busy: c.busy}
		sm.text, sm.textCPU = []graphRunner{gpu}, []graphRunner{text}
		got, runs, err := sm.runText(0, c.piece, acousticInputs(in, sm.voice.IO), time.Now)
		if err != nil {
			t.Fatalf("pieces of %d: %v", c.piece, err)
		}
		var where []string
		for _, r := range runs {
			where = append(where, fmt.Sprintf("%s %d-%d", map[bool]string{true: "cpu", false: "gpu"}[r.onCPU], r.lo, r.hi))
		}
		if strings.Join(where, ", ") != c.want {
			t.Errorf("pieces of %d, GPU busy for %d tries: runs %v, want %s", c.piece, c.busy, where, c.want)
		}
		for i := range want {
			if !slices.Equal(got[i].Shape, want[i].Shape) || orttest.MaxAbsDiff(got[i].F32, want[i].F32) > 1e-5 || !slices.Equal(got[i].I64, want[i].I64) {
				t.Errorf("pieces of %d: output %d of shape %v differs from the batch's (%v) by %g", c.piece, i,
					got[i].Shape, want[i].Shape, orttest.MaxAbsDiff(got[i].F32, want[i].F32))
			}
		}
	}
}

// busyRunner is a GPU runner whose device is busy for the first busy tries of tryRunGraph.
type busyRunner struct {
	graphRunner
	busy int
}

func (r *busyRunner) TryRun(in []ort.Tensor) ([]ort.Tensor, error) {
	if r.busy > 0 {
		r.busy--
		return nil, ort.ErrDeviceBusy
	}
	return r.graphRunner.Run(in)
}

// ceilWritesFrames renames a voice's duration Ceil output to "w_ceil" and makes it a graph output, as an exporter
// asked for that output by name would write it.
func ceilWritesFrames(t *testing.T, voice []byte) []byte {
	t.Helper()
	model := orttest.Parse(t, voice)
	graph := model.GetGraph()
	ceil := vits.DurationCeil(graph)
	for _, node := range graph.GetNode() {
		for i, name := range node.Input {
			if name == ceil {
				node.Input[i] = vits.OutputFrames
			}
		}
		for i, name := range node.Output {
			if name == ceil {
				node.Output[i] = vits.OutputFrames
			}
		}
	}
	graph.Output = append(graph.Output, onnxgraph.FloatTensor(vits.OutputFrames))
	edited, err := proto.Marshal(model)
	if err != nil {
		t.Fatal(err)
	}
	return edited
}

// TestTextDeviceAuto: with TextDevice auto a batch's text part runs on the GPU when the GPU is free and on the
// worker's CPU session when it is busy, with the same audio either way.
func TestTextDeviceAuto(t *testing.T) {
	ref, refModel := voiceEngine(t, piperShapedVoicePath, Options{Threads: 1})
	e, m, b := gpuLayoutEngine(t, piperShapedVoicePath, Options{Device: ort.DeviceWebGPU, Threads: 2, Tuning: Tuning{DecoderWindow: 16, DecoderBatch: 4, TextDevice: ort.DeviceAuto}})
	if got := strings.Count(fmt.Sprint(b.sessions), "text:/Ceil_output_0"); got != 3 || len(m.split.textCPU) != 2 {
		t.Fatalf("sessions %v: want the text part on the GPU and on one CPU session per worker (2)", b.sessions)
	}
	sentences, audio := aloneReference(t, ref, refModel, rand.New(rand.NewPCG(7, 8)), 4, func(i int) int { return 5 + 8*i })
	check := func(stage string, i int, got []float32) {
		t.Helper()
		if len(got) != len(audio[i]) || orttest.MaxAbsDiff(got, audio[i]) > 1e-4 {
			t.Errorf("text part on %s: sentence %d: %d samples (want %d), difference %g", stage, i, len(got),
				len(audio[i]), orttest.MaxAbsDiff(got, audio[i]))
		}
	}
	items := func() map[string]int {
		n := map[string]int{}
		for _, st := range e.Stats() {
			n[st.Stage] = st.Items
		}
		return n
	}

	// The GPU busy (its lock held) while the sentences' text parts run: they all go to the CPU sessions; the flow
	// and decoder then wait for the GPU.
	flows := flowStarts(m)
	ort.RunLock(ort.DeviceWebGPU).Lock()
	done := make(chan [][]float32)
	go func() { done <- submitTogether(t, e, m, sentences) }()
	if !awaitSentences(flows, len(sentences)) {
		ort.RunLock(ort.DeviceWebGPU).Unlock()
		t.Fatalf("acoustic part not done with the GPU busy: stages %v", items())
	}
	ort.RunLock(ort.DeviceWebGPU).Unlock()
	for i, got := range <-done {
		check("the CPU", i, got)
	}
	if n := items(); n[stageTextCPU] != len(sentences) || n[stageText] != 0 {
		t.Errorf("with the GPU busy: stages %v, want every text part (%d) on the CPU", n, len(sentences))
	}

	// One sentence at a time, nothing else running: the GPU is free, and takes each.
	for i, ids := range sentences {
		check("the GPU", i, submitTogether(t, e, m, [][]int64{ids})[0])
	}
	if n := items(); n[stageText] != len(sentences) {
		t.Errorf("with the GPU free: stages %v, want %d text parts on the GPU", n, len(sentences))
	}
	// The time the GPU stages held the device, Load's warm-up left out, is within their runs' time.
	for _, st := range e.Stats() {
		if gpu := st.Stage != stageAcoustic && st.Stage != stageTextCPU; gpu != (st.DeviceSeconds > 0) || st.DeviceSeconds > st.Seconds {
			t.Errorf("stage %s: %.4f s holding the GPU in %.4f s of runs", st.Stage, st.DeviceSeconds, st.Seconds)
		}
	}
}

// flowStarts makes m's flow runners say, as each run starts, how many sentences it holds. A batch's flow runs after
// its text and acoustic parts, and after their runs are counted in Stats.
func flowStarts(m *Model) <-chan int {
	started := make(chan int, 256)
	for i, f := range m.split.flow {
		m.split.flow[i] = &hookRunner{graphRunner: f, before: func(in []ort.Tensor) error {
			started <- int(in[0].Shape[0])
			return nil
		}}
	}
	return started
}

// awaitSentences waits until flow runs of n sentences in all have started; false after 10 s without them.
func awaitSentences(started <-chan int, n int) bool {
	for seen := 0; seen < n; {
		select {
		case k := <-started:
			seen += k
		case <-time.After(10 * time.Second):
			return false
		}
	}
	return true
}

// TestTextPiecesInEngine: with the GPU busy, a worker runs a batch's text part on its CPU session a piece at a
// time (one sentence here), each piece counted as a run, with the same audio.
func TestTextPiecesInEngine(t *testing.T) {
	ref, refModel := voiceEngine(t, piperShapedVoicePath, Options{Threads: 1})
	e, m, _ := gpuLayoutEngine(t, piperShapedVoicePath, Options{Device: ort.DeviceWebGPU, Threads: 2, Tuning: Tuning{DecoderWindow: 16, DecoderBatch: 4, TextDevice: ort.DeviceAuto, TextPiece: 1}})
	sentences, audio := aloneReference(t, ref, refModel, rand.New(rand.NewPCG(11, 12)), 4, func(i int) int { return 5 + 8*i })
	stage := func(name string) StageStats {
		for _, st := range e.Stats() {
			if st.Stage == name {
				return st
			}
		}
		return StageStats{}
	}
	textCPU := func() StageStats { return stage(stageTextCPU) }
	flows := flowStarts(m)
	ort.RunLock(ort.DeviceWebGPU).Lock()
	done := make(chan [][]float32)
	go func() { done <- submitTogether(t, e, m, sentences) }()
	if !awaitSentences(flows, len(sentences)) {
		ort.RunLock(ort.DeviceWebGPU).Unlock()
		t.Fatalf("text parts not done on the CPU with the GPU busy: %+v", textCPU())
	}
	ort.RunLock(ort.DeviceWebGPU).Unlock()
	sameAudio(t, "text part in pieces", <-done, audio, 1e-4)
	if st := textCPU(); st.Runs != len(sentences) || st.Items != len(sentences) {
		t.Errorf("text parts on the CPU: %d runs of %d sentences, want one run per sentence (%d)", st.Runs, st.Items, len(sentences))
	}
	// Each piece runs at its batch's padded width, as the rest of the acoustic part does.
	if text, acoustic := textCPU(), stage(stageAcoustic); text.Padded != acoustic.Padded || text.Units != acoustic.Units {
		t.Errorf("text part pieces counted %d of %d ids padded, the acoustic part %d of %d", text.Units, text.Padded,
			acoustic.Units, acoustic.Padded)
	}
}

// textSessionFails is deviceRecorder with every text-part session failing to start.
type textSessionFails struct{ deviceRecorder }

func (b *textSessionFails) newGraphRunner(graph []byte, inputs, outputs []string, d ort.Device, threads int) (graphRunner, error) {
	if strings.HasPrefix(outputs[0], vits.TextBoundaryPrefix) {
		return nil, errors.New("no session for you")
	}
	return b.deviceRecorder.newGraphRunner(graph, inputs, outputs, d, threads)
}

// TestTextSessionFails: a text part whose session does not start leaves the voice split as before, its whole
// acoustic part on the CPU, with a note saying why; the audio is unchanged.
func TestTextSessionFails(t *testing.T) {
	ref, refModel := voiceEngine(t, piperShapedVoicePath, Options{Threads: 1})
	var notes []string
	e, err := newEngine(Options{Device: ort.DeviceWebGPU, Threads: 2, Logf: func(format string, args ...any) { notes = append(notes, fmt.Sprintf(format, args...)) }, Tuning: Tuning{DecoderWindow: 16, DecoderBatch: 4, TextDevice: ort.DeviceAuto}}, &textSessionFails{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	m, err := e.Load("voice", orttest.Voice(t, piperShapedVoicePath), ModelConfig{SampleRate: 22050, NumSpeakers: 1})
	if err != nil {
		t.Fatal(err)
	}
	if m.split == nil || m.split.voice.Text != nil || m.split.text != nil || m.split.textCPU != nil {
		t.Fatalf("split %v: want the voice split with no text part", m.split != nil)
	}
	if got := strings.Join(notes, "\n"); !strings.Contains(got, `voice "voice" runs its text encoder on the CPU: text part session on webgpu: no session for you`) {
		t.Errorf("notes %q: want why the text part stayed on the CPU", got)
	}
	sentences, audio := aloneReference(t, ref, refModel, rand.New(rand.NewPCG(9, 10)), 3, func(i int) int { return 5 + 6*i })
	sameAudio(t, "one sentence alone", submitTogether(t, e, m, sentences), audio, 1e-4)
}
