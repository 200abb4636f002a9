package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ttsgen/ttsgen/internal/audio"
	"github.com/ttsgen/ttsgen/internal/manifest"
	"github.com/ttsgen/ttsgen/internal/outfile"
	"github.com/ttsgen/ttsgen/internal/pipeline"
	"github.com/ttsgen/ttsgen/internal/timestamps"
	"github.com/ttsgen/ttsgen/internal/vits"
	"github.com/ttsgen/ttsgen/internal/voices"
)

type synthOptions struct {
	out        string
	file       string
	timestamps string
	voice      voiceFlags
	audio      audioFlags
}

// newSynthCmd builds the command; runF, when set, replaces runSynth (tests check the parsed options and args).
func newSynthCmd(s *settings, streams IO, runF func(*synthOptions, []string) error) *cobra.Command {
	var o synthOptions
	cmd := &cobra.Command{
		Use:   "synth [TEXT...]",
		Short: "Speak a text into one audio file",
		Long: `Speak a text into one audio file: WAV (16-bit PCM at the voice's sample rate) unless --format or the
extension of -o (.flac, .opus, .mp3, .aac, .pcm) says otherwise. FLAC and PCM are lossless (pcm is raw 16-bit
little-endian mono, Piper's --output-raw); opus, mp3 and aac take --bitrate.

The text comes from the arguments, from --file, or else from standard input; the first Ctrl-C ends a wait for
it (exit status 130). A file or standard input is read as UTF-8 (a byte-order mark is skipped), or as UTF-16 where
it starts with a byte-order mark (Windows Notepad's "Unicode"); text that is neither (a file saved as Windows-1252,
a binary file given by mistake) is an error naming its line, and nothing is spoken of a file. Standard input (or a FIFO) is read as it comes: each sentence is spoken once it is whole
(the next has begun, or a line ends after its full stop, or a blank line follows), so that a program writing
into the pipe is heard as it goes (llm | ttsgen synth -o - | aplay). The text is normalised (numbers, dates,
money, abbreviations become words), split into sentences, phonemized with espeak-ng as Piper does, and spoken
sentence by sentence with --sentence-silence between them. Long texts stream to the file, so a whole book is fine.

Where the audio goes:
  - a new path or a regular file: written to a temporary file beside it and renamed over it when complete, so the
    file is never seen half-written (a file that is replaced keeps its permissions; a new one gets the umask's);
  - a FIFO, a device (/dev/null) or a Unix socket: opened and written into as a stream, never replaced;
  - - or /dev/stdout (the default when standard output is not a terminal): each sentence goes out as soon as it is
    spoken, so a player starts with the first. When standard output is a regular file (synth > out.wav) the WAV
    header's sizes are filled in at the end; into a pipe (or a file opened with >>) they cannot be, and say
    "unknown length" (0xFFFFFFFF), as ffmpeg and sox write them: players read to the end of the stream.`,
		Example: `  ttsgen synth "Hello there." -o hello.wav
  ttsgen synth --file chapter1.txt -o chapter1.opus --length-scale 1.1
  ttsgen synth --file book.txt -o book.mp3 --bitrate 96
  echo "Straight to the speakers." | ttsgen synth -o - | aplay
  echo "Raw samples." | ttsgen synth --format pcm --sample-rate 16000 -o - > speech.raw
  ttsgen synth --file talk.txt -o talk.opus --timestamps talk.srt
  ttsgen synth --voice ~/voices/en_GB-alan-medium.onnx "Good evening." -o alan.wav`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.out == "" {
				if !streams.OutTTY {
					o.out = "-"
				} else {
					return usageErrorf("-o is required: an audio file (.wav, .flac, .opus, .mp3, .aac, .pcm), or - for standard output")
				}
			}
			if o.file != "" && len(args) > 0 {
				return usageErrorf("give the text either as arguments or with --file, not both")
			}
			if runF != nil {
				return runF(&o, args)
			}
			return runSynth(cmd.Context(), s, streams, &o, args)
		},
	}
	cmd.Flags().StringVarP(&o.out, "output", "o", "", "output audio file, or - for standard output")
	cmd.Flags().StringVarP(&o.file, "file", "f", "", "read the text from this file")
	cmd.Flags().StringVar(&o.timestamps, "timestamps", "", "also write each word's start and end to `FILE`: .json (words and sentences), .srt or .vtt (subtitles)")
	o.voice.add(cmd.Flags())
	o.audio.add(cmd.Flags(), "from the extension of -o, else wav")
	return cmd
}

