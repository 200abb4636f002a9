package cmd

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ttsgen/ttsgen/internal/atomicfile"
)

// These tests run ttsgen as users do, in real processes: jobs side by side, a run killed with SIGKILL, signals
// while it waits on a FIFO, shell redirection. README.md's "Reliability" section names them.

// manifestOf writes n items named prefix00.. with sentences long enough to take a moment each.
func manifestOf(t *testing.T, path, prefix string, n int) string {
	t.Helper()
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, `{"id":"%s%02d","text":"This is item %d, a sentence that takes the engine a moment to speak in full."}`+"\n", prefix, i, i)
	}
	return writeFile(t, path, b.String())
}

// waitUntil polls cond (a file a child process writes) until it holds, failing after a minute.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// exitStatus is a finished command's exit status, or -1 when it did not exit by itself.
func exitStatus(err error) int {
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.ExitCode()
	}
	return -1
}

// lastRows reads results.jsonl as a reader would: the last row per id wins.
func lastRows(t *testing.T, dir string) map[string]resultRow {
	t.Helper()
	rows := map[string]resultRow{}
	for _, r := range readRows(t, dir) {
		rows[r.ID] = r
	}
	return rows
}

// A long batch into out/sub while short batches run into out/: the short ones clean up after killed runs, and must
// not take the long one's temporary files for leftovers.
func TestConcurrentBatchesIntoNestedFolders(t *testing.T) {
	dir := isolate(t)
	needORT(t)
	bin := buildBinary(t)
	out := filepath.Join(dir, "out")
	long := exec.Command(bin, "batch", manifestOf(t, filepath.Join(dir, "long.jsonl"), "L", 30), "-o", filepath.Join(out, "sub"),
		"--voice", tinyVoice, "--jobs", "2", "--threads", "1", "-q")
	var longErr strings.Builder
	long.Stderr = &longErr
	if err := long.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- long.Wait() }()
	shorts := 0
	for running := true; running || shorts < 3; shorts++ {
		in := writeFile(t, filepath.Join(dir, fmt.Sprintf("s%d.jsonl", shorts)), `{"text":"Short."}`+"\n")
		if msg, err := exec.Command(bin, "batch", in, "-o", out, "--voice", tinyVoice, "--threads", "1", "-q").CombinedOutput(); err != nil {
			t.Fatalf("short batch %d: %v\n%s", shorts, err, msg)
		}
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("the long batch: %v\n%s", err, longErr.String())
			}
			running = false
		default:
		}
	}
	rows := lastRows(t, filepath.Join(out, "sub"))
	ok := 0
	for _, r := range rows {
		if r.Status == "ok" {
			ok++
		}
	}
	if ok != 30 {
		t.Errorf("the long batch has %d ok rows of 30 after %d short batches beside it", ok, shorts)
	}
	checkOutputFolder(t, filepath.Join(out, "sub"), 30)
	if rows := lastRows(t, out); len(rows) != shorts {
		t.Errorf("the short batches left %d rows, want %d", len(rows), shorts)
	}
}

// A forced re-run killed with SIGKILL part-way: every item still has its row and a whole WAV (the old one or the
// redone one), the only temporary files are the killed process's, and the next run cleans them and has nothing
// left to do.
func TestForcedRerunKilledMidwayLosesNothing(t *testing.T) {
	dir := isolate(t)
	needORT(t)
	bin := buildBinary(t)
	const items = 24
	in := manifestOf(t, filepath.Join(dir, "in.jsonl"), "item", items)
	out := filepath.Join(dir, "out")
	args := []string{"batch", in, "-o", out, "--voice", tinyVoice, "--jobs", "1", "--threads", "1"}
	if msg, err := exec.Command(bin, args...).CombinedOutput(); err != nil {
		t.Fatalf("first run: %v\n%s", err, msg)
	}
	forced := exec.Command(bin, append(args, "--force")...)
	if err := forced.Start(); err != nil {
		t.Fatal(err)
	}
	results := filepath.Join(out, "results.jsonl")
	waitUntil(t, "the forced run to redo 4 items", func() bool { return countLines(results) >= items+4 })
	forced.Process.Signal(syscall.SIGKILL)
	forced.Wait()
	rows := lastRows(t, out)
	if len(rows) != items {
		t.Fatalf("after the forced run was killed, %d items have a row, want all %d", len(rows), items)
	}
	for id, r := range rows {
		if r.Status != "ok" {
			t.Errorf("item %s: %+v", id, r)
		}
	}
	checkOutputFolderAllowing(t, out, items, forced.Process.Pid)

	msg, err := exec.Command(bin, args...).CombinedOutput()
	if err != nil || !strings.Contains(string(msg), fmt.Sprintf("%d skipped", items)) {
		t.Errorf("the run after: %v, want every item skipped (same settings):\n%s", err, msg)
	}
	checkOutputFolder(t, out, items)
}

