package manifest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// scanText scans content as the manifest "m.jsonl" and returns every item.
func scanText(t testing.TB, content string) []Item {
	t.Helper()
	var items []Item
	run := newRunState()
	err := run.scanManifest(context.Background(), "m.jsonl", strings.NewReader(content), func(it Item) error {
		items = append(items, it)
		return nil
	})
	if err != nil {
		t.Fatalf("scanManifest: %v", err)
	}
	return items
}

func errText(it Item) string {
	if it.Err == nil {
		return ""
	}
	return it.Err.Error()
}

func f32(v float32) *float32 { return &v }

func fmtScale(v *float32) string {
	if v == nil {
		return "nil"
	}
	return fmt.Sprint(*v)
}

// singleLineCases are one-line manifests and what they must produce. They
// also seed FuzzScanManifest.
var singleLineCases = []struct {
	name, line string
	wantErr    string // exact Err text; "" = valid
	want       Item   // checked when wantErr is ""
	warnings   []string
}{
	{name: "minimal", line: `{"text":"Hello."}`,
		want: Item{ID: "m-1", Text: "Hello."}},
	{name: "all fields", line: `{"id":"a1","text":"Hi","out":"sub/x.wav","voice":"en_US-x","speaker":3,"length_scale":1.2,"noise_scale":0.667,"noise_w":0}`,
		want: Item{ID: "a1", Text: "Hi", Out: "sub/x.wav", Voice: "en_US-x", Speaker: "3", LengthScale: f32(1.2), NoiseScale: f32(0.667), NoiseW: f32(0)}},
	{name: "speaker name", line: `{"text":"Hi","speaker":"alice"}`, want: Item{ID: "m-1", Text: "Hi", Speaker: "alice"}},
	{name: "nulls mean default", line: `{"text":"Hi","voice":null,"speaker":null,"length_scale":null,"out":null,"id":null}`,
		want: Item{ID: "m-1", Text: "Hi"}},
	{name: "out is cleaned", line: `{"text":"Hi","out":"./a//b.WAV"}`, want: Item{ID: "m-1", Text: "Hi", Out: "a/b.WAV"}},
	{name: "upper bounds", line: `{"text":"Hi","length_scale":20,"noise_scale":10,"noise_w":10}`,
		want: Item{ID: "m-1", Text: "Hi", LengthScale: f32(20), NoiseScale: f32(10), NoiseW: f32(10)}},
	{name: "CRLF line", line: "{\"text\":\"Hi\"}\r", want: Item{ID: "m-1", Text: "Hi"}},
	{name: "BOM on first line", line: "\uFEFF{\"text\":\"Hi\"}", want: Item{ID: "m-1", Text: "Hi"}},
	{name: "unknown field warns", line: `{"text":"Hi","lenght_scale":2,"mood":"calm"}`, want: Item{ID: "m-1", Text: "Hi"},
		warnings: []string{`unknown field "lenght_scale" ignored (did you mean "length_scale"?)`, `unknown field "mood" ignored`}},

	{name: "empty line", line: ``, wantErr: `empty line`},
	{name: "blank line", line: " \t ", wantErr: `empty line`},
	{name: "invalid JSON", line: `{"text": "Hi"`, wantErr: `invalid JSON: unexpected end of JSON input`},
	{name: "trailing garbage", line: `{"text":"Hi"} x`, wantErr: `invalid JSON: invalid character 'x' after top-level value`},
	{name: "NaN literal", line: `{"text":"Hi","length_scale":NaN}`, wantErr: `invalid JSON: invalid character 'N' looking for beginning of value`},
	{name: "pretty-printed JSON", line: `[`, wantErr: `invalid JSON: unexpected end of JSON input (each line must hold one whole JSON object; a pretty-printed .json file is not a manifest)`},
	{name: "array", line: `[{"text":"Hi"}]`, wantErr: `expected a JSON object like {"text": "..."}, got an array`},
	{name: "string", line: `"Hi"`, wantErr: `expected a JSON object like {"text": "..."}, got a string`},
	{name: "number", line: `5`, wantErr: `expected a JSON object like {"text": "..."}, got a number`},
	{name: "null", line: `null`, wantErr: `expected a JSON object like {"text": "..."}, got null`},
	{name: "invalid UTF-8", line: "{\"text\":\"caf\xe9\"}", wantErr: `invalid UTF-8 at byte offset 12`},
	{name: "missing text", line: `{"id":"x"}`, wantErr: `"text" is missing`},
	{name: "empty text", line: `{"text":""}`, wantErr: `"text" is empty`},
	{name: "blank text", line: `{"text":"  \n "}`, wantErr: `"text" is empty`},
	{name: "text is a number", line: `{"text":5}`, wantErr: `"text" must be a string, got number`},
	{name: "text is null", line: `{"text":null}`, wantErr: `"text" must be a string, got null`},
	{name: "scale is a string", line: `{"text":"Hi","length_scale":"fast"}`, wantErr: `"length_scale" must be a number, got string`},
	{name: "zero length_scale", line: `{"text":"Hi","length_scale":0}`, wantErr: `"length_scale" must be in (0, 20], got 0`},
	{name: "negative length_scale", line: `{"text":"Hi","length_scale":-1}`, wantErr: `"length_scale" must be in (0, 20], got -1`},
	{name: "absurd length_scale", line: `{"text":"Hi","length_scale":100}`, wantErr: `"length_scale" must be in (0, 20], got 100`},
	{name: "length_scale underflows float32", line: `{"text":"Hi","length_scale":1e-60}`, wantErr: `"length_scale" must be in (0, 20], got 1e-60`},
	{name: "infinite scale", line: `{"text":"Hi","noise_w":1e999}`, wantErr: `"noise_w" must be a finite number, got 1e999`},
	{name: "negative noise", line: `{"text":"Hi","noise_scale":-0.1}`, wantErr: `"noise_scale" must be in [0, 10], got -0.1`},
	{name: "absurd noise_w", line: `{"text":"Hi","noise_w":10.5}`, wantErr: `"noise_w" must be in [0, 10], got 10.5`},
	{name: "speaker fraction", line: `{"text":"Hi","speaker":1.5}`, wantErr: `"speaker" must be a whole number >= 0 or a name, got 1.5`},
	{name: "speaker negative", line: `{"text":"Hi","speaker":-2}`, wantErr: `"speaker" must be a whole number >= 0 or a name, got -2`},
	{name: "speaker boolean", line: `{"text":"Hi","speaker":true}`, wantErr: `"speaker" must be a number or a name, got boolean`},
	{name: "voice is a number", line: `{"text":"Hi","voice":1}`, wantErr: `"voice" must be a string, got number`},
	{name: "id is a number", line: `{"text":"Hi","id":7}`, wantErr: `"id" must be a string, got number`},
	{name: "id is empty", line: `{"text":"Hi","id":""}`, wantErr: `"id" is empty`},
	{name: "id with slash", line: `{"text":"Hi","id":"a/b"}`, wantErr: `id "a/b" cannot be a file name (it contains a path separator); set "out"`},
	{name: "id with backslash", line: `{"text":"Hi","id":"a\\b"}`, wantErr: `id "a\\b" cannot be a file name (it contains a path separator); set "out"`},
	{name: "id with control char", line: `{"text":"Hi","id":"a\tb"}`, wantErr: `id "a\tb" cannot be a file name (it contains control characters); set "out"`},
	{name: "id dot-dot", line: `{"text":"Hi","id":".."}`, wantErr: `id ".." cannot be a file name (it is ..); set "out"`},
	{name: "id reserved", line: `{"text":"Hi","id":".ttsgen-tmp-1"}`, wantErr: `id ".ttsgen-tmp-1" cannot be a file name (it starts with the reserved prefix ".ttsgen-"); set "out"`},
	{name: "unsafe id is fine with out", line: `{"text":"Hi","id":"a/b","out":"a_b.wav"}`, want: Item{ID: "a/b", Text: "Hi", Out: "a_b.wav"}},
	{name: "absolute out", line: `{"text":"Hi","out":"/abs.wav"}`, wantErr: `"out" must be a relative path, got "/abs.wav"`},
	{name: "out escapes", line: `{"text":"Hi","out":"../escaped.wav"}`, wantErr: `"out" must not contain "..", got "../escaped.wav"`},
	{name: "out escapes inside", line: `{"text":"Hi","out":"a/../../x.wav"}`, wantErr: `"out" must not contain "..", got "a/../../x.wav"`},
	{name: "out in another format", line: `{"text":"Hi","out":"x.mp3"}`, want: Item{ID: "m-1", Text: "Hi", Out: "x.mp3"}},
	{name: "format", line: `{"text":"Hi","format":" FLAC"}`, want: Item{ID: "m-1", Text: "Hi", Format: "flac"}},
	{name: "format is a number", line: `{"text":"Hi","format":3}`, wantErr: `"format" must be a string, got number`},
	{name: "out without extension", line: `{"text":"Hi","out":"x"}`, wantErr: `"out" must end in an audio extension such as .wav or .flac, got "x"`},
	{name: "out is a folder", line: `{"text":"Hi","out":"dir/"}`, wantErr: `"out" must end in an audio extension such as .wav or .flac, got "dir/"`},
	{name: "out without name", line: `{"text":"Hi","out":"dir/.wav"}`, wantErr: `"out" has no file name before .wav, got "dir/.wav"`},
	{name: "out reserved", line: `{"text":"Hi","out":"a/.ttsgen-tmp-9.wav"}`, wantErr: `"out" must not use the reserved prefix ".ttsgen-", got "a/.ttsgen-tmp-9.wav"`},
	{name: "out control char", line: `{"text":"Hi","out":"a\nb.wav"}`, wantErr: `"out" must not contain control characters, got "a\nb.wav"`},
	{name: "duplicate key", line: `{"text":"Hi","text":"Ho"}`, wantErr: `field "text" appears more than once`},
	{name: "every problem at once", line: `{"length_scale":"fast","noise_w":-1,"out":"x"}`,
		wantErr: `"length_scale" must be a number, got string; "noise_w" must be in [0, 10], got -1; "text" is missing; "out" must end in an audio extension such as .wav or .flac, got "x"`},
}

