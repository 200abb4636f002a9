package voices

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"strings"
	"sync"
)

// defaultVoiceFS holds the default voice, compiled into the binary so the first command works on a fresh machine.
// The folder holds exactly one voice (X.onnx + X.onnx.json); see default/MODEL_CARD.md for what it is.
//
//go:embed default
var defaultVoiceFS embed.FS

const defaultDir = "default"

// DefaultName is the name of the embedded default voice.
var DefaultName = mustDefaultName()

func mustDefaultName() string {
	entries, err := fs.ReadDir(defaultVoiceFS, defaultDir)
	if err != nil {
		panic(fmt.Sprintf("embedded default voice folder unreadable: %v", err))
	}
	for _, e := range entries {
		if name, ok := strings.CutSuffix(e.Name(), configSuffix); ok {
			return name
		}
	}
	panic("embedded default voice folder has no " + configSuffix)
}

func defaultVoice() (*Voice, error) {
	read := func(suffix string) ([]byte, error) {
		return defaultVoiceFS.ReadFile(path.Join(defaultDir, DefaultName+suffix))
	}
	cfgData, err := read(configSuffix)
	if err != nil {
		return nil, fmt.Errorf("reading the embedded default voice: %w", err)
	}
	cfg, err := ParseConfig(cfgData)
	if err != nil {
		return nil, fmt.Errorf("the embedded default voice's config is invalid: %w", err)
	}
	model, err := read(modelSuffix)
	if err != nil {
		return nil, fmt.Errorf("reading the embedded default voice: %w", err)
	}
	return &Voice{
		Name:       DefaultName,
		Config:     cfg,
		Embedded:   true,
		ModelSize:  int64(len(model)),
		configSize: int64(len(cfgData)),
		model:      func() ([]byte, error) { return model, nil },
		identity:   defaultIdentity(),
	}, nil
}

// defaultIdentity digests the embedded voice once: it changes only with the binary.
var defaultIdentity = sync.OnceValue(func() string {
	cfg, _ := defaultVoiceFS.ReadFile(path.Join(defaultDir, DefaultName+configSuffix))
	model, _ := defaultVoiceFS.ReadFile(path.Join(defaultDir, DefaultName+modelSuffix))
	return digest(cfg, model)
})
