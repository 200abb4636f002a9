package engine

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/advancedclimatesystems/gonnx/onnx"
	"github.com/ttsgen/ttsgen/internal/onnxgraph"
	"github.com/ttsgen/ttsgen/internal/ort"
	"github.com/ttsgen/ttsgen/internal/vits"
	"google.golang.org/protobuf/proto"
)

// Load: a voice's graph parsed once, checked, cut and rewritten for the device (packages vits and onnxgraph), then
// encoded once per part for the engine's sessions.

// Model is a voice loaded into an engine.
type Model struct {
	engine   *Engine
	name     string
	cfg      ModelConfig
	io       vits.ModelIO
	maxBatch int
	// maxBatchPhonemes caps a batch's sentences x longest sentence (Options.MaxBatchPhonemes, or its default for
	// whole sentences or a split voice's acoustic batches).
	maxBatchPhonemes int
	runners          []runner // one per CPU worker; one shared by all workers on a GPU
	split            *splitModel
}

// splitModel is a voice run in two parts: acoustic batches of whole sentences, then decoder windows.
type splitModel struct {
	voice    *vits.SplitVoice
	window   windowing     // the engine's window size, with this voice's margin
	acoustic []graphRunner // like Model.runners
	text     []graphRunner // none, or like decoder: the text part, when voice.Text is set
	textCPU  []graphRunner // with TextDevice auto: the text part on the CPU, one per CPU acoustic worker
	// textPerRow: for each of the text part's outputs, whether it holds a row per sentence (else the batch
	// shares it), when the text part can be run on a batch in pieces (textPieceOutputs); nil when it cannot.
	textPerRow []bool
	flow       []graphRunner // none, or like decoder
	// warmUpDeviceTimes: deviceTimes after Load's warm-up, which Stats leaves out as it does the warm-up's runs.
	warmUpDeviceTimes map[string]time.Duration
	decoder           []graphRunner
}

func (s *splitModel) close() error {
	return closeAll(slices.Concat(s.acoustic, s.text, s.textCPU, s.flow, s.decoder))
}

// Name is the name the model was loaded under.
func (m *Model) Name() string { return m.name }

// Config is the configuration the model was loaded with.
func (m *Model) Config() ModelConfig { return m.cfg }

// GivesDurations reports whether the model gives each phoneme's frames (Result.Durations): its graph has the
// duration Ceil node that vits.PrepareGraph finds.
func (m *Model) GivesDurations() bool { return m.io.HasFrames }

// MaxBatch is the most items this model runs at once: 1 when its graph has no duration output to cut a
// padded batch back into sentences.
func (m *Model) MaxBatch() int { return m.maxBatch }

// Load prepares a voice model (ONNX bytes of a Piper-format voice) for this engine: it adds the duration output
// that batching needs (see prepareGraph) and creates the engine's sessions for it.
func (e *Engine) Load(name string, onnxModel []byte, cfg ModelConfig) (*Model, error) {
	graph, io, err := vits.PrepareGraph(onnxModel)
	if err != nil {
		return nil, fmt.Errorf("engine: loading voice %q: %w", name, err)
	}
	if cfg.NumSpeakers > 1 && !io.HasSpeaker {
		return nil, fmt.Errorf("engine: loading voice %q: config says %d speakers but the graph has no %q input",
			name, cfg.NumSpeakers, vits.InputSpeaker)
	}
	m := &Model{engine: e, name: name, cfg: cfg, io: io, maxBatch: e.maxBatch, maxBatchPhonemes: e.maxBatchPhonemes}
	masks := e.needsPaddingMasks(name, graph, io)
	if e.window.frames > 0 {
		split, err := e.loadSplit(name, graph, masks)
		if err == nil {
			m.split = split
			m.maxBatch, m.maxBatchPhonemes = e.splitMaxBatch, e.splitMaxBatchPh
			split.window = e.window
			if !e.marginSet {
				if reach, err := vits.DecoderReach(graph); err == nil {
					split.window.margin = reach
				} else {
					e.logf("engine: voice %q: decoder windows read %d frames of margin (the default): its receptive field is unknown: %v",
						name, e.window.margin, err)
				}
			}
			if e.device != ort.DeviceCPU {
				if err := e.warmUp(m); err != nil {
					m.close()
					return nil, fmt.Errorf("engine: loading voice %q: warming up on %s: %w", name, e.device, err)
				}
			}
			split.warmUpDeviceTimes = split.deviceTimes()
			return e.register(m)
		}
		e.logf("engine: voice %q runs whole sentences, not decoder windows: %v", name, err)
	}
	if !io.HasFrames {
		m.maxBatch = 1
		e.logf("engine: voice %q has no duration Ceil node; running it one sentence at a time (correct, slower)", name)
	}
	if masks {
		if masked, _, err := vits.MaskWholeGraph(graph); err == nil {
			graph = masked
		} else {
			e.logf("engine: voice %q: no padding masks for its decoder (%v); in a batch, the ends of its shorter sentences may differ slightly from running them alone", name, err)
		}
	}
	if e.tailTile > 0 && e.window.frames == 0 && io.HasFrames {
		tiled, err := e.loadTiled(name, graph, io)
		if err == nil {
			m.runners = tiled
			return e.register(m)
		}
		if !errors.Is(err, vits.ErrNoDecoder) { // not a VITS voice: nothing to tile, nothing to say
			e.logf("engine: voice %q: its decoder runs whole sentences, not tiles: %v", name, err)
		}
	}
	e.rewriteUpsampling(name, graph, e.device)
	if e.device != ort.DeviceCPU {
		gpuGraph(graph)
	}
	encoded, err := onnxgraph.Encode(graph)
	if err != nil {
		return nil, fmt.Errorf("engine: loading voice %q: %w", name, err)
	}
	for i := range e.sessionsPerModel {
		r, err := e.backend.newRunner(encoded, io, e.device, e.threadsPerSession)
		if err != nil {
			closeAll(m.runners)
			return nil, fmt.Errorf("engine: loading voice %q: session %d of %d on %s: %w",
				name, i+1, e.sessionsPerModel, e.device, err)
		}
		m.runners = append(m.runners, r)
	}
	return e.register(m)
}

