package cmd

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/ttsgen/ttsgen/internal/pipeline"
	"github.com/ttsgen/ttsgen/internal/results"
)

// console serialises what ttsgen writes to stderr: warnings and the progress display, so neither tears the other.
type console struct {
	mu       sync.Mutex
	w        io.Writer
	quiet    bool
	terminal bool
	bar      *progressbar.ProgressBar // nil until a progress display starts, and when not on a terminal
}

// newConsole writes to streams.ErrOut, with a live progress bar only when that is a terminal.
func newConsole(streams IO, quiet bool) *console {
	return &console{w: streams.ErrOut, quiet: quiet, terminal: streams.ErrTTY}
}

// Warnf prints a warning (not in --quiet mode).
func (c *console) Warnf(format string, args ...any) {
	if !c.quiet {
		c.println("warning: "+format, args...)
	}
}

// Errorf prints an error that does not stop the command (an item of a batch that failed), in --quiet mode too.
func (c *console) Errorf(format string, args ...any) { c.println("error: "+format, args...) }

// println writes a line above the progress bar, if one is shown.
func (c *console) println(format string, args ...any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.bar != nil {
		_ = c.bar.Clear()
	}
	fmt.Fprintf(c.w, format+"\n", args...)
	if c.bar != nil {
		_ = c.bar.RenderBlank()
	}
}

// Printf writes a line that is part of the command's report (shown even without a terminal, not in --quiet mode).
func (c *console) Printf(format string, args ...any) {
	if c.quiet {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	fmt.Fprintf(c.w, format, args...)
}

// progress shows a batch's progress: sentences done of the total, sentences per second, audio seconds per second
// and the ETA. On a terminal it is a live bar; otherwise a plain line every plainEvery, so logs stay readable.
type progress struct {
	c          *console
	label      string // what runs, before the figures: "shard 2/4 (JOB_COMPLETION_INDEX=1)"; "" for nothing
	start      time.Time
	mu         sync.Mutex
	total      int
	reading    bool // an input is read as it comes (Reading): total counts what it has given so far
	done       int
	audio      float64
	lastPlain  time.Time
	plainEvery time.Duration
	now        func() time.Time
}

const plainProgressEvery = 5 * time.Second

func (c *console) startProgress() *progress { return c.startLabelledProgress("") }

// startLabelledProgress starts a progress display whose lines start with label.
func (c *console) startLabelledProgress(label string) *progress {
	p := &progress{c: c, label: label, start: time.Now(), plainEvery: plainProgressEvery, now: time.Now}
	p.lastPlain = p.start
	if c.quiet || !c.terminal {
		return p
	}
	c.mu.Lock()
	c.bar = progressbar.NewOptions(-1,
		progressbar.OptionSetWriter(c.w),
		progressbar.OptionSetDescription("synthesising"),
		progressbar.OptionShowCount(),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionShowElapsedTimeOnFinish(),
		progressbar.OptionThrottle(200*time.Millisecond),
		progressbar.OptionSetWidth(30),
		progressbar.OptionFullWidth(),
	)
	c.mu.Unlock()
	return p
}

var _ pipeline.Progress = (*progress)(nil)

func (p *progress) Planned(delta int) {
	p.mu.Lock()
	p.total += delta
	total := p.total
	p.mu.Unlock()
	p.c.mu.Lock()
	defer p.c.mu.Unlock()
	if p.c.bar != nil && !p.reading {
		p.c.bar.ChangeMax(max(total, 1))
	}
}

// Reading says whether an input read as it comes (standard input, a FIFO) is still being read. While it is, the
// total is only what it has given so far: the line gives no share or ETA, which would say the work ends when the
// text read so far is spoken, and the live bar turns as a spinner; once it has all been read, the total is whole.
func (p *progress) Reading(open bool) {
	p.mu.Lock()
	p.reading = open
	total := p.total
	p.mu.Unlock()
	p.c.mu.Lock()
	defer p.c.mu.Unlock()
	if p.c.bar != nil {
		if open {
			p.c.bar.ChangeMax(-1)
		} else {
			p.c.bar.ChangeMax(max(total, 1))
		}
	}
}

func (p *progress) Sentence(d pipeline.SentenceDone) {
	p.mu.Lock()
	p.done++
	p.audio += d.AudioSeconds
	line, plainDue := p.line(), false
	if now := p.now(); now.Sub(p.lastPlain) >= p.plainEvery {
		p.lastPlain, plainDue = now, true
	}
	p.mu.Unlock()

	p.c.mu.Lock()
	defer p.c.mu.Unlock()
	switch {
	case p.c.bar != nil:
		p.c.bar.Describe(line.labelled(line.rates()))
		_ = p.c.bar.Add(1)
	case plainDue && !p.c.quiet:
		fmt.Fprintln(p.c.w, "progress:", line)
	}
}

func (p *progress) Item(results.Row, bool) {}

// finish ends the live bar (leaving the terminal clean for the summary).
func (p *progress) finish() {
	p.c.mu.Lock()
	defer p.c.mu.Unlock()
	if p.c.bar != nil {
		_ = p.c.bar.Exit()
		fmt.Fprintln(p.c.w)
		p.c.bar = nil
	}
}

type progressLine struct {
	label                 string
	done, total           int
	reading               bool // the total is what has been read so far
	sentPerSec, audioRate float64
	eta                   time.Duration
}

// line computes the figures under p.mu.
func (p *progress) line() progressLine {
	elapsed := p.now().Sub(p.start).Seconds()
	l := progressLine{label: p.label, done: p.done, total: p.total, reading: p.reading}
	if elapsed > 0 {
		l.sentPerSec = float64(p.done) / elapsed
		l.audioRate = p.audio / elapsed
	}
	if l.sentPerSec > 0 && p.total > p.done && !p.reading {
		l.eta = time.Duration(float64(p.total-p.done) / l.sentPerSec * float64(time.Second)).Round(time.Second)
	}
	return l
}

func (l progressLine) rates() string {
	return fmt.Sprintf("%.1f sent/s, %.1fx real time", l.sentPerSec, l.audioRate)
}

func (l progressLine) String() string {
	if l.reading {
		return l.labelled(fmt.Sprintf("%d of %d sentences read so far (input still open), %s", l.done, l.total, l.rates()))
	}
	pct := 0.0
	if l.total > 0 {
		pct = 100 * float64(l.done) / float64(l.total)
	}
	return l.labelled(fmt.Sprintf("%d/%d sentences (%.0f%%), %s, ETA %s", l.done, l.total, pct, l.rates(), l.eta))
}

// labelled is s after the line's label, if it has one.
func (l progressLine) labelled(s string) string {
	if l.label == "" {
		return s
	}
	return l.label + ": " + s
}
