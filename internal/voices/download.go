package voices

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/ttsgen/ttsgen/internal/atomicfile"
)

// DefaultIndex is Piper's voice catalogue: voices.json of rhasspy/piper-voices, whose files lie beside it.
const DefaultIndex = "https://huggingface.co/rhasspy/piper-voices/resolve/v1.0.0/voices.json"

// Index is a Piper voice catalogue (voices.json): what voices there are, and their files with size and MD5.
type Index struct {
	Voices map[string]RemoteVoice
	where  string // the catalogue's URL or path; file paths are relative to its folder
}

// RemoteVoice is a voice of the catalogue, as voices.json describes it.
type RemoteVoice struct {
	Key      string `json:"key"`
	Name     string `json:"name"`
	Language struct {
		Code           string `json:"code"`
		Family         string `json:"family"`
		NameEnglish    string `json:"name_english"`
		CountryEnglish string `json:"country_english"`
	} `json:"language"`
	Quality     string                `json:"quality"`
	NumSpeakers int                   `json:"num_speakers"`
	Files       map[string]RemoteFile `json:"files"` // path relative to the catalogue -> its size and digest
	Aliases     []string              `json:"aliases"`
}

// RemoteFile is one file of a catalogue voice.
type RemoteFile struct {
	SizeBytes int64  `json:"size_bytes"`
	MD5       string `json:"md5_digest"`
}

// files are the voice's model and config paths in the catalogue.
func (v RemoteVoice) files() (model, config string, err error) {
	for p := range v.Files {
		switch {
		case strings.HasSuffix(p, configSuffix):
			config = p
		case strings.HasSuffix(p, modelSuffix):
			model = p
		}
	}
	if model == "" || config == "" {
		return "", "", fmt.Errorf("voice %q in the catalogue lacks its .onnx or .onnx.json file", v.Key)
	}
	return model, config, nil
}

// Size is the bytes of the voice's model and config.
func (v RemoteVoice) Size() int64 {
	model, config, err := v.files()
	if err != nil {
		return 0
	}
	return v.Files[model].SizeBytes + v.Files[config].SizeBytes
}

// Fetcher gets what a catalogue names: an http(s) URL through client, anything else as a local file (a mirror on
// disk).
type Fetcher struct {
	Client *http.Client // nil = http.DefaultClient
}

func isURL(s string) bool { return strings.HasPrefix(s, "http://") || strings.HasPrefix(s, "https://") }

// open returns the content at where and its length (-1 when unknown).
func (f Fetcher) open(ctx context.Context, where string) (io.ReadCloser, int64, error) {
	if !isURL(where) {
		file, err := os.Open(where)
		if err != nil {
			return nil, 0, err
		}
		info, err := file.Stat()
		if err != nil {
			file.Close()
			return nil, 0, err
		}
		return file, info.Size(), nil
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, where, nil)
	if err != nil {
		return nil, 0, err
	}
	client := f.Client
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, 0, err
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		return nil, 0, fmt.Errorf("%s: %s", where, resp.Status)
	}
	return resp.Body, resp.ContentLength, nil
}

// resolve is where a file the catalogue at index names lies.
func resolve(index, file string) (string, error) {
	if !isURL(index) {
		return filepath.Join(filepath.Dir(index), filepath.FromSlash(file)), nil
	}
	base, err := url.Parse(index)
	if err != nil {
		return "", err
	}
	ref, err := url.Parse(path.Clean(file))
	if err != nil || ref.IsAbs() || strings.HasPrefix(ref.Path, "/") || strings.HasPrefix(ref.Path, "..") {
		return "", fmt.Errorf("catalogue file %q is not a path beside the catalogue", file)
	}
	return base.ResolveReference(ref).String(), nil
}

// LoadIndex reads the catalogue at where (a URL or a file).
func (f Fetcher) LoadIndex(ctx context.Context, where string) (*Index, error) {
	body, _, err := f.open(ctx, where)
	if err != nil {
		return nil, fmt.Errorf("reading the voice catalogue: %w", err)
	}
	defer body.Close()
	idx := &Index{where: where}
	if err := json.NewDecoder(body).Decode(&idx.Voices); err != nil {
		return nil, fmt.Errorf("reading the voice catalogue %s: %w", where, err)
	}
	for key, v := range idx.Voices {
		if v.Key == "" {
			v.Key = key
			idx.Voices[key] = v
		}
	}
	return idx, nil
}

