package pipeline

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/ttsgen/ttsgen/internal/results"
	"github.com/ttsgen/ttsgen/internal/timestamps"
)

// An item's timestamps file is its audio file's name with the format's extension instead (a.wav: a.json), so two
// items whose audio differs only by its extension would write one timestamps file: CheckTimestampsNames finds every
// such pair before anything is made, naming both items and their lines; items in other folders, or whose names
// differ before the extension, are left alone.
func TestCheckTimestampsNames(t *testing.T) {
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
	err := CheckTimestampsNames(context.Background(), []string{book, in, "-"}, timestamps.SRT)
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
	if err := CheckTimestampsNames(context.Background(), []string{fine}, timestamps.JSON); err != nil {
		t.Errorf("no two items share a timestamps file: %v", err)
	}
}

// Items read from a stream cannot be checked before the run: the second item whose timestamps file another has is
// refused before it is made, as an error naming both.
func TestBatchRefusesATimestampsFileTakenInAStream(t *testing.T) {
	r := newRig(t)
	var errs []string
	sum := r.run(false, func(b *Batch) {
		b.Stdin = strings.NewReader(`{"id":"a","text":"Alpha."}` + "\n" + `{"id":"b","text":"Bravo.","out":"a.flac"}` + "\n")
		b.Defaults.Timestamps = timestamps.JSON
		b.Errorf = func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }
	}, "-")
	want := `stdin:2: item "b": stdin:1 (item "a") and stdin:2 (item "b") would both write their timestamps to a.json`
	if sum.Items != 2 || sum.Failed < 1 || !strings.Contains(strings.Join(errs, "\n"), want) {
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
