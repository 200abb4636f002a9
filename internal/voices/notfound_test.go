package voices

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// A name not found that reads as a key of Piper's catalogue (lang_REGION-name-quality) is offered the download
// besides `voices add`; any other name, and a path, only what fits it.
func TestFindSuggestsTheDownloadOfACatalogueName(t *testing.T) {
	cat := Catalog{Dir: t.TempDir()}
	const download = "`ttsgen voices download en_GB-alan-medium`"
	_, err := cat.Find("en_GB-alan-medium")
	if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), download) ||
		!strings.Contains(err.Error(), "`ttsgen voices add PATH/TO/VOICE.onnx`") {
		t.Errorf("Find(en_GB-alan-medium): %v; want ErrNotFound suggesting %s and voices add", err, download)
	}
	for _, name := range []string{
		"alan",                     // a name of one's own
		"en_GB-alan-best",          // no quality of the catalogue
		"en-GB-alan-medium",        // no language_REGION
		"en_GB-alan-medium.onnx",   // a path: its file is missing, nothing to download by that name
		"./en_GB-alan-medium.onnx", // a path
		filepath.Join("voices", "en_GB-alan-medium.onnx.json"), // a path
	} {
		_, err := cat.Find(name)
		if err == nil || strings.Contains(err.Error(), "voices download") {
			t.Errorf("Find(%s): %v; want an error without the download hint", name, err)
		}
	}
	for _, key := range []string{"zh_CN-huayan-x_low", "en_US-libritts_r-medium", "es_MX-claude-high", "ar_JO-kareem-low", "fil_PH-x-low"} {
		if !looksLikeCatalogKey(key) {
			t.Errorf("%s does not read as a catalogue key", key)
		}
	}
}