func TestParseLine(t *testing.T) {
	for _, tc := range singleLineCases {
		t.Run(tc.name, func(t *testing.T) {
			items := scanText(t, tc.line+"\n")
			if len(items) != 1 {
				t.Fatalf("got %d items, want 1", len(items))
			}
			it := items[0]
			if got := errText(it); got != tc.wantErr {
				t.Fatalf("Err = %q\nwant  %q", got, tc.wantErr)
			}
			if it.Line != 1 || it.Source != "m.jsonl" {
				t.Errorf("Line, Source = %d, %q; want 1, m.jsonl", it.Line, it.Source)
			}
			if fmt.Sprint(it.Warnings) != fmt.Sprint(tc.warnings) {
				t.Errorf("Warnings = %q, want %q", it.Warnings, tc.warnings)
			}
			if tc.wantErr != "" {
				return
			}
			w := tc.want
			if it.ID != w.ID || it.Text != w.Text || it.Out != w.Out || it.Voice != w.Voice || it.Speaker != w.Speaker {
				t.Errorf("got id=%q text=%q out=%q voice=%q speaker=%q\nwant id=%q text=%q out=%q voice=%q speaker=%q",
					it.ID, it.Text, it.Out, it.Voice, it.Speaker, w.ID, w.Text, w.Out, w.Voice, w.Speaker)
			}
			for _, s := range []struct {
				name      string
				got, want *float32
			}{{"length_scale", it.LengthScale, w.LengthScale}, {"noise_scale", it.NoiseScale, w.NoiseScale}, {"noise_w", it.NoiseW, w.NoiseW}} {
				if fmtScale(s.got) != fmtScale(s.want) {
					t.Errorf("%s = %s, want %s", s.name, fmtScale(s.got), fmtScale(s.want))
				}
			}
		})
	}
}

