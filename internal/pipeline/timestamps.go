package pipeline

import (
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/ttsgen/ttsgen/internal/manifest"
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

// ErrTimestampsNames marks items of a batch whose timestamps files would be one file, or their own audio file.
var ErrTimestampsNames = errors.New("items whose timestamps would go to one file")

// timestampsNames finds the items whose timestamps would overwrite a file of the batch. The file is the audio
// file's name without its extension, plus the format's (as documented: a.wav gets a.json beside it), so a.wav and
// a.flac, or an id "a" beside an "out" of "a.mp3", would both write a.json, the later item's over the earlier's; and
// an item whose "out" is a.json would write its timestamps over its own audio. (Those are the only audio files a
// timestamps file can be: another item's audio named a.json is that item's own timestamps file too.)
type timestampsNames struct {
	format timestamps.Format
	owners map[string]itemPlace // timestamps file -> the first item that writes it
}

// itemPlace names an item for an error without holding its text (a whole book, for a text file's item).
type itemPlace struct{ where, id string }

func newTimestampsNames(f timestamps.Format) *timestampsNames {
	return &timestampsNames{format: f, owners: map[string]itemPlace{}}
}

// claim takes the timestamps file of it (an item without Err), or says which item has it.
func (n *timestampsNames) claim(it manifest.Item) error {
	audio := path.Clean(it.OutPath())
	name := timestampsPath(audio, n.format)
	if name == audio {
		return fmt.Errorf("%s (item %q): its timestamps would go to %s, its own audio file (they take the audio "+
			"file's name with %s for its extension): give it an \"out\" with its audio format's extension",
			where(it), it.ID, name, n.format.Ext())
	}
	first, taken := n.owners[name]
	if !taken {
		n.owners[name] = itemPlace{where: where(it), id: it.ID}
		return nil
	}
	return fmt.Errorf("%s (item %q) and %s (item %q) would both write their timestamps to %s (the audio file's "+
		"name without its extension): give one of them another \"out\" or \"id\"", first.where, first.id, where(it), it.ID, name)
}

// timestampsNamesError says what collisions found, the first few of them.
func timestampsNamesError(collisions []string) error {
	const most = 5
	if len(collisions) > most {
		collisions = append(collisions[:most], fmt.Sprintf("and %d more", len(collisions)-most))
	}
	return fmt.Errorf("%w: %s", ErrTimestampsNames, strings.Join(collisions, "; "))
}
