package pipeline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ttsgen/ttsgen/internal/engine"
	"github.com/ttsgen/ttsgen/internal/results"
	"github.com/ttsgen/ttsgen/internal/shard"
	"github.com/ttsgen/ttsgen/internal/timestamps"
)

// An item's timestamps file is its audio file's name with the format's extension instead (a.wav: a.json), so two
// items whose audio differs only by its extension would write one timestamps file: FirstPass finds every
// such pair before anything is made, naming both items and their lines; items in other folders, or whose names
// differ before the extension, are left alone.
func TestFirstPassChecksTimestampsNames(t *testing.T) {
	r := newRig(t)
	in := r.write("m.jsonl", strings.Join([]string{
		`{"id":"a","text":"A."}`,
		`{"id":"b","text":"B.","out":"a.flac"}`,
		`{"id":"c","text":"C.","out":"sub/c.wav"}`,
		`{"id":"d","text":"D.","out":"c.mp3"}`,
		`{"id":"v1.2","text":"E."}`,
		`{"id":"f","text":"F.","out":"./v1.2.opus"}`,
		`{"id":"g","text":"G.","out":"book.mp3"}`,
		`{"id":"h","text":"H.","out":"v1.wav"}`,
		`{broken`,
	}, "\n")+"\n")
	book := r.write("book.txt", "A whole book.")
	_, err := FirstPass(context.Background(), []string{book, in, "-"}, shard.Spec{}, timestamps.SRT)
	if !errors.Is(err, ErrTimestampsNames) {
		t.Fatalf("err %v, want ErrTimestampsNames", err)
	}
	for _, want := range []string{
		fmt.Sprintf(`%s:1 (item "a") and %s:2 (item "b") would both write their timestamps to a.srt`, in, in),
		fmt.Sprintf(`%s:5 (item "v1.2") and %s:6 (item "f") would both write their timestamps to v1.2.srt`, in, in),
		fmt.Sprintf(`%s (item "book") and %s:7 (item "g") would both write their timestamps to book.srt`, book, in),
		`give one of them another "out" or "id"`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q\ndoes not say %q", err, want)
		}
	}
	for _, wrong := range []string{`item "c"`, `item "d"`, `item "h"`} {
		if strings.Contains(err.Error(), wrong) {
			t.Errorf("error %q names %s, whose timestamps have a file of their own", err, wrong)
		}
	}
	fine := r.write("fine.jsonl", `{"id":"a","text":"A."}`+"\n"+`{"id":"b","text":"B.","out":"sub/a.flac"}`+"\n")
	if _, err := FirstPass(context.Background(), []string{fine}, shard.Spec{}, timestamps.JSON); err != nil {
		t.Errorf("no two items share a timestamps file: %v", err)
	}
}

// An item whose "out" has the timestamps format's extension would write its timestamps over its own audio: it is
// refused before the run, and the same item with timestamps in another format is not.
func TestFirstPassChecksTimestampsNamesOfTheirOwnAudio(t *testing.T) {
	r := newRig(t)
	in := r.write("m.jsonl", `{"id":"a","text":"A."}`+"\n"+`{"id":"self","text":"S.","out":"self.json","format":"wav"}`+"\n")
	_, err := FirstPass(context.Background(), []string{in}, shard.Spec{}, timestamps.JSON)
	want := fmt.Sprintf(`%s:2 (item "self"): its timestamps would go to self.json, its own audio file`, in)
	if !errors.Is(err, ErrTimestampsNames) || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), `item "a"`) {
		t.Errorf("err %v, want ErrTimestampsNames saying %q and nothing of item a", err, want)
	}
	if _, err := FirstPass(context.Background(), []string{in}, shard.Spec{}, timestamps.SRT); err != nil {
		t.Errorf("with srt, self.json's timestamps go to self.srt: %v", err)
	}
}

