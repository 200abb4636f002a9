package pipeline

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/ttsgen/ttsgen/internal/audio"
	"github.com/ttsgen/ttsgen/internal/engine"
	"github.com/ttsgen/ttsgen/internal/manifest"
	"github.com/ttsgen/ttsgen/internal/results"
	"github.com/ttsgen/ttsgen/internal/textnorm"
	"github.com/ttsgen/ttsgen/internal/timestamps"
	"github.com/ttsgen/ttsgen/internal/voices"
)

// VoiceLoader returns a loaded voice by name or path ("" = the default voice). It is called from several goroutines
// and should cache: a corpus usually names few voices.
type VoiceLoader func(name string) (*LoadedVoice, error)

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
	LoadVoice   VoiceLoader
	Out         *results.Dir
	Defaults    Defaults
	Progress    Progress // may be nil
	Warnf       func(format string, args ...any)
	Concurrency int // items in flight (0 = the engine's queue size, at least MinItemConcurrency)

	aligners sync.Map // *voices.Config -> *timestamps.Aligner, for Defaults.Timestamps
}

// MinItemConcurrency is the fewest items a batch keeps in flight by default. By default it keeps as many items as
// the engine's queue holds sentences, so that a prompt set of one short sentence per item fills the device's
// batches as a book does; the sentences of all items together are bounded by the same number (InFlight), and so
// is the audio held in memory.
const MinItemConcurrency = 64

