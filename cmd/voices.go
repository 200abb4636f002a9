package cmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/ttsgen/ttsgen/internal/voices"
)

// voicesListOptions is everything `voices list` needs.
type voicesListOptions struct {
	available bool
	catalog   string // URL or file of voices.json, for --available
	asJSON    bool
	dir       string // the voices folder
}

// voicesInfoOptions is everything `voices info` needs.
type voicesInfoOptions struct {
	name   string // a voice's name or the path of either of its files
	asJSON bool
	dir    string
}

// voicesAddOptions is everything `voices add` needs.
type voicesAddOptions struct {
	path    string
	replace bool
	asJSON  bool
	dir     string
}

// voicesRunners, where set, replace what each subcommand of `voices` runs (tests check the parsed options); the
// zero value runs them.
type voicesRunners struct {
	list     func(*voicesListOptions) error
	info     func(*voicesInfoOptions) error
	add      func(*voicesAddOptions) error
	download func(*voicesDownloadOptions) error
}

func newVoicesCmd(s *settings, streams IO, runners voicesRunners) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "voices",
		Short: "List, inspect and add Piper voices",
		Long: `Voices are Piper-format: a model X.onnx with its config X.onnx.json beside it. Any voice from Piper's
catalogue works. The built-in default voice is always there; others live in the voices folder
(--voices-dir, default ~/.local/share/ttsgen/voices). Refer to a voice by name or by the path of either file.`,
		Example: `  ttsgen voices list
  ttsgen voices list --available
  ttsgen voices download en_GB-alan-medium
  ttsgen voices info en_US-ttsgen-medium --json
  ttsgen voices add ~/Downloads/en_GB-alan-medium.onnx`,
	}
	cmd.PersistentFlags().BoolVar(&asJSON, "json", false, "print JSON instead of a table")

	var lo voicesListOptions
	list := &cobra.Command{
		Use:   "list",
		Short: "List the built-in voice and the installed ones (--available: Piper's catalogue)",
		Long: `List the built-in voice and the installed ones, or with --available the voices of Piper's catalogue, saying
which are installed. A voice's SIZE (size_bytes with --json) is its model and config together, in both lists: what
a download of it fetches.`,
		Example: `  ttsgen voices list
  ttsgen voices list --json | jq -r '.[].name'
  ttsgen voices list --voices-dir /srv/ttsgen/voices
  ttsgen voices list --available
  ttsgen voices list --available --catalog ~/mirror/piper-voices/voices.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			lo.asJSON, lo.dir = asJSON, s.voicesDir()
			if runners.list != nil {
				return runners.list(&lo)
			}
			return runVoicesList(cmd.Context(), s, streams, &lo)
		},
	}
	list.Flags().BoolVar(&lo.available, "available", false, "list the voices of Piper's catalogue (languages, qualities, sizes) instead")
	list.Flags().StringVar(&lo.catalog, "catalog", voices.DefaultIndex, "the voice catalogue for --available: a `URL` or FILE of voices.json")
	cmd.AddCommand(list)
	cmd.AddCommand(newVoicesDownloadCmd(s, streams, &asJSON, runners.download))
	var infoOpts voicesInfoOptions
	cmd.AddCommand(&cobra.Command{
		Use:   "info NAME|PATH",
		Short: "Show one voice's details",
		Example: `  ttsgen voices info en_US-ttsgen-medium
  ttsgen voices info en_GB-alan-medium --json
  ttsgen voices info ~/Downloads/en_GB-alan-medium.onnx   # a voice not installed, by either of its files`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			infoOpts.name, infoOpts.asJSON, infoOpts.dir = args[0], asJSON, s.voicesDir()
			if runners.info != nil {
				return runners.info(&infoOpts)
			}
			v, err := voices.Catalog{Dir: infoOpts.dir}.Find(infoOpts.name)
			if err != nil {
				return err
			}
			return printVoice(streams.Out, v, infoOpts.asJSON)
		},
	})
	var ao voicesAddOptions
	add := &cobra.Command{
		Use:   "add PATH",
		Short: "Install a Piper voice (X.onnx + X.onnx.json) into the voices folder",
		Long: `Install a Piper voice (X.onnx + X.onnx.json) into the voices folder, under the name X.

The config must be a valid Piper voice config, and the model a whole ONNX model with a Piper voice's inputs
(input, input_lengths, scales, and sid for a voice of several speakers) and output (output): a truncated download
or another kind of file is refused. The check reads the model's graph description only, not its weights. The name
"default" (and the built-in voice's) always means the built-in voice, so a voice of that name is refused: rename
its two files. Ctrl-C stops the copy and leaves nothing behind.

A PATH that is not there, or is a folder, or a voice whose other file is not beside it, is a usage error (exit
status 2), said before anything is read or copied; a voice whose files are there but are not a Piper voice's is
refused with exit status 1.`,
		Example: `  ttsgen voices add ~/Downloads/en_GB-alan-medium.onnx        # its .onnx.json beside it
  ttsgen voices add ~/Downloads/en_GB-alan-medium.onnx.json   # either file will do
  ttsgen voices add --replace ~/Downloads/en_GB-alan-medium.onnx
  ttsgen voices add --voices-dir /srv/ttsgen/voices --json ~/Downloads/en_GB-alan-medium.onnx`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ao.path, ao.asJSON, ao.dir = args[0], asJSON, s.voicesDir()
			if runners.add != nil {
				return runners.add(&ao)
			}
			v, err := voices.Catalog{Dir: ao.dir}.Add(cmd.Context(), ao.path, ao.replace)
			if errors.Is(err, voices.ErrNotVoiceFiles) { // said before anything is read or copied
				return usageError{err}
			}
			if err != nil {
				return err
			}
			if !ao.asJSON {
				fmt.Fprintf(streams.Out, "added %s\n", v.Name)
			}
			return printVoice(streams.Out, v, ao.asJSON)
		},
	}
	add.Flags().BoolVar(&ao.replace, "replace", false, "replace an installed voice of the same name")
	cmd.AddCommand(add)
	return cmd
}