// checkOutputFolderAllowing asserts that out holds exactly wavs complete WAV files, and no temporary files but
// those of the killed process pid (none for 0).
func checkOutputFolderAllowing(t *testing.T, out string, wavs, pid int) {
	t.Helper()
	entries, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), atomicfile.TempPrefix) {
			if owner, local, ok := atomicfile.Owner(e.Name()); !ok || !local || owner != pid || pid == 0 {
				t.Errorf("temporary file left behind: %s", e.Name())
			}
			continue
		}
		if strings.HasSuffix(e.Name(), ".wav") {
			n++
			checkWAVHeader(t, filepath.Join(out, e.Name()))
		}
	}
	if n != wavs {
		t.Errorf("%d WAV files, want %d", n, wavs)
	}
}

// A manifest that is a FIFO or standard input is read as a stream, and SIGTERM or SIGINT ends the run cleanly
// (exit 130, the rows so far kept) while it waits for a writer or for the next line.
func TestBatchStreamsAndSignals(t *testing.T) {
	dir := isolate(t)
	needORT(t)
	bin := buildBinary(t)
	batch := func(out string, inputs ...string) *exec.Cmd {
		return exec.Command(bin, append(append([]string{"batch"}, inputs...), "-o", out, "--voice", tinyVoice, "--threads", "1")...)
	}
	mkfifo := func(name string) string {
		p := filepath.Join(dir, name)
		if err := syscall.Mkfifo(p, 0o600); err != nil {
			t.Skip(err)
		}
		return p
	}

	t.Run("generate | ttsgen batch -", func(t *testing.T) {
		out := filepath.Join(dir, "from-stdin")
		cmd := batch(out, "-")
		cmd.Stdin = strings.NewReader("{\"text\":\"One.\"}\n{\"text\":\"Two.\"}\n")
		if msg, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v\n%s", err, msg)
		}
		if rows := lastRows(t, out); rows["stdin-1"].Status != "ok" || rows["stdin-2"].Status != "ok" {
			t.Errorf("rows %+v", rows)
		}
	})
	t.Run("a FIFO with a writer", func(t *testing.T) {
		fifo := mkfifo("gen.jsonl")
		go func() {
			if f, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
				fmt.Fprintln(f, `{"text":"From a FIFO."}`)
				f.Close()
			}
		}()
		out := filepath.Join(dir, "from-fifo")
		if msg, err := batch(out, fifo).CombinedOutput(); err != nil {
			t.Fatalf("%v\n%s", err, msg)
		}
		if info, err := os.Lstat(fifo); err != nil || info.Mode().Type() != fs.ModeNamedPipe || lastRows(t, out)["gen-1"].Status != "ok" {
			t.Errorf("FIFO %v (%v), rows %+v", info.Mode(), err, lastRows(t, out))
		}
	})
	for _, tc := range []struct {
		name  string
		sig   syscall.Signal
		lines int // the writer sends these, then stays quiet with the FIFO open
	}{
		{"SIGTERM while no writer has opened the FIFO", syscall.SIGTERM, -1},
		{"SIGINT while the writer is quiet", syscall.SIGINT, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fifo := mkfifo(fmt.Sprintf("wait%d.jsonl", tc.lines))
			out := filepath.Join(dir, fmt.Sprintf("wait%d", tc.lines))
			if tc.lines >= 0 {
				writer := make(chan *os.File, 1)
				go func() {
					f, _ := os.OpenFile(fifo, os.O_WRONLY, 0)
					for i := range tc.lines {
						fmt.Fprintf(f, "{\"text\":\"Line %d.\"}\n", i)
					}
					writer <- f
				}()
				defer func() {
					if f := <-writer; f != nil {
						f.Close()
					}
				}()
			} else {
				defer func() { // lets the child's opener go, should the child still be there
					if f, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
						f.Close()
					}
				}()
			}
			cmd := batch(out, fifo)
			var stderr strings.Builder
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			if tc.lines > 0 {
				waitUntil(t, "the first row", func() bool { return countLines(filepath.Join(out, "results.jsonl")) >= tc.lines })
			} else {
				waitUntil(t, "the batch to open its folder", func() bool {
					_, err := os.Stat(filepath.Join(out, ".ttsgen-lock"))
					return err == nil
				})
			}
			cmd.Process.Signal(tc.sig)
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			select {
			case err := <-exited:
				if code := exitStatus(err); code != ExitInterrupted {
					t.Errorf("exit %d (%v), want %d; stderr:\n%s", code, err, ExitInterrupted, stderr.String())
				}
			case <-time.After(time.Minute):
				cmd.Process.Kill()
				t.Fatalf("ttsgen did not end on %v while it waited on the FIFO; stderr:\n%s", tc.sig, stderr.String())
			}
			if tc.lines > 0 && len(lastRows(t, out)) != tc.lines {
				t.Errorf("rows %+v, want the %d read before the signal", lastRows(t, out), tc.lines)
			}
		})
	}
}

