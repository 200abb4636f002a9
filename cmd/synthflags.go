package cmd

import (
	"fmt"
	"math"

	"github.com/spf13/pflag"

	"github.com/ttsgen/ttsgen/internal/audio"
	"github.com/ttsgen/ttsgen/internal/pipeline"
)

// voiceFlags are the synthesis settings synth and batch share. Scales left unset fall back to the voice's config
// (and, in a batch, each manifest line may override them).
type voiceFlags struct {
	voice, speaker                  string
	lengthScale, noiseScale, noiseW float32
	sentenceSilence                 float64
	noNormalize                     bool
	flags                           *pflag.FlagSet
}

func (f *voiceFlags) add(fs *pflag.FlagSet) {
	f.flags = fs
	fs.StringVar(&f.voice, "voice", "", "voice `NAME` (see: ttsgen voices list) or path to X.onnx / X.onnx.json (default: the built-in voice)")
	fs.StringVar(&f.speaker, "speaker", "", "speaker `ID|NAME`, for multi-speaker voices: a number is an id, as in Piper, else a name from the voice's speaker_id_map (default: 0)")
	fs.Float32Var(&f.lengthScale, "length-scale", 0, "speaking time factor: >1 slower, <1 faster (default: the voice's own, usually 1)")
	fs.Float32Var(&f.noiseScale, "noise-scale", 0, "voice variation, 0 = none (default: the voice's own, 0.667 in Piper voices)")
	fs.Float32Var(&f.noiseW, "noise-w", 0, "rhythm variation, 0 = none (default: the voice's own, 0.8 in Piper voices)")
	fs.Float64Var(&f.sentenceSilence, "sentence-silence", 0.2, "seconds of silence between sentences")
	fs.BoolVar(&f.noNormalize, "no-normalize", false, "send text to espeak-ng as is (no expansion of numbers, dates, abbreviations)")
}

// defaults turns the flags into the batch defaults, checking ranges.
func (f *voiceFlags) defaults() (pipeline.Defaults, error) {
	d := pipeline.Defaults{Voice: f.voice, Speaker: f.speaker, SentenceSilence: f.sentenceSilence}
	pick := func(name string, v float32, lo, hi float32, loOpen bool) (*float32, error) {
		if !f.flags.Changed(name) {
			return nil, nil
		}
		bad := math.IsNaN(float64(v)) || v > hi || v < lo || (loOpen && v == lo)
		if bad {
			open := "["
			if loOpen {
				open = "("
			}
			return nil, usageErrorf("--%s %v is outside %s%g, %g]", name, v, open, lo, hi)
		}
		return &v, nil
	}
	var err error
	if d.LengthScale, err = pick("length-scale", f.lengthScale, 0, 20, true); err != nil {
		return d, err
	}
	if d.NoiseScale, err = pick("noise-scale", f.noiseScale, 0, 10, false); err != nil {
		return d, err
	}
	if d.NoiseW, err = pick("noise-w", f.noiseW, 0, 10, false); err != nil {
		return d, err
	}
	if math.IsNaN(f.sentenceSilence) || f.sentenceSilence < 0 || f.sentenceSilence > 60 {
		return d, usageErrorf("--sentence-silence %v is outside [0, 60] seconds", f.sentenceSilence)
	}
	return d, nil
}

func (f *voiceFlags) String() string { return fmt.Sprintf("voice=%q speaker=%q", f.voice, f.speaker) }

// audioFlags are the output settings synth and batch share: the format, its encoder's settings, the level.
type audioFlags struct {
	format           string
	sampleRate       int
	bitrate          int // kbit/s
	volume           float32
	noNormalizeAudio bool
	peakNormalize    bool
}

// audioChoice is what the audio flags ask for.
type audioChoice struct {
	format   audio.Format // "" when --format is not given
	encoding audio.Options
	level    audio.Level
}

