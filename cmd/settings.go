package cmd

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/ttsgen/ttsgen/internal/suggest"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"

	"github.com/ttsgen/ttsgen/internal/ortlib"
)

// settings are the options every command shares. Each comes from, in order of precedence: its flag, its
// TTSGEN_* environment variable, the config file, the default. One viper instance per command tree (no globals).
type settings struct {
	v          *viper.Viper
	configFile string // --config
	configPath string // the config file read, if any
}

// settingKeys documents each shared setting; the flag is the key with '_' written as '-'.
var settingKeys = []struct{ key, def, help string }{
	{"ort_lib", "", "ONNX Runtime shared library (default: the copy that make setup puts in the cache, then system paths)"},
	{"voices_dir", "", "folder of installed voices (default: $XDG_DATA_HOME/ttsgen/voices or ~/.local/share/ttsgen/voices)"},
	{"device", "auto", "where models run: auto, cpu, webgpu or cuda (auto: a GPU provider if one starts, else CPU, with a warning only if one is present but fails to start)"},
	{"espeak_data", "", "folder that contains espeak-ng's espeak-ng-data (default: the library's own)"},
	{"precision", "fp32", "arithmetic of a voice's flow and decoder on a GPU: fp32 (Piper's own output) or fp16 (faster where the GPU has float16 kernels, slightly less exact; for voices run in decoder windows, as WebGPU runs them)"},
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

// notSettings are flags that name one run's inputs and outputs or ask for help: they come from the command line
// only, never from the environment or a config file.
var notSettings = map[string]bool{"help": true, "version": true, "config": true, "output": true, "file": true,
	"force": true, "shard": true, "inputs": true, "remove_shards": true}

// tableSettings are the config file's tables (a key per entry, which viper reads as "table.entry"), each read by the
// command it belongs to; the flag beside each takes one entry at a time (serve's --openai-voice NAME=VOICE).
var tableSettings = map[string]bool{"openai_voices": true}

// load binds flags, environment and config file. It runs before every command. Every other flag of the command is a
// setting too: given neither on the command line nor here, it is taken from TTSGEN_<KEY> or the config file's <key>
// (the flag's name with '-' written '_'), so `length_scale: 1.2` in config.yaml works like --length-scale 1.2.
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
	if _, err := os.Stat(path); err == nil {
		if err := s.readConfig(cmd.Root(), path); err != nil {
			return err
		}
	} else if explicit {
		return usageErrorf("config file: %w", err)
	}
	if err := s.applyToFlags(cmd); err != nil {
		return err
	}
	return s.validate()
}

// readConfig reads the config file at path, refusing keys that no command has: a misspelt key would otherwise
// change nothing and say nothing.
func (s *settings) readConfig(root *cobra.Command, path string) error {
	s.v.SetConfigFile(path)
	if err := s.v.ReadInConfig(); err != nil {
		return usageErrorf("reading config file %s: %w", path, err)
	}
	file := viper.New()
	file.SetConfigFile(path)
	if err := file.ReadInConfig(); err != nil {
		return usageErrorf("reading config file %s: %w", path, err)
	}
	known := settingNames(root)
	var unknown []string
	for _, key := range file.AllKeys() {
		table, _, inTable := strings.Cut(key, ".")
		if known[key] || (inTable && tableSettings[table]) {
			continue
		}
		msg := fmt.Sprintf("unknown key %q", key)
		if near := closest(key, known); near != "" && !inTable {
			msg += fmt.Sprintf(" (did you mean %q?)", near)
		} else if near := closest(table, tableSettings); near != "" && inTable {
			msg += fmt.Sprintf(" (did you mean the table %q?)", near)
		}
		unknown = append(unknown, msg)
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		return usageErrorf("config file %s: %s; the keys are the flags' names with '_' for '-' (see ttsgen COMMAND --help)",
			path, strings.Join(unknown, "; "))
	}
	s.configPath = path
	return nil
}

// settingNames are the keys a config file may hold: every flag of every command, but notSettings.
func settingNames(root *cobra.Command) map[string]bool {
	names := map[string]bool{}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		add := func(f *pflag.Flag) {
			if key := settingKey(f.Name); !notSettings[key] {
				names[key] = true
			}
		}
		c.LocalFlags().VisitAll(add)
		c.PersistentFlags().VisitAll(add)
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	return names
}

func settingKey(flag string) string { return strings.ReplaceAll(flag, "-", "_") }