// `ttsgen synth > out.wav` in a real process: the header's sizes are those of the file.
func TestSynthRedirectedToAFile(t *testing.T) {
	dir := isolate(t)
	needORT(t)
	bin := buildBinary(t)
	path := filepath.Join(dir, "out.wav")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "synth", "Redirected by the shell, as synth > out.wav does.", "--voice", tinyVoice)
	cmd.Stdout = f
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err = cmd.Run()
	f.Close()
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	checkWAVHeader(t, path)
}

// A pipe into synth is spoken as it comes: a program that writes a line, then thinks, is heard before it writes the
// next (`llm | ttsgen synth -o - | aplay`), as Piper speaks line by line; the audio ends when the input does.
func TestSynthSpeaksAPipeAsItComes(t *testing.T) {
	isolate(t)
	needORT(t)
	bin := buildBinary(t)
	cmd := exec.Command(bin, "synth", "--voice", tinyVoice, "--format", "pcm", "-o", "-", "-q")
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	io.WriteString(in, "The first line is a whole sentence.\n")
	first := make(chan error, 1)
	go func() { _, err := io.ReadFull(out, make([]byte, 2)); first <- err }()
	select {
	case err := <-first:
		if err != nil {
			t.Fatalf("reading the first audio: %v\n%s", err, stderr.String())
		}
	case <-time.After(time.Minute):
		cmd.Process.Kill()
		t.Fatalf("no audio of the first line while the input stays open: synth waits for the end of its input")
	}
	io.WriteString(in, "And the second one ends the input.\n")
	in.Close()
	rest, _ := io.ReadAll(out)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	if seconds := float64(len(rest)+2) / 2 / 22050; seconds < 1 {
		t.Errorf("%.2f s of audio for two sentences", seconds)
	}
}

// Ctrl-C during `voices add` of a large model stops the copy: exit 130, no voice and no temporary file.
func TestVoicesAddInterrupted(t *testing.T) {
	dir := isolate(t)
	bin := buildBinary(t)
	src := filepath.Join(dir, "src")
	os.MkdirAll(src, 0o755)
	model := filepath.Join(src, "big.onnx")
	writeLargeModel(t, model, 256<<20)
	cfg, err := os.ReadFile(tinyVoice + ".json")
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, model+".json", string(cfg))
	voicesDir := filepath.Join(dir, "voices")
	cmd := exec.Command(bin, "voices", "add", model)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the copy to start", func() bool {
		entries, _ := os.ReadDir(voicesDir)
		return len(entries) > 0
	})
	cmd.Process.Signal(syscall.SIGINT)
	if code := exitStatus(cmd.Wait()); code != ExitInterrupted {
		t.Errorf("exit %d, want %d; stderr:\n%s", code, ExitInterrupted, stderr.String())
	}
	if entries, _ := os.ReadDir(voicesDir); len(entries) != 0 {
		t.Errorf("an interrupted add left %v", entries)
	}
}

