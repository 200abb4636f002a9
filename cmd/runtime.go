package cmd

import (
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/ttsgen/ttsgen/internal/engine"
	"github.com/ttsgen/ttsgen/internal/ort"
	"github.com/ttsgen/ttsgen/internal/phonemes"
	"github.com/ttsgen/ttsgen/internal/pipeline"
	"github.com/ttsgen/ttsgen/internal/voices"
)

// synthRuntime is what the synthesis commands share for one run: one engine for everything, the phonemizer, and
// each voice loaded at most once.
type synthRuntime struct {
	engine   *engine.Engine
	frontend *pipeline.Frontend
	catalog  voices.Catalog

	mu     sync.Mutex
	found  map[string]*voices.Voice
	loaded map[string]*pipeline.LoadedVoice
}

// engineTuning lets a command adjust the engine (bench's sequential baseline does).
type engineTuning func(*engine.Options)

// newRuntime starts ONNX Runtime and the engine, then the espeak-ng helper, and leaves nothing running when it
// fails. The settings were validated before the command started (settings.validate).
func (s *settings) newRuntime(con *console, normalize bool, tune ...engineTuning) (*synthRuntime, error) {
	lib, err := s.ortLibrary()
	if err != nil {
		return nil, err
	}
	if err := ort.Init(lib); err != nil {
		return nil, fmt.Errorf("starting ONNX Runtime: %w", err)
	}
	opts := engine.Options{Device: ort.Device(s.device()), Threads: s.threads(), Precision: engine.Precision(s.precision()),
		Logf: con.Warnf}
	for _, t := range tune {
		t(&opts)
	}
	eng, err := engine.NewEngine(opts)
	if err != nil {
		return nil, fmt.Errorf("starting the synthesis engine: %w", err)
	}
	front, err := s.newFrontend(con, normalize)
	if err != nil {
		return nil, errors.Join(err, eng.Close())
	}
	return &synthRuntime{
		engine:   eng,
		frontend: front,
		catalog:  voices.Catalog{Dir: s.voicesDir()},
		found:    map[string]*voices.Voice{},
		loaded:   map[string]*pipeline.LoadedVoice{},
	}, nil
}

// newFrontend runs espeak-ng in a helper process, so that text which crashes or hangs libespeak-ng
// costs that text an error instead of the whole run. closeFrontend stops the helper.
func (s *settings) newFrontend(con *console, normalize bool) (*pipeline.Frontend, error) {
	esp, err := phonemes.NewIsolated(s.espeakData(), phonemes.DefaultPhonemizeTimeout)
	if err != nil {
		return nil, fmt.Errorf("starting espeak-ng: %w", err)
	}
	return &pipeline.Frontend{Espeak: esp, Normalize: normalize, Warnf: con.Warnf}, nil
}

// closeFrontend stops what newFrontend started.
func closeFrontend(f *pipeline.Frontend) error {
	if c, ok := f.Espeak.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// findVoice finds a voice and checks its model (without reading it whole: voices.Voice.Check), once per name.
func (r *synthRuntime) findVoice(name string) (*voices.Voice, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.findLocked(name)
}

func (r *synthRuntime) findLocked(name string) (*voices.Voice, error) {
	if v, ok := r.found[name]; ok {
		return v, nil
	}
	v, err := findChecked(r.catalog, name)
	if err != nil {
		return nil, err
	}
	r.found[name] = v
	return v, nil
}

// remember makes v what findVoice gives for name: a voice the command found and checked before the runtime started
// (batch's --voice), which is then not found and checked a second time.
func (r *synthRuntime) remember(name string, v *voices.Voice) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.found[name] = v
}

// findChecked finds a voice in catalog and checks its model without reading it whole (voices.Voice.Check).
func findChecked(catalog voices.Catalog, name string) (*voices.Voice, error) {
	v, err := catalog.Find(name)
	if err != nil {
		return nil, err
	}
	return v, v.Check()
}

// loadVoice finds a voice and loads its model into the engine, once per name.
func (r *synthRuntime) loadVoice(name string) (*pipeline.LoadedVoice, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if lv, ok := r.loaded[name]; ok {
		return lv, nil
	}
	v, err := r.findLocked(name)
	if err != nil {
		return nil, err
	}
	model, err := v.Model()
	if err != nil {
		return nil, err
	}
	m, err := r.engine.Load(v.Name, model, engine.ModelConfig{
		SampleRate:  v.Config.Audio.SampleRate,
		NumSpeakers: v.Config.NumSpeakers,
	})
	if err != nil {
		return nil, err // "engine: loading voice ...": a batch's row says "loading its voice: " before it
	}
	lv := &pipeline.LoadedVoice{Voice: v, Model: m}
	r.loaded[name] = lv
	return lv, nil
}

func (r *synthRuntime) close() error {
	return errors.Join(r.engine.Close(), closeFrontend(r.frontend))
}