func TestMixedManifestYieldsOneItemPerLine(t *testing.T) {
	content := strings.Join([]string{
		`{"text":"one"}`,                        // 1 ok, id "m-1"
		``,                                      // 2 empty
		`{"id":"b","text":"two"}`,               // 3 ok
		`not json`,                              // 4 invalid
		`{"id":"b","text":"dup"}`,               // 5 duplicate id
		`{"text":"five","id":"m-1"}`,            // 6 duplicate of line 1's default id
		`{"id":"c","text":"x","out":"b.wav"}`,   // 7 b's output too: the batch refuses it, knowing the formats
		`{"id":"d","text":"y","out":"./b.wav"}`, // 8 cleaned
		`{"text":"last, no newline"}`,           // 9 ok
	}, "\n")
	items := scanText(t, content)
	want := []struct {
		id, err string
	}{
		{"m-1", ""},
		{"", "empty line"},
		{"b", ""},
		{"", "invalid JSON: invalid character 'o' in literal null (expecting 'u')"},
		{"", `duplicate id "b" (first used on line 3)`},
		{"", `duplicate id "m-1" (first used on line 1)`},
		{"c", ""},
		{"d", ""},
		{"m-9", ""},
	}
	if len(items) != len(want) {
		t.Fatalf("got %d items, want %d", len(items), len(want))
	}
	for i, w := range want {
		it := items[i]
		if it.Line != i+1 || it.ID != w.id || errText(it) != w.err {
			t.Errorf("item %d: line=%d id=%q err=%q; want line=%d id=%q err=%q", i, it.Line, it.ID, errText(it), i+1, w.id, w.err)
		}
	}
}

