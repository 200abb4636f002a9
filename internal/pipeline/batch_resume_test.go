package pipeline

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ttsgen/ttsgen/internal/audio"
	"github.com/ttsgen/ttsgen/internal/engine"
	"github.com/ttsgen/ttsgen/internal/results"
	"github.com/ttsgen/ttsgen/internal/shard"
	"github.com/ttsgen/ttsgen/internal/voices"
)

// rig runs batches into one output folder, with the tiny voice's files (copied, so a test may replace them) and
// an engine that answers every sentence.
type rig struct {
	t        *testing.T
	dir, out string
	voice    string    // path of the voice's model
	frontend *Frontend // normalising
	plain    *Frontend // not normalising
	engine   Engine
	shard    shard.Spec // the shard run writes as (the zero Spec: no sharding)

	mu    sync.Mutex
	asked []string // voices FindVoice was asked for
}

func newRig(t *testing.T) *rig {
	t.Helper()
	frontend, _, _ := testFrontend(t, true)
	plain, _, _ := testFrontend(t, false)
	dir := t.TempDir()
	r := &rig{t: t, dir: dir, out: filepath.Join(dir, "out"), voice: filepath.Join(dir, "voice", "tiny.onnx"),
		frontend: frontend, plain: plain, engine: &fakeEngine{}}
	for _, name := range []string{"tiny.onnx", "tiny.onnx.json"} {
		b, err := os.ReadFile(filepath.Join("../../testdata/tiny-voice", name))
		if err != nil {
			t.Fatal(err)
		}
		r.write(filepath.Join("voice", name), string(b))
	}
	return r
}

func (r *rig) write(name, content string) string {
	r.t.Helper()
	p := filepath.Join(r.dir, name)
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		r.t.Fatal(err)
	}
	return p
}

// run runs one batch of inputs; edit may change the batch's settings first.
func (r *rig) run(force bool, edit func(*Batch), inputs ...string) Summary {
	r.t.Helper()
	out, err := results.OpenShard(r.out, r.shard, force)
	if err != nil {
		r.t.Fatal(err)
	}
	defer out.Close()
	find := func(name string) (*voices.Voice, error) {
		r.mu.Lock()
		r.asked = append(r.asked, name)
		r.mu.Unlock()
		if name == "" {
			name = r.voice
		}
		return voices.Open(name)
	}
	b := &Batch{Engine: r.engine, Frontend: r.frontend, FindVoice: find, Out: out, Shard: r.shard,
		Defaults: Defaults{SentenceSilence: 0.2},
		LoadVoice: func(name string) (*LoadedVoice, error) {
			v, err := find(name)
			if err != nil {
				return nil, err
			}
			return &LoadedVoice{Voice: v}, nil
		}}
	if edit != nil {
		edit(b)
	}
	sum, err := b.Run(context.Background(), inputs)
	if err != nil {
		r.t.Fatal(err)
	}
	return sum
}

func (r *rig) read(name string) []byte {
	b, _ := os.ReadFile(filepath.Join(r.out, name))
	return b
}

func f32p(v float32) *float32 { return &v }

// A re-run redoes exactly the items whose audio would differ, like make: each setting that decides the audio counts,
// and nothing else does.
func TestBatchRedoesItemsWhoseSettingsChanged(t *testing.T) {
	r := newRig(t)
	m := r.write("m.jsonl", "{\"id\":\"a\",\"text\":\"Alpha.\"}\n{\"id\":\"b\",\"text\":\"Bravo.\",\"length_scale\":1.3}\n")
	if sum := r.run(false, nil, m); sum.OK != 2 {
		t.Fatalf("first run: %+v", sum)
	}
	for _, tc := range []struct {
		name   string
		edit   func(*Batch)
		before func() // changes files between runs
		redone int
	}{
		{"nothing changed", nil, nil, 0},
		{"--sentence-silence", func(b *Batch) { b.Defaults.SentenceSilence = 0.5 }, nil, 2},
		{"--no-normalize", func(b *Batch) { b.Frontend = r.plain }, nil, 2},
		{"--length-scale (b sets its own)", func(b *Batch) { b.Defaults.LengthScale = f32p(1.3) }, nil, 1},
		{"--length-scale equal to the voice's own", func(b *Batch) { b.Defaults.LengthScale = f32p(1) }, nil, 0},
		{"--noise-scale", func(b *Batch) { b.Defaults.NoiseScale = f32p(0.1) }, nil, 2},
		{"--noise-w", func(b *Batch) { b.Defaults.NoiseW = f32p(0.1) }, nil, 2},
		{"--speaker by number, as the default", func(b *Batch) { b.Defaults.Speaker = "0" }, nil, 0},
		{"float16 on a GPU", func(b *Batch) { b.HalfPrecision = true }, nil, 2},
		{"the voice's model replaced", nil, func() {
			later := time.Now().Add(time.Hour)
			os.Chtimes(r.voice, later, later)
		}, 2},
		{"a line's text edited", nil, func() {
			r.write("m.jsonl", "{\"id\":\"a\",\"text\":\"Alpha!\"}\n{\"id\":\"b\",\"text\":\"Bravo.\",\"length_scale\":1.3}\n")
		}, 1},
		{"an out moved", nil, func() {
			r.write("m.jsonl", "{\"id\":\"a\",\"text\":\"Alpha!\",\"out\":\"sub/a.wav\"}\n{\"id\":\"b\",\"text\":\"Bravo.\",\"length_scale\":1.3}\n")
		}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r.run(false, nil, m) // the folder matches the defaults
			if tc.before != nil {
				tc.before()
			}
			if sum := r.run(false, tc.edit, m); sum.OK != tc.redone || sum.Skipped != 2-tc.redone {
				t.Errorf("after the change: %+v, want %d redone and the rest skipped", sum, tc.redone)
			}
			if sum := r.run(false, tc.edit, m); sum.Skipped != 2 {
				t.Errorf("the same run again: %+v, want everything skipped", sum)
			}
		})
	}
	if sum := r.run(true, nil, m); sum.OK != 2 {
		t.Errorf("--force: %+v, want everything redone", sum)
	}
}

