package voices

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/advancedclimatesystems/gonnx/onnx"
	"google.golang.org/protobuf/proto"

	"github.com/ttsgen/ttsgen/internal/atomicfile"
)

// onnxModel encodes a model with the given graph inputs and outputs and one initializer of weights bytes.
func onnxModel(t *testing.T, inputs, outputs []string, weights int) []byte {
	t.Helper()
	values := func(names []string) []*onnx.ValueInfoProto {
		var vs []*onnx.ValueInfoProto
		for _, n := range names {
			vs = append(vs, &onnx.ValueInfoProto{Name: n})
		}
		return vs
	}
	m := &onnx.ModelProto{
		IrVersion:   8,
		OpsetImport: []*onnx.OperatorSetIdProto{{Version: 15}},
		Graph: &onnx.GraphProto{
			Node:        []*onnx.NodeProto{{OpType: "Identity", Input: []string{"input"}, Output: []string{"output"}}},
			Initializer: []*onnx.TensorProto{{Name: "w", RawData: make([]byte, weights)}},
			Input:       values(inputs),
			Output:      values(outputs),
		},
	}
	b, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// writeVoice writes dir/name.onnx with model and its config (of speakers speakers) beside it.
func writeVoice(t *testing.T, dir, name string, model []byte, speakers int) string {
	t.Helper()
	cfg, err := os.ReadFile(filepath.Join(testVoiceDir, "test_voice.onnx.json"))
	if err != nil {
		t.Fatal(err)
	}
	if speakers > 1 {
		cfg = []byte(strings.Replace(string(cfg), `"num_speakers": 1`, fmt.Sprintf(`"num_speakers": %d`, speakers), 1))
	}
	p := filepath.Join(dir, name+".onnx")
	if err := os.WriteFile(p, model, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p+".json", cfg, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// voices add installs only whole Piper voice models under a name that selects them; everything else is refused
// before anything is copied.
func TestAddChecksTheModelAndTheName(t *testing.T) {
	piper := onnxModel(t, []string{"input", "input_lengths", "scales"}, []string{"output"}, 4096)
	piperSid := onnxModel(t, []string{"input", "input_lengths", "scales", "sid"}, []string{"output"}, 4096)
	real, err := os.ReadFile(filepath.Join(testVoiceDir, "test_voice.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		voice    string
		model    []byte
		speakers int
		wantErr  string // "" = installed
	}{
		{"Piper's test voice", "en_GB-test-low", real, 1, ""},
		{"a Piper signature", "a", piper, 1, ""},
		{"a multi-speaker Piper signature", "multi", piperSid, 4, ""},
		{"truncated in the weights", "cut", piper[:len(piper)-100], 1, "is not a whole ONNX model (truncated, or another kind of file)"},
		{"truncated to its first kilobyte", "cut2", real[:1000], 1, "is not a whole ONNX model"},
		{"empty", "empty", nil, 1, "it has 0 graphs and 0 opset imports"},
		{"not ONNX at all", "text", []byte("# a README, renamed\nhello\n"), 1, "is not a whole ONNX model"},
		{"another model's signature", "other", onnxModel(t, []string{"pixels"}, []string{"logits"}, 16), 1,
			`not a Piper voice model (inputs ["pixels"], outputs ["logits"]): it has no input "input"`},
		{"no speaker input for several speakers", "multi2", piper, 4, `it has no input "sid"`},
		{"a speaker input for one speaker", "one", piperSid, 1, `it has an input "sid" that a Piper voice with 1 speaker(s) does not`},
		{"named default", "default", piper, 1, `the name "default" means the built-in default voice; rename its two files first`},
		{"named like the built-in voice", DefaultName, piper, 1, "means the built-in default voice"},
		{"named like a path", "x.onnx", piper, 1, `the name "x.onnx" reads as a path`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			cat := Catalog{Dir: filepath.Join(dir, "voices")}
			src := writeVoice(t, dir, tc.voice, tc.model, tc.speakers)
			v, err := cat.Add(context.Background(), src, false)
			if tc.wantErr == "" {
				if err != nil || v.Name != tc.voice {
					t.Fatalf("Add = %v, %v", v, err)
				}
				if found, err := cat.Find(tc.voice); err != nil || found.ModelPath != v.ModelPath {
					t.Errorf("the added voice cannot be selected by its name: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("Add = %v\nwant an error containing %q", err, tc.wantErr)
			}
			if entries, _ := os.ReadDir(cat.Dir); len(entries) != 0 {
				t.Errorf("a refused voice left %d files in the voices folder", len(entries))
			}
		})
	}
}

// A voice installed by hand under a name that cannot select it is reported by List.
func TestListReportsAVoiceNamedDefault(t *testing.T) {
	dir := t.TempDir()
	writeVoice(t, dir, "default", onnxModel(t, []string{"input", "input_lengths", "scales"}, []string{"output"}, 16), 1)
	list, err := Catalog{Dir: dir}.List()
	if len(list) != 1 || err == nil || !strings.Contains(err.Error(), `cannot be selected: the name "default" means the built-in default voice`) {
		t.Errorf("List = %v, %v", names(list), err)
	}
}

// Ctrl-C during an add stops the copy: no voice, no temporary file. Those of an add that was killed are removed by
// the next one.
func TestAddStopsWhenCancelledAndCleansUp(t *testing.T) {
	dir := t.TempDir()
	cat := Catalog{Dir: filepath.Join(dir, "voices")}
	src := writeVoice(t, dir, "big", onnxModel(t, []string{"input", "input_lengths", "scales"}, []string{"output"}, 8<<20), 1)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := cat.Add(ctx, src, false); !errors.Is(err, context.Canceled) {
		t.Fatalf("Add with a cancelled context = %v, want context.Canceled", err)
	}
	if entries, _ := os.ReadDir(cat.Dir); len(entries) != 0 {
		t.Errorf("a cancelled add left %v in the voices folder", entries)
	}

	// A killed add's leftover: a temp file named after a process that is gone (pid 2^22+1 is above Linux's limit).
	stale := filepath.Join(cat.Dir, atomicfile.TempName(1<<22+1)+"1")
	if err := os.WriteFile(stale, []byte("half a model"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := cat.Add(context.Background(), src, false); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the killed add's temp file is still there: %v", err)
	}
}

// Identity changes when either file of the voice is replaced, and not otherwise.
func TestIdentity(t *testing.T) {
	dir := t.TempDir()
	model := onnxModel(t, []string{"input", "input_lengths", "scales"}, []string{"output"}, 16)
	p := writeVoice(t, dir, "v", model, 1)
	id := func() string {
		v, err := Open(p)
		if err != nil {
			t.Fatal(err)
		}
		return v.Identity()
	}
	first := id()
	if len(first) != 32 || id() != first {
		t.Fatalf("Identity %q is not a stable digest", first)
	}
	writeVoice(t, dir, "v", onnxModel(t, []string{"input", "input_lengths", "scales"}, []string{"output"}, 17), 1)
	if id() == first {
		t.Error("Identity unchanged after the model was replaced")
	}
	second := id()
	writeVoice(t, dir, "v", onnxModel(t, []string{"input", "input_lengths", "scales"}, []string{"output"}, 17), 4)
	if id() == second {
		t.Error("Identity unchanged after the config was replaced")
	}
	def, err := Catalog{}.Find("")
	if err != nil || len(def.Identity()) != 32 {
		t.Errorf("the embedded voice's Identity = %q, %v", def.Identity(), err)
	}
}
