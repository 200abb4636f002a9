package engine

import "github.com/ttsgen/ttsgen/internal/ort"

// HoldDecoder makes every decoder run of m, a voice split at its decoder's latent, call before first: a test
// outside the package (one through the server, which imports this package) can hold the decoder back until it
// has seen what it waits for.
func HoldDecoder(m *Model, before func()) {
	for i, d := range m.split.decoder {
		m.split.decoder[i] = &hookRunner{graphRunner: d, before: func([]ort.Tensor) error { before(); return nil }}
	}
}
