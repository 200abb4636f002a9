// Package pipeline carries text through ttsgen's stages, in one direction: text -> sentences (textnorm) ->
// phonemes and ids (phonemes, with the voice's map) -> the shared synthesis engine (gpu) -> PCM (audio) -> WAV files
// and result rows (results).
//
// A Frontend turns text into sentence units; Speak streams one text's sentences through the engine and writes them
// in reading order; Batch runs whole corpora (manifests, text files, folders) through one engine so that every
// sentence of every item competes for the same device, with resumable, atomic outputs.
package pipeline
