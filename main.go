// Command ttsgen is batch neural text-to-speech with Piper voices. See README.md, or run `ttsgen --help`.
package main

import (
	"os"

	"github.com/ttsgen/ttsgen/cmd"
)

func main() { os.Exit(cmd.Execute()) }