// Items read from a stream cannot be checked before the run: the second item whose timestamps file another has is
// refused before it is made, as an error naming both.
func TestBatchRefusesATimestampsFileTakenInAStream(t *testing.T) {
	r := newRig(t)
	var errs []string
	sum := r.run(false, func(b *Batch) {
		b.Stdin = strings.NewReader(`{"id":"a","text":"Alpha."}` + "\n" + `{"id":"b","text":"Bravo.","out":"a.flac"}` + "\n")
		b.Engine = &timedEngine{} // a is made, its timestamps included
		b.Defaults.Timestamps = timestamps.JSON
		b.Errorf = func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }
	}, "-")
	want := `stdin:2: item "b": choosing its timestamps file: stdin:1 (item "a") and stdin:2 (item "b") would both write their timestamps to a.json`
	if sum.Items != 2 || sum.OK != 1 || sum.Failed != 1 || len(r.read("a.json")) == 0 || !strings.Contains(strings.Join(errs, "\n"), want) {
		t.Errorf("summary %+v, errors %q; want item b refused: %q", sum, errs, want)
	}
	rowOfB := results.Row{}
	for _, row := range r.fileRows(results.FileName) {
		if row.ID == "b" {
			rowOfB = row
		}
	}
	if rowOfB.Status != results.StatusError || !strings.Contains(rowOfB.Error, "a.json") {
		t.Errorf("row of b: %+v, want an error row naming a.json", rowOfB)
	}
	if b := r.read("a.flac"); b != nil {
		t.Errorf("b was made (%d bytes of a.flac)", len(b))
	}
}

// timedEngine answers as fakeEngine does, with a frame for every phoneme id: what a voice with durations gives.
type timedEngine struct{ fakeEngine }

func (e *timedEngine) Submit(ctx context.Context, m *engine.Model, req engine.Request) <-chan engine.Result {
	timed := make(chan engine.Result, 1)
	go func() {
		res := <-e.fakeEngine.Submit(ctx, m, req)
		if res.Err == nil {
			res.Durations = make([]float32, len(req.IDs))
			for i := range res.Durations {
				res.Durations[i] = 1
			}
		}
		timed <- res
	}()
	return timed
}

// withTimestamps runs a batch writing JSON timestamps, through a voice with durations; errors reported about items
// are collected in errs.
func withTimestamps(errs *[]string) func(*Batch) {
	return func(b *Batch) {
		b.Engine = &timedEngine{}
		b.Defaults.Timestamps = timestamps.JSON
		b.Errorf = func(format string, args ...any) { *errs = append(*errs, fmt.Sprintf(format, args...)) }
	}
}

// A timestamps file an earlier run recorded for its item is that item's, as its audio is: an item of a later run
// into the folder, from another input, whose timestamps would go there is refused before it is made (and gets no
// row), as an item whose audio would is; --force does not change that. The earlier item's files stay as they were.
func TestBatchNeverOverwritesAnEarlierRunsTimestamps(t *testing.T) {
	r := newRig(t)
	a := r.write("a.jsonl", `{"id":"foo","text":"Foo."}`+"\n")
	b := r.write("b.jsonl", `{"id":"bar","text":"Bar.","out":"foo.flac"}`+"\n"+`{"id":"baz","text":"Baz."}`+"\n")
	var errs []string
	if sum := r.run(false, withTimestamps(&errs), a); sum.OK != 1 {
		t.Fatalf("first run: %+v, errors %q", sum, errs)
	}
	wav, stamps := r.read("foo.wav"), r.read("foo.json")
	if len(stamps) == 0 {
		t.Fatal("the first run wrote no foo.json")
	}
	want := fmt.Sprintf(`b.jsonl:1: item "bar": not made: timestamps file "foo.json" (of output "foo.flac") is already `+
		`recorded in %s for item "foo", from %s line 1: give this item its own "out" (or "id"), or write into another folder`,
		filepath.Join(r.out, results.FileName), a)
	for _, force := range []bool{false, true} {
		errs = nil
		if sum := r.run(force, withTimestamps(&errs), b); sum.OK != 1 || sum.Failed != 1 {
			t.Errorf("force=%v: %+v, want baz made and bar refused", force, sum)
		}
		if len(errs) != 1 || !strings.HasSuffix(errs[0], want) {
			t.Errorf("force=%v: errors %q\nwant one ending with %q", force, errs, want)
		}
		if !bytes.Equal(r.read("foo.json"), stamps) || !bytes.Equal(r.read("foo.wav"), wav) {
			t.Errorf("force=%v: foo's files were overwritten", force)
		}
		if got := r.read("foo.flac"); got != nil {
			t.Errorf("force=%v: bar was made (%d bytes of foo.flac)", force, len(got))
		}
		rows := r.rows()
		if _, ok := rows["bar"]; ok {
			t.Errorf("force=%v: bar got a row: %+v", force, rows["bar"])
		}
		if rows["foo"].TimestampsOut != "foo.json" || rows["baz"].TimestampsOut != "baz.json" || len(r.read("baz.json")) == 0 {
			t.Errorf("force=%v: rows %+v, want foo's and baz's to record their timestamps files", force, rows)
		}
	}
	// Another "out" is the way out.
	errs = nil
	r.write("b.jsonl", `{"id":"bar","text":"Bar.","out":"bar.flac"}`+"\n")
	if sum := r.run(false, withTimestamps(&errs), b); sum.OK != 1 || len(r.read("bar.json")) == 0 {
		t.Errorf("bar with its own out: %+v, errors %q", sum, errs)
	}
}

