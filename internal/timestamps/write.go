package timestamps

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"
)

// Format is a timestamps file format.
type Format string

// The formats: JSON with every word and sentence; SRT and WebVTT subtitles of a few words a cue.
const (
	JSON Format = "json"
	SRT  Format = "srt"
	VTT  Format = "vtt"
)

// ParseFormat reads a format name ("json", "srt", "vtt"; case-insensitive).
func ParseFormat(name string) (Format, error) {
	switch f := Format(strings.ToLower(strings.TrimSpace(name))); f {
	case JSON, SRT, VTT:
		return f, nil
	}
	return "", fmt.Errorf("unknown timestamps format %q (want json, srt or vtt)", name)
}

// FormatOf is the format a file name's extension names.
func FormatOf(path string) (Format, error) {
	ext := strings.TrimPrefix(filepath.Ext(path), ".")
	f, err := ParseFormat(ext)
	if err != nil {
		return "", fmt.Errorf("timestamps file %s: the extension says the format: .json, .srt or .vtt", path)
	}
	return f, nil
}

// Ext is the format's file name extension, with its dot.
func (f Format) Ext() string { return "." + string(f) }

// Write writes t in format f.
func Write(w io.Writer, f Format, t Timeline) error {
	bw := bufio.NewWriter(w)
	var err error
	switch f {
	case JSON:
		if t.Words == nil {
			t.Words = []Word{}
		}
		if t.Sentences == nil {
			t.Sentences = []Sentence{}
		}
		enc := json.NewEncoder(bw)
		enc.SetEscapeHTML(false)
		err = enc.Encode(t)
	case SRT, VTT:
		err = writeCues(bw, f, cues(t))
	default:
		err = fmt.Errorf("unknown timestamps format %q", f)
	}
	if err != nil {
		return err
	}
	return bw.Flush()
}

// Cue limits: a subtitle shows a few words as written (a number is one, however many words it is spoken as), a
// line a reader takes in at a glance.
const (
	cueTokens  = 7
	cueSeconds = 3.5
)

type cue struct {
	start, end float64
	text       string
}

// cues groups words into subtitles: never across a sentence, ending after a clause mark, at most cueTokens
// tokens and cueSeconds long. A cue shows the words as written ("1,205" once, however many words it is spoken as).
func cues(t Timeline) []cue {
	var out []cue
	var words []Word
	var parts []string // the cue's tokens
	flush := func() {
		if len(words) == 0 {
			return
		}
		out = append(out, cue{start: words[0].Start, end: words[len(words)-1].End, text: strings.Join(parts, " ")})
		words, parts = words[:0], parts[:0]
	}
	for _, w := range t.Words {
		// A word starts a token unless it is the same token as the one before (a number's words): by the token,
		// not its spelling, which two tokens share in "very very".
		newToken := len(words) == 0 || w.token != words[len(words)-1].token
		if len(words) > 0 {
			prev := words[len(words)-1]
			full := len(parts) >= cueTokens || w.End-words[0].Start > cueSeconds
			if w.sentence != prev.sentence || prev.clauseEnd || full && newToken {
				flush()
				newToken = true
			}
		}
		words = append(words, w)
		if newToken {
			parts = append(parts, w.Text)
		}
	}
	flush()
	return out
}

func writeCues(w *bufio.Writer, f Format, cs []cue) error {
	if f == VTT {
		fmt.Fprint(w, "WEBVTT\n\n")
	}
	for i, c := range cs {
		if f == SRT {
			fmt.Fprintf(w, "%d\n", i+1)
		}
		end := c.end
		if end <= c.start { // players skip a cue of no length
			end = c.start + 0.001
		}
		text := c.text
		if f == VTT {
			text = vttEscaper.Replace(text)
		}
		_, err := fmt.Fprintf(w, "%s --> %s\n%s\n\n", cueTime(c.start, f), cueTime(end, f), text)
		if err != nil {
			return fmt.Errorf("writing cue %d: %w", i+1, err)
		}
	}
	return nil
}

// vttEscaper escapes a WebVTT cue's text: a player reads "<" as a tag's start ("a<b then b>a" shows as "aa") and
// "&" as a character reference's, and the spec forbids "-->" in a cue, which escaping ">" also rules out.
//
// SRT text is left as written: ffmpeg's SRT decoder (as of 5.1) shows "&lt;" as those four characters, not "<",
// so escaping would garble every "<", ">" and "&" to fix only the rare text that looks like a tag.
var vttEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

// cueTime is HH:MM:SS,mmm (SRT) or HH:MM:SS.mmm (WebVTT).
func cueTime(seconds float64, f Format) string {
	ms := int64(seconds*1000 + 0.5)
	sep := ","
	if f == VTT {
		sep = "."
	}
	return fmt.Sprintf("%02d:%02d:%02d%s%03d", ms/3600000, ms/60000%60, ms/1000%60, sep, ms%1000)
}
