package cmd

import (
	"os"
	"testing"

	"github.com/ttsgen/ttsgen/internal/phonemes"
)

// TestMain lets this test binary be the espeak-ng helper process that newFrontend starts.
func TestMain(m *testing.M) {
	phonemes.ServeChildIfAsked()
	code := m.Run()
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
	os.Exit(code)
}
