package pipeline

import (
	"strings"

	"github.com/ttsgen/ttsgen/internal/timestamps"
	"github.com/ttsgen/ttsgen/internal/voices"
)

// Aligner times the words of a voice's sentences (timestamps), finding each word by its phonemes said alone
// through this frontend's phonemizer.
func (f *Frontend) Aligner(cfg *voices.Config) *timestamps.Aligner {
	return timestamps.NewAligner(cfg.PhonemeIDMap, cfg.Audio.SampleRate, func(word string) (string, error) {
		sentences, err := f.phonemize(word, cfg)
		return strings.Join(sentences, " "), err
	})
}

// timestampsPath is where the timestamps of the audio file at path go: beside it, with the format's extension.
func timestampsPath(path string, f timestamps.Format) string {
	if i := strings.LastIndexByte(path, '.'); i > strings.LastIndexAny(path, `/\`) {
		path = path[:i]
	}
	return path + f.Ext()
}