func TestLongLineIsAnErrorAndNextLineParses(t *testing.T) {
	long := `{"text":"` + strings.Repeat("a", 2<<20) + `"}`
	items := scanText(t, `{"text":"first"}`+"\n"+long+"\n"+`{"text":"after"}`+"\n")
	if len(items) != 3 {
		t.Fatalf("got %d items, want 3", len(items))
	}
	if got, want := errText(items[1]), "line is longer than 1048576 bytes"; got != want {
		t.Errorf("long line Err = %q, want %q", got, want)
	}
	if items[2].Err != nil || items[2].Text != "after" || items[2].Line != 3 {
		t.Errorf("line after the long one: %+v", items[2])
	}
}

func TestLineExactlyAtLimitIsKept(t *testing.T) {
	prefix, suffix := `{"text":"`, `"}`
	line := prefix + strings.Repeat("b", MaxLineBytes-len(prefix)-len(suffix)) + suffix
	items := scanText(t, line+"\n")
	if len(items) != 1 || items[0].Err != nil || len(items[0].Text) != MaxLineBytes-len(prefix)-len(suffix) {
		t.Fatalf("line of exactly MaxLineBytes: %d items, err %v", len(items), items[0].Err)
	}
	items = scanText(t, line+"x\n")
	if len(items) != 1 || errText(items[0]) != "line is longer than 1048576 bytes" {
		t.Fatalf("line of MaxLineBytes+1: err %q", errText(items[0]))
	}
}

// writeFile creates dir/name with content and returns its path.
func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func scanAll(t *testing.T, inputs ...string) ([]Item, error) {
	t.Helper()
	var items []Item
	err := Scan(context.Background(), inputs, nil, func(it Item) error {
		items = append(items, it)
		return nil
	})
	return items, err
}

func TestScanInputs(t *testing.T) {
	dir := t.TempDir()
	m := writeFile(t, dir, "m.jsonl", "{\"id\":\"intro\",\"text\":\"x\"}\n{\"text\":\"y\"}\n")
	doc := writeFile(t, dir, "intro.txt", "\uFEFFChapter one.\n")
	corpus := filepath.Join(dir, "corpus")
	os.Mkdir(corpus, 0o755)
	writeFile(t, corpus, "b.txt", "Bee.")
	writeFile(t, corpus, "a.TXT", "Ay.")
	writeFile(t, corpus, "notes.md", "ignored")
	writeFile(t, corpus, "empty.txt", " \n")
	writeFile(t, corpus, "bad.txt", "Fine.\nAlso fine.\nCaf\xe9.\n")
	os.Mkdir(filepath.Join(corpus, "sub.txt"), 0o755) // a folder, skipped
	empty := filepath.Join(dir, "nothing")
	os.Mkdir(empty, 0o755)

	items, err := scanAll(t, m, doc, corpus, empty)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		source string
		line   int
		id     string
		text   string
		err    string
	}{
		{m, 1, "intro", "x", ""},
		{m, 2, "m-2", "y", ""},
		{doc, 0, "", "Chapter one.\n", fmt.Sprintf(`duplicate id "intro" (first used in %s line 1)`, m)},
		{filepath.Join(corpus, "a.TXT"), 0, "a", "Ay.", ""},
		{filepath.Join(corpus, "b.txt"), 0, "b", "Bee.", ""},
		{filepath.Join(corpus, "bad.txt"), 0, "bad", "", "invalid UTF-8 on line 3, column 4 (byte 0xE9): save the text as UTF-8 (from Windows-1252 or Latin-1: iconv -f WINDOWS-1252 -t UTF-8)"},
		{filepath.Join(corpus, "empty.txt"), 0, "empty", " \n", "document is empty"},
		{empty, 0, "", "", fmt.Sprintf("directory %s has no .txt files", empty)},
	}
	if len(items) != len(want) {
		t.Fatalf("got %d items, want %d: %+v", len(items), len(want), items)
	}
	for i, w := range want {
		it := items[i]
		if it.Source != w.source || it.Line != w.line || it.ID != w.id || it.Text != w.text || errText(it) != w.err {
			t.Errorf("item %d = {%s %d %q %q %q}\nwant      {%s %d %q %q %q}", i,
				it.Source, it.Line, it.ID, it.Text, errText(it), w.source, w.line, w.id, w.text, w.err)
		}
	}
}

