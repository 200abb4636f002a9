package gpu

import (
	"fmt"
	"time"
)

// tensor is a dense tensor crossing the runner boundary: float32 or int64, row-major.
type tensor struct {
	shape []int64
	f32   []float32
	i64   []int64
}

// graphRunner runs a graph with positional inputs and outputs (the order given when it was created). Like runner,
// it must be safe from several goroutines.
type graphRunner interface {
	runGraph(inputs []tensor) ([]tensor, error)
	// tryRunGraph is runGraph if the runner's device is free at once, else errDeviceBusy without running.
	tryRunGraph(inputs []tensor) ([]tensor, error)
	// deviceTime is how long its runs have held a serialised device (0 for a device that runs several at once).
	deviceTime() time.Duration
	close() error
}

// windowing is the decoder's window layout: each window decodes frames frames of one sentence and reads margin
// frames on each side, so that every output sample sees all the latent frames its receptive field reaches.
type windowing struct {
	frames, margin int
}

func (w windowing) span() int { return w.frames + 2*w.margin }

// count is how many windows a sentence of the given number of frames needs.
func (w windowing) count(sentenceFrames int) int {
	return (sentenceFrames + w.frames - 1) / w.frames
}

// cutWindow copies window k of a sentence's latent (channels x sentenceFrames, row-major) into dst
// (channels x span). Frames outside the sentence stay zero: the decoder sees them as it sees padding, with the
// latent's frame mask off.
func (w windowing) cutWindow(dst, latent []float32, channels, sentenceFrames, k int) {
	clear(dst)
	first := k*w.frames - w.margin // sentence frame at window column 0
	lo, hi := max(first, 0), min(first+w.span(), sentenceFrames)
	for c := range channels {
		copy(dst[c*w.span()+lo-first:c*w.span()+hi-first], latent[c*sentenceFrames+lo:c*sentenceFrames+hi])
	}
}

// cutMask writes window k's frame mask into dst (span values): 1 on the sentence's frames, 0 on the margins that
// reach past either end.
func (w windowing) cutMask(dst []float32, sentenceFrames, k int) {
	first := k*w.frames - w.margin
	for i := range dst {
		dst[i] = 0
		if f := first + i; f >= 0 && f < sentenceFrames {
			dst[i] = 1
		}
	}
}

// placeWindow copies the middle of window k's decoded samples (span x hop) into the sentence's audio
// (sentenceFrames x hop), dropping the margins and anything past the sentence's end.
func (w windowing) placeWindow(audio, decoded []float32, hop, k int) error {
	if len(decoded) != w.span()*hop {
		return fmt.Errorf("decoder window gave %d samples, want %d (%d frames x hop %d)", len(decoded), w.span()*hop, w.span(), hop)
	}
	start := k * w.frames * hop
	end := min(start+w.frames*hop, len(audio))
	copy(audio[start:end], decoded[w.margin*hop:])
	return nil
}

// sentenceLatents cuts the acoustic graph's batched latent [B, C, Fmax] into each item's own frames
// (C x frames[b]), with frames from w_ceil [B, 1, L].
func sentenceLatents(latent tensor, wCeil tensor, size int) (latents [][]float32, frames []int, channels int, err error) {
	if len(latent.shape) != 3 || latent.shape[0] != int64(size) {
		return nil, nil, 0, fmt.Errorf("latent has shape %v, want [%d, channels, frames]", latent.shape, size)
	}
	channels, maxFrames := int(latent.shape[1]), int(latent.shape[2])
	if len(wCeil.f32)%size != 0 {
		return nil, nil, 0, fmt.Errorf("duration output has %d values for a batch of %d", len(wCeil.f32), size)
	}
	width := len(wCeil.f32) / size
	for b := range size {
		var sum float32
		for _, f := range wCeil.f32[b*width : (b+1)*width] {
			sum += f
		}
		// A sentence of no frames gets no audio, as in splitAudio.
		n := min(int(sum+0.5), maxFrames)
		item := make([]float32, channels*n)
		for c := range channels {
			row := latent.f32[(b*channels+c)*maxFrames:]
			copy(item[c*n:(c+1)*n], row[:n])
		}
		latents = append(latents, item)
		frames = append(frames, n)
	}
	return latents, frames, channels, nil
}

// acousticInputs lays a batch out as the acoustic graph's inputs (the voice's own inputs, in modelIO order).
func acousticInputs(in batchInput, io modelIO) []tensor {
	b, l := int64(in.size), int64(in.width)
	inputs := []tensor{
		{shape: []int64{b, l}, i64: in.ids},
		{shape: []int64{b}, i64: in.lengths},
		{shape: []int64{3}, f32: []float32{in.scales.Noise, in.scales.Length, in.scales.NoiseW}},
	}
	if io.hasSpeaker {
		speakers := in.speakers
		if speakers == nil {
			speakers = make([]int64, in.size)
		}
		inputs = append(inputs, tensor{shape: []int64{b}, i64: speakers})
	}
	return inputs
}

// decodeWindowed synthesizes a batch through the split graph: the acoustic part once for the batch, then the
// decoder on fixed windows of all the batch's sentences together, at most maxWindows per run.
func decodeWindowed(acoustic, decoder graphRunner, sv *splitVoice, in batchInput, w windowing, hop, maxWindows int) ([][]float32, error) {
	out, err := acoustic.runGraph(acousticInputs(in, sv.io))
	if err != nil {
		return nil, err
	}
	latents, frames, channels, err := sentenceLatents(out[0], out[1], in.size)
	if err != nil {
		return nil, err
	}
	type window struct{ item, k int }
	var windows []window
	audio := make([][]float32, in.size)
	for b, n := range frames {
		audio[b] = make([]float32, n*hop)
		for k := range w.count(n) {
			windows = append(windows, window{b, k})
		}
	}
	for start := 0; start < len(windows); start += maxWindows {
		run := windows[start:min(start+maxWindows, len(windows))]
		size := w.span() * channels
		batch := make([]float32, len(run)*size)
		mask := make([]float32, len(run)*w.span())
		speakers := make([]int64, len(run))
		for i, win := range run {
			w.cutWindow(batch[i*size:(i+1)*size], latents[win.item], channels, frames[win.item], win.k)
			w.cutMask(mask[i*w.span():(i+1)*w.span()], frames[win.item], win.k)
			if in.speakers != nil {
				speakers[i] = in.speakers[win.item]
			}
		}
		decoded, err := decoder.runGraph(sv.decoderInputs(batch, mask, speakers, len(run), channels, w.span()))
		if err != nil {
			return nil, err
		}
		per := len(decoded[0].f32) / len(run)
		for i, win := range run {
			if err := w.placeWindow(audio[win.item], decoded[0].f32[i*per:(i+1)*per], hop, win.k); err != nil {
				return nil, err
			}
		}
	}
	return audio, nil
}
