package voices

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/ttsgen/ttsgen/internal/atomicfile"
)

const (
	modelSuffix  = ".onnx"
	configSuffix = ".onnx.json"
)

// Voice is one Piper-format voice: its config, and its model bytes on demand (models are tens of MB).
type Voice struct {
	Name       string
	ModelPath  string // "" for the embedded voice
	ConfigPath string
	Config     *Config
	Embedded   bool
	ModelSize  int64
	configSize int64
	model      func() ([]byte, error)
	identity   string
}

// Size is the bytes of the voice's model and config together, as RemoteVoice.Size counts a catalogue voice's.
func (v *Voice) Size() int64 { return v.ModelSize + v.configSize }

// Model reads the voice's ONNX model.
func (v *Voice) Model() ([]byte, error) { return v.model() }

// Identity names this exact voice, to tell whether audio made with it is still current: a digest of its config and
// of its model's size and modification time (of the embedded voice: of its model). Replacing either file changes
// it; it never reads the model.
func (v *Voice) Identity() string { return v.identity }

// Check confirms, without loading it, that the voice's model is a whole ONNX model with the inputs and output of a
// Piper voice of its config's speakers, and a row for each phoneme id of its config (see ReadSignature). The
// embedded voice is always fine.
func (v *Voice) Check() error {
	if v.Embedded {
		return nil
	}
	sig, err := ReadSignature(v.ModelPath)
	if err != nil {
		return fmt.Errorf("voice model: %w", err)
	}
	if err := CheckPiper(sig, v.Config); err != nil {
		return fmt.Errorf("voice model %s: %w", v.ModelPath, err)
	}
	return nil
}

// digest is a short hex digest of the given parts, each length-prefixed so that no two lists of parts collide.
func digest(parts ...[]byte) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write(binary.LittleEndian.AppendUint64(nil, uint64(len(p))))
		h.Write(p)
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// defaultAlias is the name that always means the embedded voice.
const defaultAlias = "default"

// nameProblem says why a voice of this name could never be selected by it, or "".
func nameProblem(name string) string {
	switch {
	case name == defaultAlias || name == DefaultName:
		return fmt.Sprintf("the name %q means the built-in default voice", name)
	case looksLikePath(name):
		return fmt.Sprintf("the name %q reads as a path", name)
	}
	return ""
}

// Catalog finds voices: the embedded default and those in Dir (may be "" or not exist yet).
type Catalog struct {
	Dir string
}

// ErrNotFound is returned (wrapped) when no voice has the asked-for name.
var ErrNotFound = errors.New("voice not found")

// Find resolves a voice by name ("" or "default" = the embedded voice, else a voice in Dir) or by a path to its
// .onnx or .onnx.json file.
func (c Catalog) Find(nameOrPath string) (*Voice, error) {
	switch nameOrPath {
	case "", defaultAlias, DefaultName:
		return defaultVoice()
	}
	if looksLikePath(nameOrPath) {
		return Open(nameOrPath)
	}
	if c.Dir != "" {
		model := filepath.Join(c.Dir, nameOrPath+modelSuffix)
		v, err := Open(model)
		if _, statErr := os.Stat(model); err == nil || !errors.Is(err, os.ErrNotExist) || statErr == nil {
			return v, err // found, or there but broken (its .onnx.json missing, say): Open's error says which
		}
	}
	var names []string
	list, _ := c.List() // a broken voice elsewhere in the folder must not hide the good ones from this message
	for _, v := range list {
		names = append(names, v.Name)
	}
	hint := "add one with `ttsgen voices add PATH/TO/VOICE.onnx`"
	if looksLikeCatalogKey(nameOrPath) {
		hint = fmt.Sprintf("download it from Piper's catalogue with `ttsgen voices download %s`, or %s", nameOrPath, hint)
	}
	return nil, fmt.Errorf("%w: %q (known voices: %s; %s)", ErrNotFound, nameOrPath, strings.Join(names, ", "), hint)
}

