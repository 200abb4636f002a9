package cmd

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/ttsgen/ttsgen/internal/engine"
	"github.com/ttsgen/ttsgen/internal/ort"
)

// tuneKey is one engine tuning knob that `bench --tune KEY=VALUE` sets.
type tuneKey struct {
	name, help string
	set        func(t *engine.Tuning, value string, given bool) error // given: the argument had "=VALUE"
}

// tuneKeys are bench's --tune keys, in the order `--tune help` lists them.
var tuneKeys = []tuneKey{
	intKey("max-batch", "most sentences per device run (0 = the device's default)",
		func(t *engine.Tuning) *int { return &t.MaxBatch }),
	intKey("max-batch-phonemes", "cap on sentences x longest sentence per run (0 = the device's default)",
		func(t *engine.Tuning) *int { return &t.MaxBatchPhonemes }),
	intKey("threads-per-session", "intra-op threads of each CPU session (0 = default)",
		func(t *engine.Tuning) *int { return &t.ThreadsPerSession }),
	intKey("in-flight", "GPU runs in flight at once (0 = default)",
		func(t *engine.Tuning) *int { return &t.InFlight }),
	intKey("decoder-window", fmt.Sprintf("frames per decoder window, continuous batching (0 = the device's default: "+
		"%d on webgpu, off elsewhere; -1 = off)", engine.DefaultGPUDecoderWindow),
		func(t *engine.Tuning) *int { return &t.DecoderWindow }),
	intKey("decoder-margin", "frames of context each decoder window reads on both sides (0 = the voice's receptive field)",
		func(t *engine.Tuning) *int { return &t.DecoderMargin }),
	intKey("decoder-batch", fmt.Sprintf("most decoder windows per run (0 = %d frames of windows per run, %d with "+
		"--precision fp16; fewer for short windows)", engine.DefaultDecoderFrames, engine.DefaultHalfDecoderFrames),
		func(t *engine.Tuning) *int { return &t.DecoderBatch }),
	choiceKey("upsampling", "the voice's own ConvTranspose, or the same sums as Convs (default: the device's)",
		func(t *engine.Tuning) *engine.Upsampling { return &t.Upsampling },
		engine.UpsamplingConvTranspose, engine.UpsamplingPolyphase),
	choiceKey("acoustic-device", "where split voices' acoustic part runs; cpu: CPU sessions, the decoder windows "+
		"on the GPU (default: cpu on webgpu)",
		func(t *engine.Tuning) *ort.Device { return &t.AcousticDevice }, ort.DeviceCPU, ort.DeviceWebGPU, ort.DeviceCUDA),
	choiceKey("text-device", "with the acoustic part on the CPU, where its text encoder and duration predictor "+
		"run; auto: on the GPU when it is idle, else on the CPU (default: auto on webgpu)",
		func(t *engine.Tuning) *ort.Device { return &t.TextDevice },
		ort.DeviceCPU, ort.DeviceAuto, ort.DeviceWebGPU, ort.DeviceCUDA),
	intKey("acoustic-gpu-workers", "with the acoustic part on the CPU, this many more workers run it on the GPU",
		func(t *engine.Tuning) *int { return &t.AcousticGPUWorkers }),
	intKey("text-piece", fmt.Sprintf("sentences at a time of a batch's text part run on the CPU while the GPU is "+
		"busy (0 = %d; -1 = the whole batch)", engine.DefaultTextPiece),
		func(t *engine.Tuning) *int { return &t.TextPiece }),
	intKey("tail-tile", fmt.Sprintf("on the CPU, samples per tile of the decoder's last two upsampling stages' input "+
		"(0 = %d; -1 = whole sentences)", engine.DefaultTailTile),
		func(t *engine.Tuning) *int { return &t.TailTile }),
	boolKey("no-padding-masks", "run decoders as exported, without the masks that keep padding out of each "+
		"sentence's audio", func(t *engine.Tuning) *bool { return &t.NoPaddingMasks }),
	boolKey("no-strips", "cut decoder windows from each sentence alone, not from strips of a batch's sentences",
		func(t *engine.Tuning) *bool { return &t.NoStrips }),
	boolKey("session-arenas", "each CPU session keeps its own memory arena rather than sharing one",
		func(t *engine.Tuning) *bool { return &t.SessionArenas }),
	{name: "provider-option", help: "NAME=VALUE for the GPU provider (repeatable); ep.webgpuexecutionprovider.NAME " +
		"to the GPU sessions' configuration, session.NAME to every session's",
		set: func(t *engine.Tuning, v string, _ bool) error {
			name, value, ok := strings.Cut(v, "=")
			if !ok || name == "" {
				return fmt.Errorf("want provider-option=NAME=VALUE, not %q", v)
			}
			if t.ProviderOptions == nil {
				t.ProviderOptions = map[string]string{}
			}
			t.ProviderOptions[name] = value
			return nil
		}},
	{name: "ort-profile", help: "write ONNX Runtime's per-node profile of every session to PREFIX_<date>.json",
		set: func(t *engine.Tuning, v string, given bool) error {
			if !given || v == "" {
				return fmt.Errorf("want ort-profile=PREFIX")
			}
			t.ProfilePrefix = v
			return nil
		}},
}