// writeLargeModel writes an ONNX model with Piper's inputs and output around size bytes of weights, as a sparse
// file: the protobuf is encoded by hand (tag, length, bytes), so the weights need not be in memory.
func writeLargeModel(t *testing.T, path string, size int) {
	t.Helper()
	varint := func(b []byte, v uint64) []byte {
		for ; v >= 0x80; v >>= 7 {
			b = append(b, byte(v)|0x80)
		}
		return append(b, byte(v))
	}
	field := func(b []byte, num int, n int) []byte { return varint(varint(b, uint64(num<<3|2)), uint64(n)) }
	var ios []byte
	for i, name := range []string{"input", "input_lengths", "scales", "output"} {
		num := 11 // GraphProto.input
		if i == 3 {
			num = 12 // GraphProto.output
		}
		ios = append(field(ios, num, len(name)+2), field(nil, 1, len(name))...) // ValueInfoProto.name
		ios = append(ios, name...)
	}
	tensorHead := field(nil, 9, size) // TensorProto.raw_data
	initHead := field(nil, 5, len(tensorHead)+size)
	graphLen := len(initHead) + len(tensorHead) + size + len(ios)
	head := varint(nil, 1<<3)                  // ModelProto.ir_version
	head = varint(head, 8)                     //   = 8
	head = append(field(head, 8, 2), 2<<3, 15) // ModelProto.opset_import {version: 15}
	head = append(field(head, 7, graphLen), initHead...)
	head = append(head, tensorHead...)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(head); err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(ios, int64(len(head)+size)); err != nil {
		t.Fatal(err)
	}
}

// Two id-less manifests into one folder keep both: their items are named after their manifests.
func TestBatchTwoIdlessManifestsIntoOneFolder(t *testing.T) {
	dir := isolate(t)
	needORT(t)
	out := filepath.Join(dir, "out")
	for _, name := range []string{"a.jsonl", "b.jsonl"} {
		in := writeFile(t, filepath.Join(dir, name), fmt.Sprintf("{\"text\":\"From %s, the first.\"}\n{\"text\":\"From %s, the second.\"}\n", name, name))
		if r := run(t, "", "batch", in, "-o", out, "--voice", tinyVoice); r.code != 0 {
			t.Fatalf("%s: exit %d: %s", name, r.code, r.errOut)
		}
	}
	rows := lastRows(t, out)
	for _, id := range []string{"a-1", "a-2", "b-1", "b-2"} {
		if rows[id].Status != "ok" || rows[id].Out != id+".wav" {
			t.Errorf("row %s = %+v", id, rows[id])
		}
		if _, err := os.Stat(filepath.Join(out, id+".wav")); err != nil {
			t.Error(err)
		}
	}
	// The same id from another manifest, with other text: refused, a's item untouched.
	before, _ := os.ReadFile(filepath.Join(out, "a-1.wav"))
	c := writeFile(t, filepath.Join(dir, "c.jsonl"), `{"id":"a-1","text":"Not a's text."}`+"\n")
	r := run(t, "", "batch", c, "-o", out, "--voice", tinyVoice)
	if r.code != ExitFailure || !strings.Contains(r.errOut, `item "a-1" is already recorded in`) || !strings.Contains(r.errOut, `give this item its own "id"`) {
		t.Errorf("exit %d, stderr %s", r.code, r.errOut)
	}
	if after, _ := os.ReadFile(filepath.Join(out, "a-1.wav")); string(after) != string(before) {
		t.Error("a-1.wav was overwritten")
	}
	if row := lastRows(t, out)["a-1"]; !strings.HasSuffix(row.Source, "a.jsonl") {
		t.Errorf("a-1's row is now %+v", row)
	}
}

// WAVs and results.jsonl get 0666 less the umask, as files the shell creates do.
func TestBatchOutputsHonourTheUmask(t *testing.T) {
	dir := isolate(t)
	needORT(t)
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)
	in := writeFile(t, filepath.Join(dir, "in.jsonl"), `{"id":"p","text":"Private."}`+"\n")
	out := filepath.Join(dir, "out")
	if r := run(t, "", "batch", in, "-o", out, "--voice", tinyVoice); r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.errOut)
	}
	for _, name := range []string{"p.wav", "results.jsonl"} {
		if info, err := os.Stat(filepath.Join(out, name)); err != nil || info.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v, %v; want 0600 under umask 077", name, info.Mode().Perm(), err)
		}
	}
}

