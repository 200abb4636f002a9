package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/ttsgen/ttsgen/internal/phonemes"
	"github.com/ttsgen/ttsgen/internal/results"
	"github.com/ttsgen/ttsgen/internal/shard"
)

// recordingPhonemizer phonemizes with espeak-ng and records the texts it was given; Batch calls it from several
// goroutines.
type recordingPhonemizer struct {
	phonemes.Phonemizer
	mu    sync.Mutex
	texts []string
}

func (p *recordingPhonemizer) Phonemize(text, voice string) ([]string, error) {
	p.mu.Lock()
	p.texts = append(p.texts, text)
	p.mu.Unlock()
	return p.Phonemizer.Phonemize(text, voice)
}

// fileRows reads one results file of the rig's folder.
func (r *rig) fileRows(name string) []results.Row {
	r.t.Helper()
	var rows []results.Row
	for _, line := range strings.Split(strings.TrimSpace(string(r.read(name))), "\n") {
		var row results.Row
		if err := json.Unmarshal([]byte(line), &row); err != nil {
			r.t.Fatalf("%s line %q: %v", name, line, err)
		}
		rows = append(rows, row)
	}
	return rows
}

// The shards of a corpus split it: each makes exactly the items it owns, in its own results file, and does nothing
// for the others: they are not counted, planned, phonemized or reported (the broken line and the unknown field
// included, which only their owner reports).
func TestBatchShardsSplitTheItems(t *testing.T) {
	r := newRig(t)
	const items, count = 30, 3
	var m strings.Builder
	for i := range items {
		fmt.Fprintf(&m, `{"id":"p%02d","text":"Item number %d."}`+"\n", i, i)
	}
	m.WriteString("{\"id\": broken\n")
	m.WriteString(`{"id":"extra","text":"An item with an unknown field.","colour":"blue"}` + "\n")
	in := r.write("m.jsonl", m.String())

	seen := map[string]int{}
	errsSeen, warningsSeen := 0, 0
	for k := 1; k <= count; k++ {
		r.shard = shard.Spec{Index: k, Count: count}
		var owned []string
		for i := range items {
			if id := fmt.Sprintf("p%02d", i); r.shard.Owns(id) {
				owned = append(owned, id)
			}
		}
		if r.shard.Owns("extra") {
			owned = append(owned, "extra")
		}
		ownsBroken := r.shard.Owns(results.Row{Source: in, Line: items + 1}.ShardKey())
		phonemizer := &recordingPhonemizer{Phonemizer: r.frontend.Espeak}
		prog := &countingProgress{}
		var errs, warnings []string
		sum := r.run(false, func(b *Batch) {
			b.Frontend = &Frontend{Espeak: phonemizer, Normalize: true}
			b.Progress = prog
			b.Errorf = func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }
			b.Warnf = func(format string, args ...any) { warnings = append(warnings, fmt.Sprintf(format, args...)) }
		}, in)

		wantItems := len(owned)
		if ownsBroken {
			wantItems++
		}
		if sum.Items != wantItems || sum.OK != len(owned) {
			t.Errorf("shard %s: %+v, want %d items, %d ok", r.shard, sum, wantItems, len(owned))
		}
		if planned, spoken := prog.counts(); planned != len(owned) || spoken != len(owned) {
			t.Errorf("shard %s: progress planned %d, spoke %d sentences; want %d, its own", r.shard, planned, spoken, len(owned))
		}
		for _, text := range phonemizer.texts {
			var n int
			if _, err := fmt.Sscanf(text, "Item number %d.", &n); err == nil && !r.shard.Owns(fmt.Sprintf("p%02d", n)) {
				t.Errorf("shard %s phonemized another shard's item: %q", r.shard, text)
			}
		}
		var ids []string
		for _, row := range r.fileRows(results.FileFor(r.shard)) {
			if row.Shard != r.shard.String() || row.Finished.IsZero() {
				t.Errorf("shard %s row %+v: want it to record its shard and when it finished", r.shard, row)
			}
			if row.ID != "" {
				ids = append(ids, row.ID)
				seen[row.ID]++
			}
		}
		slices.Sort(ids)
		if slices.Sort(owned); !slices.Equal(ids, owned) {
			t.Errorf("shard %s rows %v, want its own items %v", r.shard, ids, owned)
		}
		errsSeen += len(errs)
		warningsSeen += len(warnings)
		if ownsBroken && (len(errs) != 1 || !strings.HasPrefix(errs[0], fmt.Sprintf("%s:%d: ", in, items+1))) {
			t.Errorf("shard %s owns the broken line; errors %q", r.shard, errs)
		}
	}
	if len(seen) != items+1 {
		t.Errorf("%d items made by the shards together, want %d", len(seen), items+1)
	}
	for id, n := range seen {
		if n != 1 {
			t.Errorf("item %s made by %d shards", id, n)
		}
	}
	if errsSeen != 1 || warningsSeen != 1 {
		t.Errorf("%d errors and %d warnings over all shards; want the broken line and the unknown field once each",
			errsSeen, warningsSeen)
	}
	if _, err := os.Stat(filepath.Join(r.out, results.FileName)); err == nil {
		t.Errorf("a shard wrote %s", results.FileName)
	}
}

