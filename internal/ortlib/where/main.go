// Command where prints the ONNX Runtime version ttsgen needs and the path setup installs it at, one per line, so that
// scripts/setup.sh follows the same rule as the binary: `go run ./internal/ortlib/where`.
package main

import (
	"fmt"

	"github.com/ttsgen/ttsgen/internal/ortlib"
)

func main() {
	fmt.Println(ortlib.Version)
	fmt.Println(ortlib.InstallPath())
}
