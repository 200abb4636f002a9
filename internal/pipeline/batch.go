package pipeline

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"path"
	"path/filepath"
	"strconv"
	"sync"

	"github.com/ttsgen/ttsgen/internal/audio"
	"github.com/ttsgen/ttsgen/internal/engine"
	"github.com/ttsgen/ttsgen/internal/manifest"
	"github.com/ttsgen/ttsgen/internal/results"
	"github.com/ttsgen/ttsgen/internal/shard"
	"github.com/ttsgen/ttsgen/internal/textnorm"
	"github.com/ttsgen/ttsgen/internal/timestamps"
	"github.com/ttsgen/ttsgen/internal/voices"
)

// VoiceLoader returns a loaded voice by name or path ("" = the default voice). It is called from several goroutines
// and should cache: a corpus usually names few voices.
type VoiceLoader func(name string) (*LoadedVoice, error)

// VoiceFinder returns a voice by name or path without loading its model, as VoiceLoader would load it. It is called
// for every item and should cache.
type VoiceFinder func(name string) (*voices.Voice, error)

// Defaults are the settings an item gets when its manifest line does not set them (from flags or the config file).
type Defaults struct {
	Voice           string
	Speaker         string
	LengthScale     *float32 // nil = the voice's own default
	NoiseScale      *float32
	NoiseW          *float32
	SentenceSilence float64
	// Format is the audio format of items whose manifest line names none, neither with "format" nor by the
	// extension of its "out" ("" = WAV).
	Format audio.Format
	// Encoding are the encoders' settings (bitrate, sample rate) for every item.
	Encoding audio.Options
	Level    audio.Level
	// Timestamps, when set, writes each item's word times beside its audio file in this format.
	Timestamps timestamps.Format
}

// Scales resolves the synthesis scales: the item's own (nil = unset), else these defaults, else the voice's config.
func (d Defaults) Scales(voice voices.Inference, itemLength, itemNoise, itemNoiseW *float32) engine.Scales {
	pick := func(item, flag *float32, fromVoice float32) float32 {
		switch {
		case item != nil:
			return *item
		case flag != nil:
			return *flag
		}
		return fromVoice
	}
	return engine.Scales{
		Noise:  pick(itemNoise, d.NoiseScale, voice.NoiseScale),
		Length: pick(itemLength, d.LengthScale, voice.LengthScale),
		NoiseW: pick(itemNoiseW, d.NoiseW, voice.NoiseW),
	}
}

// Progress receives what a batch does; every method may be called from several goroutines.
type Progress interface {
	// Planned adds delta to the expected number of sentences (an estimate first, corrected as items are read).
	Planned(delta int)
	// Reading says whether an input read as it comes (standard input, a FIFO) is still being read: while it is,
	// the planned total counts only the items read so far, so it is no total to give a share or an ETA of. A batch
	// calls Reading(true) before its first item where an input is streamed, and Reading(false) once every input has
	// been read.
	Reading(open bool)
	Sentence(SentenceDone)
	Item(results.Row, bool /*skipped*/)
}

// Summary is what a batch run did.
type Summary struct {
	Items, OK, Failed, Skipped int
	Sentences                  int
	AudioSeconds               float64
}

// Batch synthesises corpora: every item of every input goes through one engine, several items at a time, so the
// engine sees sentences from many items at once and can fill its batches.
type Batch struct {
	Engine      Engine
	Frontend    *Frontend
	FindVoice   VoiceFinder
	LoadVoice   VoiceLoader
	Out         *results.Dir
	Defaults    Defaults
	Stdin       io.Reader // read for the input "-"
	Progress    Progress  // may be nil
	Warnf       func(format string, args ...any)
	Errorf      func(format string, args ...any) // a failed item, named by its input, line and id
	Concurrency int                              // items in flight (0 = the engine's queue size, at least MinItemConcurrency)
	// Shard is the share of the items this run makes (the zero Spec: all): the items of other shards are passed
	// over as they are read, before any work on them.
	Shard shard.Spec
	// HalfPrecision says the engine computes in float16 (engine.Engine.HalfPrecision), which changes the audio
	// slightly: rows record it, so that a re-run in float32 redoes what float16 made, and the other way round.
	HalfPrecision bool
	// Planned, when not nil, is FirstPass's sentence count of these inputs for this shard: a caller that made the
	// first pass already (to check timestamps names before the output folder) saves Run reading the inputs again.
	Planned *int

	aligners sync.Map // *voices.Config -> *timestamps.Aligner, for Defaults.Timestamps
}