// A shard does not redo what a run without shards finished into the same folder (results.jsonl, read-only), and
// writes only its own file.
func TestShardSkipsWhatARunWithoutShardsDid(t *testing.T) {
	r := newRig(t)
	var first, all strings.Builder
	for i := range 20 {
		line := fmt.Sprintf(`{"id":"p%02d","text":"Item number %d."}`+"\n", i, i)
		if i < 10 {
			first.WriteString(line)
		}
		all.WriteString(line)
	}
	in := r.write("m.jsonl", first.String())
	if sum := r.run(false, nil, in); sum.OK != 10 {
		t.Fatalf("run without shards: %+v", sum)
	}
	before := r.read(results.FileName)
	r.write("m.jsonl", all.String())
	r.shard = shard.Spec{Index: 2, Count: 2}
	wantSkipped, wantOK := 0, 0
	for i := range 20 {
		if r.shard.Owns(fmt.Sprintf("p%02d", i)) {
			if i < 10 {
				wantSkipped++
			} else {
				wantOK++
			}
		}
	}
	if sum := r.run(false, nil, in); sum.Skipped != wantSkipped || sum.OK != wantOK {
		t.Errorf("shard 2/2: %+v, want %d skipped (done without shards) and %d ok", sum, wantSkipped, wantOK)
	}
	if after := r.read(results.FileName); string(after) != string(before) {
		t.Errorf("the shard changed %s", results.FileName)
	}
}

// A failed item is reported as an error naming its input, line and id, and what was being done: a synthesis failure
// is not called a failure to write.
func TestBatchErrorsSayWhatFailed(t *testing.T) {
	r := newRig(t)
	in := r.write("m.jsonl", `{"id":"a","text":"Alpha."}`+"\n"+`{"id":"b","text":"Bravo.","voice":"gone.onnx"}`+"\n")
	r.engine = failingEngine{}
	var errs []string
	r.run(false, func(b *Batch) {
		b.Errorf = func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }
		b.Warnf = func(format string, args ...any) { t.Errorf("a failure reported as a warning: "+format, args...) }
	}, in)
	slices.Sort(errs)
	want := []string{
		in + `:1: item "a": synthesising its audio: sentence 1 ("Alpha."): device lost`,
		in + `:2: item "b": finding its voice: `,
	}
	if len(errs) != 2 || errs[0] != want[0] || !strings.HasPrefix(errs[1], want[1]) {
		t.Errorf("errors:\n%s\nwant\n%s", strings.Join(errs, "\n"), strings.Join(want, "\n"))
	}
	for _, e := range errs {
		if strings.Contains(e, "writing") {
			t.Errorf("%q: not an error about writing", e)
		}
	}
}

