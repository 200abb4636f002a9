package ortlib

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

func TestInstallPathFollowsTheCacheRule(t *testing.T) {
	t.Setenv("HOME", "/home/u")
	for _, tt := range []struct{ cache, xdg, want string }{
		{"", "", "/home/u/.cache/ttsgen/ort/" + Version + "/" + FileName},
		{"", "/xdg", "/xdg/ttsgen/ort/" + Version + "/" + FileName},
		{"/c", "/xdg", "/c/ort/" + Version + "/" + FileName},
	} {
		t.Setenv("TTSGEN_CACHE_DIR", tt.cache)
		t.Setenv("XDG_CACHE_HOME", tt.xdg)
		if got := InstallPath(); got != tt.want {
			t.Errorf("TTSGEN_CACHE_DIR=%q XDG_CACHE_HOME=%q: InstallPath() = %q, want %q", tt.cache, tt.xdg, got, tt.want)
		}
	}
}

func TestFind(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("TTSGEN_CACHE_DIR", dir)
	t.Setenv("XDG_CACHE_HOME", "")
	if _, err := Find(filepath.Join(dir, "absent.so")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Find(absent explicit path) error = %v, want not-exist", err)
	}
	if p, err := Find(""); err == nil && p == InstallPath() {
		t.Fatalf("Find found %s before it was installed", p)
	} else if err != nil && (!errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), InstallPath())) {
		t.Errorf("Find error = %v, want ErrNotFound naming %s", err, InstallPath())
	}
	if err := os.MkdirAll(filepath.Dir(InstallPath()), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(InstallPath(), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if p, err := Find(""); err != nil || p != InstallPath() {
		t.Errorf("Find() = %q, %v; want the install path %s", p, err, InstallPath())
	}
}

// The system candidate is Debian/Ubuntu's multiarch folder, whose names are not GOARCH's (amd64 is x86_64-linux-gnu).
func TestMultiarchFolders(t *testing.T) {
	for _, tt := range []struct{ goarch, want string }{
		{"amd64", "x86_64-linux-gnu"},
		{"arm64", "aarch64-linux-gnu"},
		{"386", "i386-linux-gnu"},
		{"arm", "arm-linux-gnueabihf"},
		{"ppc64le", "powerpc64le-linux-gnu"},
		{"s390x", "s390x-linux-gnu"},
		{"riscv64", "riscv64-linux-gnu"},
		{"wasm", ""},
	} {
		if got := multiarch(tt.goarch); got != tt.want {
			t.Errorf("multiarch(%q) = %q, want %q", tt.goarch, got, tt.want)
		}
	}
	want := multiarch(runtime.GOARCH)
	var system []string
	for _, c := range Candidates() {
		if strings.HasPrefix(c, "/usr/lib/") && strings.Contains(c, "-linux-gnu") {
			system = append(system, c)
		}
	}
	if want == "" && len(system) != 0 || want != "" && !slices.Equal(system, []string{"/usr/lib/" + want + "/" + FileName}) {
		t.Errorf("Candidates' multiarch folders on %s = %q, want only /usr/lib/%s/", runtime.GOARCH, system, want)
	}
}