// An item made without timestamps, or whose timestamps file has gone, is made again by a run that asks for them.
// Its own timestamps file is its to rewrite: a resume keeps it, a redo of the item (its text edited, its audio moved
// to another format beside it, --force) writes it again.
func TestBatchRewritesItsOwnTimestamps(t *testing.T) {
	r := newRig(t)
	m := r.write("m.jsonl", `{"id":"foo","text":"Foo."}`+"\n")
	var errs []string
	timed := func(b *Batch) { b.Engine = &timedEngine{} }
	if sum := r.run(false, timed, m); sum.OK != 1 || r.read("foo.json") != nil {
		t.Fatalf("a run without timestamps: %+v, foo.json %q", sum, r.read("foo.json"))
	}
	if sum := r.run(false, withTimestamps(&errs), m); sum.OK != 1 || len(r.read("foo.json")) == 0 {
		t.Fatalf("the re-run with timestamps: %+v, errors %q, foo.json %q; want foo made again, with its timestamps",
			sum, errs, r.read("foo.json"))
	}
	first := r.read("foo.json")
	if sum := r.run(false, withTimestamps(&errs), m); sum.Skipped != 1 || !bytes.Equal(r.read("foo.json"), first) {
		t.Errorf("resume: %+v, want foo skipped and its foo.json kept", sum)
	}
	if err := os.Remove(filepath.Join(r.out, "foo.json")); err != nil {
		t.Fatal(err)
	}
	if sum := r.run(false, withTimestamps(&errs), m); sum.OK != 1 || !bytes.Equal(r.read("foo.json"), first) {
		t.Errorf("a re-run after foo.json was removed: %+v, foo.json %q; want foo made again, as before", sum, r.read("foo.json"))
	}
	for _, tc := range []struct {
		name, manifest string
		force          bool
	}{
		{"its text edited", `{"id":"foo","text":"Foo bar."}`, false},
		{"its audio now FLAC", `{"id":"foo","text":"Foo bar baz.","out":"foo.flac"}`, false},
		{"--force", `{"id":"foo","text":"Foo bar baz.","out":"foo.flac"}`, true},
	} {
		before := r.read("foo.json")
		r.write("m.jsonl", tc.manifest+"\n")
		if sum := r.run(tc.force, withTimestamps(&errs), m); sum.OK != 1 || len(errs) != 0 {
			t.Errorf("%s: %+v, errors %q; want foo redone", tc.name, sum, errs)
		}
		if after := r.read("foo.json"); len(after) == 0 || (!tc.force && bytes.Equal(after, before)) {
			t.Errorf("%s: foo.json %q, want it rewritten (it was %q)", tc.name, after, before)
		}
	}
}

// firstPlan records the first total a batch plans: the first pass's count.
type firstPlan struct {
	countingProgress
	first *int
}

func (p *firstPlan) Planned(delta int) {
	if p.first == nil {
		p.first = &delta
	}
	p.countingProgress.Planned(delta)
}

// One first pass serves both of its uses: FirstPass's count with a timestamps format is the count without one, and
// a batch given that count (Planned, as `batch --timestamps` gives it) plans it instead of reading its inputs for
// its own.
func TestFirstPassCountServesTheBatch(t *testing.T) {
	r := newRig(t)
	in := r.write("m.jsonl", `{"id":"a","text":"One. Two."}`+"\n"+`{"id":"b","text":"Three."}`+"\n")
	plain, err := FirstPass(context.Background(), []string{in}, shard.Spec{}, "")
	if err != nil || plain != 3 {
		t.Fatalf("FirstPass without timestamps = %d, %v; want 3 sentences", plain, err)
	}
	if n, err := FirstPass(context.Background(), []string{in}, shard.Spec{}, timestamps.JSON); err != nil || n != plain {
		t.Errorf("FirstPass with timestamps = %d, %v; want %d", n, err, plain)
	}
	for _, tc := range []struct {
		name    string
		planned *int
		want    int
	}{
		{"its own pass", nil, 3},
		{"the caller's", func() *int { n := 1000; return &n }(), 1000}, // not the inputs' count: it was not read again
	} {
		prog := &firstPlan{}
		r.run(true, func(b *Batch) { b.Progress, b.Planned = prog, tc.planned }, in)
		if prog.first == nil || *prog.first != tc.want {
			t.Errorf("%s: first plan %v, want %d", tc.name, prog.first, tc.want)
		}
	}
}