// loadTiled cuts a voice for tiled decoder tails (tail.go) and makes a runner of a head and a tail session for each
// of the engine's sessions.
func (e *Engine) loadTiled(name string, graph *onnx.ModelProto, io vits.ModelIO) ([]runner, error) {
	tc, err := vits.CutTail(graph)
	if err != nil {
		return nil, err
	}
	e.rewriteUpsampling(name, tc.Head, e.device)
	e.rewriteUpsampling(name, tc.Tail, e.device)
	head, err := onnxgraph.Encode(tc.Head)
	if err != nil {
		return nil, err
	}
	tail, err := onnxgraph.Encode(tc.Tail)
	if err != nil {
		return nil, err
	}
	tile := roundUp(e.tailTile, tc.PerFrame) // tiles and their margins are whole frames (tail.go)
	var runners []runner
	for range e.sessionsPerModel {
		h, err := e.backend.newGraphRunner(head, io.InputNames(), tc.HeadOutputs(), e.device, e.threadsPerSession)
		if err != nil {
			closeAll(runners)
			return nil, fmt.Errorf("head session: %w", err)
		}
		t, err := e.backend.newGraphRunner(tail, tc.TailInputs(), []string{vits.OutputAudio}, e.device, e.threadsPerSession)
		if err != nil {
			h.Close()
			closeAll(runners)
			return nil, fmt.Errorf("tail session: %w", err)
		}
		runners = append(runners, &tiledRunner{head: h, tail: t, io: io, cut: tc, tile: tile, stats: &e.stats, now: e.now})
	}
	// Runs of two sentences of different lengths check what the graph alone cannot say: that everything the tail
	// reads from the head runs along the sentence, a whole number of samples per frame (a tail conditioned on the
	// speaker would not; two lengths, so that a size cannot divide both frame counts by chance).
	for _, width := range []int{32, 47} {
		if _, err := runners[0].run(trialBatch(1, width)); err != nil {
			closeAll(runners)
			return nil, fmt.Errorf("a trial run: %w", err)
		}
	}
	return runners, nil
}

// needsPaddingMasks says whether Load masks a voice's decoder (vits.MaskWholeGraph, vits.MaskDecoderGraph): only where there is padding (batches of
// several sentences, decoder windows; one sentence at a time, the CPU's default, runs the voice as it is), and only
// when the probe finds the decoder leaking it, or cannot tell.
func (e *Engine) needsPaddingMasks(name string, graph *onnx.ModelProto, io vits.ModelIO) bool {
	if !e.paddingMasks || !io.HasFrames || (e.maxBatch <= 1 && e.window.frames == 0) {
		return false
	}
	self, err := e.decoderMasksItself(graph)
	switch {
	case errors.Is(err, vits.ErrNoDecoder):
		return false
	case err != nil:
		e.logf("engine: voice %q: masking its decoder's padding, since probing whether it masks it itself failed: %v", name, err)
		return true
	}
	return !self
}

