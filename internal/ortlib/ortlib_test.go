package ortlib

import (
	"errors"
	"os"
	"path/filepath"
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
