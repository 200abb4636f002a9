package cmd

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// bench --url against a real `ttsgen serve` on loopback: the requests are answered, with audio, but the server's
// answer does not say how it split the texts, so the report leaves the sentences unknown (null in JSON, "unknown"
// in the table, per request too) instead of a 0 that reads as "no sentences spoken".
func TestBenchOverHTTPLeavesSentencesUnknown(t *testing.T) {
	dir := isolate(t)
	needORT(t)
	srv := startServe(t, "--voice", tinyVoice)
	records := filepath.Join(dir, "requests.jsonl")
	r := run(t, "", "bench", "--url", srv.url, "--texts", "../samples/three-sentences.txt", "--requests", "3",
		"--warmup", "0", "--concurrency", "1", "--json", "--per-request", records)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.errOut)
	}
	var report map[string]json.RawMessage
	if err := json.Unmarshal([]byte(r.out), &report); err != nil {
		t.Fatalf("report is not one JSON object: %v\n%s", err, r.out)
	}
	var audio float64
	json.Unmarshal(report["audio_seconds"], &audio)
	if string(report["requests"]) != "3" || string(report["errors"]) != "0" || audio < 3 {
		t.Fatalf("requests %s, errors %s, %v s of audio; want 3 answered requests with audio", report["requests"],
			report["errors"], audio)
	}
	if got := string(report["sentences"]); got != "null" {
		t.Errorf(`"sentences": %s; want null (unknown: the server does not say)`, got)
	}
	lines := readLines(t, records, 3)
	for i, line := range lines {
		var rec map[string]json.RawMessage
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("line %d: %v: %s", i+1, err, line)
		}
		if string(rec["sentences"]) != "null" || string(rec["phonemes"]) != "null" {
			t.Errorf("request %d: sentences %s, phonemes %s; want null (unknown)", i, rec["sentences"], rec["phonemes"])
		}
	}

	r = run(t, "", "bench", "--url", srv.url, "--texts", "../samples/three-sentences.txt", "--requests", "2",
		"--warmup", "0", "--concurrency", "1")
	if r.code != 0 {
		t.Fatalf("table: exit %d: %s", r.code, r.errOut)
	}
	if !regexp.MustCompile(`(?m)^requests +2 \(0 failed\)$`).MatchString(r.out) ||
		!regexp.MustCompile(`(?m)^sentences +unknown \(`).MatchString(r.out) {
		t.Errorf("table: want 2 requests and the sentences unknown:\n%s", r.out)
	}
}

// Ctrl-C in the middle of `ttsgen bench` (a real process, a real SIGINT): the report of the requests answered so
// far is printed, marked partial, with the figures of those requests alone (the one cut off in flight is neither
// counted nor a failure), and the process exits 130 as every interrupted ttsgen command does.
func TestBenchInterruptedPrintsAPartialReport(t *testing.T) {
	isolate(t)
	bin := buildBinary(t)
	const answered = 5
	for _, asJSON := range []bool{false, true} {
		t.Run(map[bool]string{false: "table", true: "json"}[asJSON], func(t *testing.T) {
			// The first five requests get a second of silence each; the sixth is held until its client goes, and
			// says it has arrived, so the signal comes with exactly five answered and one in flight.
			var n atomic.Int32
			held := make(chan struct{})
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.Copy(io.Discard, r.Body) // read whole, so that the client's going cancels r.Context()
				switch k := n.Add(1); {
				case k <= answered:
					w.Write(silentWAV(22050))
				case k == answered+1:
					close(held)
					select {
					case <-r.Context().Done():
					case <-time.After(time.Minute):
						t.Error("the request in flight was not given up: the interrupted bench still holds it")
					}
				default:
					t.Errorf("request %d sent after the interrupted one", k)
				}
			}))
			defer srv.Close()
			args := []string{"bench", "--url", srv.URL, "--texts", "../samples/three-sentences.txt", "--requests",
				"1000", "--warmup", "0", "--concurrency", "1"}
			if asJSON {
				args = append(args, "--json")
			}
			cmd := exec.Command(bin, args...)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			select {
			case <-held:
			case <-time.After(60 * time.Second):
				cmd.Process.Kill()
				t.Fatalf("the sixth request never came; stderr:\n%s", stderr.String())
			}
			if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
				t.Fatal(err)
			}
			err := cmd.Wait()
			var exitErr *exec.ExitError
			if !errors.As(err, &exitErr) || exitErr.ExitCode() != ExitInterrupted {
				t.Fatalf("interrupted bench: %v, want exit %d; stdout:\n%s\nstderr:\n%s", err, ExitInterrupted,
					stdout.String(), stderr.String())
			}
			if want := "bench interrupted after 5 of 1000 requests"; !strings.Contains(stderr.String(), want) {
				t.Errorf("stderr does not say %q:\n%s", want, stderr.String())
			}
			if !asJSON {
				for _, want := range []string{
					`(?m)^partial report +interrupted after 5 of 1000 requests`,
					`(?m)^requests +5 of 1000 planned \(0 failed\)$`,
					`(?m)^audio +5\.00 s$`,
				} {
					if !regexp.MustCompile(want).MatchString(stdout.String()) {
						t.Errorf("report has no line %s:\n%s", want, stdout.String())
					}
				}
				return
			}
			var report struct {
				Interrupted     bool
				RequestsPlanned int `json:"requests_planned"`
				Requests        int
				Errors          int
				AudioSeconds    float64 `json:"audio_seconds"`
				QPS             float64
			}
			if err := json.Unmarshal(stdout.Bytes(), &report); err != nil {
				t.Fatalf("stdout is not one JSON report: %v\n%s", err, stdout.String())
			}
			if !report.Interrupted || report.RequestsPlanned != 1000 || report.Requests != answered ||
				report.Errors != 0 || report.AudioSeconds != answered || report.QPS <= 0 {
				t.Errorf("report %+v; want interrupted after 5 of 1000 requests, 5 s of audio, no errors", report)
			}
		})
	}
}

