package engine

import (
	"fmt"
	"sort"
	"time"

	"github.com/ttsgen/ttsgen/internal/ort"
	"github.com/ttsgen/ttsgen/internal/vits"
)

// graphRunner runs a graph with positional inputs and outputs (the order given when it was created): what an
// *ort.Runner does, and what tests fake. Like runner, it must be safe from several goroutines.
type graphRunner interface {
	Run(inputs []ort.Tensor) ([]ort.Tensor, error)
	// TryRun is Run if the runner's device is free at once, else ort.ErrDeviceBusy without running.
	TryRun(inputs []ort.Tensor) ([]ort.Tensor, error)
	// DeviceTime is how long its runs have held a serialised device (0 for a device that runs several at once).
	DeviceTime() time.Duration
	Close() error
}

// windowing is the decoder's window layout: each window decodes frames frames of one sentence and reads margin
// frames on each side, so that every output sample sees all the latent frames its receptive field reaches.
type windowing struct {
	frames, margin int
}

func (w windowing) span() int { return w.frames + 2*w.margin }

// roundUp is n rounded up to a multiple of step.
func roundUp[T int | int64](n, step T) T {
	return (n + step - 1) / step * step
}

// count is how many windows a strip (or a sentence) of the given number of frames needs.
func (w windowing) count(frames int) int {
	return (frames + w.frames - 1) / w.frames
}

// strip lays several sentences' latents end to end on one frame axis, with margin frames of silence (frame mask
// off) between two sentences, and the decoder's windows are cut from the strip rather than from each sentence. A
// sentence's last window is then filled by the next sentence's first frames instead of by padding, of which a
// sentence cut alone leaves up to a window's worth past its end; in a strip each wastes only its gap.
//
// The gap keeps sentences apart exactly: an output sample reads latent frames at most margin away (the decoder's
// reach, vits.DecoderReach), so a sentence's samples never read the next sentence's frames, and the gap frames they do read
// are zero with the mask off, as the padding past a sentence's end is when it is cut alone.
type strip struct {
	latent   []float32 // channels x length, row-major
	mask     []float32 // length: 1 on sentence frames, 0 on the gaps
	channels int
	length   int
	starts   []int // the strip frame of each sentence's first frame
	frames   []int // each sentence's frames
}

// newStrip lays out sentences (latents[i]: channels x frames[i]) with the window's margin between them.
func (w windowing) newStrip(latents [][]float32, frames []int, channels int) *strip {
	s := &strip{channels: channels, starts: make([]int, len(frames)), frames: frames}
	for i, n := range frames {
		if i > 0 {
			s.length += w.margin
		}
		s.starts[i] = s.length
		s.length += n
	}
	s.latent = make([]float32, channels*s.length)
	s.mask = make([]float32, s.length)
	for i, n := range frames {
		for c := range channels {
			copy(s.latent[c*s.length+s.starts[i]:], latents[i][c*n:(c+1)*n])
		}
		for f := range n {
			s.mask[s.starts[i]+f] = 1
		}
	}
	return s
}

// stripGroups says which sentences share a strip: indices into frames, in order, leaving out sentences of no
// frames. One strip for all; or, when bySpeaker (a decoder that reads the speaker takes one per window), one per
// speaker; or, when alone, one per sentence.
func stripGroups(frames []int, speaker func(i int) int64, bySpeaker, alone bool) [][]int {
	var groups [][]int
	group := map[int64]int{} // speaker (0 unless bySpeaker) -> index in groups
	for i, n := range frames {
		if n == 0 {
			continue
		}
		key := int64(0)
		if bySpeaker {
			key = speaker(i)
		}
		g, ok := group[key]
		if !ok || alone {
			g = len(groups)
			groups, group[key] = append(groups, nil), g
		}
		groups[g] = append(groups[g], i)
	}
	return groups
}

// groupStrip is the strip of the sentences in group (indices into latents and frames, as stripGroups gives them).
func (w windowing) groupStrip(latents [][]float32, frames []int, group []int, channels int) *strip {
	groupLatents, groupFrames := make([][]float32, len(group)), make([]int, len(group))
	for g, i := range group {
		groupLatents[g], groupFrames[g] = latents[i], frames[i]
	}
	return w.newStrip(groupLatents, groupFrames, channels)
}