// checkSampleRate refuses a --sample-rate that format f does not code (MP3 above 48 kHz, AAC above 96 kHz), as a
// usage error naming the flag, the format and the rates it takes, before any voice is loaded: the encoder would
// refuse it too (audio.NewEncoder), and the check is the same. parse checks --format's; a command that learns the
// format later (synth's from -o's extension) checks that one. An unknown format ("") is not checked here.
func (c audioChoice) checkSampleRate(f audio.Format) error {
	if c.encoding.SampleRate == 0 || f == "" {
		return nil
	}
	if err := f.CheckSampleRate(c.encoding.SampleRate); err != nil {
		return usageErrorf("--sample-rate: %w", err)
	}
	return nil
}

// maxVolume bounds --volume: past it every sample clips.
const maxVolume = 100

func (f *audioFlags) add(fs *pflag.FlagSet, formatDefault string) {
	fs.StringVar(&f.format, "format", "", fmt.Sprintf("audio `FORMAT`: %s (default: %s)", audio.FormatNames(), formatDefault))
	fs.IntVar(&f.sampleRate, "sample-rate", 0, "resample the audio to this rate in Hz, e.g. 16000 or 48000 (default: the voice's own)")
	fs.IntVar(&f.bitrate, "bitrate", 0, fmt.Sprintf("bitrate of opus, mp3 and aac in kbit/s (default: %d, %d and %d, for speech)",
		audio.DefaultOpusBitrate/1000, audio.DefaultMP3Bitrate/1000, audio.DefaultAACBitrate/1000))
	fs.Float32Var(&f.volume, "volume", 1, "loudness factor applied after the normalisation, e.g. 0.5 for 6 dB quieter")
	fs.BoolVar(&f.noNormalizeAudio, "no-normalize-audio", false, "keep the model's own level instead of bringing each sentence to speech level (RMS -20 dBFS, peaks at most -3 dBFS)")
	fs.BoolVar(&f.peakNormalize, "peak-normalize", false, "Piper's level: raise each sentence's loudest sample to full scale (louder, unequal from sentence to sentence, and full-scale peaks can clip when resampled or encoded)")
}

// parse checks the flags.
func (f *audioFlags) parse() (audioChoice, error) {
	var c audioChoice
	if f.format != "" {
		var err error
		if c.format, err = audio.ParseFormat(f.format); err != nil {
			return c, usageErrorf("--format: %w", err)
		}
	}
	c.encoding = audio.Options{Bitrate: f.bitrate * 1000, SampleRate: f.sampleRate}
	if f.sampleRate != 0 && (f.sampleRate < audio.MinSampleRate || f.sampleRate > audio.MaxSampleRate) {
		return c, usageErrorf("--sample-rate %d is outside [%d, %d] Hz", f.sampleRate, audio.MinSampleRate, audio.MaxSampleRate)
	}
	if err := c.checkSampleRate(c.format); err != nil {
		return c, err
	}
	if f.bitrate != 0 && (c.encoding.Bitrate < audio.MinBitrate || c.encoding.Bitrate > audio.MaxBitrate) {
		return c, usageErrorf("--bitrate %d is outside [%d, %d] kbit/s", f.bitrate, audio.MinBitrate/1000, audio.MaxBitrate/1000)
	}
	if math.IsNaN(float64(f.volume)) || f.volume <= 0 || f.volume > maxVolume {
		return c, usageErrorf("--volume %v is outside (0, %d]", f.volume, maxVolume)
	}
	c.level = audio.Level{Volume: f.volume}
	switch {
	case f.noNormalizeAudio && f.peakNormalize:
		return c, usageErrorf("--no-normalize-audio and --peak-normalize contradict each other: choose one")
	case f.noNormalizeAudio:
		c.level.Normalisation = audio.ModelLevel
	case f.peakNormalize:
		c.level.Normalisation = audio.PeakLevel
	}
	return c, nil
}
