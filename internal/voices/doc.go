// Package voices finds, reads and validates Piper-format voices: a model file X.onnx beside its config X.onnx.json.
//
// The Piper format is the ecosystem's standard, so any voice a user downloads from Piper's catalogue loads here
// unchanged: the config gives the sample rate, the phoneme type and phoneme-to-id map, the espeak-ng voice, the
// speakers and the default inference scales. ttsgen's own default voice uses the same format and is embedded in the
// binary (see embed.go), so it takes exactly the path every downloaded voice takes.
//
// A Catalog knows the embedded default voice and a voices folder on disk (the `voices_dir` setting); a voice is named
// by its file name without ".onnx" or by a path to either of its two files.
package voices