// catalogKey is the form of the keys of Piper's voice catalogue: language_REGION-name-quality, as in
// en_GB-alan-medium, zh_CN-huayan-x_low or en_US-libritts_r-medium.
var catalogKey = regexp.MustCompile(`^[a-z]{2,3}_[A-Z]{2}-[A-Za-z0-9_]+-(x_low|low|medium|high)$`)

// looksLikeCatalogKey reports whether name has the form of a key of Piper's voice catalogue
// (lang_REGION-name-quality, the quality one of x_low, low, medium and high), which `ttsgen voices download` may
// install. It says nothing of whether the catalogue has such a voice.
func looksLikeCatalogKey(name string) bool { return catalogKey.MatchString(name) }

// IsPath reports whether a voice given as s is a path to its files rather than a name: it contains a path separator
// or ends in .onnx or .onnx.json.
func IsPath(s string) bool { return looksLikePath(s) }

func looksLikePath(s string) bool {
	return strings.ContainsRune(s, os.PathSeparator) || strings.HasSuffix(s, modelSuffix) || strings.HasSuffix(s, configSuffix)
}

// ErrNotVoiceFiles marks Open's errors for a path that is not a voice's two files: neither an X.onnx nor an
// X.onnx.json, either file not there, or a folder. Each names the file and says what is wrong with it; one for a file
// that is not there also wraps fs.ErrNotExist.
var ErrNotVoiceFiles = errors.New("not a Piper voice's files")

// filesError is an ErrNotVoiceFiles error, wrapping the error of the file's stat where there is one.
type filesError struct {
	msg  string
	stat error
}

func (e *filesError) Error() string { return e.msg }

func (e *filesError) Unwrap() []error {
	if e.stat == nil {
		return []error{ErrNotVoiceFiles}
	}
	return []error{ErrNotVoiceFiles, e.stat}
}

// voiceFiles finds the model and config of the voice at path (X.onnx or X.onnx.json), and the model's stat: both
// must be files. Its errors are ErrNotVoiceFiles.
func voiceFiles(path string) (modelPath, configPath string, modelInfo os.FileInfo, err error) {
	const want = "want a Piper voice's X.onnx, with its X.onnx.json beside it"
	problem := func(stat error, format string, args ...any) error {
		return &filesError{msg: fmt.Sprintf(format, args...), stat: stat}
	}
	info, err := os.Stat(path)
	switch {
	case err != nil:
		return "", "", nil, problem(err, "voice %s: %v", path, statProblem(err))
	case info.IsDir():
		return "", "", nil, problem(nil, "voice %s is a folder: %s", path, want)
	}
	modelPath, isConfig := strings.CutSuffix(path, ".json")
	if !strings.HasSuffix(modelPath, modelSuffix) {
		return "", "", nil, problem(nil, "voice %s: %s", path, want)
	}
	configPath = modelPath + ".json"
	other, what := configPath, "config"
	if isConfig {
		other, what = modelPath, "model"
	}
	otherInfo, err := os.Stat(other)
	switch {
	case err != nil:
		return "", "", nil, problem(err, "voice %s: its %s %s: %v (%s)", path, what, other, statProblem(err), want)
	case otherInfo.IsDir():
		return "", "", nil, problem(nil, "voice %s: its %s %s is a folder (%s)", path, what, other, want)
	}
	if isConfig {
		info = otherInfo
	}
	return modelPath, configPath, info, nil
}

