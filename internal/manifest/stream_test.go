package manifest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Items without an id are named after their input, so that two id-less manifests written into one folder never
// share a name.
func TestDefaultIDsComeFromTheInput(t *testing.T) {
	dir := t.TempDir()
	a := writeFile(t, dir, "a.jsonl", "{\"text\":\"one\"}\n{\"text\":\"two\"}\n")
	b := writeFile(t, dir, "b.v2.jsonl", "{\"text\":\"three\"}\n")
	var got []string
	err := Scan(context.Background(), []string{a, b, "-"}, strings.NewReader(`{"text":"four"}`), func(it Item) error {
		got = append(got, fmt.Sprintf("%s:%d=%s/%s", filepath.Base(it.Source), it.Line, it.ID, it.OutPath()))
		if it.Err != nil {
			t.Errorf("%v", it.Err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"a.jsonl:1=a-1/a-1.wav", "a.jsonl:2=a-2/a-2.wav", "b.v2.jsonl:1=b.v2-1/b.v2-1.wav", "-:1=stdin-1/stdin-1.wav"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("items %q\nwant  %q", got, want)
	}
}

func mkfifo(t *testing.T, path string) string {
	t.Helper()
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	return path
}

// "-" and FIFOs are read once, as streams, whatever their name.
func TestScanReadsStdinAndFIFOs(t *testing.T) {
	dir := t.TempDir()
	fifo := mkfifo(t, filepath.Join(dir, "gen"))
	go func() {
		f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err != nil {
			t.Error(err)
			return
		}
		defer f.Close()
		fmt.Fprintln(f, `{"id":"f1","text":"from the fifo"}`)
		fmt.Fprintln(f, `{"text":"again"}`)
	}()
	var got []string
	err := Scan(context.Background(), []string{"-", fifo}, strings.NewReader("{\"text\":\"from stdin\"}\n"), func(it Item) error {
		got = append(got, it.ID+"="+it.Text)
		return it.Err
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"stdin-1=from stdin", "f1=from the fifo", "gen-2=again"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("items %q, want %q", got, want)
	}
	for _, tc := range []struct {
		input string
		want  bool
	}{{"-", true}, {fifo, true}, {"/dev/null", true}, {writeFile(t, dir, "m.jsonl", ""), false}, {dir, false}, {filepath.Join(dir, "missing"), false}} {
		if got := IsStream(tc.input); got != tc.want {
			t.Errorf("IsStream(%q) = %v, want %v", tc.input, got, tc.want)
		}
	}
	for _, tc := range []struct {
		inputs []string
		stdin  io.Reader
		want   string
	}{
		{[]string{"-", "-"}, strings.NewReader(""), `standard input ("-") is given twice`},
		{[]string{"-"}, nil, "opening manifest: standard input is not available"},
	} {
		if err := Scan(context.Background(), tc.inputs, tc.stdin, func(Item) error { return nil }); err == nil || err.Error() != tc.want {
			t.Errorf("Scan(%q) = %v, want %q", tc.inputs, err, tc.want)
		}
	}
}

// A scan that waits on a stream (a FIFO nobody has opened for writing, a writer that has gone quiet, a stdin that
// sends nothing) ends as soon as its context is cancelled: Ctrl-C must not wait for more input.
func TestScanOfAStreamEndsWhenCancelled(t *testing.T) {
	dir := t.TempDir()
	quiet := mkfifo(t, filepath.Join(dir, "quiet.jsonl"))
	writer := make(chan *os.File, 1)
	go func() { // holds the FIFO open after one line, as a generator that is thinking would
		f, err := os.OpenFile(quiet, os.O_WRONLY, 0)
		if err == nil {
			fmt.Fprintln(f, `{"text":"one"}`)
		}
		writer <- f
	}()
	t.Cleanup(func() {
		if f := <-writer; f != nil {
			f.Close()
		}
	})
	nobody := mkfifo(t, filepath.Join(dir, "nobody.jsonl"))
	t.Cleanup(func() { // lets the scan's goroutine, still waiting for a writer, finish
		if f, err := os.OpenFile(nobody, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
	})
	stdin, stdinWriter := io.Pipe()
	t.Cleanup(func() { stdinWriter.Close() })
	for _, tc := range []struct {
		name   string
		input  string
		before int // items that arrive before the scan waits
	}{
		{"FIFO without a writer", nobody, 0},
		{"FIFO whose writer is quiet", quiet, 1},
		{"stdin that sends nothing", "-", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			items := 0
			done := make(chan error, 1)
			go func() {
				done <- Scan(ctx, []string{tc.input}, stdin, func(Item) error {
					if items++; items == tc.before {
						cancel() // the next read waits for input that never comes
					}
					return nil
				})
			}()
			if tc.before == 0 {
				cancel()
			}
			select {
			case err := <-done:
				if !errors.Is(err, context.Canceled) || items != tc.before {
					t.Errorf("Scan = %v after %d items, want context.Canceled after %d", err, items, tc.before)
				}
			case <-time.After(20 * time.Second):
				t.Fatal("Scan still waits on the stream after its context was cancelled")
			}
		})
	}
}

// <(...) reaches ttsgen as /dev/fd/N, a stream whose items are named after that path ("63-1" for the first line of
// /dev/fd/63), as a FIFO's are; and .json and .ndjson files are manifests as .jsonl files are.
func TestDefaultIDsOfProcessSubstitutionAndOtherManifestExtensions(t *testing.T) {
	dir := t.TempDir()
	j := writeFile(t, dir, "a.json", "{\"text\":\"one\"}\n")
	nd := writeFile(t, dir, "b.ndjson", "{\"text\":\"two\"}\n{\"text\":\"three\"}\n")
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	fd := fmt.Sprintf("/dev/fd/%d", r.Fd())
	if _, err := os.Stat(fd); err != nil {
		w.Close()
		t.Skipf("no %s: %v", fd, err)
	}
	go func() {
		fmt.Fprintln(w, `{"text":"four"}`)
		w.Close()
	}()
	var got []string
	err = Scan(context.Background(), []string{j, nd, fd}, nil, func(it Item) error {
		got = append(got, it.ID+"="+it.Text)
		return it.Err
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"a-1=one", "b-1=two", "b-2=three", fmt.Sprintf("%d-1=four", r.Fd())}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("items %q, want %q", got, want)
	}
}