// failingEngine fails every sentence, as a device that was lost would.
type failingEngine struct{}

func (failingEngine) QueueSize() int { return 8 }

func (failingEngine) Submit(context.Context, *engine.Model, engine.Request) <-chan engine.Result {
	ch := make(chan engine.Result, 1)
	ch <- engine.Result{Err: errors.New("device lost")}
	return ch
}

func (r *rig) rows() map[string]results.Row {
	r.t.Helper()
	out, err := results.Open(r.out, false)
	if err != nil {
		r.t.Fatal(err)
	}
	defer out.Close()
	rows := map[string]results.Row{}
	for _, line := range strings.Split(strings.TrimSpace(string(r.read(results.FileName))), "\n") {
		var row results.Row
		if err := json.Unmarshal([]byte(line), &row); err != nil {
			r.t.Fatalf("results.jsonl line %q: %v", line, err)
		}
		rows[row.ID] = row
	}
	return rows
}

// A failed retry of an item leaves the folder saying one thing: the good WAV stays, with its ok row, which notes
// the failure (retry_error); only an item without a good WAV gets an error row.
func TestBatchFailedRetryKeepsTheGoodOutput(t *testing.T) {
	r := newRig(t)
	m := r.write("m.jsonl", "{\"id\":\"a\",\"text\":\"Alpha.\"}\n{\"id\":\"b\",\"text\":\"Bravo.\"}\n")
	if sum := r.run(false, nil, m); sum.OK != 2 {
		t.Fatalf("first run: %+v", sum)
	}
	good := r.read("a.wav")
	for _, tc := range []struct {
		name     string
		manifest string
		force    bool
		engine   Engine
		retryErr string
	}{
		{"the voice is gone", "{\"id\":\"a\",\"text\":\"Alpha.\",\"voice\":\"gone.onnx\"}\n", false, nil, "gone.onnx: no such file or directory"},
		{"synthesis fails", "{\"id\":\"a\",\"text\":\"Alpha.\"}\n", true, failingEngine{}, "device lost"},
		{"the line is now invalid", "{\"id\":\"a\",\"text\":\"Alpha.\",\"length_scale\":0}\n", false, nil, `"length_scale" must be in (0, 20], got 0`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r.write("m.jsonl", tc.manifest)
			if tc.engine != nil {
				defer func(e Engine) { r.engine = e }(r.engine)
				r.engine = tc.engine
			}
			if sum := r.run(tc.force, nil, m); sum.Failed != 1 || sum.OK != 0 {
				t.Errorf("retry: %+v, want 1 failed", sum)
			}
			row := r.rows()["a"]
			if row.Status != results.StatusOK || !strings.Contains(row.RetryError, tc.retryErr) || row.Error != "" || row.Sentences != 1 {
				t.Errorf("row after a failed retry: %+v\nwant the ok row with a retry_error containing %q", row, tc.retryErr)
			}
			if !bytes.Equal(r.read("a.wav"), good) {
				t.Error("the good WAV changed")
			}
		})
	}
	// Without a good WAV, the failure is the item's row.
	os.Remove(filepath.Join(r.out, "b.wav"))
	r.write("m.jsonl", "{\"id\":\"b\",\"text\":\"Bravo.\",\"voice\":\"gone.onnx\"}\n")
	r.run(false, nil, m)
	if row := r.rows()["b"]; row.Status != results.StatusError || row.RetryError != "" {
		t.Errorf("row of a failed item without its WAV: %+v, want an error row", row)
	}
}