// windows are the first and last windows of the strip that decode sentence i's frames.
func (w windowing) windows(s *strip, i int) (first, last int) {
	return s.starts[i] / w.frames, (s.starts[i] + s.frames[i] - 1) / w.frames
}

// sentences are the sentences of the strip that window k decodes frames of: lo up to hi, not included.
func (w windowing) sentences(s *strip, k int) (lo, hi int) {
	first, end := k*w.frames, (k+1)*w.frames
	lo = sort.Search(len(s.starts), func(i int) bool { return s.starts[i]+s.frames[i] > first })
	hi = sort.Search(len(s.starts), func(i int) bool { return s.starts[i] >= end })
	return lo, max(lo, hi)
}

// cutWindow copies window k of the strip's latent into dst (channels x span) and its frame mask into mask (span).
// Frames outside the strip stay zero with the mask off: the decoder sees them as it sees padding.
func (w windowing) cutWindow(dst, mask []float32, s *strip, k int) {
	clear(dst)
	clear(mask)
	first := k*w.frames - w.margin // strip frame at window column 0
	lo, hi := max(first, 0), min(first+w.span(), s.length)
	if lo >= hi {
		return
	}
	for c := range s.channels {
		copy(dst[c*w.span()+lo-first:c*w.span()+hi-first], s.latent[c*s.length+lo:c*s.length+hi])
	}
	copy(mask[lo-first:hi-first], s.mask[lo:hi])
}

// placeWindow copies the middle of window k's decoded samples (span x hop) into sentence i's audio (frames[i] x
// hop): the part of the window's own frames that is sentence i's, if any.
func (w windowing) placeWindow(audio []float32, decoded []float32, s *strip, i, hop, k int) error {
	if len(decoded) != w.span()*hop {
		return fmt.Errorf("decoder window gave %d samples, want %d (%d frames x hop %d)", len(decoded), w.span()*hop, w.span(), hop)
	}
	if len(audio) != s.frames[i]*hop {
		return fmt.Errorf("sentence audio has %d samples, want %d (%d frames x hop %d)", len(audio), s.frames[i]*hop, s.frames[i], hop)
	}
	// Strip frames of window k's middle, and of sentence i.
	lo, hi := max(k*w.frames, s.starts[i]), min((k+1)*w.frames, s.starts[i]+s.frames[i])
	if lo >= hi {
		return nil
	}
	column := lo - k*w.frames + w.margin // window column of strip frame lo
	copy(audio[(lo-s.starts[i])*hop:(hi-s.starts[i])*hop], decoded[column*hop:(column+hi-lo)*hop])
	return nil
}

// decoderInputs packs a decoder run of rows windows of span frames: latent rows x channels x span, mask rows x span
// (read when the decoder is masked), speakers rows (read when it is speaker-conditioned).
func decoderInputs(sv *vits.SplitVoice, latent, mask []float32, speakers []int64, rows, channels, span int) []ort.Tensor {
	inputs := []ort.Tensor{{Shape: []int64{int64(rows), int64(channels), int64(span)}, F32: latent}}
	if sv.DecoderMasked {
		inputs = append(inputs, ort.Tensor{Shape: []int64{int64(rows), 1, int64(span)}, F32: mask})
	}
	if sv.DecoderSpeaker {
		inputs = append(inputs, ort.Tensor{Shape: []int64{int64(rows)}, I64: speakers})
	}
	return inputs
}

