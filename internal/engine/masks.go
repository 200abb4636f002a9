package engine

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/advancedclimatesystems/gonnx/onnx"
	"github.com/ttsgen/ttsgen/internal/onnxgraph"
	"github.com/ttsgen/ttsgen/internal/ort"
	"github.com/ttsgen/ttsgen/internal/vits"
)

// Padding masks (vits.MaskWholeGraph, vits.MaskDecoderGraph) only cost time on a decoder that masks its own
// padding, as ttsgen's voices do: Load probes each decoder first (needsPaddingMasks).

// Probe sizes for decoderMasksItself: a short sentence, with more padding on each side than any decoder's reach.
const (
	probeFrames  = 24
	probePadding = 32
)

// decoderMasksItself reports whether a voice's decoder already keeps padding out of a sentence's samples, as
// ttsgen's own voices do. It runs the decoder on the CPU twice, on a random latent alone and on the same latent
// with zero frames on both sides (what a padded batch or a window gives it), and compares the sentence's samples.
// vits.ErrNoDecoder: there is no decoder to mask; another error: the probe could not run, and the caller masks to
// be safe.
func (e *Engine) decoderMasksItself(graph *onnx.ModelProto) (bool, error) {
	voice, err := vits.SplitGraph(graph, false)
	if err != nil {
		return false, err
	}
	channels, err := vits.LatentChannels(voice.Decoder)
	if err != nil {
		return false, err
	}
	encoded, err := onnxgraph.Encode(voice.Decoder)
	if err != nil {
		return false, err
	}
	decoder, err := e.backend.newGraphRunner(encoded, voice.DecoderInputNames(), []string{vits.OutputAudio}, ort.DeviceCPU, 1)
	if err != nil {
		return false, fmt.Errorf("probe session: %w", err)
	}
	defer decoder.Close()
	rng := rand.New(rand.NewPCG(1, 2))
	alone := make([]float32, channels*probeFrames)
	for i := range alone {
		alone[i] = float32(rng.NormFloat64())
	}
	span := probeFrames + 2*probePadding
	padded := make([]float32, channels*span)
	for c := range channels {
		copy(padded[c*span+probePadding:], alone[c*probeFrames:(c+1)*probeFrames])
	}
	speaker := []int64{0} // a multi-speaker decoder reads the speaker too: the first will do
	a, err := decoder.Run(decoderInputs(voice, alone, nil, speaker, 1, channels, probeFrames))
	if err != nil {
		return false, fmt.Errorf("probe run: %w", err)
	}
	p, err := decoder.Run(decoderInputs(voice, padded, nil, speaker, 1, channels, span))
	if err != nil {
		return false, fmt.Errorf("probe run: %w", err)
	}
	hop := len(a[0].F32) / probeFrames
	if hop == 0 || len(p[0].F32) != span*hop {
		return false, fmt.Errorf("probe: the decoder gave %d and %d samples for %d and %d frames", len(a[0].F32), len(p[0].F32), probeFrames, span)
	}
	near := func(x, y float32) bool { return math.Abs(float64(x-y)) <= 1e-5 }
	return slices.EqualFunc(a[0].F32, p[0].F32[probePadding*hop:(probePadding+probeFrames)*hop], near), nil
}