func runSynth(ctx context.Context, s *settings, streams IO, o *synthOptions, args []string) error {
	defaults, err := o.voice.defaults()
	if err != nil {
		return err
	}
	choice, err := synthAudio(o)
	if err != nil {
		return err
	}
	var tsFormat timestamps.Format
	if o.timestamps != "" {
		if tsFormat, err = timestamps.FormatOf(o.timestamps); err != nil {
			return usageError{err}
		}
	}
	input, err := openSynthText(ctx, streams, o.file, args)
	if err != nil {
		return err
	}
	defer input.close()
	con := newConsole(streams, s.quiet())
	rt, err := s.newRuntime(con, !o.voice.noNormalize)
	if err != nil {
		return err
	}
	defer rt.close()
	lv, err := rt.loadVoice(defaults.Voice)
	if err != nil {
		return err
	}
	if tsFormat != "" && !lv.Model.GivesDurations() {
		return timestampsRefusal(lv.Voice.Name)
	}
	cfg := lv.Voice.Config
	sid, err := cfg.SpeakerID(defaults.Speaker)
	if err != nil {
		return usageError{err}
	}
	sentences, prog, planned, err := synthSentences(rt, con, input, cfg)
	if err != nil {
		return err
	}
	if prog != nil {
		defer prog.finish()
	}
	opt := pipeline.SpeakOptions{
		Speaker:         sid,
		Scales:          defaults.Scales(cfg.Inference, nil, nil, nil),
		SentenceSilence: defaults.SentenceSilence,
		Level:           choice.level,
	}
	if tsFormat != "" {
		opt.Timeline = rt.frontend.Aligner(cfg).NewBuilder()
	}
	speak := func(w io.Writer) error {
		enc, err := audio.NewEncoder(choice.format, w, cfg.Audio.SampleRate, choice.encoding)
		if err != nil {
			return err
		}
		onSentence := func(d pipeline.SentenceDone) {
			if prog != nil {
				prog.Sentence(d)
			}
		}
		written, err := pipeline.Speak(ctx, rt.engine, pipeline.NewInFlight(rt.engine.QueueSize()), lv,
			sentences, opt, enc, onSentence)
		if prog != nil {
			prog.Planned(written - *planned) // Speak is done with sentences: planned no longer changes
		}
		if cerr := enc.Close(); err == nil {
			err = cerr
		}
		return err
	}
	// Each sentence goes out as soon as it and those before it are spoken (a player on the other end of a pipe
	// starts with the first sentence); a seekable file's header gets its sizes at the end.
	err = outfile.Write(ctx, o.out, streams.Out, speak)
	if errors.Is(err, pipeline.ErrNothingToSpeak) {
		return pipeline.ErrNothingToSpeak // no file was written: nothing about writing to say
	}
	if err != nil || opt.Timeline == nil {
		return err
	}
	return outfile.Write(ctx, o.timestamps, streams.Out, func(w io.Writer) error {
		return timestamps.Write(w, tsFormat, opt.Timeline.Timeline())
	})
}

// checkTimestampsVoice refuses --timestamps, as a usage error, for a voice that gives no phoneme durations (the
// frames its duration predictor gives each phoneme, which the engine reads from its graph's duration Ceil node, as
// vits.PrepareGraph finds it), before anything is spoken or any file created, rather than at the first sentence, as
// an error in writing the audio. synth asks the loaded voice (timestampsRefusal); batch asks before it opens its
// output folder, before any voice is loaded, so it reads the model's graph for it.
func checkTimestampsVoice(v *voices.Voice) error {
	model, err := v.Model()
	if err != nil {
		return err
	}
	_, graphIO, err := vits.PrepareGraph(model)
	if err != nil {
		return fmt.Errorf("voice %s: %w", v.Name, err)
	}
	if !graphIO.HasFrames {
		return timestampsRefusal(v.Name)
	}
	return nil
}

func timestampsRefusal(voice string) error {
	return usageErrorf("--timestamps: voice %q gives no phoneme durations (its graph has no duration Ceil node), "+
		"so words cannot be timed: use another voice, or leave out --timestamps", voice)
}

// synthAudio is what the audio flags ask for, with the output's format settled: --format, else the extension of
// -o, else WAV; a --format that contradicts the extension is a usage error.
func synthAudio(o *synthOptions) (audioChoice, error) {
	c, err := o.audio.parse()
	if err != nil {
		return c, err
	}
	byExt, known := audio.FormatOf(o.out)
	switch {
	case o.out == "-" || !known:
	case c.format == "":
		c.format = byExt
	case c.format != byExt:
		return c, usageErrorf("--format %s, but -o %s names a %s file", c.format, o.out, byExt)
	}
	if err := c.checkSampleRate(c.format); err != nil { // the format -o's extension names
		return c, err
	}
	if c.format == "" {
		c.format = audio.WAV
	}
	return c, nil
}