// silentWAV is a 16-bit mono 22,050 Hz WAV of samples zeros.
func silentWAV(samples int) []byte {
	le := binary.LittleEndian
	b := le.AppendUint32([]byte("RIFF"), uint32(36+2*samples))
	b = le.AppendUint32(append(b, "WAVEfmt "...), 16)
	b = le.AppendUint16(le.AppendUint16(b, 1), 1)
	b = le.AppendUint32(le.AppendUint32(b, 22050), 44100)
	b = le.AppendUint16(le.AppendUint16(b, 2), 16)
	b = le.AppendUint32(append(b, "data"...), uint32(2*samples))
	return append(b, make([]byte, 2*samples)...)
}

// A --url that is not http(s)://HOST[:PORT] is a usage error said before any work (no warmup request to fail on
// Go's "unsupported protocol scheme"), naming the value and the form wanted.
func TestBenchURLMustBeHTTP(t *testing.T) {
	dir := isolate(t)
	texts := writeFile(t, filepath.Join(dir, "b1.txt"), "Hello there.\n")
	for _, url := range []string{"localhost:8880", "127.0.0.1:8880", "ftp://127.0.0.1:8880", "http://", "http:///v1", "8880"} {
		r := run(t, "", "bench", "--url", url, "--texts", texts, "--warmup", "1")
		if want := fmt.Sprintf("--url %q: want http://HOST:PORT", url); r.code != ExitUsage || !strings.Contains(r.errOut, want) ||
			strings.Contains(r.errOut, "warmup") {
			t.Errorf("--url %s: exit %d, stderr %q; want exit %d saying %q", url, r.code, r.errOut, ExitUsage, want)
		}
	}
}

// bench --url measures the server's speed, but the CPU time and peak RSS it can read are its own process's: the
// table labels them as the client's, and names the server as what was measured, not a device.
func TestBenchOverHTTPLabelsClientFigures(t *testing.T) {
	dir := isolate(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Write(silentWAV(22050))
	}))
	defer srv.Close()
	texts := writeFile(t, filepath.Join(dir, "b1.txt"), "Hello there.\n")
	r := run(t, "", "bench", "--url", srv.URL, "--texts", texts, "--requests", "2", "--warmup", "0", "--concurrency", "1")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.errOut)
	}
	for _, want := range []string{`(?m)^cpu \(this client\) +\d`, `(?m)^peak RSS \(this client\) +\S`,
		`(?m)^server +` + regexp.QuoteMeta(srv.URL) + `$`} {
		if !regexp.MustCompile(want).MatchString(r.out) {
			t.Errorf("table has no line %s:\n%s", want, r.out)
		}
	}
	if regexp.MustCompile(`(?m)^(cpu|peak RSS|device) {2}`).MatchString(r.out) {
		t.Errorf("table gives the client's figures as if they were the server's:\n%s", r.out)
	}
}
