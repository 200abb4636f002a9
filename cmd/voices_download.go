package cmd

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/ttsgen/ttsgen/internal/plural"
	"github.com/ttsgen/ttsgen/internal/voices"
)

// voicesDownloadOptions is everything `voices download` needs.
type voicesDownloadOptions struct {
	names    []string
	catalog  string // URL or file of voices.json
	replace  bool
	asJSON   bool
	dir      string // the voices folder
	fetcher  voices.Fetcher
	out      io.Writer
	errOut   io.Writer
	progress bool // draw a progress bar (a terminal, not --quiet)
	quiet    bool
}

// newVoicesDownloadCmd builds the command; runF, when set, replaces runVoicesDownload (tests check the parsed
// options).
func newVoicesDownloadCmd(s *settings, streams IO, asJSON *bool, runF func(*voicesDownloadOptions) error) *cobra.Command {
	o := voicesDownloadOptions{out: streams.Out, errOut: streams.ErrOut}
	cmd := &cobra.Command{
		Use:   "download NAME...",
		Short: "Download voices from Piper's catalogue into the voices folder",
		Long: `Download voices from Piper's voice catalogue (voices.json of rhasspy/piper-voices) into the voices folder.

Each voice's model and config are checked against the catalogue's size and MD5 before they are put in place, so a
corrupted or interrupted download installs nothing (run the command again). NAME is a catalogue key such as
en_GB-alan-medium (see: ttsgen voices list --available). --catalog points at a mirror: a URL, or a voices.json on
disk with the voice files laid out beside it as in the catalogue.`,
		Example: `  ttsgen voices download en_GB-alan-medium
  ttsgen voices download en_US-lessac-high de_DE-thorsten-medium --replace
  ttsgen voices download en_US-ryan-low --catalog /mnt/mirror/piper-voices/voices.json`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageErrorf("name at least one voice to download (see: ttsgen voices list --available)")
			}
			o.names, o.dir, o.asJSON, o.quiet = args, s.voicesDir(), *asJSON, s.quiet()
			if f, ok := streams.ErrOut.(*os.File); ok {
				o.progress = term.IsTerminal(int(f.Fd())) && !o.quiet
			}
			if runF != nil {
				return runF(&o)
			}
			return runVoicesDownload(cmd.Context(), &o)
		},
	}
	cmd.Flags().StringVar(&o.catalog, "catalog", voices.DefaultIndex, "the voice catalogue: a `URL` or FILE of voices.json")
	cmd.Flags().BoolVar(&o.replace, "replace", false, "download a voice again even if it is installed")
	return cmd
}

func runVoicesDownload(ctx context.Context, o *voicesDownloadOptions) error {
	idx, err := o.fetcher.LoadIndex(ctx, o.catalog)
	if err != nil {
		return err
	}
	// Every name is checked before anything is downloaded.
	var want []voices.RemoteVoice
	for _, name := range o.names {
		v, err := idx.Find(name)
		if err != nil {
			return usageError{err}
		}
		want = append(want, v)
	}
	catalog := voices.Catalog{Dir: o.dir}
	var failed []string // the voices not installed
	var firstErr error
	fail := func(v voices.RemoteVoice, err error) {
		err = fmt.Errorf("voice %s: %w", v.Key, err)
		if len(want) > 1 { // said as it happens; the summary names them. A single voice's error is said once, at the end.
			fmt.Fprintf(o.errOut, "error: %v\n", err)
		}
		failed = append(failed, v.Key)
		firstErr = cmp.Or(firstErr, err)
	}
	installed := []voiceInfo{} // --json: [] when none is
	for _, v := range want {
		if !o.replace && catalog.Installed(v.Key) { // said before a "downloading" line that would claim otherwise
			fail(v, fmt.Errorf("already installed in %s (use --replace to download it again)", o.dir))
			continue
		}
		bar := o.startBar(v)
		got, err := catalog.Download(ctx, o.fetcher, idx, v, o.replace, func(done, total int64) {
			if bar != nil {
				_ = bar.Set64(done)
			}
		})
		if bar != nil {
			_ = bar.Finish()
			fmt.Fprintln(o.errOut)
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil {
			fail(v, err)
			continue
		}
		installed = append(installed, infoOf(got))
		if !o.asJSON {
			fmt.Fprintf(o.out, "installed %s (%s) in %s\n", got.Name, humanBytes(got.Size()), o.dir)
		}
	}
	if o.asJSON {
		if err := writeJSON(o.out, installed); err != nil {
			return err
		}
	}
	switch {
	case len(want) == 1 && firstErr != nil:
		return exitError{code: ExitFailure, err: firstErr}
	case len(failed) > 0: // each error is on stderr already
		return exitError{code: ExitFailure, err: fmt.Errorf("%d of %s not installed: %s", len(failed),
			plural.Count(len(want), "voice"), strings.Join(failed, ", "))}
	}
	return nil
}

// startBar is a download's progress bar on a terminal; elsewhere one line says what is coming (nil bar).
func (o *voicesDownloadOptions) startBar(v voices.RemoteVoice) *progressbar.ProgressBar {
	if !o.progress {
		if !o.quiet {
			fmt.Fprintf(o.errOut, "downloading %s (%s)\n", v.Key, humanBytes(v.Size()))
		}
		return nil
	}
	return progressbar.NewOptions64(v.Size(),
		progressbar.OptionSetWriter(o.errOut),
		progressbar.OptionSetDescription("downloading "+v.Key),
		progressbar.OptionShowBytes(true),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionSetWidth(30),
	)
}

// remoteVoiceInfo is what `voices list --available --json` prints for a catalogue voice.
type remoteVoiceInfo struct {
	Name      string   `json:"name"`
	Language  string   `json:"language"`
	Quality   string   `json:"quality"`
	Speakers  int      `json:"speakers"`
	SizeBytes int64    `json:"size_bytes"`
	Installed bool     `json:"installed"`
	Aliases   []string `json:"aliases,omitempty"`
}

// listAvailable prints the catalogue's voices, saying which are installed.
func listAvailable(ctx context.Context, f voices.Fetcher, where string, local voices.Catalog, w io.Writer, asJSON bool) error {
	idx, err := f.LoadIndex(ctx, where)
	if err != nil {
		return err
	}
	have := map[string]bool{}
	list, _ := local.List() // a broken voice in the folder does not hide the catalogue
	for _, v := range list {
		have[v.Name] = true
	}
	infos := []remoteVoiceInfo{} // --json: [] for an empty catalogue
	for _, v := range idx.Sorted() {
		lang := v.Language.Code
		if v.Language.NameEnglish != "" {
			lang = fmt.Sprintf("%s (%s, %s)", v.Language.Code, v.Language.NameEnglish, v.Language.CountryEnglish)
		}
		infos = append(infos, remoteVoiceInfo{Name: v.Key, Language: lang, Quality: v.Quality, Speakers: max(1, v.NumSpeakers),
			SizeBytes: v.Size(), Installed: have[v.Key], Aliases: v.Aliases})
	}
	if asJSON {
		return writeJSON(w, infos)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tLANGUAGE\tQUALITY\tSPEAKERS\tSIZE\tINSTALLED")
	for _, in := range infos {
		mark := ""
		if in.Installed {
			mark = "yes"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\n", in.Name, strings.TrimSuffix(in.Language, " (, )"), in.Quality, in.Speakers,
			humanBytes(in.SizeBytes), mark)
	}
	return tw.Flush()
}
