package manifest

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"hash"
	"strconv"
)

// Item is one unit of synthesis: a manifest line or a whole text file.
type Item struct {
	Source string // input file path, as given (or joined with the directory given)
	Line   int    // 1-based line number in a JSONL manifest; 0 for whole-file items
	ID     string // unique in the run; "" only for error items whose line had no usable id
	Text   string
	Out    string // requested output path relative to the output dir, "/"-separated ("" = "<id>.wav")
	Format string // requested audio format, lower case ("" = from Out's extension, else the run's default)
	Voice  string // "" = default
	// Speaker is "" for the default; a number from the manifest is kept as its
	// decimal string, a name as written.
	Speaker string
	// LengthScale, NoiseScale and NoiseW override the voice's defaults; nil keeps them.
	LengthScale, NoiseScale, NoiseW *float32
	// Warnings are non-fatal problems, e.g. unknown fields. Unlike Err they
	// do not repeat the line number: report them with Source and Line.
	Warnings []string
	// Err is non-nil when the item must not be synthesised; its message names
	// the line and every problem found. Such items are still yielded so that
	// they can be reported and recorded.
	Err error
}

// OutPath returns the output path relative to the output dir: Out, or
// "<ID>.wav" when Out is empty. For an item without Err it is always a valid,
// run-unique relative path.
func (it Item) OutPath() string {
	if it.Out != "" {
		return it.Out
	}
	return it.ID + ".wav"
}

// hashVersion changes whenever the encoding below changes, so that old
// results are redone rather than wrongly matched.
const hashVersion = "ttsgen-item-v1"

// Hash is a stable digest (32 hex digits) of everything that determines an
// item's audio and where it goes: text, voice, speaker, the three scales and
// the output path. The id and the item's position are not part of it, so
// moving a line does not cause a redo, while editing its text does. The output
// path is included because a result recorded under another path does not
// produce the file now asked for.
//
// Voice "" means "the run's default voice"; a caller whose default can change
// between runs should set Voice to the resolved voice before hashing.
func (it Item) Hash() string {
	h := sha256.New()
	writeField(h, hashVersion)
	writeField(h, it.Text)
	writeField(h, it.Voice)
	writeField(h, it.Speaker)
	writeField(h, scaleString(it.LengthScale))
	writeField(h, scaleString(it.NoiseScale))
	writeField(h, scaleString(it.NoiseW))
	writeField(h, it.OutPath())
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// writeField length-prefixes s so that no two different field lists can
// produce the same byte stream ("ab","c" vs "a","bc").
func writeField(h hash.Hash, s string) {
	var n [8]byte
	binary.LittleEndian.PutUint64(n[:], uint64(len(s)))
	h.Write(n[:])
	h.Write([]byte(s))
}

func scaleString(v *float32) string {
	if v == nil {
		return "default"
	}
	return strconv.FormatFloat(float64(*v), 'g', -1, 32)
}
