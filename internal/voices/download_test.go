package voices

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ttsgen/ttsgen/internal/atomicfile"
)

// catalogueServer serves a small Piper catalogue, as rhasspy/piper-voices lays it out, with Piper's test voice
// under three names: whole, corrupted on the way (its bytes differ from the catalogue's MD5) and cut off half way.
func catalogueServer(t *testing.T) (*httptest.Server, []byte) {
	t.Helper()
	model, err := os.ReadFile(filepath.Join(testVoiceDir, "test_voice.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	config := readTestConfig(t)
	sum := func(b []byte) string { h := md5.Sum(b); return hex.EncodeToString(h[:]) }
	files := map[string][]byte{}
	index := map[string]any{}
	for _, key := range []string{"en_US-test-low", "en_US-corrupt-low", "en_US-cut-low", "en_US-unsized-low"} {
		dir := "en/en_US/" + strings.Split(key, "-")[1] + "/low/"
		files[dir+key+".onnx"], files[dir+key+".onnx.json"] = model, config
		index[key] = map[string]any{
			"key": key, "name": strings.Split(key, "-")[1], "quality": "low", "num_speakers": 1,
			"language": map[string]string{"code": "en_US", "family": "en", "name_english": "English", "country_english": "United States"},
			"files": map[string]any{
				dir + key + ".onnx":      map[string]any{"size_bytes": len(model), "md5_digest": sum(model)},
				dir + key + ".onnx.json": map[string]any{"size_bytes": len(config), "md5_digest": sum(config)},
				dir + "MODEL_CARD":       map[string]any{"size_bytes": 5, "md5_digest": sum([]byte("card\n"))},
			},
			"aliases": []string{},
		}
	}
	index["en_US-test-low"].(map[string]any)["aliases"] = []string{"en-us-test-low"}
	unsized := index["en_US-unsized-low"].(map[string]any)["files"].(map[string]any)
	unsized["en/en_US/unsized/low/en_US-unsized-low.onnx"] = map[string]any{} // a catalogue that gives no size or MD5
	catalogue, _ := json.Marshal(index)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := strings.TrimPrefix(r.URL.Path, "/v1.0.0/")
		if p == "voices.json" {
			w.Write(catalogue)
			return
		}
		body, ok := files[p]
		if !ok {
			http.NotFound(w, r)
			return
		}
		switch {
		case strings.Contains(p, "corrupt") && strings.HasSuffix(p, ".onnx"):
			body = append([]byte{}, body...)
			body[len(body)/2] ^= 0xFF
		case strings.Contains(p, "unsized") && strings.HasSuffix(p, ".onnx"):
			w.Write(body[:len(body)/2]) // no Content-Length, and the connection ends as if the file did
			return
		case strings.Contains(p, "cut") && strings.HasSuffix(p, ".onnx"):
			w.Header().Set("Content-Length", strconv.Itoa(len(body)))
			w.Write(body[:len(body)/2])
			w.(http.Flusher).Flush()
			panic(http.ErrAbortHandler) // the connection drops mid-file
		}
		w.Write(body)
	}))
	t.Cleanup(srv.Close)
	return srv, model
}

// loadCatalogue serves catalogueServer's catalogue and loads its index: a fetcher for it, the index, the model.
func loadCatalogue(t *testing.T) (Fetcher, *Index, []byte) {
	t.Helper()
	srv, model := catalogueServer(t)
	f := Fetcher{Client: srv.Client()}
	idx, err := f.LoadIndex(context.Background(), srv.URL+"/v1.0.0/voices.json")
	if err != nil {
		t.Fatal(err)
	}
	return f, idx, model
}

// leftovers lists what is in the voices folder.
func leftovers(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

func TestDownloadFromTheCatalogue(t *testing.T) {
	f, idx, model := loadCatalogue(t)
	ctx := context.Background()
	if got := idx.Sorted(); len(got) != 4 || got[2].Key != "en_US-test-low" || got[2].Language.Code != "en_US" || got[2].Size() != int64(len(model))+int64(len(readTestConfig(t))) {
		t.Fatalf("catalogue %+v", got)
	}
	dir := filepath.Join(t.TempDir(), "voices")
	c := Catalog{Dir: dir}
	v, err := idx.Find("en-us-test-low") // by its alias
	if err != nil {
		t.Fatal(err)
	}
	var last, total int64
	got, err := c.Download(ctx, f, idx, v, false, func(done, of int64) { last, total = done, of })
	if err != nil {
		t.Fatal(err)
	}
	if got.Name != "en_US-test-low" || last != total || total != v.Size() {
		t.Errorf("installed %q, progress %d of %d (want %d)", got.Name, last, total, v.Size())
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "en_US-test-low.onnx")); string(b) != string(model) {
		t.Error("the installed model is not the catalogue's")
	}
	if found, err := c.Find("en_US-test-low"); err != nil || found.Config.Audio.SampleRate != 22050 {
		t.Errorf("Find after download: %v", err)
	}
	if _, err := c.Download(ctx, f, idx, v, false, nil); err == nil || !strings.Contains(err.Error(), "--replace") {
		t.Errorf("a second download without replace: %v", err)
	}
	if _, err := c.Download(ctx, f, idx, v, true, nil); err != nil {
		t.Errorf("with replace: %v", err)
	}
	if _, err := idx.Find("en_GB-nobody-high"); !errors.Is(err, ErrNotFound) {
		t.Errorf("an unknown voice: %v", err)
	}
}