// Run synthesises every item of inputs. Bad items get an error row and do not stop the others. It returns when
// every item has a row, or early when ctx is cancelled: items in flight then get no row (their temporary files are
// removed), so a re-run redoes exactly them.
func (b *Batch) Run(ctx context.Context, inputs []string) (Summary, error) {
	if b.Progress != nil {
		n, err := EstimateSentences(ctx, inputs)
		if err != nil {
			return Summary{}, err
		}
		b.Progress.Planned(n)
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
		case row.Status == results.StatusOK:
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
	var appendErr error
	var appendOnce sync.Once
	scanErr := manifest.Scan(ctx, inputs, func(it manifest.Item) error {
		for _, w := range it.Warnings {
			b.warnf("%s: %s", where(it), w)
		}
		it = b.withDefaults(it)
		estimate := estimateItem(it)
		row := results.Row{ID: it.ID, Line: it.Line, Source: it.Source, Out: it.Out, Status: results.StatusError}
		if it.Err != nil {
			row.Error = it.Err.Error()
			b.plan(-estimate)
			return b.finish(row, record)
		}
		format, err := b.format(it)
		if err != nil {
			row.Error = fmt.Sprintf("line %d: %v", it.Line, err)
			if it.Line == 0 {
				row.Error = err.Error()
			}
			b.plan(-estimate)
			return b.finish(row, record)
		}
		row.Out = it.Out
		if row.Out == "" {
			row.Out = it.ID + format.Ext()
		}
		row.Format = string(format)
		row.Hash = b.hash(it, format)
		if b.Out.Done(it.ID, row.Hash) {
			b.plan(-estimate)
			row.Status = results.StatusOK
			record(row, true)
			return nil
		}
		path, err := b.Out.Resolve(row.Out) // unique in the run: manifest.Scan refuses a second item with the same out
		if err != nil {
			row.Error = err.Error()
			b.plan(-estimate)
			return b.finish(row, record)
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
			row := b.synthesizeItem(ctx, inFlight, it, row, path, estimate)
			if ctx.Err() != nil {
				return // interrupted: no row, so a re-run redoes this item
			}
			if err := b.finish(row, record); err != nil {
				appendOnce.Do(func() { appendErr = err })
			}
		}()
		return nil
	})
	wg.Wait()
	if scanErr == nil {
		scanErr = appendErr
	}
	if scanErr == nil {
		scanErr = ctx.Err()
	}
	return sum, scanErr
}

// withDefaults fills what the item leaves unset with the batch defaults, before the item is hashed: a re-run
// with another --voice or --length-scale then redoes the items it changes instead of skipping them.
func (b *Batch) withDefaults(it manifest.Item) manifest.Item {
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

// hash is the item's digest with the batch's audio settings mixed in when they differ from Piper's WAV, so that a
// re-run in another format, at another bitrate or volume redoes the items, while results of WAV runs stay valid.
func (b *Batch) hash(it manifest.Item, format audio.Format) string {
	h := it.Hash()
	enc, level := b.Defaults.Encoding, b.Defaults.Level
	if level.Volume == 1 {
		level.Volume = 0
	}
	ts := b.Defaults.Timestamps
	if format == audio.WAV && enc.SampleRate == 0 && level == (audio.Level{}) && ts == "" {
		return h
	}
	if !format.Lossy() {
		enc.Bitrate = 0
	}
	sum := sha256.Sum256(fmt.Appendf(nil, "%s\x00format=%s bitrate=%d rate=%d volume=%g model-level=%t timestamps=%s",
		h, format, enc.Bitrate, enc.SampleRate, level.Volume, level.KeepModelLevel, ts))
	return hex.EncodeToString(sum[:16])
}

// finish writes the item's row and reports it. A row that cannot be written stops the batch: results.jsonl is the
// record of what is done, and continuing without it would lose work silently.
func (b *Batch) finish(row results.Row, record func(results.Row, bool)) error {
	if row.Status != results.StatusOK {
		// Manifest errors already start with their line; say it once, as file:line.
		b.warnf("%s: %s", whereRow(row), strings.TrimPrefix(row.Error, fmt.Sprintf("line %d: ", row.Line)))
	}
	if err := b.Out.Append(row); err != nil {
		return fmt.Errorf("recording the result of item %q: %w", row.ID, err)
	}
	record(row, false)
	return nil
}

func (b *Batch) synthesizeItem(ctx context.Context, inFlight *InFlight, it manifest.Item, row results.Row, path string,
	estimate int) results.Row {
	fail := func(err error) results.Row {
		row.Status = results.StatusError
		row.Error = err.Error()
		return row
	}
	v, err := b.LoadVoice(it.Voice)
	if err != nil {
		b.plan(-estimate)
		return fail(err)
	}
	sid, err := v.Voice.Config.SpeakerID(it.Speaker)
	if err != nil {
		b.plan(-estimate)
		return fail(err)
	}
	opt := SpeakOptions{
		Speaker:         sid,
		Scales:          b.scales(it, v),
		SentenceSilence: b.Defaults.SentenceSilence,
		Level:           b.Defaults.Level,
	}
	if b.Defaults.Timestamps != "" {
		opt.Timeline = b.aligner(v.Voice.Config).NewBuilder()
	}
	// The first pass's guess becomes the frontend's closer estimate now, and what was spoken at the end: the
	// progress total stays near the truth while a book is still being phonemized.
	text := b.Frontend.Split(it.Text)
	planned := text.Estimate()
	b.plan(planned - estimate)
	var samples, size int64
	written := 0
	rate := v.Voice.Config.Audio.SampleRate
	err = b.Out.WriteFile(path, func(w io.Writer) error {
		enc, err := audio.NewEncoder(audio.Format(row.Format), w, rate, b.Defaults.Encoding)
		if err != nil {
			return err
		}
		written, err = Speak(ctx, b.Engine, inFlight, v, b.Frontend.Stream(text, v.Voice.Config), opt, enc,
			func(d SentenceDone) {
				samples = d.End
				if b.Progress != nil {
					b.Progress.Sentence(d)
				}
			})
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
	if err == nil && opt.Timeline != nil {
		err = b.Out.WriteFile(timestampsPath(path, b.Defaults.Timestamps), func(w io.Writer) error {
			return timestamps.Write(w, b.Defaults.Timestamps, opt.Timeline.Timeline())
		})
	}
	if err != nil {
		return fail(err)
	}
	row.Status = results.StatusOK
	row.Sentences = written
	row.AudioSeconds = float64(samples) / float64(rate)
	row.Bytes = size
	return row
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

// scales picks each scale from the item, else the batch defaults, else the voice's config.
func (b *Batch) scales(it manifest.Item, v *LoadedVoice) engine.Scales {
	return b.Defaults.Scales(v.Voice.Config.Inference, it.LengthScale, it.NoiseScale, it.NoiseW)
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

func where(it manifest.Item) string {
	if it.Line > 0 {
		return fmt.Sprintf("%s:%d", it.Source, it.Line)
	}
	return it.Source
}

// whereRow names an item for messages: "file:line: item ID" (the line only for manifests, the id when known).
func whereRow(r results.Row) string {
	where := r.Source
	if r.Line > 0 {
		where = fmt.Sprintf("%s:%d", r.Source, r.Line)
	}
	if r.ID != "" {
		where += fmt.Sprintf(": item %q", r.ID)
	}
	return where
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

// EstimateSentences counts the sentences of every good item in inputs, without phonemizing: a quick first pass so
// progress can show a total and an ETA from the start.
func EstimateSentences(ctx context.Context, inputs []string) (int, error) {
	n := 0
	err := manifest.Scan(ctx, inputs, func(it manifest.Item) error {
		n += estimateItem(it)
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("reading inputs: %w", err)
	}
	return n, nil
}