// MinItemConcurrency is the fewest items a batch keeps in flight by default. By default it keeps as many items as
// the engine's queue holds sentences, so that a prompt set of one short sentence per item fills the device's
// batches as a book does; the sentences of all items together are bounded by the same number (InFlight), and so
// is the audio held in memory.
const MinItemConcurrency = 64

// job is what an item is made with, decided before it is made.
type job struct {
	opt      SpeakOptions
	format   audio.Format
	settings results.Settings
}

// Run synthesises every item of inputs that b.Shard owns. Bad items get an error row and do not stop the others; an item that would
// overwrite what the output folder records for another input's item is refused (see results.Dir.Check) and gets
// no row, the other item's row standing. Items the folder already holds, made with the same settings, are
// skipped. It returns when every item is settled, or early when ctx is cancelled: items in flight then get no row
// (their temporary files are removed), so a re-run redoes exactly them.
func (b *Batch) Run(ctx context.Context, inputs []string) (Summary, error) {
	streamed := map[string]bool{} // inputs read once, as they come: the first pass cannot count them
	anyStreamed := false
	for _, in := range inputs {
		streamed[in] = manifest.IsStream(in)
		anyStreamed = anyStreamed || streamed[in]
	}
	if b.Progress != nil {
		if anyStreamed {
			b.Progress.Reading(true)
		}
		planned := b.Planned
		if planned == nil {
			n, err := FirstPass(ctx, inputs, b.Shard, "")
			if err != nil {
				return Summary{}, err
			}
			planned = &n
		}
		b.Progress.Planned(*planned)
	}
	concurrency := b.Concurrency
	if concurrency <= 0 {
		concurrency = max(MinItemConcurrency, b.Engine.QueueSize())
	}
	var (
		mu       sync.Mutex
		sum      Summary
		wg       sync.WaitGroup
		slots    = make(chan struct{}, concurrency)
		inFlight = NewInFlight(b.Engine.QueueSize())
	)
	record := func(row results.Row, skipped bool) {
		mu.Lock()
		sum.Items++
		switch {
		case skipped:
			sum.Skipped++
		case !row.Failed():
			sum.OK++
			sum.Sentences += row.Sentences
			sum.AudioSeconds += row.AudioSeconds
		default:
			sum.Failed++
		}
		mu.Unlock()
		if b.Progress != nil {
			b.Progress.Item(row, skipped)
		}
	}
	// A row that cannot be written stops the batch (finish): the scan and the items in flight end, without rows,
	// so a re-run redoes them.
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	var appendErr error
	var appendOnce sync.Once
	var tsNames *timestampsNames
	if b.Defaults.Timestamps != "" {
		tsNames = newTimestampsNames(b.Defaults.Timestamps)
	}
	outs := map[string]itemPlace{} // audio file -> the first item that writes it
	scanErr := manifest.Scan(ctx, inputs, b.Stdin, func(it manifest.Item) error {
		row := itemRow(it)
		taken := b.claimOutput(outs, it) // every shard's items: shards write into one folder
		if !b.Shard.Owns(row.ShardKey()) {
			return nil // another shard's
		}
		at := where(it)
		for _, w := range it.Warnings {
			b.warnf("%s: %s", at, w)
		}
		estimate := estimateItem(it)
		if streamed[it.Source] {
			b.plan(estimate)
		}
		it = b.withDefaults(it)
		fail := func(err error) error {
			row.Error = err.Error()
			b.plan(-estimate)
			return b.finish(at, row, record)
		}
		if it.Err != nil {
			return fail(fmt.Errorf("reading %s: %w", itsInput(it), it.Err))
		}
		if taken != nil {
			return fail(fmt.Errorf("choosing its output: %w", taken))
		}
		// Files' items were checked against each other before the run (FirstPass); a stream's can only
		// be checked as they come, against every item before them, files' included.
		if tsNames != nil {
			if err := tsNames.claim(it); err != nil {
				return fail(fmt.Errorf("choosing its timestamps file: %w", err))
			}
		}
		j, err := b.prepare(it)
		if err != nil {
			return fail(err)
		}
		row.Out = outName(it, j.format)
		if b.Defaults.Timestamps != "" {
			row.TimestampsOut = timestampsPath(row.Out, b.Defaults.Timestamps)
		}
		row.Format = string(j.format)
		row.Settings = j.settings
		// A previous run's items count too, their timestamps files included: what this folder records for another
		// item is never overwritten.
		done, err := b.Out.Check(row)
		if err != nil {
			b.plan(-estimate)
			b.refuse(at, row, fmt.Errorf("not made: %w", err), record)
			return nil
		}
		if done {
			b.plan(-estimate)
			row.Status = results.StatusOK
			record(row, true)
			return nil
		}
		path, err := b.Out.Resolve(row.Out) // unique in the run: claimOutput refused a second item with the same file
		if err != nil {
			return fail(fmt.Errorf("choosing its output: %w", err))
		}
		var tsPath string
		if row.TimestampsOut != "" {
			if tsPath, err = b.Out.Resolve(row.TimestampsOut); err != nil {
				return fail(fmt.Errorf("choosing its timestamps file: %w", err))
			}
		}
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			return ctx.Err()
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			row := b.synthesizeItem(ctx, inFlight, it, j, row, path, tsPath, estimate)
			if ctx.Err() != nil {
				return // interrupted: no row, so a re-run redoes this item
			}
			if err := b.finish(at, row, record); err != nil {
				appendOnce.Do(func() { appendErr = err; stop() })
			}
		}()
		return nil
	})
	if b.Progress != nil && anyStreamed {
		b.Progress.Reading(false) // every item has been read: the plan is whole
	}
	wg.Wait()
	if appendErr != nil { // what stopped the scan, if anything did
		return sum, appendErr
	}
	if scanErr == nil {
		scanErr = ctx.Err()
	}
	return sum, scanErr
}

