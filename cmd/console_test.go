package cmd

import (
	"strings"
	"testing"

	"github.com/ttsgen/ttsgen/internal/pipeline"
)

// Where standard output goes decides synth's default: a terminal gets no WAV bytes, a pipe gets the stream.
func TestSynthWithoutOutputDependsOnTheTerminal(t *testing.T) {
	isolate(t)
	needORT(t)
	if r := runTTY(t, IO{OutTTY: true}, "", "synth", "--voice", tinyVoice, "Hi."); r.code != ExitUsage ||
		!strings.Contains(r.errOut, "-o is required") || r.out != "" {
		t.Errorf("stdout a terminal: exit %d, %d bytes out, stderr %q; want a usage error and nothing written", r.code,
			len(r.out), r.errOut)
	}
	if r := runTTY(t, IO{}, "", "synth", "--voice", tinyVoice, "Hi."); r.code != ExitOK || !strings.HasPrefix(r.out, "RIFF") {
		t.Errorf("stdout a pipe: exit %d, stdout starts %q, stderr %q; want a WAV stream", r.code, r.out[:min(4, len(r.out))], r.errOut)
	}
}

// Reading text from a terminal says how to end it; from a pipe it says nothing.
func TestSynthPromptsOnlyATerminal(t *testing.T) {
	isolate(t)
	needORT(t)
	const prompt = "reading text from standard input"
	if r := runTTY(t, IO{InTTY: true}, "Typed.", "synth", "--voice", tinyVoice, "-o", "-"); !strings.Contains(r.errOut, prompt) {
		t.Errorf("stdin a terminal: stderr %q, want the prompt", r.errOut)
	}
	if r := runTTY(t, IO{}, "Piped.", "synth", "--voice", tinyVoice, "-o", "-"); strings.Contains(r.errOut, prompt) {
		t.Errorf("stdin a pipe: stderr %q, want no prompt", r.errOut)
	}
}

// On a terminal, progress is a live bar; elsewhere, plain lines that logs can keep.
func TestProgressIsABarOnlyOnATerminal(t *testing.T) {
	for _, tt := range []struct {
		name       string
		tty, quiet bool
		wantBar    bool
	}{
		{"terminal", true, false, true},
		{"pipe", false, false, false},
		{"terminal, --quiet", true, true, false},
	} {
		c := newConsole(IO{ErrOut: &strings.Builder{}, ErrTTY: tt.tty}, tt.quiet)
		c.startProgress()
		if got := c.bar != nil; got != tt.wantBar {
			t.Errorf("%s: progress bar %v, want %v", tt.name, got, tt.wantBar)
		}
	}
}

// A shard's plain progress lines say which shard runs, and from where.
func TestProgressLineNamesTheShard(t *testing.T) {
	var w strings.Builder
	c := newConsole(IO{ErrOut: &w}, false)
	p := c.startLabelledProgress("shard 2/4 (JOB_COMPLETION_INDEX=1)")
	p.plainEvery = 0
	p.Planned(3)
	p.Sentence(pipeline.SentenceDone{AudioSeconds: 1})
	if want := "progress: shard 2/4 (JOB_COMPLETION_INDEX=1): 1/3 sentences (33%), "; !strings.HasPrefix(w.String(), want) {
		t.Errorf("progress line %q, want it to start %q", w.String(), want)
	}
}

// While a streamed input is still being read, its total is only what it has given so far: the plain line says so
// and gives no share or ETA (which would promise the end once that much is spoken); once read, both come back.
func TestProgressLineOfAnOpenStream(t *testing.T) {
	var w strings.Builder
	c := newConsole(IO{ErrOut: &w}, false)
	p := c.startProgress()
	p.plainEvery = 0
	p.Reading(true)
	p.Planned(3)
	p.Sentence(pipeline.SentenceDone{AudioSeconds: 1})
	if want := "progress: 1 of 3 sentences read so far (input still open), "; !strings.HasPrefix(w.String(), want) ||
		strings.Contains(w.String(), "ETA") || strings.Contains(w.String(), "%") {
		t.Errorf("progress line %q, want it to start %q, with no share or ETA", w.String(), want)
	}
	w.Reset()
	p.Reading(false)
	p.Sentence(pipeline.SentenceDone{AudioSeconds: 1})
	if want := "progress: 2/3 sentences (67%), "; !strings.HasPrefix(w.String(), want) || !strings.Contains(w.String(), "ETA") {
		t.Errorf("progress line once read %q, want it to start %q, with an ETA", w.String(), want)
	}
	// On a terminal the bar turns as a spinner while the input is open, and shows the total once it is read.
	tc := newConsole(IO{ErrOut: &strings.Builder{}, ErrTTY: true}, false)
	tp := tc.startProgress()
	tp.Reading(true)
	tp.Planned(5)
	if got := tc.bar.GetMax(); got == 5 {
		t.Errorf("bar's max while reading = %d, the total read so far; want none (a spinner)", got)
	}
	tp.Reading(false)
	if got := tc.bar.GetMax(); got != 5 {
		t.Errorf("bar's max once read = %d, want 5", got)
	}
}
