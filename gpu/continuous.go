package gpu

import (
	"fmt"
)

// Continuous batching for split voices (see doc.go): a worker runs the acoustic part on a batch of whole
// sentences and queues each sentence's decoder windows; any worker then decodes windows, from whatever sentences
// are waiting, in runs of up to decoderBatch, and a sentence is delivered when its last window is placed.

// runAcoustic runs the acoustic part of a split voice on a batch and queues the sentences' decoder windows.
func (e *Engine) runAcoustic(worker int, batch []*item) {
	m := batch[0].model
	started := e.now()
	in := packBatch(batch, m.io.hasSpeaker)
	out, err := m.split.acoustic[worker%len(m.split.acoustic)].runGraph(acousticInputs(in, m.split.voice.io))
	e.stats.record(stageAcoustic, batch, started, e.now())
	var latents [][]float32
	var frames []int
	var channels int
	if err == nil {
		latents, frames, channels, err = sentenceLatents(out[0], out[1], in.size)
	}
	if retryAlone(err, batch, func(one []*item) { e.runAcoustic(worker, one) }) {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	for i, it := range batch {
		switch {
		case e.failedLocked(it, err, started, "acoustic part: "):
		case frames[i] == 0:
			e.finishLocked(it, Result{Audio: []float32{}}, started)
		default:
			it.started, it.latent, it.channels, it.frames = started, latents[i], channels, frames[i]
			it.remaining = e.window.count(frames[i])
			for k := range it.remaining {
				e.windows = append(e.windows, window{it: it, k: k})
			}
		}
	}
	e.work.Broadcast()
}

// takeWindowsLocked removes the next decoder run from the window queue: the oldest windows of the oldest
// window's voice, up to decoderBatch. Windows of sentences that ended meanwhile (cancelled, failed) are dropped.
func (e *Engine) takeWindowsLocked() []window {
	var run []window
	var model *Model
	rest := e.windows[:0]
	for _, w := range e.windows {
		if w.it.state == stateDone {
			continue
		}
		if err := w.it.ctx.Err(); err != nil {
			e.finishLocked(w.it, Result{Err: err}, w.it.started)
			continue
		}
		if model == nil {
			model = w.it.model
		}
		if w.it.model == model && len(run) < e.decoderBatch {
			run = append(run, w)
		} else {
			rest = append(rest, w)
		}
	}
	clear(e.windows[len(rest):])
	e.windows = rest
	return run
}

// runWindows decodes one run of windows and places each window's samples in its sentence.
func (e *Engine) runWindows(worker int, run []window) {
	if len(run) == 0 {
		return
	}
	m := run[0].it.model
	w := e.window
	channels := run[0].it.channels
	size := channels * w.span()
	latent := make([]float32, len(run)*size)
	speakers := make([]int64, len(run))
	for i, win := range run {
		// latent, channels and frames are written once, under e.mu, before the window is queued.
		w.cutWindow(latent[i*size:(i+1)*size], win.it.latent, channels, win.it.frames, win.k)
		speakers[i] = win.it.req.Speaker
	}
	inputs := []tensor{{shape: []int64{int64(len(run)), int64(channels), int64(w.span())}, f32: latent}}
	if m.split.voice.decoderSpeaker {
		inputs = append(inputs, tensor{shape: []int64{int64(len(run))}, i64: speakers})
	}
	decodeStart := e.now()
	out, err := m.split.decoder[worker%len(m.split.decoder)].runGraph(inputs)
	e.stats.recordWindows(len(run), w.frames, w.span(), decodeStart, e.now())
	var perWindow, hop int
	if err == nil {
		perWindow = len(out[0].f32) / len(run)
		hop = perWindow / w.span()
		if perWindow*len(run) != len(out[0].f32) || hop*w.span() != perWindow || hop == 0 {
			err = fmt.Errorf("decoder gave %d samples for %d windows of %d frames", len(out[0].f32), len(run), w.span())
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	for i, win := range run {
		it := win.it
		if it.state == stateDone {
			continue
		}
		if err == nil {
			if it.audio == nil {
				it.audio = make([]float32, it.frames*hop)
			}
			err = w.placeWindow(it.audio, out[0].f32[i*perWindow:(i+1)*perWindow], hop, win.k)
		}
		if err != nil {
			e.finishLocked(it, Result{Err: fmt.Errorf("gpu: voice %q on %s: decoder: %w", m.name, e.device, err)}, it.started)
			continue
		}
		it.remaining--
		if it.remaining > 0 {
			continue
		}
		if ctxErr := it.ctx.Err(); ctxErr != nil {
			e.finishLocked(it, Result{Err: ctxErr}, it.started)
		} else {
			e.finishLocked(it, Result{Audio: it.audio}, it.started)
		}
		it.latent = nil
	}
}