// itsInput names what is read of an item, for its error: a manifest's line, else its input (a .txt file, or a
// folder without any).
func itsInput(it manifest.Item) string {
	if it.Line > 0 {
		return "its line"
	}
	return "its input"
}

// itemRow is the row an item starts with, an error until it is made: what identifies the item (its id, or its input
// and line) and where its output goes.
func itemRow(it manifest.Item) results.Row {
	return results.Row{ID: it.ID, Line: it.Line, Source: inputPath(it.Source), Out: it.Out, Status: results.StatusError}
}

// Items lists the items of inputs as their rows identify them (id, input, line), without making anything: what a
// merge of a batch's results needs to tell the items that have no row.
func Items(ctx context.Context, inputs []string, stdin io.Reader) ([]results.Row, error) {
	var rows []results.Row
	err := manifest.Scan(ctx, inputs, stdin, func(it manifest.Item) error {
		r := itemRow(it)
		rows = append(rows, results.Row{ID: r.ID, Source: r.Source, Line: r.Line})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading inputs: %w", err)
	}
	return rows, nil
}

// prepare decides how an item is made: its voice, speaker and scales, and the settings that say so. Its errors say,
// as every error of an item does, what was being done to what, then why: "choosing its speaker: ...".
func (b *Batch) prepare(it manifest.Item) (job, error) {
	v, err := b.FindVoice(it.Voice)
	if err != nil {
		return job{}, fmt.Errorf("finding its voice: %w", err)
	}
	sid, err := v.Config.SpeakerID(it.Speaker)
	if err != nil {
		return job{}, fmt.Errorf("choosing its speaker: %w", err)
	}
	format, err := b.format(it)
	if err != nil {
		return job{}, fmt.Errorf("choosing its format: %w", err)
	}
	if rate := b.Defaults.Encoding.SampleRate; rate != 0 {
		if err := format.CheckSampleRate(rate); err != nil { // before its voice is loaded: --sample-rate is global
			return job{}, fmt.Errorf("choosing its sample rate (--sample-rate): %w", err)
		}
	}
	opt := SpeakOptions{
		Speaker:         sid,
		Scales:          b.Defaults.Scales(v.Config.Inference, it.LengthScale, it.NoiseScale, it.NoiseW),
		SentenceSilence: b.Defaults.SentenceSilence,
		Level:           b.Defaults.Level,
	}
	if b.Defaults.Timestamps != "" {
		opt.Timeline = b.aligner(v.Config).NewBuilder()
	}
	return job{opt: opt, format: format, settings: b.audioSettings(it, v, opt, format)}, nil
}

// audioSettings lists everything that decides an item's audio, for its row: a re-run redoes the items whose
// settings differ, like make. A setting that changes the audio (a format, a sample rate, a volume) is one more line
// here.
func (b *Batch) audioSettings(it manifest.Item, v *voices.Voice, opt SpeakOptions, format audio.Format) results.Settings {
	enc := b.Defaults.Encoding
	rate := v.Config.Audio.SampleRate
	if enc.SampleRate != 0 {
		rate = enc.SampleRate
	}
	bitrate := 0
	if format.Lossy() {
		bitrate = cmp.Or(enc.Bitrate, format.DefaultBitrate())
	}
	volume := opt.Level.Volume
	if volume == 0 {
		volume = 1
	}
	s := results.Settings{
		"text_sha256":      textDigest(it.Text), // the first 128 bits of the text's SHA-256, in hex (textDigest)
		"voice":            v.Name,
		"voice_files":      v.Identity(),
		"speaker":          strconv.FormatInt(opt.Speaker, 10),
		"length_scale":     formatScale(opt.Scales.Length),
		"noise_scale":      formatScale(opt.Scales.Noise),
		"noise_w":          formatScale(opt.Scales.NoiseW),
		"sentence_silence": strconv.FormatFloat(opt.SentenceSilence, 'g', -1, 64),
		"normalize":        strconv.FormatBool(b.Frontend.Normalize),
		"format":           string(format),
		"bitrate":          strconv.Itoa(bitrate),
		"sample_rate":      strconv.Itoa(rate),
		"volume":           formatScale(volume),
		"level":            opt.Level.Normalisation.String(),
		"timestamps":       string(b.Defaults.Timestamps),
	}
	// Only float16 is named: rows written before precision was recorded were float32's, and stay valid.
	if b.HalfPrecision {
		s["precision"] = "fp16"
	}
	return s
}

// textDigest is a row's "text_sha256" setting: the first 128 bits (16 bytes) of the SHA-256 of the item's text, in
// lower-case hex (32 characters); the text's UTF-8 bytes as the item has it (a manifest line's "text" as JSON
// decodes it, a .txt file's contents without a leading byte-order mark), before normalisation. It is a truncated
// SHA-256, not a full one: `printf %s "$TEXT" | sha256sum | cut -c1-32` gives it. The name stays, so that rows
// written before this was said still compare.
func textDigest(text string) string {
	sum := sha256.Sum256([]byte(text))
	return hex.EncodeToString(sum[:16])
}

func formatScale(v float32) string { return strconv.FormatFloat(float64(v), 'g', -1, 32) }

// inputPath is how a row names its input: an absolute path, so that the same file is known from any working
// directory; "-" for standard input.
func inputPath(source string) string {
	if source == "-" {
		return source
	}
	if abs, err := filepath.Abs(source); err == nil {
		return abs
	}
	return source
}

// withDefaults fills what the item leaves unset with the batch defaults, before the item is hashed: a re-run
// with another --voice or --length-scale then redoes the items it changes instead of skipping them.
// A voice path in a manifest is relative to the manifest's folder, as paths in a file usually are.
func (b *Batch) withDefaults(it manifest.Item) manifest.Item {
	if it.Voice != "" && voices.IsPath(it.Voice) && !filepath.IsAbs(it.Voice) && it.Source != "-" {
		it.Voice = filepath.Join(filepath.Dir(it.Source), it.Voice)
	}
	if it.Voice == "" {
		it.Voice = b.Defaults.Voice
	}
	if it.Speaker == "" {
		it.Speaker = b.Defaults.Speaker
	}
	if it.LengthScale == nil {
		it.LengthScale = b.Defaults.LengthScale
	}
	if it.NoiseScale == nil {
		it.NoiseScale = b.Defaults.NoiseScale
	}
	if it.NoiseW == nil {
		it.NoiseW = b.Defaults.NoiseW
	}
	return it
}

// outName is the audio file of it, relative to the output folder: its "out", else its id with its format's extension.
func outName(it manifest.Item, f audio.Format) string {
	if it.Out != "" {
		return it.Out
	}
	return it.ID + f.Ext()
}

// claimOutput takes the audio file that it would write for it, or says which earlier item has it; an item with Err,
// or whose format is wrong, claims nothing (it fails on that). The name is known only here, with the run's format: an
// id "a" makes a.flac under --format flac, the file an "out" of "a.flac" names.
func (b *Batch) claimOutput(outs map[string]itemPlace, it manifest.Item) error {
	if it.Err != nil {
		return nil
	}
	f, err := b.format(it)
	if err != nil {
		return nil
	}
	name := path.Clean(outName(it, f)) // "a.wav" and "./a.wav" are one file
	if first, taken := outs[name]; taken {
		return fmt.Errorf("%q is already used by id %q (%s)", name, first.id, first.where)
	}
	outs[name] = itemPlace{where: where(it), id: it.ID}
	return nil
}

// format is the item's audio format: its own "format", else the one its "out" names by extension, else the
// batch's. A "format" and an "out" that disagree are an error, as is an "out" whose extension names no format
// when nothing else says which.
func (b *Batch) format(it manifest.Item) (audio.Format, error) {
	byExt, known := audio.FormatOf(it.Out)
	if it.Format != "" {
		f, err := audio.ParseFormat(it.Format)
		if err != nil {
			return "", err
		}
		if known && byExt != f {
			return "", fmt.Errorf(`"out" %q is a %s file, but "format" is %s`, it.Out, byExt, f)
		}
		return f, nil
	}
	switch {
	case known:
		return byExt, nil
	case it.Out != "":
		return "", fmt.Errorf(`"out" %q has an extension of no audio format; give "format" (%s)`, it.Out, audio.FormatNames())
	case b.Defaults.Format != "":
		return b.Defaults.Format, nil
	}
	return audio.WAV, nil
}

// finish writes the item's row and reports it; at names the item for messages. A failed attempt at an item whose
// good output is still there keeps that output and its row, noting the failure (results.Dir.KeepGood). A row that
// cannot be written stops the batch: results.jsonl is the record of what is done, and continuing without it would
// lose work silently.
func (b *Batch) finish(at string, row results.Row, record func(results.Row, bool)) error {
	if row.Status != results.StatusOK {
		b.reportFailed(at, row)
		row = b.Out.KeepGood(row)
	}
	if err := b.Out.Append(row); err != nil {
		return fmt.Errorf("recording the result of item %q: %w", row.ID, err)
	}
	record(row, false)
	return nil
}

// refuse reports an item that must not be made into this folder (err says why and what to do). It gets no row: the
// row in its way belongs to another input's item, which stays as it is.
func (b *Batch) refuse(at string, row results.Row, err error, record func(results.Row, bool)) {
	row.Error = err.Error()
	b.reportFailed(at, row)
	record(row, false)
}

// reportFailed says which item failed (file:line and id) and what failed, as an error.
func (b *Batch) reportFailed(at string, row results.Row) {
	if row.ID != "" {
		at += fmt.Sprintf(": item %q", row.ID)
	}
	if b.Errorf != nil {
		b.Errorf("%s: %s", at, row.Error)
	}
}

// synthesizeItem makes the item's audio at path and, with timestamps, its timestamps file at tsPath.
func (b *Batch) synthesizeItem(ctx context.Context, inFlight *InFlight, it manifest.Item, j job, row results.Row,
	path, tsPath string, estimate int) results.Row {
	fail := func(err error) results.Row {
		row.Status = results.StatusError
		row.Error = err.Error()
		return row
	}
	v, err := b.LoadVoice(it.Voice)
	if err != nil {
		b.plan(-estimate)
		return fail(fmt.Errorf("loading its voice: %w", err))
	}
	// The first pass's guess becomes the frontend's closer estimate now, and what was spoken at the end: the
	// progress total stays near the truth while a book is still being phonemized.
	text := b.Frontend.Split(it.Text)
	planned := text.Estimate()
	b.plan(planned - estimate)
	var samples, size int64
	written := 0
	var speakErr error // the audio could not be made: an error about synthesis, not about writing
	rate := v.Voice.Config.Audio.SampleRate
	err = b.Out.WriteFile(path, func(w io.Writer) error {
		ws, ok := w.(io.WriteSeeker) // the temporary file
		if !ok {
			return fmt.Errorf("output for %s cannot seek", path)
		}
		file := &fileErrors{WriteSeeker: ws}
		enc, err := audio.NewEncoder(audio.Format(row.Format), file, rate, b.Defaults.Encoding)
		if err != nil {
			return err
		}
		written, err = Speak(ctx, b.Engine, inFlight, v, b.Frontend.Stream(text, v.Voice.Config), j.opt, enc,
			func(d SentenceDone) {
				samples = d.End
				if b.Progress != nil {
					b.Progress.Sentence(d)
				}
			})
		if err != nil && file.err == nil {
			speakErr = err
		}
		if cerr := enc.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
		size, err = sizeOf(w)
		return err
	})
	b.plan(written - planned)
	if speakErr != nil {
		return fail(fmt.Errorf("synthesising its audio: %w", speakErr))
	}
	if err == nil && j.opt.Timeline != nil {
		err = b.Out.WriteFile(tsPath, func(w io.Writer) error {
			return timestamps.Write(w, b.Defaults.Timestamps, j.opt.Timeline.Timeline())
		})
	}
	if err != nil {
		return fail(err) // "writing out/x.wav: ..."
	}
	row.Status = results.StatusOK
	row.Sentences = written
	row.AudioSeconds = float64(samples) / float64(rate)
	row.Bytes = size
	return row
}

// fileErrors remembers the first error of writing to (or seeking in) an output file, to tell a failure to write from
// a failure to make the audio.
type fileErrors struct {
	io.WriteSeeker
	err error
}

func (f *fileErrors) Write(p []byte) (int, error) {
	n, err := f.WriteSeeker.Write(p)
	f.keep(err)
	return n, err
}

func (f *fileErrors) Seek(offset int64, whence int) (int64, error) {
	n, err := f.WriteSeeker.Seek(offset, whence)
	f.keep(err)
	return n, err
}

func (f *fileErrors) keep(err error) {
	if f.err == nil {
		f.err = err
	}
}

// sizeOf is the size of the file being written through w (a temporary file: results.Dir.WriteFile).
func sizeOf(w io.Writer) (int64, error) {
	s, ok := w.(io.Seeker)
	if !ok {
		return 0, nil
	}
	end, err := s.Seek(0, io.SeekEnd)
	if err != nil {
		return 0, fmt.Errorf("measuring the encoded file: %w", err)
	}
	return end, nil
}

// aligner is the word timer of a voice, one for the batch.
func (b *Batch) aligner(cfg *voices.Config) *timestamps.Aligner {
	if a, ok := b.aligners.Load(cfg); ok {
		return a.(*timestamps.Aligner)
	}
	a, _ := b.aligners.LoadOrStore(cfg, b.Frontend.Aligner(cfg))
	return a.(*timestamps.Aligner)
}

func (b *Batch) plan(delta int) {
	if b.Progress != nil && delta != 0 {
		b.Progress.Planned(delta)
	}
}

func (b *Batch) warnf(format string, args ...any) {
	if b.Warnf != nil {
		b.Warnf(format, args...)
	}
}

// where names an item's place for messages: "file:line" (the line only for manifests; stdin is "stdin").
func where(it manifest.Item) string {
	source := it.Source
	if source == "-" {
		source = "stdin"
	}
	if it.Line > 0 {
		return fmt.Sprintf("%s:%d", source, it.Line)
	}
	return source
}

// estimateItem guesses an item's sentence count cheaply (no phonemization), for the progress total.
func estimateItem(it manifest.Item) int {
	if it.Err != nil {
		return 0
	}
	return estimateText(it.Text)
}

// estimateText guesses how many sentences text has, quickly (no normalisation, no phonemization): 0 when it has
// no words. Frontend.Split's estimate is closer and slower.
func estimateText(text string) int { return len(textnorm.Sentences(text)) }

// fileInputs are the inputs that can be read more than once: all but the streams (stdin, FIFOs).
func fileInputs(inputs []string) []string {
	var files []string
	for _, in := range inputs {
		if !manifest.IsStream(in) {
			files = append(files, in)
		}
	}
	return files
}

// FirstPass reads the inputs that can be read twice (all but stdin and FIFOs, whose items are counted and checked
// as they come) once before a batch, without phonemizing. It counts the sentences of the good items that s owns, so
// that progress shows a total and an ETA from the start; and with timestamps in format (not empty) it refuses items
// whose timestamps files would be one file, or their own audio (ErrTimestampsNames), naming the items and their
// lines, before anything is made. The items of every shard count there, since shards write into one folder.
func FirstPass(ctx context.Context, inputs []string, s shard.Spec, format timestamps.Format) (sentences int, err error) {
	files := fileInputs(inputs)
	if len(files) == 0 {
		return 0, nil
	}
	var names *timestampsNames
	if format != "" {
		names = newTimestampsNames(format)
	}
	var collisions []string
	err = manifest.Scan(ctx, files, nil, func(it manifest.Item) error {
		if s.Owns(itemRow(it).ShardKey()) {
			sentences += estimateItem(it)
		}
		if names != nil && it.Err == nil { // a bad item is said when the batch comes to it
			if err := names.claim(it); err != nil {
				collisions = append(collisions, err.Error())
			}
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("reading inputs: %w", err)
	}
	if len(collisions) > 0 {
		return sentences, timestampsNamesError(collisions)
	}
	return sentences, nil
}
