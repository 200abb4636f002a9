package audio

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Format is an audio format ttsgen writes.
type Format string

// The formats. WAV, FLAC and PCM are lossless (16-bit mono at the voice's rate unless resampled); Opus (in Ogg),
// MP3 and AAC (ADTS) are lossy, at the bitrate in Options.
const (
	WAV  Format = "wav"
	FLAC Format = "flac"
	Opus Format = "opus"
	MP3  Format = "mp3"
	AAC  Format = "aac"
	PCM  Format = "pcm" // raw 16-bit little-endian mono samples, no header (Piper's --output-raw)
)

// Formats lists every format, in the order help texts show them.
var Formats = []Format{WAV, FLAC, Opus, MP3, AAC, PCM}

// Default bitrates for speech, in bits per second (mono). Opus is transparent for speech around 24-32 kbit/s; MP3
// and AAC need about twice that for the same quality at a voice's 16-24 kHz.
const (
	DefaultOpusBitrate = 32_000
	DefaultMP3Bitrate  = 64_000
	DefaultAACBitrate  = 64_000
)

// formatExts are the file name extensions of each format: the first is what ttsgen names its files, the others
// are also recognised.
var formatExts = map[Format][]string{
	WAV:  {".wav"},
	FLAC: {".flac"},
	Opus: {".opus", ".ogg", ".oga"},
	MP3:  {".mp3"},
	AAC:  {".aac"},
	PCM:  {".pcm", ".raw"},
}

// ParseFormat reads a format name (case-insensitive).
func ParseFormat(name string) (Format, error) {
	f := Format(strings.ToLower(strings.TrimSpace(name)))
	if _, ok := formatExts[f]; ok {
		return f, nil
	}
	return "", fmt.Errorf("unknown audio format %q (want one of %s)", name, FormatNames())
}

// FormatNames is the list of formats for messages: "wav, flac, opus, mp3, aac, pcm".
func FormatNames() string {
	names := make([]string, len(Formats))
	for i, f := range Formats {
		names[i] = string(f)
	}
	return strings.Join(names, ", ")
}

// FormatOf is the format that path's extension names (case-insensitive), and whether it names one.
func FormatOf(path string) (Format, bool) {
	ext := strings.ToLower(filepath.Ext(path))
	for _, f := range Formats {
		for _, e := range formatExts[f] {
			if e == ext {
				return f, true
			}
		}
	}
	return "", false
}

// Ext is the extension ttsgen gives files of the format, with its dot.
func (f Format) Ext() string { return formatExts[f][0] }

// Lossy says whether the format loses detail (and so takes a bitrate).
func (f Format) Lossy() bool { return f == Opus || f == MP3 || f == AAC }

// DefaultBitrate is the format's bitrate for speech when none is asked for (0 for lossless formats).
func (f Format) DefaultBitrate() int {
	switch f {
	case Opus:
		return DefaultOpusBitrate
	case MP3:
		return DefaultMP3Bitrate
	case AAC:
		return DefaultAACBitrate
	}
	return 0
}

// Options are an encoder's settings; the zero value is each format's default.
type Options struct {
	// Bitrate of a lossy format in bits per second (0 = the format's DefaultBitrate); ignored by lossless ones.
	Bitrate int
	// SampleRate resamples the audio to this rate before it is encoded (0 = keep the input's rate); a rate the
	// format does not code (Format.CheckSampleRate) is an error, never another rate. Opus always codes at 48 kHz
	// inside; this is then the rate its header says the audio had.
	SampleRate int
}

// Encoder writes 16-bit mono samples in a format. Write appends samples; Flush sends what is encoded so far on to
// the output (an Ogg page, a FLAC frame of what is buffered), for a listener at the other end of a pipe; Close
// finishes the stream (the final Ogg page, the FLAC and WAV lengths when the output can seek) and frees the
// encoder. Close must be called once whatever happened before, also after a failed Write, and never closes the
// io.Writer the encoder was given.
type Encoder interface {
	Write(pcm []int16) error
	Flush() error
	Close() error
}

