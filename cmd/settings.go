package cmd

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/viper"

	"github.com/ttsgen/ttsgen/internal/ortlib"
)

// settings are the options every command shares. Each comes from, in order of precedence: its flag, its
// TTSGEN_* environment variable, the config file, the default. One viper instance per command tree (no globals).
type settings struct {
	v          *viper.Viper
	configFile string
}

// settingKeys documents each shared setting; the flag is the key with '_' written as '-'.
var settingKeys = []struct{ key, def, help string }{
	{"ort_lib", "", "ONNX Runtime shared library (default: the copy that make setup puts in the cache, then system paths)"},
	{"voices_dir", "", "folder of installed voices (default: $XDG_DATA_HOME/ttsgen/voices or ~/.local/share/ttsgen/voices)"},
	{"device", "auto", "where models run: auto, cpu, webgpu or cuda (auto tries GPUs, falls back to CPU with a warning)"},
	{"espeak_data", "", "folder that contains espeak-ng's espeak-ng-data (default: the library's own)"},
	{"precision", "fp32", "arithmetic of a voice's flow and decoder on a GPU: fp32 (Piper's own output, to 1e-6) or fp16 (20-35% faster through WebGPU, within 43-52 dB SNR of fp32; it applies to voices run in decoder windows, as WebGPU runs them by default)"},
}

func newSettings() *settings { return &settings{v: viper.New()} }

func (s *settings) addPersistentFlags(root *cobra.Command) {
	f := root.PersistentFlags()
	f.StringVar(&s.configFile, "config", "", "config file (default: $XDG_CONFIG_HOME/ttsgen/config.yaml if it exists)")
	for _, k := range settingKeys {
		f.String(flagName(k.key), k.def, k.help+envHint(k.key))
	}
	f.Int("threads", 0, "CPU threads to use (0 = all cores)"+envHint("threads"))
	f.BoolP("quiet", "q", false, "no progress or warnings on stderr (errors are still printed)")
}

func flagName(key string) string { return strings.ReplaceAll(key, "_", "-") }
func envHint(key string) string  { return " [$TTSGEN_" + strings.ToUpper(key) + "]" }

// load binds flags, environment and config file. It runs before every command.
func (s *settings) load(cmd *cobra.Command) error {
	s.v.SetEnvPrefix("TTSGEN")
	s.v.SetEnvKeyReplacer(strings.NewReplacer("-", "_"))
	s.v.AutomaticEnv()
	for _, k := range append(keysOf(settingKeys), "threads", "quiet") {
		if err := s.v.BindPFlag(k, cmd.Flags().Lookup(flagName(k))); err != nil {
			return fmt.Errorf("binding flag %s: %w", k, err)
		}
	}
	path := s.configFile
	explicit := path != ""
	if !explicit {
		path = filepath.Join(configHome(), "ttsgen", "config.yaml")
	}
	if _, err := os.Stat(path); err != nil {
		if explicit {
			return usageErrorf("config file: %w", err)
		}
		return nil
	}
	s.v.SetConfigFile(path)
	if err := s.v.ReadInConfig(); err != nil {
		return fmt.Errorf("reading config file %s: %w", path, err)
	}
	return nil
}

func keysOf(ks []struct{ key, def, help string }) []string {
	out := make([]string, len(ks))
	for i, k := range ks {
		out[i] = k.key
	}
	return out
}

func (s *settings) device() string     { return strings.ToLower(s.v.GetString("device")) }
func (s *settings) threads() int       { return s.v.GetInt("threads") }
func (s *settings) precision() string  { return strings.ToLower(s.v.GetString("precision")) }
func (s *settings) quiet() bool        { return s.v.GetBool("quiet") }
func (s *settings) espeakData() string { return s.v.GetString("espeak_data") }

func (s *settings) voicesDir() string {
	if d := s.v.GetString("voices_dir"); d != "" {
		return d
	}
	return filepath.Join(dataHome(), "ttsgen", "voices")
}

// ortLibrary finds the ONNX Runtime library: the setting if given (it must exist), else the cache copy that
// scripts/setup.sh installs, else one beside the binary, else common system locations.
func (s *settings) ortLibrary() (string, error) {
	explicit := s.v.GetString("ort_lib")
	p, err := ortlib.Find(explicit)
	if err != nil && explicit != "" {
		return "", fmt.Errorf("ONNX Runtime library (--ort-lib / TTSGEN_ORT_LIB / ort_lib): %w", err)
	}
	return p, err
}

func configHome() string {
	if d := os.Getenv("XDG_CONFIG_HOME"); d != "" {
		return d
	}
	return filepath.Join(homeDir(), ".config")
}

func dataHome() string {
	if d := os.Getenv("XDG_DATA_HOME"); d != "" {
		return d
	}
	return filepath.Join(homeDir(), ".local", "share")
}

func homeDir() string {
	if h, err := os.UserHomeDir(); err == nil {
		return h
	}
	return "."
}
