package cmd

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// `voices add` of a PATH that is not there, is a folder, or is one of a voice's two files without the other is a
// usage error (exit status 2) that names the PATH, said before the voices folder is made; a voice whose files are
// there but are not a Piper voice's stays a failure (exit status 1).
func TestVoicesAddOfMissingFilesIsAUsageError(t *testing.T) {
	dir := isolate(t)
	voicesDir := filepath.Join(dir, "voices")
	onlyModel := filepath.Join(dir, "only.onnx")
	broken := filepath.Join(dir, "broken.onnx")
	for _, p := range []string{onlyModel, broken, broken + ".json"} {
		if err := os.WriteFile(p, []byte("not a voice"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	folder := filepath.Join(dir, "folder.onnx")
	if err := os.Mkdir(folder, 0o755); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.onnx")
	for _, tc := range []struct{ path, want string }{
		{missing, "voice " + missing + ": no such file or directory"},
		{missing + ".json", "voice " + missing + ".json: no such file or directory"},
		{folder, "voice " + folder + " is a folder: want a Piper voice's X.onnx, with its X.onnx.json beside it"},
		{dir, "voice " + dir + " is a folder"},
		{filepath.Join("..", "README.md"), "voice ../README.md: want a Piper voice's X.onnx"},
		{onlyModel, "voice " + onlyModel + ": its config " + onlyModel + ".json: no such file or directory"},
	} {
		r := run(t, "", "voices", "add", tc.path)
		if r.code != ExitUsage || !strings.Contains(r.errOut, tc.want) {
			t.Errorf("voices add %s: exit %d, stderr %q; want %d and %q", tc.path, r.code, r.errOut, ExitUsage, tc.want)
		}
		if _, err := os.Stat(voicesDir); err == nil {
			t.Fatalf("voices add %s made the voices folder", tc.path)
		}
	}
	if r := run(t, "", "voices", "add", broken); r.code != ExitFailure {
		t.Errorf("voices add of files that are not a voice: exit %d, stderr %q; want %d", r.code, r.errOut, ExitFailure)
	}
}

// A voice not found whose name reads as one of Piper's catalogue is offered its download; a path is not.
func TestVoicesInfoSuggestsTheDownload(t *testing.T) {
	isolate(t)
	r := run(t, "", "voices", "info", "en_GB-alan-medium")
	if r.code != ExitFailure || !strings.Contains(r.errOut, "`ttsgen voices download en_GB-alan-medium`") ||
		!strings.Contains(r.errOut, "`ttsgen voices add PATH/TO/VOICE.onnx`") {
		t.Errorf("voices info en_GB-alan-medium: exit %d, stderr %q; want the download suggested", r.code, r.errOut)
	}
	for _, name := range []string{"./en_GB-alan-medium.onnx", "my-voice"} {
		if r := run(t, "", "voices", "info", name); r.code != ExitFailure || strings.Contains(r.errOut, "voices download") {
			t.Errorf("voices info %s: exit %d, stderr %q; want no download suggested", name, r.code, r.errOut)
		}
	}
}

// `ttsgen help COMMAND` explains every command with examples: each has some, of itself.
func TestEveryCommandHasExamples(t *testing.T) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if !strings.Contains(c.Example, c.CommandPath()) {
			t.Errorf("%s has no examples of itself: %q", c.CommandPath(), c.Example)
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(NewRootCmd(IO{}))
}

// Sizes are in decimal units, as the model card and Piper's catalogue give them: the built-in voice's 18.5 million
// bytes are "18.5 MB" in `voices list`, not the 17.6 that dividing by 2^20 gave under the same label.
func TestVoicesListSizesInDecimalUnits(t *testing.T) {
	isolate(t)
	r := run(t, "", "voices", "list", "--json")
	var listed []struct {
		Name      string `json:"name"`
		SizeBytes int64  `json:"size_bytes"`
	}
	if err := json.Unmarshal([]byte(r.out), &listed); r.code != 0 || err != nil || len(listed) == 0 {
		t.Fatalf("voices list --json: exit %d, %v: %s%s", r.code, err, r.out, r.errOut)
	}
	want := fmt.Sprintf("%.1f MB", float64(listed[0].SizeBytes)/1e6)
	if r := run(t, "", "voices", "list"); r.code != 0 || !strings.Contains(r.out, want) {
		t.Errorf("voices list: exit %d, want %s (%d bytes) in:\n%s%s", r.code, want, listed[0].SizeBytes, r.out, r.errOut)
	}
	for n, want := range map[int64]string{999: "999 B", 1000: "1.0 kB", 63_200: "63.2 kB", 18_500_472: "18.5 MB", 1_000_000: "1.0 MB"} {
		if got := humanBytes(n); got != want {
			t.Errorf("humanBytes(%d) = %q, want %q", n, got, want)
		}
	}
}
