package cmd

import (
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// mirror lays the repository's test voices out as Piper's catalogue does (mirrorFolder), and serves the folder over
// HTTP on loopback.
func mirror(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.FileServer(http.Dir(mirrorFolder(t))))
	t.Cleanup(srv.Close)
	return srv.URL + "/voices.json"
}

// mirrorFolder lays the repository's test voices out in a folder as Piper's catalogue does, with a voices.json that
// gets one of them wrong (its MD5), and returns the folder.
func mirrorFolder(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	index := map[string]any{}
	add := func(key, from, md5Override string) {
		files := map[string]any{}
		for _, ext := range []string{".onnx", ".onnx.json"} {
			b, err := os.ReadFile(from + ext)
			if err != nil {
				t.Fatal(err)
			}
			rel := "en/en_US/" + key + "/" + key + ext
			writeFile(t, filepath.Join(root, filepath.FromSlash(rel)), string(b))
			sum := md5.Sum(b)
			digest := hex.EncodeToString(sum[:])
			if ext == ".onnx" && md5Override != "" {
				digest = md5Override
			}
			files[rel] = map[string]any{"size_bytes": len(b), "md5_digest": digest}
		}
		index[key] = map[string]any{"key": key, "quality": "x_low", "num_speakers": 1, "files": files,
			"language": map[string]string{"code": "en_US", "name_english": "English", "country_english": "United States"}}
	}
	add("en_US-tiny-x_low", "../testdata/tiny-voice/tiny", "")
	add("en_US-piper-x_low", "../testdata/piper-test-voice/test_voice", "")
	add("en_US-broken-x_low", "../testdata/piper-test-voice/test_voice", "00000000000000000000000000000000")
	b, _ := json.Marshal(index)
	writeFile(t, filepath.Join(root, "voices.json"), string(b))
	return root
}

func TestVoicesDownloadAndAvailable(t *testing.T) {
	dir := isolate(t)
	catalog := mirror(t)
	r := run(t, "", "voices", "list", "--available", "--catalog", catalog)
	if r.code != 0 || !strings.Contains(r.out, "en_US-tiny-x_low") || !strings.Contains(r.out, "English, United States") {
		t.Fatalf("list --available: exit %d\n%s%s", r.code, r.out, r.errOut)
	}
	r = run(t, "", "voices", "download", "en_US-tiny-x_low", "en_US-piper-x_low", "--catalog", catalog)
	if r.code != 0 || strings.Count(r.out, "installed ") != 2 {
		t.Fatalf("download: exit %d\n%s%s", r.code, r.out, r.errOut)
	}
	if r := run(t, "", "voices", "info", "en_US-tiny-x_low", "--json"); r.code != 0 || !strings.Contains(r.out, `"sample_rate": 22050`) {
		t.Errorf("info of the downloaded voice: exit %d %s%s", r.code, r.out, r.errOut)
	}
	var avail []remoteVoiceInfo
	r = run(t, "", "voices", "list", "--available", "--json", "--catalog", catalog)
	if err := json.Unmarshal([]byte(r.out), &avail); err != nil || len(avail) != 3 || avail[0].Installed || !avail[1].Installed || !avail[2].Installed {
		t.Errorf("list --available --json after the download: %v %+v", err, avail)
	}

	// The corrupted one installs nothing and fails the command; an unknown name is said before anything starts.
	r = run(t, "", "voices", "download", "en_US-broken-x_low", "--catalog", catalog)
	if r.code != ExitFailure || !strings.Contains(r.errOut, "does not match the catalogue: MD5") {
		t.Errorf("corrupted: exit %d %s", r.code, r.errOut)
	}
	if r := run(t, "", "voices", "download", "en_US-broken-x_low", "--catalog", catalog, "--json"); strings.TrimSpace(r.out) != "[]" {
		t.Errorf("--json with nothing installed: %q; want an empty list", r.out)
	}
	entries, _ := os.ReadDir(filepath.Join(dir, "voices"))
	for _, e := range entries {
		if strings.Contains(e.Name(), "broken") || strings.HasPrefix(e.Name(), ".ttsgen-") {
			t.Errorf("a failed download left %s", e.Name())
		}
	}
	r = run(t, "", "voices", "download", "en_US-piper-x_low", "en_US-nobody-high", "--catalog", catalog, "--replace")
	if r.code != ExitUsage || !strings.Contains(r.errOut, `"en_US-nobody-high" is not in the catalogue`) || strings.Contains(r.out, "installed") {
		t.Errorf("unknown name: exit %d %s%s", r.code, r.out, r.errOut)
	}
	if r := run(t, "", "voices", "download"); r.code != ExitUsage {
		t.Errorf("no name: exit %d", r.code)
	}
}