// statProblem is what a stat's error says without the path, which the message names already.
func statProblem(err error) error {
	if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// Open reads a voice from disk, given the path of its model (X.onnx) or of its config (X.onnx.json). Both files must
// be there (ErrNotVoiceFiles where they are not); the config is parsed and validated now, the model is read when
// needed.
func Open(path string) (*Voice, error) {
	modelPath, configPath, info, err := voiceFiles(path)
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(configPath)
	if err != nil {
		return nil, fmt.Errorf("reading voice config: %w", err)
	}
	cfg, err := ParseConfig(data)
	if err != nil {
		return nil, fmt.Errorf("voice config %s: %w", configPath, err)
	}
	return &Voice{
		Name:       strings.TrimSuffix(filepath.Base(modelPath), modelSuffix),
		ModelPath:  modelPath,
		ConfigPath: configPath,
		Config:     cfg,
		ModelSize:  info.Size(),
		configSize: int64(len(data)),
		identity: digest(data, binary.LittleEndian.AppendUint64(nil, uint64(info.Size())),
			binary.LittleEndian.AppendUint64(nil, uint64(info.ModTime().UnixNano()))),
		model: func() ([]byte, error) {
			b, err := os.ReadFile(modelPath)
			if err != nil {
				return nil, fmt.Errorf("reading voice model: %w", err)
			}
			return b, nil
		},
	}, nil
}

// List returns the embedded default voice followed by the valid voices in Dir, by name. Invalid voices in Dir come
// back as a joined error beside the good ones, so one broken download does not hide the rest.
func (c Catalog) List() (list []*Voice, err error) {
	def, err := defaultVoice()
	if err != nil {
		return nil, err
	}
	list = []*Voice{def}
	if c.Dir == "" {
		return list, nil
	}
	entries, err := os.ReadDir(c.Dir)
	if errors.Is(err, os.ErrNotExist) {
		return list, nil
	}
	if err != nil {
		return nil, fmt.Errorf("listing voices: %w", err)
	}
	var problems []error
	var found []*Voice
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), modelSuffix) {
			continue
		}
		v, err := Open(filepath.Join(c.Dir, e.Name()))
		if err != nil {
			problems = append(problems, err)
			continue
		}
		if problem := nameProblem(v.Name); problem != "" {
			problems = append(problems, fmt.Errorf("voice %s cannot be selected: %s; rename its two files", v.ModelPath, problem))
			continue
		}
		found = append(found, v)
	}
	sort.Slice(found, func(i, j int) bool { return found[i].Name < found[j].Name })
	return append(list, found...), errors.Join(problems...)
}

// Add checks the voice at path (its .onnx or .onnx.json: the config must be valid and the model a whole Piper voice
// model) and copies both files into Dir, creating it. It refuses to replace an existing voice of the same name unless
// replace is set, and refuses a name that would never select the voice ("default", the built-in voice's). A
// cancelled ctx stops the copy and leaves no temporary file; temporary files of an earlier add that was killed are
// removed first.
func (c Catalog) Add(ctx context.Context, path string, replace bool) (*Voice, error) {
	if c.Dir == "" {
		return nil, errors.New("no voices folder is configured (set voices_dir or TTSGEN_VOICES_DIR)")
	}
	src, err := Open(path)
	if err != nil {
		return nil, err
	}
	if problem := nameProblem(src.Name); problem != "" {
		return nil, fmt.Errorf("cannot add %s: %s; rename its two files first", src.ModelPath, problem)
	}
	if err := src.Check(); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(c.Dir, 0o777); err != nil {
		return nil, fmt.Errorf("creating the voices folder: %w", err)
	}
	if _, err := atomicfile.RemoveStale(c.Dir, func(error) {}); err != nil {
		return nil, fmt.Errorf("cleaning the voices folder: %w", err)
	}
	dstModel := filepath.Join(c.Dir, src.Name+modelSuffix)
	if !replace && c.Installed(src.Name) {
		return nil, fmt.Errorf("voice %q already exists in %s (use --replace to overwrite it)", src.Name, c.Dir)
	}
	// Config last: a voice counts as present only once its config is there, so an interrupted add leaves no
	// half-voice that List would show.
	if err := copyFileAtomic(ctx, src.ModelPath, dstModel); err != nil {
		return nil, err
	}
	if err := copyFileAtomic(ctx, src.ConfigPath, dstModel+".json"); err != nil {
		return nil, err
	}
	return Open(dstModel)
}

func copyFileAtomic(ctx context.Context, from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return fmt.Errorf("copying voice file: %w", err)
	}
	defer in.Close()
	return atomicfile.Write(to, "", nil, func(f *os.File) error {
		_, err := io.Copy(f, contextReader{ctx, in})
		return err
	})
}

// contextReader stops a copy between two reads once ctx is done.
type contextReader struct {
	ctx context.Context
	r   io.Reader
}

func (c contextReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