// runVoicesList prints the installed voices, or with --available the catalogue's.
func runVoicesList(ctx context.Context, s *settings, streams IO, o *voicesListOptions) error {
	catalog := voices.Catalog{Dir: o.dir}
	if o.available {
		return listAvailable(ctx, voices.Fetcher{}, o.catalog, catalog, streams.Out, o.asJSON)
	}
	list, problems := catalog.List()
	if list == nil {
		return problems
	}
	if problems != nil {
		newConsole(streams, s.quiet()).Warnf("some voices in %s are unusable: %v", o.dir, problems)
	}
	if o.asJSON {
		infos := make([]voiceInfo, len(list))
		for i, v := range list {
			infos[i] = infoOf(v)
		}
		return writeJSON(streams.Out, infos)
	}
	tw := tabwriter.NewWriter(streams.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tLANGUAGE\tRATE\tSPEAKERS\tSIZE\tWHERE")
	for _, v := range list {
		in := infoOf(v)
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t%s\n", in.Name, in.Language, in.SampleRate, in.Speakers, humanBytes(in.SizeBytes), in.Where)
	}
	return tw.Flush()
}

// voiceInfo is what `voices list/info --json` prints for a voice.
type voiceInfo struct {
	Name         string           `json:"name"`
	Language     string           `json:"language"`
	SampleRate   int              `json:"sample_rate"`
	Quality      string           `json:"quality,omitempty"`
	Speakers     int              `json:"speakers"`
	SpeakerNames []string         `json:"speaker_names,omitempty"`
	PhonemeType  string           `json:"phoneme_type"`
	EspeakVoice  string           `json:"espeak_voice,omitempty"`
	SizeBytes    int64            `json:"size_bytes"`
	Where        string           `json:"where"`
	Inference    voices.Inference `json:"inference"`
}

func infoOf(v *voices.Voice) voiceInfo {
	where := v.ModelPath
	if v.Embedded {
		where = "(built in)"
	}
	c := v.Config
	return voiceInfo{
		Name: v.Name, Language: c.LanguageCode(), SampleRate: c.Audio.SampleRate, Quality: c.Audio.Quality,
		Speakers: c.NumSpeakers, SpeakerNames: c.SpeakerNames(), PhonemeType: c.PhonemeType,
		EspeakVoice: c.Espeak.Voice, SizeBytes: v.Size(), Where: where, Inference: c.Inference,
	}
}

func printVoice(w io.Writer, v *voices.Voice, asJSON bool) error {
	in := infoOf(v)
	if asJSON {
		return writeJSON(w, in)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "name:\t%s\n", in.Name)
	fmt.Fprintf(tw, "language:\t%s\n", in.Language)
	fmt.Fprintf(tw, "sample rate:\t%d Hz\n", in.SampleRate)
	if in.Quality != "" {
		fmt.Fprintf(tw, "quality:\t%s\n", in.Quality)
	}
	fmt.Fprintf(tw, "speakers:\t%d\n", in.Speakers)
	if len(in.SpeakerNames) > 0 {
		fmt.Fprintf(tw, "speaker names:\t%v\n", in.SpeakerNames)
	}
	fmt.Fprintf(tw, "phonemes:\t%s %s\n", in.PhonemeType, in.EspeakVoice)
	fmt.Fprintf(tw, "defaults:\tlength_scale %g, noise_scale %g, noise_w %g\n", in.Inference.LengthScale, in.Inference.NoiseScale, in.Inference.NoiseW)
	fmt.Fprintf(tw, "size:\t%s\n", humanBytes(in.SizeBytes))
	fmt.Fprintf(tw, "where:\t%s\n", in.Where)
	return tw.Flush()
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// humanBytes is a file's size in decimal units, as the model card, Piper's catalogue page and Hugging Face give
// voices' sizes (18,500,000 bytes is "18.5 MB", not 17.6).
func humanBytes(n int64) string {
	switch {
	case n >= 1e6:
		return fmt.Sprintf("%.1f MB", float64(n)/1e6)
	case n >= 1e3:
		return fmt.Sprintf("%.1f kB", float64(n)/1e3)
	}
	return fmt.Sprintf("%d B", n)
}