// sentenceLatents cuts the acoustic graph's batched latent [B, C, Fmax] into each item's own frames
// (C x frames[b]), with frames from w_ceil [B, 1, L].
func sentenceLatents(latent ort.Tensor, wCeil ort.Tensor, size int) (latents [][]float32, frames []int, channels int, err error) {
	if len(latent.Shape) != 3 || latent.Shape[0] != int64(size) {
		return nil, nil, 0, fmt.Errorf("latent has shape %v, want [%d, channels, frames]", latent.Shape, size)
	}
	channels, maxFrames := int(latent.Shape[1]), int(latent.Shape[2])
	if len(wCeil.F32)%size != 0 {
		return nil, nil, 0, fmt.Errorf("duration output has %d values for a batch of %d", len(wCeil.F32), size)
	}
	width := len(wCeil.F32) / size
	for b := range size {
		var sum float32
		for _, f := range wCeil.F32[b*width : (b+1)*width] {
			sum += f
		}
		// A sentence of no frames gets no audio, as in splitAudio.
		n := min(int(sum+0.5), maxFrames)
		item := make([]float32, channels*n)
		for c := range channels {
			row := latent.F32[(b*channels+c)*maxFrames:]
			copy(item[c*n:(c+1)*n], row[:n])
		}
		latents = append(latents, item)
		frames = append(frames, n)
	}
	return latents, frames, channels, nil
}

// acousticInputs lays a batch out as the acoustic graph's inputs (the voice's own inputs, in vits.ModelIO order).
func acousticInputs(in batchInput, io vits.ModelIO) []ort.Tensor {
	b, l := int64(in.size), int64(in.width)
	inputs := []ort.Tensor{
		{Shape: []int64{b, l}, I64: in.ids},
		{Shape: []int64{b}, I64: in.lengths},
		{Shape: []int64{3}, F32: []float32{in.scales.Noise, in.scales.Length, in.scales.NoiseW}},
	}
	if io.HasSpeaker {
		speakers := in.speakers
		if speakers == nil {
			speakers = make([]int64, in.size)
		}
		inputs = append(inputs, ort.Tensor{Shape: []int64{b}, I64: speakers})
	}
	return inputs
}

// decodeWindowed synthesizes a batch through the split graph: the acoustic part once for the batch, then the
// decoder on fixed windows of all the batch's sentences together, at most maxWindows per run.
func decodeWindowed(acoustic, decoder graphRunner, sv *vits.SplitVoice, in batchInput, w windowing, hop, maxWindows int) ([][]float32, error) {
	out, err := acoustic.Run(acousticInputs(in, sv.IO))
	if err != nil {
		return nil, err
	}
	latents, frames, channels, err := sentenceLatents(out[0], out[1], in.size)
	if err != nil {
		return nil, err
	}
	audio := make([][]float32, in.size)
	for b, n := range frames {
		audio[b] = make([]float32, n*hop)
	}
	var strips []*strip
	var stripItems [][]int
	speaker := func(b int) int64 {
		if in.speakers == nil {
			return 0
		}
		return in.speakers[b]
	}
	for _, items := range stripGroups(frames, speaker, sv.DecoderSpeaker, false) {
		strips, stripItems = append(strips, w.groupStrip(latents, frames, items, channels)), append(stripItems, items)
	}
	type window struct{ strip, k int }
	var windows []window
	for si, s := range strips {
		for k := range w.count(s.length) {
			windows = append(windows, window{si, k})
		}
	}
	for start := 0; start < len(windows); start += maxWindows {
		run := windows[start:min(start+maxWindows, len(windows))]
		size := w.span() * channels
		batch := make([]float32, len(run)*size)
		mask := make([]float32, len(run)*w.span())
		speakers := make([]int64, len(run))
		for i, win := range run {
			w.cutWindow(batch[i*size:(i+1)*size], mask[i*w.span():(i+1)*w.span()], strips[win.strip], win.k)
			if in.speakers != nil {
				speakers[i] = in.speakers[stripItems[win.strip][0]]
			}
		}
		decoded, err := decoder.Run(decoderInputs(sv, batch, mask, speakers, len(run), channels, w.span()))
		if err != nil {
			return nil, err
		}
		per := len(decoded[0].F32) / len(run)
		for i, win := range run {
			s := strips[win.strip]
			lo, hi := w.sentences(s, win.k)
			for j := lo; j < hi; j++ {
				if err := w.placeWindow(audio[stripItems[win.strip][j]], decoded[0].F32[i*per:(i+1)*per], s, j, hop, win.k); err != nil {
					return nil, err
				}
			}
		}
	}
	return audio, nil
}