// rewriteUpsampling applies the engine's upsampling choice (see onnxgraph.RewriteUpsampling) to a graph that runs
// on device d.
func (e *Engine) rewriteUpsampling(name string, graph *onnx.ModelProto, d ort.Device) {
	if e.upsampling != UpsamplingPolyphase {
		return
	}
	if _, left := onnxgraph.RewriteUpsampling(graph, convChannelsLast(d)); left > 0 {
		e.logf("engine: voice %q: %d ConvTranspose node(s) outside what polyphase upsampling covers run as they are", name, left)
	}
}

// gpuGraph rewrites graph as a GPU session runs it: with its LayerNorms fused and its additions of zeros dropped,
// where either applies. It returns graph.
func gpuGraph(graph *onnx.ModelProto) *onnx.ModelProto {
	onnxgraph.FuseLayerNorms(graph)
	onnxgraph.DropZeroAdds(graph)
	return graph
}

// loadSplit cuts a voice at the decoder's latent, masks the decoder's padding if told to (vits.MaskDecoderGraph), and creates
// sessions for the parts. With the acoustic part on the CPU, a voice's flow (a VITS voice's frame-rate layers
// before the decoder) is cut out too and runs on the GPU: on the CPU it would take half of a Piper medium voice's
// acoustic time.
func (e *Engine) loadSplit(name string, graph *onnx.ModelProto, masks bool) (*splitModel, error) {
	voice, err := vits.SplitGraph(graph, e.acousticOnCPU)
	if err != nil {
		return nil, err
	}
	if masks {
		if _, err := vits.MaskDecoderGraph(voice.Decoder); err == nil {
			voice.DecoderMasked = true
		} else {
			e.logf("engine: voice %q: no padding masks for its decoder (%v); the first and last samples of its sentences may differ slightly from running them alone", name, err)
		}
	}
	// The acoustic part's form follows its CPU sessions, GPU acoustic workers' too (a VITS acoustic part has no
	// ConvTranspose; only its speed on the GPU would differ).
	acousticDevice := e.device
	if e.acousticOnCPU {
		acousticDevice = ort.DeviceCPU
	}
	e.rewriteUpsampling(name, voice.Acoustic, acousticDevice)
	e.rewriteUpsampling(name, voice.Decoder, e.device)
	if e.half {
		for _, part := range []struct {
			name  string
			graph **onnx.ModelProto
		}{{"flow", &voice.Flow}, {"decoder", &voice.Decoder}} {
			if *part.graph == nil {
				continue
			}
			if half, err := onnxgraph.HalfPrecision(*part.graph); err == nil {
				*part.graph = half
			} else {
				e.logf("engine: voice %q: its %s stays float32: %v", name, part.name, err)
			}
		}
	}
	s := &splitModel{voice: voice}
	if e.text != "" && e.text != ort.DeviceCPU {
		if err := e.loadText(name, s); err != nil {
			e.logf("engine: voice %q runs its text encoder on the CPU: %v", name, err)
		}
	}
	decoderInputs := voice.DecoderInputNames()
	acousticSessions, acousticDevice, acousticThreads := e.sessionsPerModel, e.device, e.threadsPerSession
	if e.acousticOnCPU {
		acousticSessions, acousticDevice, acousticThreads = e.workers, ort.DeviceCPU, 1
	}
	acoustic, err := onnxgraph.Encode(voice.Acoustic)
	if err != nil {
		return nil, err
	}
	// The graph for the sessions on a GPU (all of them, or the GPU acoustic workers'), rewritten once.
	acousticOnGPU := acoustic
	if acousticDevice != ort.DeviceCPU || e.acousticOnCPU && e.acousticCPU < acousticSessions {
		if acousticOnGPU, err = onnxgraph.Encode(gpuGraph(proto.Clone(voice.Acoustic).(*onnx.ModelProto))); err != nil {
			return nil, err
		}
	}
	for i := range acousticSessions {
		device, threads, graph := acousticDevice, acousticThreads, acoustic
		if e.acousticOnCPU && i >= e.acousticCPU { // AcousticGPUWorkers
			device, threads = e.device, e.threadsPerSession
		}
		if device != ort.DeviceCPU {
			graph = acousticOnGPU
		}
		a, err := e.backend.newGraphRunner(graph, voice.AcousticInputNames(), voice.AcousticOutputs(), device, threads)
		if err != nil {
			s.close()
			return nil, fmt.Errorf("acoustic session on %s: %w", device, err)
		}
		s.acoustic = append(s.acoustic, a)
	}
	if voice.Flow != nil {
		// Made at their first run (on a GPU, Load's warm-up), when the acoustic part's outputs say the ranks of the
		// flow's inputs (rankedRunner).
		flow := voice.Flow
		if e.device != ort.DeviceCPU {
			flow = gpuGraph(flow)
		}
		for range e.sessionsPerModel {
			s.flow = append(s.flow, newRankedRunner(flow, voice.FlowInputs, func(graph []byte) (graphRunner, error) {
				f, err := e.backend.newGraphRunner(graph, voice.FlowInputs, []string{vits.OutputLatent}, e.device, e.threadsPerSession)
				if err != nil {
					return nil, fmt.Errorf("flow session: %w", err)
				}
				return f, nil
			}))
		}
	}
	decoder, err := onnxgraph.Encode(voice.Decoder)
	if err != nil {
		s.close()
		return nil, err
	}
	for range e.sessionsPerModel {
		d, err := e.backend.newGraphRunner(decoder, decoderInputs, []string{vits.OutputAudio}, e.device, e.threadsPerSession)
		if err != nil {
			s.close()
			return nil, fmt.Errorf("decoder session: %w", err)
		}
		s.decoder = append(s.decoder, d)
	}
	return s, nil
}

