package engine

import (
	"errors"
	"fmt"
	"time"

	"github.com/ttsgen/ttsgen/internal/ort"
)

// Continuous batching for split voices (see doc.go): a worker runs the acoustic part on a batch of whole
// sentences and queues each sentence's decoder windows; any worker then decodes windows, from whatever sentences
// are waiting, in runs of up to decoderBatch, and a sentence is delivered when its last window is placed.

// runAcoustic runs the acoustic part of a split voice on a batch and queues the sentences' decoder windows.
func (e *Engine) runAcoustic(worker int, batch []*item) {
	m := batch[0].model
	started := e.now()
	in := packBatch(batch, m.io.HasSpeaker)
	inputs := acousticInputs(in, m.split.voice.IO)
	var out []ort.Tensor
	var err error
	if m.split.text != nil {
		var runs []textRun
		inputs, runs, err = m.split.runText(worker, e.textPiece, inputs, e.now)
		for _, r := range runs {
			stage := stageText
			if r.onCPU {
				stage = stageTextCPU
			}
			// A piece keeps the batch's padded width.
			e.stats.recordPadded(stage, batch[r.lo:r.hi], in.width, r.start, r.end)
		}
	}
	if err == nil {
		acousticStart := e.now()
		out, err = m.split.acoustic[worker%len(m.split.acoustic)].Run(inputs)
		e.stats.record(stageAcoustic, batch, acousticStart, e.now())
	}
	if err == nil && m.split.flow != nil {
		flowStart := e.now()
		out, err = m.split.runFlow(worker, out)
		e.stats.record(stageFlow, batch, flowStart, e.now())
	}
	var latents [][]float32
	var frames []int
	var channels int
	if err == nil {
		latents, frames, channels, err = sentenceLatents(out[0], out[1], in.size)
	}
	if err == nil {
		keepDurations(batch, out[1].F32, len(out[1].F32)/len(batch))
	}
	if retryAlone(err, batch, func(one []*item) { e.runAcoustic(worker, one) }) {
		return
	}
	// The batch's sentences with audio to decode, laid end to end in strips (outside the engine's lock: copying
	// the latents takes a moment; stripGroups says which share one).
	var strips []*sentenceStrip
	if err == nil {
		speaker := func(i int) int64 { return batch[i].req.Speaker }
		for _, group := range stripGroups(frames, speaker, m.split.voice.DecoderSpeaker, e.noStrips) {
			s := &sentenceStrip{strip: m.split.window.groupStrip(latents, frames, group, channels), speaker: batch[group[0]].req.Speaker}
			for _, i := range group {
				s.items = append(s.items, batch[i])
			}
			strips = append(strips, s)
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	for i, it := range batch {
		switch {
		case e.failedLocked(it, err, started, "acoustic part: "):
		case frames[i] == 0:
			e.finishLocked(it, Result{Audio: []float32{}}, started)
		default:
			it.started = started
		}
	}
	w := m.split.window
	for _, s := range strips {
		for j, it := range s.items {
			first, last := w.windows(s.strip, j)
			it.remaining = last - first + 1
			if it.req.Stream != nil {
				it.firstWindow, it.decoded = first, make([]bool, it.remaining)
			}
		}
		for k := range w.count(s.length) {
			e.windows = append(e.windows, window{strip: s, k: k})
		}
	}
	e.work.Broadcast()
}

// runText runs the text part of a voice whose acoustic part was cut at the durations (vits.CutText) on the voice's
// inputs, and returns the inputs of the rest of the acoustic part: the text part's outputs, then the voice inputs
// that the rest reads itself; and where its runs went. With TextDevice auto a CPU worker runs it on the GPU if no
// run holds or waits for the device, else on its own CPU session, piece by piece (piece sentences at a time, 0 =
// all), handing the rest to the GPU as soon as the GPU is idle between pieces; other workers wait for the GPU.
func (s *splitModel) runText(worker, piece int, voiceInputs []ort.Tensor, now func() time.Time) (next []ort.Tensor, runs []textRun, err error) {
	cut := s.voice.Text
	byName := byInputName(s.voice.IO, voiceInputs)
	in := pick(byName, cut.TextInputs)
	rows := int(voiceInputs[0].Shape[0])
	gpu := s.text[worker%len(s.text)]
	run := func(r graphRunner, lo, hi int, onCPU, try bool) ([]ort.Tensor, error) {
		start := now()
		part := in
		if lo > 0 || hi < rows {
			part = textInputRows(cut.TextInputs, in, lo, hi)
		}
		var out []ort.Tensor
		var err error
		if try {
			out, err = r.TryRun(part)
		} else {
			out, err = r.Run(part)
		}
		if err == nil {
			runs = append(runs, textRun{lo: lo, hi: hi, onCPU: onCPU, start: start, end: now()})
		}
		return out, err
	}
	var out []ort.Tensor
	if worker >= len(s.textCPU) {
		out, err = run(gpu, 0, rows, false, false)
	} else if out, err = run(gpu, 0, rows, false, true); errors.Is(err, ort.ErrDeviceBusy) {
		out, err = s.runTextPieces(run, s.textCPU[worker], gpu, rows, piece)
	}
	if err != nil {
		return nil, runs, fmt.Errorf("text part: %w", err)
	}
	for i, name := range cut.Boundary {
		byName[name] = out[i]
	}
	return pick(byName, cut.ExpandInput), runs, nil
}

// textRun is one run of a batch's text part: sentences lo to hi, on a CPU session or on the GPU.
type textRun struct {
	lo, hi     int
	onCPU      bool
	start, end time.Time
}

// runTextPieces runs a batch's text part on a CPU session, piece sentences at a time, and between pieces tries the
// rest on the GPU, which takes it if idle. A voice whose text part cannot be run in pieces (perRow unknown), or a
// batch no larger than a piece, runs in one CPU run.
func (s *splitModel) runTextPieces(run func(r graphRunner, lo, hi int, onCPU, try bool) ([]ort.Tensor, error),
	cpu, gpu graphRunner, rows, piece int) ([]ort.Tensor, error) {
	if piece <= 0 || piece >= rows || s.textPerRow == nil {
		return run(cpu, 0, rows, true, false)
	}
	var parts [][]ort.Tensor
	for lo := 0; lo < rows; {
		hi := min(lo+piece, rows)
		part, err := run(cpu, lo, hi, true, false)
		if err != nil {
			return nil, err
		}
		parts, lo = append(parts, part), hi
		if lo == rows {
			break
		}
		rest, err := run(gpu, lo, rows, false, true)
		if errors.Is(err, ort.ErrDeviceBusy) {
			continue
		}
		if err != nil {
			return nil, err
		}
		parts, lo = append(parts, rest), rows
	}
	return joinTextRows(parts, s.textPerRow)
}

// flowFrameStep: the flow runs on whole batches, whose frame count changes from run to run; rounding it up to a
// multiple of this many frames gives a GPU provider few shapes to compile kernels for. The padding is zero latent
// and a zero frame mask, which a VITS flow masks out, so it changes nothing in the sentences' frames.
const flowFrameStep = 64

// runFlow runs the flow on the acoustic part's outputs (the flow's inputs, then the durations) and returns the
// latent and the durations, as an acoustic part without a flow of its own gives them.
func (s *splitModel) runFlow(worker int, acoustic []ort.Tensor) ([]ort.Tensor, error) {
	n := len(s.voice.FlowInputs)
	if len(acoustic) != n+1 || len(acoustic[0].Shape) != 3 {
		return nil, fmt.Errorf("acoustic part gave %d outputs, the first of shape %v; want %d, the first [batch, channels, frames]",
			len(acoustic), acoustic[0].Shape, n+1)
	}
	frames := acoustic[0].Shape[2]
	padded := roundUp(frames, flowFrameStep)
	inputs := make([]ort.Tensor, n)
	for i, t := range acoustic[:n] {
		inputs[i] = t
		// A multi-speaker voice also hands the flow its speaker embedding, [B, C, 1]: that one is not padded,
		// nor is anything when the batch is one frame long and the two cannot be told apart.
		if len(t.Shape) == 3 && t.Shape[2] == frames && frames > 1 && t.F32 != nil {
			inputs[i] = padLastAxis(t, padded)
		}
	}
	out, err := s.flow[worker%len(s.flow)].Run(inputs)
	if err != nil {
		return nil, err
	}
	return []ort.Tensor{out[0], acoustic[n]}, nil
}

// padLastAxis returns t [A, B, n] widened to [A, B, to] with zeros.
func padLastAxis(t ort.Tensor, to int64) ort.Tensor {
	n := t.Shape[2]
	if n == to {
		return t
	}
	rows := len(t.F32) / int(n)
	data := make([]float32, rows*int(to))
	for r := range rows {
		copy(data[r*int(to):], t.F32[r*int(n):(r+1)*int(n)])
	}
	return ort.Tensor{Shape: []int64{t.Shape[0], t.Shape[1], to}, F32: data}
}

// takeWindowsLocked removes the next decoder run from the window queue: the oldest windows of the oldest
// window's voice, up to decoderBatch. Windows none of whose sentences still runs (cancelled, failed) are dropped.
func (e *Engine) takeWindowsLocked() []window {
	var run []window
	var model *Model
	rest := e.windows[:0]
	for _, w := range e.windows {
		if !e.windowLiveLocked(w) {
			continue
		}
		m := w.strip.items[0].model
		if model == nil {
			model = m
		}
		if m == model && len(run) < e.decoderBatch {
			run = append(run, w)
		} else {
			rest = append(rest, w)
		}
	}
	clear(e.windows[len(rest):])
	e.windows = rest
	return run
}

// windowLiveLocked says whether any sentence window w decodes still runs, ending those whose request was
// cancelled meanwhile.
func (e *Engine) windowLiveLocked(w window) bool {
	live := false
	lo, hi := w.strip.items[0].model.split.window.sentences(w.strip.strip, w.k)
	for _, it := range w.strip.items[lo:hi] {
		if it.state == stateDone {
			continue
		}
		if err := it.ctx.Err(); err != nil {
			e.finishLocked(it, Result{Err: err}, it.started)
			continue
		}
		live = true
	}
	return live
}

// runWindows decodes one run of windows and places each window's samples in its sentences.
func (e *Engine) runWindows(worker int, run []window) {
	if len(run) == 0 {
		return
	}
	m := run[0].strip.items[0].model
	w := m.split.window
	channels := run[0].strip.channels
	size := channels * w.span()
	// The run is padded with silent windows (all zero, frame mask off) to decoderRows: a GPU provider then sees a
	// few tensor shapes, each compiled and cached once, rather than a new shape whenever the load changes.
	rows := e.decoderRows(len(run))
	latent := make([]float32, rows*size)
	mask := make([]float32, rows*w.span())
	speakers := make([]int64, rows)
	for i, win := range run {
		w.cutWindow(latent[i*size:(i+1)*size], mask[i*w.span():(i+1)*w.span()], win.strip.strip, win.k)
		speakers[i] = win.strip.speaker
	}
	decodeStart := e.now()
	out, err := e.decode(m, worker, latent, mask, speakers, rows, channels)
	e.stats.recordWindows(len(run), rows, w.frames, w.span(), decodeStart, e.now())
	var perWindow, hop int
	if err == nil {
		perWindow = len(out) / rows
		hop = perWindow / w.span()
		if perWindow*rows != len(out) || hop*w.span() != perWindow || hop == 0 {
			err = fmt.Errorf("decoder gave %d samples for %d windows of %d frames", len(out), rows, w.span())
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	for i, win := range run {
		s := win.strip
		lo, hi := w.sentences(s.strip, win.k)
		for j := lo; j < hi; j++ {
			it := s.items[j]
			if it.state == stateDone {
				continue
			}
			placeErr := err
			if placeErr == nil {
				if it.audio == nil {
					it.audio = make([]float32, s.frames[j]*hop)
				}
				placeErr = w.placeWindow(it.audio, out[i*perWindow:(i+1)*perWindow], s.strip, j, hop, win.k)
			}
			if placeErr != nil {
				e.finishLocked(it, Result{Err: fmt.Errorf("engine: voice %q on %s: decoder: %w", m.name, e.device, placeErr)}, it.started)
				continue
			}
			it.remaining--
			if it.req.Stream != nil {
				e.streamLocked(it, s.strip, j, win.k, hop)
			}
			if it.remaining > 0 {
				continue
			}
			if ctxErr := it.ctx.Err(); ctxErr != nil {
				e.finishLocked(it, Result{Err: ctxErr}, it.started)
			} else {
				e.finishLocked(it, Result{Audio: it.audio}, it.started)
			}
		}
	}
}

// streamLocked notes that window k of sentence j (item it) is decoded and sends what the decoded windows now hold
// from the sentence's start on and was not sent yet, if the stream has room.
func (e *Engine) streamLocked(it *item, s *strip, j, k, hop int) {
	w := it.model.split.window
	it.decoded[k-it.firstWindow] = true
	for it.prefix < len(it.decoded) && it.decoded[it.prefix] {
		it.prefix++
	}
	// Sentence frames up to the end of the last window of the decoded prefix.
	end := min(s.frames[j], (it.firstWindow+it.prefix)*w.frames-s.starts[j])
	if end*hop <= it.streamed {
		return
	}
	select {
	case it.req.Stream <- it.audio[it.streamed : end*hop]:
		it.streamed = end * hop
	default: // full: these samples go with a later send, or only in the Result
	}
}

// decoderRows is the batch size a decoder run of n windows is padded to: the next power of two, at most
// decoderBatch.
func (e *Engine) decoderRows(n int) int {
	rows := 1
	for rows < n {
		rows *= 2
	}
	return min(rows, max(e.decoderBatch, n))
}

// decode runs the decoder on rows windows (latent: rows x channels x span, mask: rows x span) and returns their
// samples.
func (e *Engine) decode(m *Model, worker int, latent, mask []float32, speakers []int64, rows, channels int) ([]float32, error) {
	inputs := decoderInputs(m.split.voice, latent, mask, speakers, rows, channels, m.split.window.span())
	out, err := m.split.decoder[worker%len(m.split.decoder)].Run(inputs)
	if err != nil {
		return nil, err
	}
	return out[0].F32, nil
}

// warmUp runs a split voice once at every decoder run size on a GPU, so that the provider compiles its kernels for
// those shapes at Load rather than during the first requests, whose first audio would wait for it. The provider's
// programs depend on a few properties of a shape, not its sizes: a dimension of 1 or more (broadcasting: a
// request's first batch of two sentences would compile anew), and a matrix dimension's divisibility by 4 (vector
// loads) and by 32 (whole tiles). So the parts before the decoder run on batches of one and two sentences of 3, 4
// and 32 ids; the latent's channel count comes from those runs.
func (e *Engine) warmUp(m *Model) error {
	var channels int
	for size := 1; size <= 2; size++ {
		for _, width := range []int{3, 4, 32} {
			var err error
			if channels, err = e.warmUpAcoustic(m, size, width); err != nil {
				return err
			}
		}
	}
	for rows := 1; ; rows = e.decoderRows(rows + 1) {
		span := m.split.window.span()
		if _, err := e.decode(m, 0, make([]float32, rows*channels*span), make([]float32, rows*span), make([]int64, rows), rows, channels); err != nil {
			return fmt.Errorf("decoder, %d windows: %w", rows, err)
		}
		if rows >= e.decoderBatch {
			return nil
		}
	}
}

// warmUpAcoustic runs the parts of a split voice before the decoder on size sentences of width ids and returns the
// latent's channel count.
func (e *Engine) warmUpAcoustic(m *Model, size, width int) (channels int, err error) {
	inputs := acousticInputs(trialBatch(size, width), m.split.voice.IO)
	if m.split.text != nil {
		// As a worker past the CPU ones: on the GPU session, waiting for the device if need be, so that it is
		// the GPU's run that is warmed up and checked.
		if inputs, _, err = m.split.runText(len(m.split.textCPU), 0, inputs, e.now); err != nil {
			return 0, err
		}
	}
	out, err := m.split.acoustic[0].Run(inputs)
	if err != nil {
		return 0, fmt.Errorf("acoustic part: %w", err)
	}
	if m.split.flow != nil {
		if out, err = m.split.runFlow(0, out); err != nil {
			return 0, fmt.Errorf("flow: %w", err)
		}
	}
	if len(out[0].Shape) != 3 {
		return 0, fmt.Errorf("acoustic part gave a latent of shape %v", out[0].Shape)
	}
	return int(out[0].Shape[1]), nil
}

// trialBatch is size trialSentences of width ids, with the noise off (and speaker 0, acousticInputs's default).
func trialBatch(size, width int) batchInput {
	in := batchInput{size: size, width: width, scales: Scales{Length: 1}}
	for range size {
		in.ids, in.lengths = append(in.ids, trialSentence(width)...), append(in.lengths, int64(width))
	}
	return in
}

// trialSentence is width phoneme ids in Piper's pattern (BOS, each phoneme followed by a pad, EOS), for the runs
// Load makes before any request: warm-ups and trials. The phonemes are ids 3-12, which any voice has (Piper's
// maps give "_" 0, "^" 1, "$" 2, then the phonemes).
func trialSentence(width int) []int64 {
	ids := make([]int64, width)
	ids[0], ids[width-1] = 1, 2
	for i := 1; i < width-1; i += 2 {
		ids[i] = 3 + int64(i/2%10)
	}
	return ids
}