// applyToFlags sets each of cmd's flags that the command line left alone from the environment or the config file,
// through the flag's own parser, so a wrong type is reported with its key and where it came from. A config file's
// list gives a repeatable flag each of its items in turn, as that many --flag VALUE would.
func (s *settings) applyToFlags(cmd *cobra.Command) error {
	var errs []error
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		key := settingKey(f.Name)
		if f.Changed || notSettings[key] {
			return
		}
		values, from, err := s.lookup(key, f)
		if err != nil {
			errs = append(errs, err)
			return
		}
		for _, value := range values {
			if err := cmd.Flags().Set(f.Name, value); err != nil {
				errs = append(errs, usageErrorf("%s: %s: %q is not a valid value for --%s (%s)", from, key, value, f.Name, f.Value.Type()))
				return
			}
		}
	})
	return errors.Join(errs...)
}

// lookup finds key, the setting of flag f, in the environment, then in the config file, and says which. It returns
// the values to set f to in turn: none if neither holds key, else one, but for a config file's list for a repeatable
// flag. An environment variable is one value, which the flag parses as it would one on the command line: pflag's
// stringSlice and map flags split it at commas, a stringArray (serve's --voice) does not, as a path may hold one.
func (s *settings) lookup(key string, f *pflag.Flag) (values []string, from string, err error) {
	env := "TTSGEN_" + strings.ToUpper(key)
	if v := os.Getenv(env); v != "" { // empty counts as unset, as viper has it
		return []string{v}, "environment variable " + env, nil
	}
	if s.configPath == "" || !s.v.InConfig(key) || tableSettings[key] {
		return nil, "", nil // a table is read by the command that owns it
	}
	from = "config file " + s.configPath
	raw := s.v.Get(key)
	switch reflect.ValueOf(raw).Kind() {
	case reflect.Map:
		return nil, "", usageErrorf("%s: %s: a table is not a valid value for --%s (%s)", from, key, f.Name, f.Value.Type())
	case reflect.Slice, reflect.Array:
		if !repeatable(f) {
			return nil, "", usageErrorf("%s: %s: a list is not a valid value for --%s, which takes one value (%s)",
				from, key, f.Name, f.Value.Type())
		}
		list := reflect.ValueOf(raw)
		for i := range list.Len() {
			item := list.Index(i).Interface()
			switch reflect.ValueOf(item).Kind() {
			case reflect.Map, reflect.Slice, reflect.Array, reflect.Invalid: // reflect.Invalid: null
				return nil, "", usageErrorf("%s: %s: item %d of the list is not a value for --%s (%s)", from, key, i+1,
					f.Name, f.Value.Type())
			}
			values = append(values, fmt.Sprint(item))
		}
		return values, from, nil
	}
	return []string{fmt.Sprint(raw)}, from, nil
}

// repeatable says whether flag f takes several values, each --flag VALUE adding to the last: pflag's slice and array
// flags, its map flags (stringToString, ...), and ttsgen's own that say so.
func repeatable(f *pflag.Flag) bool {
	switch f.Value.(type) {
	case pflag.SliceValue, repeatableValue:
		return true
	}
	return strings.HasPrefix(f.Value.Type(), "stringTo")
}

// repeatableValue is a flag value of ttsgen's own that adds each value it is set to, as pflag's slice flags do.
type repeatableValue interface {
	pflag.Value
	repeatable()
}

// validate checks the shared settings before any command starts work, so that nothing is started for a run that
// cannot go ahead.
func (s *settings) validate() error {
	switch s.device() {
	case "auto", "cpu", "webgpu", "cuda":
	default:
		return usageErrorf("unknown --device %q (want auto, cpu, webgpu or cuda)", s.device())
	}
	switch s.precision() {
	case "fp32", "fp16":
	default:
		return usageErrorf("unknown --precision %q (want fp32 or fp16)", s.precision())
	}
	if s.threads() < 0 {
		return usageErrorf("--threads %d: want 0 (all cores) or more", s.threads())
	}
	if dir := s.espeakData(); dir != "" {
		if _, err := os.Stat(filepath.Join(dir, "espeak-ng-data", "phontab")); err != nil {
			return usageErrorf("--espeak-data %s: not a folder that contains espeak-ng-data (%v)", dir, err)
		}
	}
	return nil
}

// closest is the known key nearest to key, if it is near enough to be a typo.
func closest(key string, known map[string]bool) string {
	keys := slices.Sorted(maps.Keys(known))
	return suggest.Closest(key, keys)
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
		return expandHome(d)
	}
	return filepath.Join(dataHome(), "ttsgen", "voices")
}

// expandHome reads a leading ~ as the home folder, as the shell would have: a config file's voices_dir:
// ~/voices reaches ttsgen unexpanded, and taken literally it would make a folder named ~ here.
func expandHome(p string) string {
	if p != "~" && !strings.HasPrefix(p, "~/") {
		return p
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return p
	}
	return filepath.Join(home, p[1:])
}

// ortLibrary finds the ONNX Runtime library: the setting if given (it must exist), else the cache copy that
// scripts/setup.sh installs, else one beside the binary, else common system locations.
func (s *settings) ortLibrary() (string, error) {
	explicit := expandHome(s.v.GetString("ort_lib"))
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