// Downloading a voice that is installed downloads nothing: no "downloading" line, one error that says so (not the
// same one twice), and the others named are still downloaded; the summary of several counts in good grammar.
func TestVoicesDownloadAlreadyInstalled(t *testing.T) {
	isolate(t)
	catalog := filepath.Join(mirrorFolder(t), "voices.json") // a catalogue on disk, its files beside it
	if r := run(t, "", "voices", "download", "en_US-tiny-x_low", "--catalog", catalog); r.code != 0 {
		t.Fatalf("first download: exit %d %s%s", r.code, r.out, r.errOut)
	}
	r := run(t, "", "voices", "download", "en_US-tiny-x_low", "--catalog", catalog)
	if r.code != ExitFailure || strings.Contains(r.errOut, "downloading") || strings.Count(r.errOut, "already installed") != 1 ||
		strings.Contains(r.errOut, "1 of 1") || strings.Contains(r.out, "installed ") {
		t.Errorf("again: exit %d\nstdout:\n%s\nstderr:\n%s\nwant exit %d, no download, the error once", r.code, r.out, r.errOut, ExitFailure)
	}
	if want := "--replace"; !strings.Contains(r.errOut, want) {
		t.Errorf("stderr does not say %q:\n%s", want, r.errOut)
	}
	r = run(t, "", "voices", "download", "en_US-tiny-x_low", "en_US-piper-x_low", "--catalog", catalog)
	if r.code != ExitFailure || strings.Count(r.errOut, "downloading") != 1 || strings.Count(r.errOut, "already installed") != 1 ||
		!strings.Contains(r.errOut, "1 of 2 voices not installed: en_US-tiny-x_low\n") || !strings.Contains(r.out, "installed en_US-piper-x_low") {
		t.Errorf("one installed, one not: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.out, r.errOut)
	}
}

// `voices list` and `voices list --available` give an installed voice one size, in their SIZE columns and as
// size_bytes: its model and config together, what the catalogue says it downloads.
func TestVoicesListSizesAgreeWithTheCatalogue(t *testing.T) {
	isolate(t)
	catalog := filepath.Join(mirrorFolder(t), "voices.json")
	if r := run(t, "", "voices", "download", "en_US-tiny-x_low", "--catalog", catalog); r.code != 0 {
		t.Fatalf("download: exit %d %s%s", r.code, r.out, r.errOut)
	}
	var want int64
	for _, ext := range []string{".onnx", ".onnx.json"} {
		info, err := os.Stat(strings.TrimSuffix(tinyVoice, ".onnx") + ext)
		if err != nil {
			t.Fatal(err)
		}
		want += info.Size()
	}
	// sizeColumn is the SIZE of the voice's row in a table.
	sizeColumn := func(args ...string) string {
		t.Helper()
		r := run(t, "", append([]string{"voices", "list"}, args...)...)
		lines := strings.Split(r.out, "\n")
		at := strings.Index(lines[0], "SIZE")
		if r.code != 0 || at < 0 {
			t.Fatalf("voices list %v: exit %d, no SIZE column:\n%s%s", args, r.code, r.out, r.errOut)
		}
		for _, line := range lines[1:] {
			if strings.HasPrefix(line, "en_US-tiny-x_low ") {
				size, _, _ := strings.Cut(strings.TrimSpace(line[at:]), "  ")
				return size
			}
		}
		t.Fatalf("voices list %v has no row for en_US-tiny-x_low:\n%s", args, r.out)
		return ""
	}
	if installed, available := sizeColumn(), sizeColumn("--available", "--catalog", catalog); installed != humanBytes(want) || available != humanBytes(want) {
		t.Errorf("SIZE: %q installed, %q in the catalogue; want %q (model and config) in both", installed, available, humanBytes(want))
	}
	var local []voiceInfo
	if r := run(t, "", "voices", "list", "--json"); json.Unmarshal([]byte(r.out), &local) != nil || len(local) != 2 || local[1].SizeBytes != want {
		t.Errorf("voices list --json: %s; want en_US-tiny-x_low's size_bytes %d", r.out, want)
	}
	var remote []remoteVoiceInfo
	r := run(t, "", "voices", "list", "--available", "--json", "--catalog", catalog)
	if err := json.Unmarshal([]byte(r.out), &remote); err != nil || !slices.ContainsFunc(remote, func(v remoteVoiceInfo) bool {
		return v.Name == "en_US-tiny-x_low" && v.SizeBytes == want
	}) {
		t.Errorf("voices list --available --json: %s; want en_US-tiny-x_low's size_bytes %d", r.out, want)
	}
}