// Sorted is the catalogue's voices by key.
func (idx *Index) Sorted() []RemoteVoice {
	out := make([]RemoteVoice, 0, len(idx.Voices))
	for _, v := range idx.Voices {
		out = append(out, v)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

// Find is the voice with key or alias name.
func (idx *Index) Find(name string) (RemoteVoice, error) {
	if v, ok := idx.Voices[name]; ok {
		return v, nil
	}
	for _, v := range idx.Voices {
		for _, a := range v.Aliases {
			if a == name {
				return v, nil
			}
		}
	}
	return RemoteVoice{}, fmt.Errorf("%w: %q is not in the catalogue %s (see `ttsgen voices list --available`)", ErrNotFound, name, idx.where)
}

// ErrCorrupt is the error for a download whose size or MD5 is not what the catalogue says.
var ErrCorrupt = errors.New("download does not match the catalogue")

// Installed reports whether the voice named name is in the voices folder: its model file is there, which Add and
// Download refuse to replace unless asked to.
func (c Catalog) Installed(name string) bool {
	if c.Dir == "" {
		return false
	}
	_, err := os.Stat(filepath.Join(c.Dir, name+modelSuffix))
	return err == nil
}

// Download installs catalogue voice v into the voices folder: both files are fetched, their sizes and MD5s checked
// against the catalogue and the config parsed before anything is in place, then the model and the config are
// renamed in (the config last: a voice counts as installed once its config is there). A download that fails,
// is cut off or is cancelled leaves the folder as it was. progress (may be nil) hears the bytes done of the total.
func (c Catalog) Download(ctx context.Context, f Fetcher, idx *Index, v RemoteVoice, replace bool,
	progress func(done, total int64)) (*Voice, error) {
	if c.Dir == "" {
		return nil, errors.New("no voices folder is configured (set voices_dir or TTSGEN_VOICES_DIR)")
	}
	if problem := downloadNameProblem(v.Key); problem != "" {
		return nil, fmt.Errorf("the catalogue's voice %q cannot be installed under its name: %s", v.Key, problem)
	}
	modelFile, configFile, err := v.files()
	if err != nil {
		return nil, err
	}
	dstModel := filepath.Join(c.Dir, v.Key+modelSuffix)
	if !replace && c.Installed(v.Key) {
		return nil, fmt.Errorf("voice %q already exists in %s (use --replace to download it again)", v.Key, c.Dir)
	}
	if err := os.MkdirAll(c.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("creating the voices folder: %w", err)
	}
	if _, err := atomicfile.RemoveStale(c.Dir, func(error) {}); err != nil { // a killed download's half model
		return nil, fmt.Errorf("cleaning the voices folder: %w", err)
	}
	total := v.Size()
	var done int64
	count := func(n int) {
		done += int64(n)
		if progress != nil {
			progress(done, total)
		}
	}
	var config bytes.Buffer
	if err := fetchChecked(ctx, f, idx.where, configFile, v.Files[configFile], &config, count); err != nil {
		return nil, err
	}
	cfg, err := ParseConfig(config.Bytes())
	if err != nil {
		return nil, fmt.Errorf("voice %q: its config from the catalogue: %w", v.Key, err)
	}
	err = atomicfile.Write(dstModel, "", nil, func(out *os.File) error {
		if err := fetchChecked(ctx, f, idx.where, modelFile, v.Files[modelFile], out, count); err != nil {
			return err
		}
		// What `voices add` checks, for a catalogue that gives no size or MD5 (or a server that cut the file short
		// without a Content-Length): a whole ONNX model with a Piper voice's inputs and output.
		sig, err := ReadSignature(out.Name())
		if err == nil {
			err = CheckPiper(sig, cfg)
		}
		if err != nil {
			return fmt.Errorf("voice %q: its model from the catalogue: %w", v.Key, err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	err = atomicfile.Write(dstModel+".json", "", nil, func(out *os.File) error {
		_, err := out.Write(config.Bytes())
		return err
	})
	if err != nil {
		os.Remove(dstModel) // no model without its config
		return nil, err
	}
	return Open(dstModel)
}

// downloadNameProblem says why a catalogue's key cannot name a voice file in the voices folder, or "": it is the
// file's name there, so nothing but a plain name that selects the voice will do.
func downloadNameProblem(key string) string {
	switch {
	case key == "" || key == "." || key == "..", strings.ContainsAny(key, `/\`):
		return "it is not a plain file name"
	case strings.HasPrefix(key, "."):
		return "a name starting with '.' is a hidden file"
	}
	return nameProblem(key)
}

// fetchChecked copies the catalogue's file to w, checking its size and MD5 against want.
func fetchChecked(ctx context.Context, f Fetcher, index, file string, want RemoteFile, w io.Writer, count func(int)) error {
	where, err := resolve(index, file)
	if err != nil {
		return err
	}
	body, _, err := f.open(ctx, where)
	if err != nil {
		return fmt.Errorf("downloading %s: %w", file, err)
	}
	defer body.Close()
	sum := md5.New()
	n, err := io.Copy(io.MultiWriter(w, sum, countWriter(count)), body)
	if err != nil {
		return fmt.Errorf("downloading %s: cut off after %d of %d bytes: %w", file, n, want.SizeBytes, err)
	}
	if want.SizeBytes > 0 && n != want.SizeBytes {
		return fmt.Errorf("downloading %s: %w: %d bytes, the catalogue says %d", file, ErrCorrupt, n, want.SizeBytes)
	}
	if got := hex.EncodeToString(sum.Sum(nil)); want.MD5 != "" && !strings.EqualFold(got, want.MD5) {
		return fmt.Errorf("downloading %s: %w: MD5 %s, the catalogue says %s", file, ErrCorrupt, got, want.MD5)
	}
	return nil
}

type countWriter func(int)

func (c countWriter) Write(p []byte) (int, error) {
	c(len(p))
	return len(p), nil
}
