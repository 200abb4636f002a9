package voices

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const testVoiceDir = "../../testdata/piper-test-voice"

func readTestConfig(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(testVoiceDir, "test_voice.onnx.json"))
	if err != nil {
		t.Fatalf("Piper test voice: %v", err)
	}
	return b
}

func TestParseConfigPiperTestVoice(t *testing.T) {
	c, err := ParseConfig(readTestConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	if c.Audio.SampleRate != 22050 || c.Espeak.Voice != "en-us" || c.PhonemeType != PhonemeTypeEspeak || c.NumSpeakers != 1 {
		t.Errorf("config = %+v", c)
	}
	if got := c.Inference; got != (Inference{NoiseScale: 0.667, LengthScale: 1, NoiseW: 0.8}) {
		t.Errorf("inference = %+v", got)
	}
	if got := c.PhonemeIDMap["ə"]; len(got) != 1 || got[0] != 59 {
		t.Errorf(`phoneme_id_map["ə"] = %v, want [59]`, got)
	}
	if c.LanguageCode() != "en_US" {
		t.Errorf("language = %q", c.LanguageCode())
	}
}

func TestParseConfigErrors(t *testing.T) {
	tests := []struct{ name, json, want string }{
		{"not json", `{`, "invalid JSON"},
		{"no rate", `{"espeak":{"voice":"en-us"},"phoneme_id_map":{"_":[0],"^":[1],"$":[2]}}`, "sample_rate 0"},
		{"no espeak voice", `{"audio":{"sample_rate":22050},"phoneme_id_map":{"_":[0],"^":[1],"$":[2]}}`, "espeak.voice is empty"},
		{"bad type", `{"audio":{"sample_rate":22050},"phoneme_type":"arpabet","phoneme_id_map":{"_":[0],"^":[1],"$":[2]}}`, `phoneme_type "arpabet" is not supported`},
		{"no map", `{"audio":{"sample_rate":22050},"espeak":{"voice":"en-us"}}`, "phoneme_id_map is missing"},
		{"no bos", `{"audio":{"sample_rate":22050},"espeak":{"voice":"en-us"},"phoneme_id_map":{"_":[0],"$":[2]}}`, `no id for "^"`},
		{"negative id", `{"audio":{"sample_rate":22050},"espeak":{"voice":"en-us"},"phoneme_id_map":{"_":[0],"^":[1],"$":[2],"a":[-3]}}`, "negative id -3"},
		{"speaker outside", `{"audio":{"sample_rate":22050},"espeak":{"voice":"en-us"},"num_speakers":2,"speaker_id_map":{"x":5},"phoneme_id_map":{"_":[0],"^":[1],"$":[2]}}`, `speaker_id_map["x"] = 5 is outside 0..1`},
		{"negative scale", `{"audio":{"sample_rate":22050},"espeak":{"voice":"en-us"},"inference":{"noise_scale":-1,"length_scale":1},"phoneme_id_map":{"_":[0],"^":[1],"$":[2]}}`, "non-negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseConfig([]byte(tt.json))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

// Each scale a config leaves out is Piper's default; one it gives, 0 included, is kept.
func TestParseConfigFillsInTheMissingScales(t *testing.T) {
	const rest = `"audio":{"sample_rate":22050},"espeak":{"voice":"en-us"},"phoneme_id_map":{"_":[0],"^":[1],"$":[2]}`
	for inference, want := range map[string]Inference{
		``:                                  {NoiseScale: 0.667, LengthScale: 1, NoiseW: 0.8},
		`"inference":{},`:                   {NoiseScale: 0.667, LengthScale: 1, NoiseW: 0.8},
		`"inference":{"length_scale":1.2},`: {NoiseScale: 0.667, LengthScale: 1.2, NoiseW: 0.8},
		`"inference":{"noise_scale":0},`:    {NoiseScale: 0, LengthScale: 1, NoiseW: 0.8},
		`"inference":{"noise_w":0,"noise_scale":0.5},`: {NoiseScale: 0.5, LengthScale: 1, NoiseW: 0},
	} {
		c, err := ParseConfig([]byte("{" + inference + rest + "}"))
		if err != nil || c.Inference != want {
			t.Errorf("%s: inference %+v, %v; want %+v", inference, c.Inference, err, want)
		}
	}
}

func TestSpeakerID(t *testing.T) {
	// Named as LibriTTS voices are, in part: a name that is a number is not that number's speaker.
	c, err := ParseConfig([]byte(`{"audio":{"sample_rate":22050},"espeak":{"voice":"en-us"},"num_speakers":3,
		"speaker_id_map":{"alice":0,"1":2,"3922":1},"phoneme_id_map":{"_":[0],"^":[1],"$":[2]}}`))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		in      string
		want    int64
		wantErr string
	}{
		{"", 0, ""}, {"alice", 0, ""}, {"1", 1, ""}, {" 2 ", 2, ""}, // a number is an id, as Piper's --speaker
		{"3", 0, "speaker 3 is out of range: this voice has 3 speakers (0..2) named"},
		{"3922", 0, `speaker 3922 is out of range: this voice has 3 speakers (0..2) named alice, 3922, 1 (a number is a speaker's id; the speaker named "3922" is 1)`},
		{"-1", 0, "out of range"},
		{"carol", 0, `unknown speaker "carol"`},
	}
	for _, tt := range tests {
		got, err := c.SpeakerID(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("SpeakerID(%q) err = %v, want %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("SpeakerID(%q) = %d, %v; want %d", tt.in, got, err, tt.want)
		}
	}
}

func TestDefaultVoiceIsEmbeddedAndValid(t *testing.T) {
	v, err := Catalog{}.Find("")
	if err != nil {
		t.Fatal(err)
	}
	model, err := v.Model()
	if err != nil {
		t.Fatal(err)
	}
	if !v.Embedded || v.Name != DefaultName || len(model) == 0 || int64(len(model)) != v.ModelSize {
		t.Errorf("default voice = %+v (model %d bytes)", v, len(model))
	}
	if v.Config.PhonemeType != PhonemeTypeEspeak || v.Config.Espeak.Voice != "en-us" {
		t.Errorf("default voice config = %+v", v.Config)
	}
}

func TestCatalogAddListFind(t *testing.T) {
	dir := t.TempDir()
	cat := Catalog{Dir: filepath.Join(dir, "voices")}
	src := filepath.Join(dir, "src")
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	copyFile(t, filepath.Join(testVoiceDir, "test_voice.onnx"), filepath.Join(src, "en_GB-test-low.onnx"))
	copyFile(t, filepath.Join(testVoiceDir, "test_voice.onnx.json"), filepath.Join(src, "en_GB-test-low.onnx.json"))

	added, err := cat.Add(context.Background(), filepath.Join(src, "en_GB-test-low.onnx.json"), false)
	if err != nil {
		t.Fatal(err)
	}
	if added.Name != "en_GB-test-low" || added.ModelPath != filepath.Join(cat.Dir, "en_GB-test-low.onnx") {
		t.Errorf("added = %+v", added)
	}
	if _, err := cat.Add(context.Background(), filepath.Join(src, "en_GB-test-low.onnx"), false); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("second add: err = %v, want 'already exists'", err)
	}
	if _, err := cat.Add(context.Background(), filepath.Join(src, "en_GB-test-low.onnx"), true); err != nil {
		t.Errorf("add --replace: %v", err)
	}
	// A broken voice in the folder is reported, but does not hide the good one.
	if err := os.WriteFile(filepath.Join(cat.Dir, "broken.onnx"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	list, err := cat.List()
	if err == nil || !strings.Contains(err.Error(), "broken.onnx.json") {
		t.Errorf("List err = %v, want the broken voice named", err)
	}
	if len(list) != 2 || list[0].Name != DefaultName || list[1].Name != "en_GB-test-low" {
		t.Errorf("List = %v", names(list))
	}
	found, err := cat.Find("en_GB-test-low")
	if err != nil || found.Config.Audio.SampleRate != 22050 {
		t.Errorf("Find by name = %+v, %v", found, err)
	}
	model, err := found.Model()
	if err != nil || int64(len(model)) != found.ModelSize {
		t.Errorf("model = %d bytes, %v", len(model), err)
	}
	_, err = cat.Find("nope")
	if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "en_GB-test-low") {
		t.Errorf("Find(nope) err = %v, want ErrNotFound listing known voices", err)
	}
}

// Open of a path that is not a voice's two files says which file and what is wrong with it, as ErrNotVoiceFiles
// (and fs.ErrNotExist for a file that is not there).
func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	onlyModel := filepath.Join(dir, "a.onnx")
	text := filepath.Join(dir, "voice.txt")
	folderConfig := filepath.Join(dir, "b.onnx")
	for _, p := range []string{onlyModel, text, folderConfig} {
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(folderConfig+".json", 0o755); err != nil {
		t.Fatal(err)
	}
	const want = "want a Piper voice's X.onnx, with its X.onnx.json beside it"
	missing := filepath.Join(dir, "missing.onnx")
	tests := []struct {
		path, want string
		notExist   bool
	}{
		{missing, "voice " + missing + ": no such file or directory", true},
		{onlyModel, "voice " + onlyModel + ": its config " + onlyModel + ".json: no such file or directory (" + want + ")", true},
		{onlyModel + ".json", "voice " + onlyModel + ".json: no such file or directory", true},
		{text, "voice " + text + ": " + want, false},
		{dir, "voice " + dir + " is a folder: " + want, false},
		{folderConfig, "voice " + folderConfig + ": its config " + folderConfig + ".json is a folder (" + want + ")", false},
	}
	for _, tt := range tests {
		_, err := Open(tt.path)
		if err == nil || err.Error() != tt.want || !errors.Is(err, ErrNotVoiceFiles) || errors.Is(err, fs.ErrNotExist) != tt.notExist {
			t.Errorf("Open(%s) err = %v; want %q, ErrNotVoiceFiles, fs.ErrNotExist %v", tt.path, err, tt.want, tt.notExist)
		}
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func names(vs []*Voice) []string {
	var out []string
	for _, v := range vs {
		out = append(out, v.Name)
	}
	return out
}

// A voice in the folder that lacks its .onnx.json is found, and said to lack it: not "no such voice".
func TestFindSaysWhatAVoiceInTheFolderLacks(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "half.onnx"), []byte("model"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Catalog{Dir: dir}.Find("half")
	if err == nil || errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), filepath.Join(dir, "half.onnx.json")) {
		t.Errorf("Find: %v; want the missing half.onnx.json named", err)
	}
	if _, err := (Catalog{Dir: dir}).Find("nobody"); !errors.Is(err, ErrNotFound) {
		t.Errorf("an unknown name: %v", err)
	}
}

// A config whose phoneme map has ids beyond the model's embedding is another voice's: Check says so, where loading
// it would work and speaking fail at the first sentence with that phoneme.
func TestCheckComparesThePhonemeMapWithTheModel(t *testing.T) {
	sig, err := ReadSignature("../../testdata/tiny-voice/tiny.onnx")
	if err != nil || sig.Symbols != 256 {
		t.Fatalf("ReadSignature: %d symbols, %v; want the embedding's 256 rows", sig.Symbols, err)
	}
	dir := t.TempDir()
	model, _ := os.ReadFile("../../testdata/tiny-voice/tiny.onnx")
	config, _ := os.ReadFile("../../testdata/tiny-voice/tiny.onnx.json")
	var c map[string]any
	if err := json.Unmarshal(config, &c); err != nil {
		t.Fatal(err)
	}
	for id, want := range map[int]string{255: "", 256: "its config's phoneme_id_map uses id 256, but the model has ids 0..255 only"} {
		c["phoneme_id_map"].(map[string]any)["ʘ"] = []int{id}
		b, _ := json.Marshal(c)
		os.WriteFile(filepath.Join(dir, "v.onnx"), model, 0o644)
		os.WriteFile(filepath.Join(dir, "v.onnx.json"), b, 0o644)
		v, err := Open(filepath.Join(dir, "v.onnx"))
		if err != nil {
			t.Fatal(err)
		}
		if err := v.Check(); (want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), want)) {
			t.Errorf("an id of %d: Check = %v, want %q", id, err, want)
		}
	}
}