// synthSentences is what synth speaks of input, with the progress that counts it (nil for a single sentence) and
// how many sentences that progress has been told of so far. A text is normalised and split first, which counts its
// sentences cheaply, for a clear error before any output and a progress total; they are phonemized while the first
// ones are spoken. A pipe is read as it comes, each sentence spoken once it is whole, so that a program writing into
// it is heard as it goes.
func synthSentences(rt *synthRuntime, con *console, input synthText, cfg *voices.Config) (
	iter.Seq2[pipeline.Sentence, error], *progress, *int, error) {
	planned := new(int)
	if input.stream != nil {
		prog := con.startProgress()
		prog.Reading(true)
		sentences := rt.frontend.StreamTexts(pipeline.WholeSentences(input.stream), cfg, func(n int) {
			*planned += n
			prog.Planned(n)
		})
		return func(yield func(pipeline.Sentence, error) bool) {
			for s, err := range sentences {
				if !yield(s, err) {
					return
				}
			}
			prog.Reading(false) // the stream has ended: its sentences are all planned
		}, prog, planned, nil
	}
	split := rt.frontend.Split(input.text)
	if *planned = split.Estimate(); *planned == 0 {
		return nil, nil, nil, pipeline.ErrNothingToSpeak
	}
	var prog *progress
	if *planned > 1 {
		prog = con.startProgress()
		prog.Planned(*planned)
	}
	return rt.frontend.Stream(split, cfg), prog, planned, nil
}

// synthText is the text to speak: whole (the arguments, a file), or a stream to read as it comes (standard input,
// a FIFO).
type synthText struct {
	text   string
	stream io.Reader
	close  func()
}

// openSynthText opens the text to speak: the arguments, else the file, else standard input. A --file that is not
// there, or is a folder, is a usage error (checkInputFile); an error in reading one that is, a failure. A cancelled
// ctx (the first Ctrl-C) ends a wait for input at once, for a writer of a FIFO or for more of a pipe or a terminal,
// as a batch's inputs do (manifest.OpenInput).
func openSynthText(ctx context.Context, streams IO, file string, args []string) (synthText, error) {
	if len(args) > 0 {
		text := strings.Join(args, " ")
		if err := manifest.CheckText([]byte(text)); err != nil {
			return synthText{}, fmt.Errorf("the text given as arguments: %w", err)
		}
		return synthText{text: text, close: func() {}}, nil
	}
	what := "text from standard input"
	name := "-"
	if file != "" {
		if file != "-" { // --file - is standard input
			if err := checkInputFile("--file", file, "a text file"); err != nil {
				return synthText{}, err
			}
			what = "text file " + file
		}
		name = file
	} else if streams.InTTY {
		fmt.Fprintln(streams.ErrOut, "reading text from standard input (end with Ctrl-D)...")
	}
	f, err := manifest.OpenInput(ctx, name, streams.In)
	if err != nil {
		return synthText{}, fmt.Errorf("reading %s: %w", what, err)
	}
	// A byte-order mark: UTF-8's dropped, UTF-16 decoded; then anything that is not text (a byte that is not UTF-8, a
	// NUL of a binary file) is an error naming its line, never dropped or read aloud as garbage.
	r := manifest.CheckedText(manifest.NewTextReader(f))
	if manifest.IsStream(name) {
		return synthText{stream: readError{r, what}, close: func() { f.Close() }}, nil
	}
	defer f.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		return synthText{}, fmt.Errorf("reading %s: %w", what, err)
	}
	return synthText{text: string(b), close: func() {}}, nil
}

// readError says what was being read in a stream's errors.
type readError struct {
	r    io.Reader
	what string
}

func (e readError) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil && !errors.Is(err, io.EOF) {
		err = fmt.Errorf("reading %s: %w", e.what, err)
	}
	return n, err
}

// readSynthText is the whole text, a stream read to its end (phonemize prints what it reads in one go).
func readSynthText(ctx context.Context, streams IO, file string, args []string) (string, error) {
	in, err := openSynthText(ctx, streams, file, args)
	if err != nil {
		return "", err
	}
	defer in.close()
	if in.stream == nil {
		return in.text, nil
	}
	b, err := io.ReadAll(in.stream)
	return string(b), err
}