// Bitrate limits, bits per second: below, speech is unintelligible; above, mono speech gains nothing.
const (
	MinBitrate = 6_000
	MaxBitrate = 320_000
)

// NewEncoder starts a stream of format f at sampleRate into w. When w can seek (a file), the formats that keep
// lengths in their header (WAV, FLAC, MP3's LAME tag) complete them on Close, from w's position at this call;
// into a pipe they say the length is unknown, which players accept.
func NewEncoder(f Format, w io.Writer, sampleRate int, opt Options) (Encoder, error) {
	if sampleRate <= 0 {
		return nil, fmt.Errorf("encoding %s: sample rate %d", f, sampleRate)
	}
	if opt.Bitrate != 0 && (opt.Bitrate < MinBitrate || opt.Bitrate > MaxBitrate) {
		return nil, fmt.Errorf("encoding %s: bitrate %d is outside [%d, %d] bits per second", f, opt.Bitrate, MinBitrate, MaxBitrate)
	}
	// An asked-for rate the format cannot code is refused here, not left to the codec, which would code the
	// nearest rate it has (LAME, ffmpeg) and so give another rate than asked, with no word said.
	if opt.SampleRate != 0 {
		if err := f.CheckSampleRate(opt.SampleRate); err != nil {
			return nil, fmt.Errorf("encoding: %w", err)
		}
	}
	rate := f.EncodedRate(sampleRate, opt)
	bitrate := opt.Bitrate
	if bitrate == 0 {
		bitrate = f.DefaultBitrate()
	}
	var enc Encoder
	var err error
	switch f {
	case WAV:
		enc = newWAVEncoder(w, rate)
	case PCM:
		enc = &pcmEncoder{out: w}
	case FLAC:
		enc, err = newFLACEncoder(w, rate)
	case Opus:
		enc, err = newOpusEncoder(w, rate, bitrate)
	case MP3:
		enc, err = newMP3Encoder(w, rate, bitrate)
	case AAC:
		enc, err = newAACEncoder(w, rate, bitrate)
	default:
		return nil, fmt.Errorf("encoding: unknown audio format %q", f)
	}
	if err != nil {
		return nil, fmt.Errorf("encoding %s: %w", f, err)
	}
	if rate != sampleRate {
		return newResampling(enc, sampleRate, rate), nil
	}
	return enc, nil
}

// SampleRates are the sample rates within [MinSampleRate, MaxSampleRate] that f codes, lowest first, or nil when
// it codes any of them: MP3 has MPEG audio's nine, AAC its own twelve (ffmpeg's encoder takes those of the ADTS
// header's table, whose 7,350 Hz lies below MinSampleRate). Opus codes at 48 kHz inside whatever the rate, and
// records the input's rate in its header, so it takes any.
func (f Format) SampleRates() []int {
	switch f {
	case MP3:
		return slices.Clone(mp3Rates)
	case AAC:
		return slices.Clone(aacRates)
	}
	return nil
}

// CheckSampleRate says whether f can be coded at rate: the one check behind NewEncoder's Options.SampleRate and
// every caller's earlier check of an asked-for rate (--sample-rate), so that they all agree. A rate within range
// that f does not code is a *SampleRateError, which names the format and the rates it takes.
func (f Format) CheckSampleRate(rate int) error {
	if rate < MinSampleRate || rate > MaxSampleRate {
		return fmt.Errorf("sample rate %d Hz is outside [%d, %d] Hz", rate, MinSampleRate, MaxSampleRate)
	}
	if rates := f.SampleRates(); rates != nil && !slices.Contains(rates, rate) {
		return &SampleRateError{Format: f, Rate: rate}
	}
	return nil
}

// SampleRateError is a sample rate within range that a format does not code.
type SampleRateError struct {
	Format Format
	Rate   int
}

