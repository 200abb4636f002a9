// Command ttsgen is batch neural text-to-speech with Piper voices. See README.md, or run `ttsgen --help`.
package main

import (
	"os"

	"github.com/ttsgen/ttsgen/cmd"
	"github.com/ttsgen/ttsgen/internal/phonemes"
)

func main() {
	// This executable is also the helper process that runs espeak-ng for phonemes.Isolated.
	phonemes.ServeChildIfAsked()
	os.Exit(cmd.Execute())
}