// A corrupted download and one cut off half way install nothing: no model, no config, no temporary file.
func TestFailedDownloadsInstallNothing(t *testing.T) {
	f, idx, _ := loadCatalogue(t)
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "voices")
	c := Catalog{Dir: dir}
	for _, tc := range []struct{ key, want string }{
		{"en_US-corrupt-low", "does not match the catalogue: MD5"},
		{"en_US-cut-low", "cut off after"},
		{"en_US-unsized-low", `voice "en_US-unsized-low": its model from the catalogue:`}, // a half model, checked as voices add does
	} {
		v, err := idx.Find(tc.key)
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.Download(ctx, f, idx, v, false, nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(tc.key, "corrupt") && !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: err %v, want %q", tc.key, err, tc.want)
		}
		if left := leftovers(t, dir); len(left) != 0 {
			t.Errorf("%s: the voices folder holds %v after a failed download", tc.key, left)
		}
	}
	// A cancelled download likewise.
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	v, _ := idx.Find("en_US-test-low")
	if _, err := c.Download(cancelled, f, idx, v, false, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
	if left := leftovers(t, dir); len(left) != 0 {
		t.Errorf("a cancelled download left %v", left)
	}
}

// A catalogue's key is the voice's file name: one that is not a plain name, or that would never select the voice,
// installs nothing anywhere. A killed download's temporary file goes with the next download.
func TestDownloadRefusesKeysThatAreNoVoiceName(t *testing.T) {
	f, idx, _ := loadCatalogue(t)
	ctx := context.Background()
	root := t.TempDir()
	c := Catalog{Dir: filepath.Join(root, "a", "voices")}
	good, _ := idx.Find("en_US-test-low")
	for _, key := range []string{"../../escaped", "sub/x", "..", ".hidden", "default", "x.onnx", DefaultName} {
		v := good
		v.Key = key
		if _, err := c.Download(ctx, f, idx, v, true, nil); err == nil || !strings.Contains(err.Error(), "cannot be installed under its name") {
			t.Errorf("key %q: %v", key, err)
		}
	}
	var all []string
	filepath.WalkDir(root, func(p string, e os.DirEntry, err error) error {
		if err == nil && !e.IsDir() {
			all = append(all, p)
		}
		return nil
	})
	if len(all) != 0 {
		t.Errorf("refused keys left %v", all)
	}
	os.MkdirAll(c.Dir, 0o755)
	stale := filepath.Join(c.Dir, atomicfile.TempName(1<<22+1)+"1") // pid 2^22+1 is above Linux's limit: gone
	os.WriteFile(stale, []byte("half a model"), 0o644)
	if _, err := c.Download(ctx, f, idx, good, false, nil); err != nil {
		t.Fatal(err)
	}
	if left := leftovers(t, c.Dir); len(left) != 2 {
		t.Errorf("after a download the voices folder holds %v; want the voice's two files (a killed download's temp file removed)", left)
	}
}

// A catalogue on disk (a mirror): its files lie beside it.
func TestDownloadFromAMirrorOnDisk(t *testing.T) {
	mirror := t.TempDir()
	model, _ := os.ReadFile(filepath.Join(testVoiceDir, "test_voice.onnx"))
	config := readTestConfig(t)
	if err := os.MkdirAll(filepath.Join(mirror, "en"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(mirror, "en", "x-low.onnx"), model, 0o644)
	os.WriteFile(filepath.Join(mirror, "en", "x-low.onnx.json"), config, 0o644)
	index := fmt.Sprintf(`{"x-low": {"key": "x-low", "quality": "low", "files": {"en/x-low.onnx": {"size_bytes": %d}, "en/x-low.onnx.json": {"size_bytes": %d}}}}`, len(model), len(config))
	os.WriteFile(filepath.Join(mirror, "voices.json"), []byte(index), 0o644)
	idx, err := Fetcher{}.LoadIndex(context.Background(), filepath.Join(mirror, "voices.json"))
	if err != nil {
		t.Fatal(err)
	}
	v, _ := idx.Find("x-low")
	dir := filepath.Join(t.TempDir(), "voices")
	if _, err := (Catalog{Dir: dir}).Download(context.Background(), Fetcher{}, idx, v, false, nil); err != nil {
		t.Fatal(err)
	}
	if left := leftovers(t, dir); strings.Join(left, " ") != "x-low.onnx x-low.onnx.json" {
		t.Errorf("installed %v", left)
	}
}
