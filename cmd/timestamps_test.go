package cmd

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ttsgen/ttsgen/internal/audio/decodetest"
)

type timestampsFile struct {
	Words []struct {
		Word, Text string
		Start, End float64
	}
	Sentences []struct {
		Text       string
		Start, End float64
	}
}

func readTimestamps(t *testing.T, path string) timestampsFile {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var f timestampsFile
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatalf("%s: %v\n%s", path, err, b)
	}
	return f
}

// synth --timestamps FILE: the words of the text as spoken and as written, in order, within the audio; and
// subtitles ffprobe reads.
func TestSynthTimestamps(t *testing.T) {
	isolate(t)
	needORT(t)
	dir := t.TempDir()
	text := "It cost $1,205 on Jan. 5th. Dr. Smith paid, gladly."
	wav := filepath.Join(dir, "x.wav")
	js := filepath.Join(dir, "x.json")
	if r := run(t, "", append([]string{"synth", text, "-o", wav, "--timestamps", js}, deterministic...)...); r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.errOut)
	}
	samples, rate := readWAVFile(t, wav)
	seconds := float64(len(samples)) / float64(rate)
	ts := readTimestamps(t, js)
	var spoken, written []string
	last := 0.0
	for _, w := range ts.Words {
		spoken = append(spoken, w.Word)
		written = append(written, w.Text)
		if w.Start < last || w.End < w.Start || w.End > seconds {
			t.Errorf("word %+v out of order or past the audio's %.3f s", w, seconds)
		}
		last = w.End
	}
	if got := strings.Join(spoken, " "); got != "It cost one thousand two hundred five dollars on January fifth Doctor Smith paid gladly" {
		t.Errorf("spoken words %q", got)
	}
	if got := strings.Join(written, "|"); got != "It|cost|$1,205|$1,205|$1,205|$1,205|$1,205|$1,205|on|Jan.|5th|Dr.|Smith|paid|gladly" {
		t.Errorf("words as written %q", got)
	}
	if len(ts.Sentences) != 2 || ts.Sentences[0].Text != "It cost $1,205 on Jan. 5th." || ts.Sentences[1].Text != "Dr. Smith paid, gladly." ||
		ts.Sentences[1].Start <= ts.Sentences[0].End {
		t.Errorf("sentences %+v", ts.Sentences)
	}
	for _, ext := range []string{".srt", ".vtt"} {
		path := filepath.Join(dir, "x"+ext)
		if r := run(t, "", append([]string{"synth", text, "-o", filepath.Join(dir, "y.opus"), "--timestamps", path}, deterministic...)...); r.code != 0 {
			t.Fatalf("exit %d: %s", r.code, r.errOut)
		}
		if cues := decodetest.ProbeAll(t, path, "packet=pts_time"); len(cues) < 2 {
			t.Errorf("%s: ffprobe finds %d cues", ext, len(cues))
		}
	}
}

