package engine

import (
	"fmt"
	"slices"

	"github.com/ttsgen/ttsgen/internal/ort"
	"github.com/ttsgen/ttsgen/internal/vits"
)

// A batch's text part can run in pieces (runTextPieces): each sentence's row of the token-rate tensors depends on
// that sentence alone (the padding is masked), and the pieces keep the batch's padded width, so their outputs
// join back into the batch's along the sentence axis.

// textInputRows returns the text part's inputs (named names) for sentences lo to hi: the rows of the per-sentence
// inputs (ids, lengths, speakers); the scales, shared by the batch, whole.
func textInputRows(names []string, in []ort.Tensor, lo, hi int) []ort.Tensor {
	out := make([]ort.Tensor, len(in))
	for i, t := range in {
		if names[i] == vits.InputScales {
			out[i] = t
			continue
		}
		out[i] = sliceRows(t, lo, hi)
	}
	return out
}

// sliceRows returns rows lo to hi of t (along its first axis).
func sliceRows(t ort.Tensor, lo, hi int) ort.Tensor {
	row := 1
	for _, d := range t.Shape[1:] {
		row *= int(d)
	}
	shape := slices.Clone(t.Shape)
	shape[0] = int64(hi - lo)
	out := ort.Tensor{Shape: shape}
	if t.F32 != nil {
		out.F32 = t.F32[lo*row : hi*row]
	} else {
		out.I64 = t.I64[lo*row : hi*row]
	}
	return out
}

// joinTextRows joins the text part's outputs of consecutive pieces of a batch: per-sentence outputs (perRow) along
// their sentence axis, axis 1 (axis 0 being the one cutText adds for the crossing); the batch's shared outputs
// from the first piece.
func joinTextRows(parts [][]ort.Tensor, perRow []bool) ([]ort.Tensor, error) {
	out := make([]ort.Tensor, len(perRow))
	for i, rows := range perRow {
		first := parts[0][i]
		if !rows {
			out[i] = first
			continue
		}
		joined := ort.Tensor{Shape: slices.Clone(first.Shape)}
		joined.Shape[1] = 0
		for _, part := range parts {
			t := part[i]
			if len(t.Shape) != len(first.Shape) || !slices.Equal(t.Shape[2:], first.Shape[2:]) || (t.F32 == nil) != (first.F32 == nil) {
				return nil, fmt.Errorf("pieces of the batch gave output %d of shapes %v and %v", i, first.Shape, t.Shape)
			}
			joined.Shape[1] += t.Shape[1]
			joined.F32 = append(joined.F32, t.F32...)
			joined.I64 = append(joined.I64, t.I64...)
		}
		out[i] = joined
	}
	return out, nil
}

// textPieceOutputs says, for each of a text part's outputs, whether it holds a row per sentence: from runs of r on
// one and then two sentences, an output is per sentence if its sentence axis follows the batch, and shared if it
// is the same in both. Any other output (a sentence axis elsewhere) and the text part cannot run in pieces: ok
// false.
func textPieceOutputs(r graphRunner, cut *vits.TextCut, io vits.ModelIO) (perRow []bool, ok bool, err error) {
	var outs [2][]ort.Tensor
	for size := 1; size <= 2; size++ {
		args := pick(byInputName(io, acousticInputs(trialBatch(size, 8), io)), cut.TextInputs)
		if outs[size-1], err = r.Run(args); err != nil {
			return nil, false, fmt.Errorf("text part on %d sentences: %w", size, err)
		}
	}
	for i := range outs[0] {
		one, two := outs[0][i], outs[1][i]
		switch {
		case len(one.Shape) >= 2 && len(two.Shape) == len(one.Shape) && one.Shape[1] == 1 && two.Shape[1] == 2:
			perRow = append(perRow, true)
		case slices.Equal(one.Shape, two.Shape) && slices.Equal(one.F32, two.F32) && slices.Equal(one.I64, two.I64):
			perRow = append(perRow, false)
		default:
			return nil, false, nil
		}
	}
	return perRow, true, nil
}

// byInputName maps a voice's input tensors (in io's order) by name.
func byInputName(io vits.ModelIO, voiceInputs []ort.Tensor) map[string]ort.Tensor {
	byName := map[string]ort.Tensor{}
	for i, name := range io.InputNames() {
		byName[name] = voiceInputs[i]
	}
	return byName
}

// pick returns the tensors of byName named names, in that order.
func pick(byName map[string]ort.Tensor, names []string) []ort.Tensor {
	out := make([]ort.Tensor, len(names))
	for i, name := range names {
		out[i] = byName[name]
	}
	return out
}