// Settings that change the audio are recorded in each row, by name.
func TestBatchRowsRecordTheirSettings(t *testing.T) {
	dir := isolate(t)
	needORT(t)
	in := writeFile(t, filepath.Join(dir, "in.jsonl"), `{"id":"s","text":"Settings."}`+"\n")
	out := filepath.Join(dir, "out")
	if r := run(t, "", "batch", in, "-o", out, "--voice", tinyVoice, "--sentence-silence", "0.4", "--no-normalize"); r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.errOut)
	}
	data, _ := os.ReadFile(filepath.Join(out, "results.jsonl"))
	var row struct{ Settings map[string]string }
	if err := json.Unmarshal(data, &row); err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]string{"voice": "tiny", "sentence_silence": "0.4", "normalize": "false", "format": "wav", "sample_rate": "22050", "length_scale": "1"} {
		if row.Settings[k] != v {
			t.Errorf("settings[%s] = %q, want %q (settings %v)", k, row.Settings[k], v, row.Settings)
		}
	}
}

// --precision fp16 changes a GPU's audio only: on the CPU, which ignores it, rows do not name it, and a run
// without it finds the items done.
func TestBatchPrecisionOnTheCPUIsNotASetting(t *testing.T) {
	dir := isolate(t)
	needORT(t)
	in := writeFile(t, filepath.Join(dir, "in.jsonl"), `{"id":"p","text":"Precision."}`+"\n")
	out := filepath.Join(dir, "out")
	if r := run(t, "", "batch", in, "-o", out, "--voice", tinyVoice, "--device", "cpu", "--precision", "fp16"); r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.errOut)
	}
	if row := lastRows(t, out)["p"]; row.Settings["precision"] != "" || row.Settings["voice"] != "tiny" {
		t.Errorf("settings %v: want no precision on the CPU", row.Settings)
	}
	if r := run(t, "", "batch", in, "-o", out, "--voice", tinyVoice, "--device", "cpu"); r.code != 0 || !strings.Contains(r.errOut, "1 skipped") {
		t.Errorf("the same run in float32: exit %d, want 1 skipped: %s", r.code, r.errOut)
	}
}

// A row that cannot be written stops the batch at once: results.jsonl is the record of what is done, and items made
// without rows would be made again by the next run anyway. Here a file size limit (ulimit -f, as a quota or a full
// disk would) stops results.jsonl growing, and nothing else: the audio files are smaller than the limit.
func TestBatchStopsWhenItsResultsCannotBeWritten(t *testing.T) {
	dir := isolate(t)
	needORT(t)
	bin := buildBinary(t)
	const limit = 256 << 10 // bytes: bash's ulimit -f counts KiB
	out := filepath.Join(dir, "out")
	os.MkdirAll(out, 0o755)
	// a line that is not a row, which ttsgen keeps as it is, brings results.jsonl to 100 bytes below the limit
	keep := `{"note":"` + strings.Repeat("x", limit-100-len(`{"note":""}`)-1) + `"}` + "\n"
	writeFile(t, filepath.Join(out, "results.jsonl"), keep)
	var m strings.Builder
	for i := range 40 {
		fmt.Fprintf(&m, `{"id":"m%02d","text":"Item %d."}`+"\n", i, i) // a second of audio: 50 KB
	}
	in := writeFile(t, filepath.Join(dir, "m.jsonl"), m.String())
	cmd := exec.Command("bash", "-c", fmt.Sprintf(`ulimit -f %d && exec "$@"`, limit>>10), "ttsgen",
		bin, "batch", in, "-o", out, "--voice", tinyVoice, "--threads", "1", "--jobs", "1", "-q")
	msg, err := cmd.CombinedOutput()
	if code := exitStatus(err); code != ExitFailure || !strings.Contains(string(msg), `recording the result of item "m00"`) {
		t.Errorf("exit %d, output %s; want 1 and the row's error", code, msg)
	}
	wavs, _ := filepath.Glob(filepath.Join(out, "*.wav"))
	if len(wavs) > 2 {
		t.Errorf("%d of 40 items made after the first row could not be written; want the batch stopped", len(wavs))
	}
}
