package cmd

import (
	"fmt"
	"runtime/debug"

	"github.com/ttsgen/ttsgen/internal/ortlib"
	"github.com/ttsgen/ttsgen/internal/phonemes"
)

// versionLine is what `ttsgen --version` prints: the module version and commit the binary was built from (Go
// records them from git at build time), and the versions of the two native libraries it runs on.
func versionLine() string {
	version, commit := "(devel)", "unknown"
	if info, ok := debug.ReadBuildInfo(); ok {
		if info.Main.Version != "" {
			version = info.Main.Version
		}
		var dirty bool
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				commit = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
		if len(commit) > 12 {
			commit = commit[:12]
		}
		if dirty {
			commit += " (modified)"
		}
	}
	return fmt.Sprintf("ttsgen %s, commit %s\nONNX Runtime %s (the release setup installs; --ort-lib may name another)\nespeak-ng %s",
		version, commit, ortlib.Version, phonemes.EspeakVersion())
}