func (e *SampleRateError) Error() string {
	rates := e.Format.SampleRates()
	names := make([]string, len(rates))
	for i, r := range rates {
		names[i] = strconv.Itoa(r)
	}
	return fmt.Sprintf("%s has no sample rate of %d Hz: it takes %s and %s Hz", e.Format, e.Rate,
		strings.Join(names[:len(names)-1], ", "), names[len(names)-1])
}

// EncodedRate is the sample rate of f's stream of audio at rate under opt: the asked-for rate, else codingRate's.
func (f Format) EncodedRate(rate int, opt Options) int {
	if opt.SampleRate != 0 {
		return opt.SampleRate
	}
	return f.codingRate(rate)
}

// DecodedRate is the rate a decoder gives f's stream of audio at rate under opt at: EncodedRate's, but 48 kHz for
// Opus, which always codes at 48 kHz inside (its header's rate only says what the input's was).
func (f Format) DecodedRate(rate int, opt Options) int {
	if f == Opus {
		return 48000
	}
	return f.EncodedRate(rate, opt)
}

// codingRate is the rate a format codes a voice's rate at when no rate is asked for: the rate itself, but for MP3
// and AAC below 32 kHz, which go up to 44.1 or 48 kHz. Their codecs add a fixed delay and pad the end to a whole
// frame, in samples (LAME about 1,100 and up to 1,152; AAC 1,024 and up to 1,024), which a decoder trims only
// where the container says how much (an MP3 file's LAME tag; never in ADTS), and ffprobe counts into the
// duration: at 22,050 Hz that is 50-100 ms, at twice the rate half as much. The bits per second stay the same.
// A voice's rate of 32 kHz or more that the codec lacks goes to the next rate it has above (else its highest):
// resampled here, so that the rate DecodedRate says is the one the codec was given, not one it chose.
func (f Format) codingRate(rate int) int {
	rates := f.SampleRates()
	switch {
	case rates == nil:
		return rate
	case rate < 32000 && 44100%rate == 0:
		return 44100
	case rate < 32000:
		return 48000
	}
	for _, r := range rates {
		if r >= rate {
			return r
		}
	}
	return rates[len(rates)-1]
}

// WriteSilence appends n samples of silence to enc.
func WriteSilence(enc Encoder, n int) error {
	const chunk = 4096
	zeros := make([]int16, min(n, chunk))
	for n > 0 {
		k := min(n, chunk)
		if err := enc.Write(zeros[:k]); err != nil {
			return err
		}
		n -= k
	}
	return nil
}

// errClosed is what an encoder says to a Write after Close.
var errClosed = errors.New("write after close")

// position is w's offset when w is a file that can seek back (so a header can be completed at the end), and
// whether it is one: a pipe's *os.File has a Seek method that fails.
func position(w io.Writer) (io.WriteSeeker, int64, bool) {
	ws, ok := w.(io.WriteSeeker)
	if !ok {
		return nil, 0, false
	}
	pos, err := ws.Seek(0, io.SeekCurrent)
	if err != nil {
		return nil, 0, false
	}
	return ws, pos, true
}

// pcmEncoder writes raw 16-bit little-endian samples.
type pcmEncoder struct {
	out    io.Writer
	buf    []byte
	closed bool
}

func (e *pcmEncoder) Write(pcm []int16) error {
	if e.closed {
		return errClosed
	}
	e.buf = appendLE16(e.buf[:0], pcm)
	if _, err := e.out.Write(e.buf); err != nil {
		return fmt.Errorf("writing PCM samples: %w", err)
	}
	return nil
}

func (e *pcmEncoder) Flush() error { return nil }

func (e *pcmEncoder) Close() error {
	e.closed = true
	return nil
}

// appendLE16 appends samples as 16-bit little-endian bytes.
func appendLE16(b []byte, pcm []int16) []byte {
	for _, s := range pcm {
		b = append(b, byte(s), byte(uint16(s)>>8))
	}
	return b
}