// Two inputs into one folder: id-less items get ids of their own input, and an item that would overwrite what another
// input's item recorded is refused (it gets no row), that item's WAV and row staying as they were.
func TestBatchNeverOverwritesAnotherInputsItem(t *testing.T) {
	r := newRig(t)
	a := r.write("a.jsonl", "{\"text\":\"From a.\"}\n{\"id\":\"x\",\"text\":\"X from a.\"}\n")
	b := r.write("b.jsonl", "{\"text\":\"From b.\"}\n{\"id\":\"x\",\"text\":\"X from b.\"}\n")
	c := r.write("c.jsonl", "{\"id\":\"y\",\"text\":\"Y.\",\"out\":\"x.wav\"}\n")
	if sum := r.run(false, nil, a); sum.OK != 2 {
		t.Fatalf("a: %+v", sum)
	}
	x := r.read("x.wav")
	var errs []string
	warn := func(b *Batch) {
		b.Errorf = func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }
	}
	if sum := r.run(false, warn, b); sum.OK != 1 || sum.Failed != 1 {
		t.Errorf("b: %+v, want 1 ok and 1 refused", sum)
	}
	if sum := r.run(false, warn, c); sum.Failed != 1 {
		t.Errorf("c: %+v, want 1 refused", sum)
	}
	rows := r.rows()
	for id, source := range map[string]string{"a-1": a, "b-1": b, "x": a} {
		if rows[id].Status != results.StatusOK || rows[id].Source != source {
			t.Errorf("row %s = %+v, want ok from %s", id, rows[id], source)
		}
	}
	if _, ok := rows["y"]; ok || len(rows) != 3 {
		t.Errorf("rows %v: a refused item must get no row", rows)
	}
	if !bytes.Equal(r.read("x.wav"), x) {
		t.Error("x.wav was overwritten")
	}
	want := []string{
		fmt.Sprintf(`b.jsonl:2: item "x": not made: item "x" is already recorded in %s, from %s line 2, with other text or settings`, filepath.Join(r.out, "results.jsonl"), a),
		fmt.Sprintf(`c.jsonl:1: item "y": not made: output "x.wav" is already recorded in %s for item "x", from %s line 2`, filepath.Join(r.out, "results.jsonl"), a),
	}
	if len(errs) != 2 || !strings.HasSuffix(strings.Split(errs[0], ": give")[0], want[0]) || !strings.HasSuffix(strings.Split(errs[1], ": give")[0], want[1]) {
		t.Errorf("errors:\n%s\nwant them to end with\n%s", strings.Join(errs, "\n"), strings.Join(want, "\n"))
	}
	if sum := r.run(true, nil, b); sum.OK != 2 {
		t.Errorf("b with --force: %+v, want x replaced", sum)
	}
	if sum := r.run(true, nil, c); sum.Failed != 1 {
		t.Errorf("c with --force: %+v, want y still refused: x.wav is another item's", sum)
	}
}

// Two items of one run never write one file, whichever way they name it: an id's default file takes its format's
// extension, so an "out" of a.flac is id "a"'s file under "format": "flac", and a.wav is not under --format flac.
// Shards see every item, so the shard that owns the second item refuses it even when another owns the first.
func TestBatchRefusesTwoItemsWritingOneFile(t *testing.T) {
	r := newRig(t)
	in := r.write("m.jsonl", strings.Join([]string{
		`{"id":"a","text":"Alpha.","format":"flac"}`,
		`{"id":"b","text":"Bravo.","out":"a.flac"}`, // a's file
		`{"id":"c","text":"Charlie.","out":"c.wav"}`,
		`{"id":"d","text":"Delta.","out":"./c.wav"}`, // c's, spelled otherwise
		`{"id":"e","text":"Echo."}`,
		`{"id":"f","text":"Foxtrot.","out":"e.wav"}`, // not e's: e makes e.opus under --format opus
	}, "\n")+"\n")
	refused := map[string]string{
		"b": fmt.Sprintf(`%s:2: item "b": choosing its output: "a.flac" is already used by id "a" (%s:1)`, in, in),
		"d": fmt.Sprintf(`%s:4: item "d": choosing its output: "c.wav" is already used by id "c" (%s:3)`, in, in),
	}
	for _, count := range []int{0, 2, 3} {
		r.out = filepath.Join(r.dir, fmt.Sprintf("out%d", count))
		errs := map[string]string{}
		made := map[string]string{}
		for k := range max(count, 1) {
			r.shard = shard.Spec{}
			if count > 0 {
				r.shard = shard.Spec{Index: k + 1, Count: count}
			}
			r.run(false, func(b *Batch) {
				b.Defaults.Format = audio.Opus
				b.Errorf = func(format string, args ...any) {
					msg := fmt.Sprintf(format, args...)
					id, _, _ := strings.Cut(strings.TrimPrefix(msg[strings.Index(msg, `item "`):], `item "`), `"`)
					errs[id] = msg
				}
			}, in)
			for _, row := range r.fileRows(results.FileFor(r.shard)) {
				if row.Status == results.StatusOK {
					made[row.ID] = row.Out
				}
			}
		}
		if !maps.Equal(errs, refused) {
			t.Errorf("%d shards: errors %q, want %q", count, errs, refused)
		}
		want := map[string]string{"a": "a.flac", "c": "c.wav", "e": "e.opus", "f": "e.wav"}
		if !maps.Equal(made, want) {
			t.Errorf("%d shards: made %v, want %v", count, made, want)
		}
	}
}