// Every error row says what was being done to what, then why: reading the item, choosing its output, format or
// speaker, finding or loading its voice, synthesising its audio (writing it: TestBatchWriteErrorNamesTheOutput).
func TestBatchRowErrorsSayWhatWasBeingDone(t *testing.T) {
	r := newRig(t)
	in := r.write("m.jsonl", strings.Join([]string{
		`not json`,
		`{"id":"first","text":"Alpha."}`,
		`{"id":"taken","text":"Bravo.","out":"first.wav"}`,
		`{"id":"folder","text":"Charlie.","out":"folder.wav"}`,
		`{"id":"format","text":"Delta.","out":"x.wav","format":"flac"}`,
		`{"id":"speaker","text":"Echo.","speaker":"7"}`,
		`{"id":"gone","text":"Foxtrot.","voice":"gone.onnx"}`,
		`{"id":"unloaded","text":"Golf.","voice":"voice/tiny.onnx"}`,
	}, "\n")+"\n")
	binary := r.write(filepath.Join("docs", "binary.txt"), "RIFF\x00\x00")
	if err := os.MkdirAll(filepath.Join(r.out, "folder.wav"), 0o755); err != nil {
		t.Fatal(err)
	}
	r.engine = failingEngine{}
	r.run(false, func(b *Batch) {
		load := b.LoadVoice
		b.LoadVoice = func(name string) (*LoadedVoice, error) {
			if name == r.voice { // the voice of "unloaded", by its path; the others' is the default ("")
				return nil, errors.New("engine: loading voice \"tiny\": out of memory")
			}
			return load(name)
		}
	}, in, filepath.Dir(binary))
	want := map[string]string{
		"line 1":   `reading its line: invalid JSON`,
		"first":    `synthesising its audio: sentence 1 ("Alpha."): device lost`,
		"taken":    `choosing its output: "first.wav" is already used by id "first"`,
		"folder":   `choosing its output: output "folder.wav" is an existing folder`,
		"format":   `choosing its format: "out" "x.wav" is a wav file, but "format" is flac`,
		"speaker":  `choosing its speaker: speaker 7 is out of range`,
		"gone":     `finding its voice: voice ` + filepath.Join(r.dir, "gone.onnx") + `: no such file or directory`,
		"unloaded": `loading its voice: engine: loading voice "tiny": out of memory`,
		"binary":   `reading its input: NUL byte on line 1, column 5`,
	}
	rows := r.fileRows(results.FileName)
	if len(rows) != len(want) {
		t.Errorf("%d rows, want %d: %+v", len(rows), len(want), rows)
	}
	for _, row := range rows {
		key := row.ID
		if key == "" {
			key = fmt.Sprintf("line %d", row.Line)
		}
		if w, ok := want[key]; !ok || row.Status != results.StatusError || !strings.HasPrefix(row.Error, w) {
			t.Errorf("%s: status %s, error %q; want an error starting %q", key, row.Status, row.Error, w)
		}
	}
}

// An error about writing the output says so, with the output's name.
func TestBatchWriteErrorNamesTheOutput(t *testing.T) {
	r := newRig(t)
	in := r.write("m.jsonl", `{"id":"a","text":"Alpha."}`+"\n")
	eng := &gatedEngine{queue: 8, open: make(chan struct{})}
	r.engine = eng
	var errs []string
	done := make(chan Summary)
	go func() {
		done <- r.run(false, func(b *Batch) {
			b.Errorf = func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }
		}, in)
	}()
	waitFor(t, "the item's sentence in the engine", func() bool { now, _ := eng.holding(); return now >= 1 })
	// The output's path became a folder while the item was spoken: the rename into place fails.
	if err := os.MkdirAll(filepath.Join(r.out, "a.wav", "in-the-way"), 0o755); err != nil {
		t.Fatal(err)
	}
	close(eng.open)
	if sum := <-done; sum.Failed != 1 {
		t.Errorf("%+v, want the item failed", sum)
	}
	want := fmt.Sprintf(`%s:1: item "a": writing %s: renaming into place: `, in, filepath.Join(r.out, "a.wav"))
	if len(errs) != 1 || !strings.HasPrefix(errs[0], want) {
		t.Errorf("errors %q, want one starting %q", errs, want)
	}
}

// Items lists the inputs' items as their rows name them, broken lines included.
func TestItems(t *testing.T) {
	r := newRig(t)
	in := r.write("m.jsonl", `{"id":"a","text":"Alpha."}`+"\n"+"{broken\n"+`{"text":"No id."}`+"\n")
	rows, err := Items(context.Background(), []string{in}, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := []string{}
	for _, row := range rows {
		got = append(got, fmt.Sprintf("%s@%s:%d", row.ID, row.Source, row.Line))
	}
	want := []string{"a@" + in + ":1", "@" + in + ":2", "m-3@" + in + ":3"}
	if !slices.Equal(got, want) {
		t.Errorf("Items = %q, want %q", got, want)
	}
}