func TestScanRefusesBadInputsBeforeYielding(t *testing.T) {
	dir := t.TempDir()
	good := writeFile(t, dir, "good.jsonl", `{"text":"x"}`)
	odd := writeFile(t, dir, "book.pdf", "")
	for name, tc := range map[string]struct {
		inputs  []string
		wantErr string
	}{
		"missing":     {[]string{good, filepath.Join(dir, "nope.jsonl")}, "input " + filepath.Join(dir, "nope.jsonl") + ": no such file or directory"},
		"unsupported": {[]string{good, odd}, "input " + odd + ": unsupported kind of file (want .jsonl, .json, .ndjson, .txt or a directory)"},
		"none":        {nil, "no inputs given"},
	} {
		t.Run(name, func(t *testing.T) {
			items, err := scanAll(t, tc.inputs...)
			if err == nil || err.Error() != tc.wantErr {
				t.Fatalf("err = %v, want %q", err, tc.wantErr)
			}
			if len(items) != 0 {
				t.Errorf("yielded %d items before failing", len(items))
			}
		})
	}
}

func TestScanStops(t *testing.T) {
	dir := t.TempDir()
	m := writeFile(t, dir, "m.jsonl", strings.Repeat("{\"text\":\"x\"}\n", 10))
	stop := errors.New("stop here")
	n := 0
	err := Scan(context.Background(), []string{m}, nil, func(Item) error {
		n++
		if n == 3 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || n != 3 {
		t.Errorf("yield error: err=%v after %d items; want %v after 3", err, n, stop)
	}

	ctx, cancel := context.WithCancel(context.Background())
	n = 0
	err = Scan(ctx, []string{m}, nil, func(Item) error {
		n++
		if n == 2 {
			cancel()
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) || n != 2 {
		t.Errorf("cancel: err=%v after %d items; want context.Canceled after 2", err, n)
	}
}

// lazyManifest generates lines on demand, so that the test itself holds no
// copy of the manifest.
type lazyManifest struct {
	lines, next int
	pending     []byte
}

func (m *lazyManifest) Read(p []byte) (int, error) {
	for len(m.pending) == 0 {
		if m.next == m.lines {
			return 0, io.EOF
		}
		m.pending = fmt.Appendf(nil, "{\"id\":\"s%06d\",\"text\":\"%s\"}\n", m.next, strings.Repeat("word ", 1000))
		m.next++
	}
	n := copy(p, m.pending)
	m.pending = m.pending[n:]
	return n, nil
}

func TestScanReadsLargeManifestInBoundedMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("scans a 100 MB manifest")
	}
	const lines = 20_000 // 5 kB each: 100 MB
	runtime.GC()
	var stats runtime.MemStats
	runtime.ReadMemStats(&stats)
	base, peak := stats.HeapAlloc, uint64(0)
	count := 0
	err := newRunState().scanManifest(context.Background(), "big.jsonl", &lazyManifest{lines: lines}, func(it Item) error {
		count++
		if it.Err != nil {
			return it.Err
		}
		if count%2000 == 0 {
			runtime.ReadMemStats(&stats)
			peak = max(peak, stats.HeapAlloc)
		}
		return nil
	})
	if err != nil || count != lines {
		t.Fatalf("err=%v count=%d, want %d items", err, count, lines)
	}
	// The id map grows (about 100 bytes an id); the text must not pile up.
	if grown := int64(peak) - int64(base); grown > 16<<20 {
		t.Errorf("heap grew by %d MiB while scanning a 100 MB manifest; it should stay bounded", grown>>20)
	}
	t.Logf("heap growth while scanning %d lines: %.1f MiB", lines, float64(int64(peak)-int64(base))/(1<<20))
}

func BenchmarkScanManifest(b *testing.B) {
	line := `{"id":"x%d","text":"Printing, in the only sense with which we are at present concerned, differs from most if not from all the arts.","length_scale":1.1}` + "\n"
	var sb strings.Builder
	for i := range 10_000 {
		fmt.Fprintf(&sb, line, i)
	}
	content := sb.String()
	b.SetBytes(int64(len(content)))
	for b.Loop() {
		n := 0
		newRunState().scanManifest(context.Background(), "b.jsonl", strings.NewReader(content), func(Item) error { n++; return nil })
		if n != 10_000 {
			b.Fatal(n)
		}
	}
	b.ReportMetric(float64(b.N*10_000)/b.Elapsed().Seconds(), "lines/s")
}