// A manifest's relative voice path is relative to the manifest's folder, not to the working directory.
func TestBatchManifestVoicePathIsRelativeToTheManifest(t *testing.T) {
	r := newRig(t)
	r.write("sub/m.jsonl", "{\"id\":\"a\",\"text\":\"Alpha.\",\"voice\":\"../voice/tiny.onnx\"}\n")
	t.Chdir(r.dir)
	if sum := r.run(false, nil, filepath.Join("sub", "m.jsonl")); sum.OK != 1 {
		t.Errorf("%+v (voices asked for: %q)", sum, r.asked)
	}
	if want := filepath.Join("voice", "tiny.onnx"); !slices.Contains(r.asked, want) {
		t.Errorf("voices asked for: %q, want %q", r.asked, want)
	}
}

// "-" reads the manifest from Stdin, as a stream: its progress is told that the input is being read until it
// has all been read, and a file's is not told at all (its first pass counted it).
func TestBatchReadsStdin(t *testing.T) {
	r := newRig(t)
	prog := &countingProgress{}
	sum := r.run(false, func(b *Batch) {
		b.Stdin = strings.NewReader("{\"text\":\"One.\"}\n{\"text\":\"Two.\"}\n")
		b.Progress = prog
	}, "-")
	if sum.OK != 2 || len(r.read("stdin-1.wav")) == 0 || len(r.read("stdin-2.wav")) == 0 {
		t.Errorf("%+v", sum)
	}
	if want := []bool{true, false}; !slices.Equal(prog.reading, want) || prog.planned != 2 {
		t.Errorf("progress told reading %v and planned %d; want %v and 2", prog.reading, prog.planned, want)
	}
	fileProg := &countingProgress{}
	in := r.write("m.jsonl", "{\"id\":\"f\",\"text\":\"Three.\"}\n")
	r.run(false, func(b *Batch) { b.Progress = fileProg }, in)
	if len(fileProg.reading) != 0 {
		t.Errorf("a file's progress was told reading %v", fileProg.reading)
	}
	if row := r.rows()["stdin-2"]; row.Source != "-" || row.Line != 2 {
		t.Errorf("row %+v", row)
	}
}

// Standard input names no input: a second run with other lines is another input's, and its items whose default
// ids an earlier run recorded are refused, not written over that run's audio; the same lines again are done.
func TestBatchFromStdinNeverReplacesAnEarlierStdinsItems(t *testing.T) {
	r := newRig(t)
	stdin := func(lines string, errs *[]string) func(*Batch) {
		return func(b *Batch) {
			b.Stdin = strings.NewReader(lines)
			b.Errorf = func(format string, args ...any) { *errs = append(*errs, fmt.Sprintf(format, args...)) }
		}
	}
	var errs []string
	first := "{\"text\":\"The first set.\"}\n"
	if sum := r.run(false, stdin(first, &errs), "-"); sum.OK != 1 {
		t.Fatalf("first: %+v %q", sum, errs)
	}
	audio := r.read("stdin-1.wav")
	if sum := r.run(false, stdin(first, &errs), "-"); sum.Skipped != 1 {
		t.Errorf("the same lines again: %+v %q, want the item done", sum, errs)
	}
	if sum := r.run(false, stdin("{\"text\":\"Another set.\"}\n", &errs), "-"); sum.Failed != 1 || len(errs) != 1 ||
		!strings.Contains(errs[0], `item "stdin-1" is already recorded in`) {
		t.Errorf("other lines: %+v %q, want the item refused", sum, errs)
	}
	if !bytes.Equal(r.read("stdin-1.wav"), audio) {
		t.Error("stdin-1.wav was replaced")
	}
}