func intKey(name, help string, field func(*engine.Tuning) *int) tuneKey {
	return tuneKey{name: name, help: help, set: func(t *engine.Tuning, v string, _ bool) error {
		n, err := strconv.Atoi(v)
		if err != nil {
			return fmt.Errorf("%q is not a whole number", v)
		}
		*field(t) = n
		return nil
	}}
}

// boolKey is a switch: KEY alone or KEY=true turns it on.
func boolKey(name, help string, field func(*engine.Tuning) *bool) tuneKey {
	return tuneKey{name: name, help: help, set: func(t *engine.Tuning, v string, given bool) error {
		on, err := strconv.ParseBool(v)
		if !given {
			on, err = true, nil
		}
		if err != nil {
			return fmt.Errorf("%q is not true or false", v)
		}
		*field(t) = on
		return nil
	}}
}

func choiceKey[T ~string](name, help string, field func(*engine.Tuning) *T, choices ...T) tuneKey {
	var names []string
	for _, c := range choices {
		names = append(names, string(c))
	}
	help += " (" + strings.Join(names, ", ") + ")"
	return tuneKey{name: name, help: help, set: func(t *engine.Tuning, v string, _ bool) error {
		if !slices.Contains(choices, T(v)) {
			return fmt.Errorf("%q is not one of %s", v, strings.Join(names, ", "))
		}
		*field(t) = T(v)
		return nil
	}}
}

// tuneFlag is bench's repeatable --tune KEY=VALUE: each sets one of tuneKeys in tuning; "help" asks for the list.
type tuneFlag struct {
	tuning *engine.Tuning
	help   *bool
}

func (f tuneFlag) String() string { return "" }
func (f tuneFlag) Type() string   { return "KEY=VALUE" }

// repeatable marks --tune as a flag that a config file's list gives each item of, as that many --tune would.
func (tuneFlag) repeatable() {}

func (f tuneFlag) Set(arg string) error {
	if arg == "help" {
		*f.help = true
		return nil
	}
	name, value, given := strings.Cut(arg, "=")
	i := slices.IndexFunc(tuneKeys, func(k tuneKey) bool { return k.name == name })
	if i < 0 {
		names := make([]string, len(tuneKeys))
		for i, k := range tuneKeys {
			names[i] = k.name
		}
		return fmt.Errorf("unknown key %q; the keys are %s (--tune help describes them)", name, strings.Join(names, ", "))
	}
	if err := tuneKeys[i].set(f.tuning, value, given); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// writeTuneKeys lists the --tune keys with what each does.
func writeTuneKeys(w io.Writer) error {
	width := 0
	for _, k := range tuneKeys {
		width = max(width, len(k.name))
	}
	if _, err := fmt.Fprintln(w, "bench --tune KEY=VALUE changes the engine's defaults (a switch needs no =VALUE):"); err != nil {
		return err
	}
	for _, k := range tuneKeys {
		if _, err := fmt.Fprintf(w, "  %-*s  %s\n", width, k.name, k.help); err != nil {
			return err
		}
	}
	return nil
}