// loadText cuts a split voice's acoustic part at the durations (vits.CutText) and creates the text part's sessions: on
// the GPU, and with TextDevice auto one on the CPU per CPU acoustic worker too, where the GPU's runs are serialised
// (elsewhere a GPU run never finds the device busy). It leaves s as it was if either fails.
func (e *Engine) loadText(name string, s *splitModel) error {
	cut, err := vits.CutText(s.voice.Acoustic)
	if err != nil {
		return fmt.Errorf("its acoustic part cannot be cut at the durations: %w", err)
	}
	var gpu, cpu []graphRunner
	fail := func(what string, err error) error {
		closeAll(slices.Concat(gpu, cpu))
		return fmt.Errorf("%s: %w", what, err)
	}
	text, err := onnxgraph.Encode(cut.Text)
	if err != nil {
		return err
	}
	onGPU, err := onnxgraph.Encode(gpuGraph(proto.Clone(cut.Text).(*onnx.ModelProto)))
	if err != nil {
		return err
	}
	for range e.sessionsPerModel {
		t, err := e.backend.newGraphRunner(onGPU, cut.TextInputs, cut.Boundary, e.device, e.threadsPerSession)
		if err != nil {
			return fail("text part session on "+string(e.device), err)
		}
		gpu = append(gpu, t)
	}
	if e.text == ort.DeviceAuto && ort.RunLock(e.device) != nil {
		for range e.acousticCPU {
			t, err := e.backend.newGraphRunner(text, cut.TextInputs, cut.Boundary, ort.DeviceCPU, 1)
			if err != nil {
				return fail("text part session on cpu", err)
			}
			cpu = append(cpu, t)
		}
	}
	var perRow []bool
	if len(cpu) > 0 {
		var ok bool
		perRow, ok, err = textPieceOutputs(cpu[0], cut, s.voice.IO)
		if err != nil {
			return fail("trying the text part on the cpu", err)
		}
		if !ok {
			e.logf("engine: voice %q: a text part output has its sentence axis where pieces of a batch cannot be joined: the CPU runs a batch's text part whole", name)
		}
	}
	s.voice.Text, s.voice.Acoustic, s.text, s.textCPU, s.textPerRow = cut, cut.Expand, gpu, cpu, perRow
	return nil
}

// closeAll closes every runner and joins their errors.
func closeAll[R io.Closer](runners []R) error {
	var errs []error
	for _, r := range runners {
		errs = append(errs, r.Close())
	}
	return errors.Join(errs...)
}

func (e *Engine) register(m *Model) (*Model, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		m.close()
		return nil, fmt.Errorf("engine: loading voice %q: %w", m.name, ErrClosed)
	}
	e.models = append(e.models, m)
	return m, nil
}

func (m *Model) close() error {
	err := closeAll(m.runners)
	if m.split != nil {
		err = errors.Join(err, m.split.close())
	}
	return err
}

// Windowed reports whether the model runs in continuous-batching mode: decoder windows from many sentences.
func (m *Model) Windowed() bool { return m.split != nil }

// validate rejects a request that could only fail on the device, before it takes a place in the queue.
func (m *Model) validate(req Request) error {
	if len(req.IDs) == 0 {
		return errors.New("empty phoneme id sequence")
	}
	speakers := max(1, m.cfg.NumSpeakers)
	if req.Speaker < 0 || req.Speaker >= int64(speakers) {
		return fmt.Errorf("speaker %d out of range: voice %q has %d speaker(s)", req.Speaker, m.name, speakers)
	}
	return nil
}