func TestTimestampsErrors(t *testing.T) {
	isolate(t)
	needORT(t)
	dir := t.TempDir()
	if r := run(t, "", "synth", "hi", "-o", filepath.Join(dir, "x.wav"), "--timestamps", filepath.Join(dir, "x.txt")); r.code != ExitUsage ||
		!strings.Contains(r.errOut, ".json, .srt or .vtt") {
		t.Errorf("--timestamps x.txt: exit %d, %s", r.code, r.errOut)
	}
	if r := run(t, "", "batch", "x", "-o", dir, "--timestamps", "csv"); r.code != ExitUsage || !strings.Contains(r.errOut, "want json, srt or vtt") {
		t.Errorf("batch --timestamps csv: exit %d, %s", r.code, r.errOut)
	}
	// Piper's test voice has no duration output: no guess, a usage error once the voice is loaded that blames the
	// voice (not the writing of the audio), and no file, not even a temporary one.
	empty := t.TempDir()
	out := filepath.Join(empty, "silent.wav")
	r := run(t, "", "synth", "hi there", "--voice", "../testdata/piper-test-voice/test_voice.onnx", "-o", out, "--timestamps", filepath.Join(empty, "silent.json"))
	if want := `--timestamps: voice "test_voice" gives no phoneme durations`; r.code != ExitUsage ||
		!strings.Contains(r.errOut, want) || strings.Contains(r.errOut, "writing") {
		t.Errorf("a voice without durations: exit %d, %s; want exit %d saying %q", r.code, r.errOut, ExitUsage, want)
	}
	if left, _ := os.ReadDir(empty); len(left) > 0 {
		t.Errorf("the refused synth left %v", left)
	}
	// batch says so too, for its --voice, before any item is spoken.
	in := writeFile(t, filepath.Join(dir, "in.txt"), "Hi there.\n")
	r = run(t, "", "batch", in, "--voice", "../testdata/piper-test-voice/test_voice.onnx", "-o", filepath.Join(dir, "b"), "--timestamps", "json")
	if want := `--timestamps: voice "test_voice" gives no phoneme durations`; r.code != ExitUsage || !strings.Contains(r.errOut, want) {
		t.Errorf("batch with a voice without durations: exit %d, %s; want exit %d saying %q", r.code, r.errOut, ExitUsage, want)
	}
	if _, err := os.Stat(filepath.Join(dir, "b", "in.wav")); err == nil {
		t.Errorf("the refused batch spoke in.wav")
	}
}

// batch --timestamps srt: a file beside each audio file; a re-run with them is not taken for one without.
func TestBatchTimestamps(t *testing.T) {
	dir := isolate(t)
	needORT(t)
	manifest := writeFile(t, filepath.Join(dir, "in.jsonl"), `{"id": "a", "text": "First item, two clauses."}`+"\n"+
		`{"id": "b", "text": "Second.", "out": "sub/b.flac"}`+"\n")
	out := filepath.Join(dir, "out")
	if r := run(t, "", append([]string{"batch", manifest, "-o", out}, deterministic...)...); r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.errOut)
	}
	r := run(t, "", append([]string{"batch", manifest, "-o", out, "--timestamps", "json"}, deterministic...)...)
	if r.code != 0 || !strings.Contains(r.errOut, "2 ok") {
		t.Fatalf("exit %d: %s", r.code, r.errOut)
	}
	for _, c := range []struct{ path, words string }{{"a.json", "First item two clauses"}, {"sub/b.json", "Second"}} {
		ts := readTimestamps(t, filepath.Join(out, c.path))
		var words []string
		for _, w := range ts.Words {
			words = append(words, w.Word)
		}
		if strings.Join(words, " ") != c.words {
			t.Errorf("%s: words %q, want %q", c.path, words, c.words)
		}
	}
}

// batch --timestamps refuses, before anything is made or created, items whose timestamps would go to one file
// (a.wav and a.flac both give a.json), naming both with their lines; so does every shard, whichever owns them.
func TestBatchTimestampsNamesCollide(t *testing.T) {
	dir := isolate(t)
	clearSchedulerEnv(t)
	in := writeFile(t, filepath.Join(dir, "in.jsonl"), `{"id":"a","text":"First."}`+"\n"+`{"id":"b","text":"Second.","out":"a.flac"}`+"\n")
	out := filepath.Join(dir, "out")
	for _, shardArgs := range [][]string{nil, {"--shard", "1/2"}, {"--shard", "2/2"}} {
		r := run(t, "", append([]string{"batch", in, "-o", out, "--timestamps", "json", "--voice", tinyVoice}, shardArgs...)...)
		want := fmt.Sprintf(`--timestamps json: items whose timestamps would go to one file: %s:1 (item "a") and %s:2 (item "b") would both write their timestamps to a.json`, in, in)
		if r.code != ExitUsage || !strings.Contains(r.errOut, want) {
			t.Errorf("%q: exit %d, stderr %q; want %d and %q", shardArgs, r.code, r.errOut, ExitUsage, want)
		}
		if _, err := os.Stat(out); err == nil {
			t.Fatalf("%q: the output folder was created for a run that could not start", shardArgs)
		}
	}
}
