package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestMain lets this test binary stand in for ttsgen when FAKE_TTSGEN_LOG is set: `serve --addr A ...` answers
// /health on A until SIGTERM, `bench --json ... --url U ...` checks that U answers and prints a report. Each
// records what it did in FAKE_TTSGEN_LOG.
func TestMain(m *testing.M) {
	if logPath := os.Getenv("FAKE_TTSGEN_LOG"); logPath != "" {
		os.Exit(fakeTTSGenMain(logPath, os.Args[1:]))
	}
	os.Exit(m.Run())
}

func fakeTTSGenMain(logPath string, args []string) int {
	record := func(line string) {
		f, _ := os.OpenFile(logPath, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		fmt.Fprintln(f, line)
		f.Close()
	}
	flagValue := func(name string) string {
		for i, a := range args {
			if a == name && i+1 < len(args) {
				return args[i+1]
			}
		}
		return ""
	}
	switch args[0] {
	case "serve":
		l, err := net.Listen("tcp", flagValue("--addr"))
		if err != nil {
			record("serve: " + err.Error())
			return 1
		}
		record("serve " + strings.Join(args[1:], " "))
		term := make(chan os.Signal, 1)
		signal.Notify(term, syscall.SIGTERM)
		go http.Serve(l, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
		<-term
		record("serve: SIGTERM")
		return 0
	case "bench":
		url := flagValue("--url")
		resp, err := http.Get(url + "/health")
		if err != nil {
			record("bench: " + err.Error())
			return 1
		}
		resp.Body.Close()
		record(fmt.Sprintf("bench %s -> %d", url, resp.StatusCode))
		json.NewEncoder(os.Stdout).Encode(map[string]any{"speed": 7.0, "first_audio_ms": map[string]float64{"p50": 3, "p99": 9}})
		return 0
	}
	return 2
}

// Runs against a server start `ttsgen serve` on a free loopback port, give the bench its address as {url}, share
// one server between consecutive runs with the same serve arguments, and stop it with SIGTERM.
func TestSuiteStartsSharesAndStopsServers(t *testing.T) {
	dir := t.TempDir()
	logPath := filepath.Join(dir, "fake.log")
	t.Setenv("FAKE_TTSGEN_LOG", logPath)
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	path := writeSuite(t, dir, suite{Runs: []run{
		{Name: "slow", Machine: "dev", Serve: []string{"--device", "cpu"}, Args: []string{"--url", "{url}", "--rate", "1"}},
		{Name: "fast", Machine: "dev", Serve: []string{"--device", "cpu"}, Args: []string{"--url", "{url}", "--rate", "9"}},
		{Name: "other", Machine: "dev", Serve: []string{"--device", "webgpu"}, Args: []string{"--url", "{url}"}},
	}})
	var table strings.Builder
	if err := runSuite(context.Background(), options{suitePath: path, machine: "dev", bin: bin, out: filepath.Join(dir, "out")}, &table); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(logPath)
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	var kinds []string
	for _, l := range lines {
		kinds = append(kinds, strings.Fields(l)[0])
	}
	want := "serve bench bench serve: serve bench serve:"
	if strings.Join(kinds, " ") != want || !strings.HasSuffix(lines[0], "--device cpu") || !strings.HasSuffix(lines[4], "--device webgpu") {
		t.Fatalf("what the fake ttsgen did:\n%s\nwant the steps %q", data, want)
	}
	for _, i := range []int{1, 2, 5} {
		if !strings.HasPrefix(lines[i], "bench http://127.0.0.1:") || !strings.HasSuffix(lines[i], "-> 200") {
			t.Errorf("bench did not reach its server at {url}: %q", lines[i])
		}
	}
	if lines[1] != lines[2] || lines[1] == lines[5] {
		t.Errorf("runs with the same serve arguments must share one server, others get their own:\n%s", data)
	}
	if !strings.Contains(table.String(), "| slow | 7.0 |") || !strings.Contains(table.String(), "| 3 / 9 ms |") {
		t.Errorf("table:\n%s", table.String())
	}
}

// A server that exits before it is ready fails its run with the server's own output, and the suite goes on.
func TestSuiteReportsAServerThatDoesNotStart(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "ttsgen")
	os.WriteFile(bin, []byte("#!/bin/sh\necho 'no voice named nope' >&2\nexit 2\n"), 0o755)
	path := writeSuite(t, dir, suite{Runs: []run{{Name: "s", Machine: "dev", Serve: []string{"--voice", "nope"}, Args: []string{"--url", "{url}"}}}})
	var table strings.Builder
	if err := runSuite(context.Background(), options{suitePath: path, machine: "dev", bin: bin, out: filepath.Join(dir, "out")}, &table); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(table.String(), "| s | failed: ttsgen serve exited before it was ready") || !strings.Contains(table.String(), "no voice named nope") {
		t.Errorf("table:\n%s", table.String())
	}
}
