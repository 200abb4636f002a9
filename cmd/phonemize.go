package cmd

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ttsgen/ttsgen/internal/pipeline"
	"github.com/ttsgen/ttsgen/internal/voices"
)

// phonemizeOptions is everything phonemize needs, as its flags and arguments give it.
type phonemizeOptions struct {
	voice, file         string
	asJSON, noNormalize bool
	args                []string
}

// newPhonemizeCmd builds the command; runF, when set, replaces runPhonemize (tests check the parsed options).
func newPhonemizeCmd(s *settings, streams IO, runF func(*phonemizeOptions) error) *cobra.Command {
	o := &phonemizeOptions{}
	cmd := &cobra.Command{
		Use:   "phonemize [TEXT...]",
		Short: "Show the phonemes and model ids a voice gets for a text",
		Long: `Print what the voice's model receives, one line per sentence: the phonemes (as Piper makes them with
espeak-ng), or with --json one object per line: {"text": <the sentence, normalised unless --no-normalize>,
"phonemes": <phoneme string>, "ids": [<model input ids>]}. Needs only the voice's .onnx.json, not ONNX Runtime.

Each line of the input, without the white space around it, is phonemized on its own, as Piper's command line
reads its input, so a file of one sentence per line gives exactly Piper's ids with --no-normalize. (synth and
batch read a document as a whole, where a line break inside a paragraph does not end a sentence.)

Phonemes written in double brackets, "[[ həlˈoʊ ]]", go to the voice as they are, one phoneme per character, as
in Piper (also in synth, batch and manifests); the words around them are normalised and phonemized as usual.`,
		Example: `  ttsgen phonemize 'Dr. Smith paid $5 on March 3rd.'
  ttsgen phonemize --json --no-normalize --voice en_GB-alan-medium --file text.txt
  ttsgen phonemize "Say [[ həlˈoʊ ]] to them."`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.file != "" && len(args) > 0 {
				return usageErrorf("give the text either as arguments or with --file, not both")
			}
			o.args = args
			if runF != nil {
				return runF(o)
			}
			return runPhonemize(cmd.Context(), s, streams, o)
		},
	}
	cmd.Flags().StringVar(&o.voice, "voice", "", "voice whose phoneme map to use (default: the built-in voice)")
	cmd.Flags().StringVarP(&o.file, "file", "f", "", "read the text from this file")
	cmd.Flags().BoolVar(&o.asJSON, "json", false, `one JSON object per sentence: {"text","phonemes","ids"}`)
	cmd.Flags().BoolVar(&o.noNormalize, "no-normalize", false, "phonemize the text as is (exactly what Piper does)")
	return cmd
}

// runPhonemize prints each sentence's phonemes (or, with --json, its text, phonemes and ids).
func runPhonemize(ctx context.Context, s *settings, streams IO, o *phonemizeOptions) error {
	text, err := readSynthText(ctx, streams, o.file, o.args)
	if err != nil {
		return err
	}
	v, err := voices.Catalog{Dir: s.voicesDir()}.Find(o.voice)
	if err != nil {
		return err
	}
	front, err := s.newFrontend(newConsole(streams, s.quiet()), !o.noNormalize)
	if err != nil {
		return err
	}
	defer closeFrontend(front)
	var sentences []pipeline.Sentence
	for _, line := range strings.Split(text, "\n") {
		got, err := front.Sentences(strings.TrimSpace(line), v.Config)
		if err != nil {
			return err
		}
		sentences = append(sentences, got...)
	}
	enc := json.NewEncoder(streams.Out)
	enc.SetEscapeHTML(false)
	for _, sent := range sentences {
		if o.asJSON {
			if err := enc.Encode(sent); err != nil {
				return err
			}
			continue
		}
		if _, err := fmt.Fprintln(streams.Out, sent.Phonemes); err != nil {
			return err
		}
	}
	return nil
}
