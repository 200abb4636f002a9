package main

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeTTSGen is a stand-in binary: `bench --json ...` prints a report, `batch IN -o DIR -q` writes one ok row per
// line of IN into DIR/results.jsonl. Both record their arguments.
const fakeTTSGen = `#!/bin/sh
echo "$@" >> "$ARGS_LOG"
if [ "$1" = bench ]; then
  echo '{"speed": 12.5, "speedup": 1.3, "audio_seconds": 40, "latency_ms": {"p50": 10, "p90": 20, "p99": 30}}'
  exit 0
fi
in=$2; shift 2
while [ "$1" != -o ]; do shift; done
mkdir -p "$2"
while read -r line; do echo '{"status":"ok","audio_seconds":1.5}' >> "$2/results.jsonl"; done < "$in"
`

func writeSuite(t *testing.T, dir string, s suite) string {
	t.Helper()
	data, _ := json.Marshal(s)
	path := filepath.Join(dir, "suite.json")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestSuiteRunsBenchAndBatchAndRecordsThem(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "ttsgen")
	if err := os.WriteFile(bin, []byte(fakeTTSGen), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("ARGS_LOG", filepath.Join(dir, "args.log"))
	texts := filepath.Join(dir, "texts.txt")
	os.WriteFile(texts, []byte("One.\nTwo.\n\nThree.\n"), 0o644)
	path := writeSuite(t, dir, suite{
		Corpora: []corpus{{Name: "prompts", LinesFrom: texts, Items: 7, As: "jsonl"}, {Name: "unused", LinesFrom: texts, Items: 1, As: "text"}},
		Runs: []run{
			{Name: "b", Machine: "dev", Args: []string{"--texts", texts}},
			{Name: "p", Machine: "dev", Command: "batch", Args: []string{"{prompts}", "--device", "cpu"}},
			{Name: "elsewhere", Machine: "h200", Args: []string{"--device", "webgpu"}},
		},
	})
	out := filepath.Join(dir, "out")
	var table strings.Builder
	if err := runSuite(context.Background(), options{suitePath: path, machine: "dev", bin: bin, out: out}, &table); err != nil {
		t.Fatal(err)
	}
	var got []result
	f, _ := os.Open(filepath.Join(out, "results.jsonl"))
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var r result
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		got = append(got, r)
	}
	if len(got) != 2 || got[0].Name != "b" || got[1].Name != "p" {
		t.Fatalf("results %+v; want runs b and p only (h200's run is not for this machine)", got)
	}
	if got[0].Speed != 12.5 || got[0].Speedup != 1.3 || got[0].Report.LatencyMS.P99 != 30 || got[0].Usage.PeakRSSBytes <= 0 {
		t.Errorf("bench run: %+v", got[0])
	}
	if got[1].Items != 7 || got[1].AudioSeconds != 10.5 || got[1].Error != "" {
		t.Errorf("batch run over a 7-prompt corpus: %+v", got[1])
	}
	if !strings.Contains(table.String(), "| b | 12.5 | 1.30x | 10 / 30 ms |") {
		t.Errorf("table:\n%s", table.String())
	}
	log, _ := os.ReadFile(filepath.Join(dir, "args.log"))
	if !strings.HasPrefix(string(log), "bench --json --texts "+texts+"\nbatch ") || !strings.Contains(string(log), "prompts.jsonl --device cpu -o ") {
		t.Errorf("commands run:\n%s", log)
	}
}

func TestCorpusCyclesTheSampleLines(t *testing.T) {
	dir := t.TempDir()
	texts := filepath.Join(dir, "t.txt")
	os.WriteFile(texts, []byte("A.\nB.\n"), 0o644)
	path, err := corpus{Name: "c", LinesFrom: texts, Items: 5, As: "jsonl"}.write(dir)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	want := `{"id":"c-0","text":"A."}` + "\n" + `{"id":"c-1","text":"B."}` + "\n" + `{"id":"c-2","text":"A."}` + "\n"
	if !strings.HasPrefix(string(data), want) || strings.Count(string(data), "\n") != 5 {
		t.Errorf("corpus:\n%s", data)
	}
}

func TestSuiteRefusesWhatItCannotRun(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct {
		name string
		s    suite
		opts options
		want string
	}{
		{"repeated name", suite{Runs: []run{{Name: "a"}, {Name: "a"}}}, options{}, `run name "a" is empty or repeated`},
		{"unknown command", suite{Runs: []run{{Name: "a", Command: "serve"}}}, options{}, `command "serve"`},
		{"unknown run", suite{Runs: []run{{Name: "a"}}}, options{only: []string{"b"}}, `no run named "b"`},
		{"no run for the machine", suite{Runs: []run{{Name: "a", Machine: "h200"}}}, options{machine: "dev"}, `no run of the suite is for machine "dev"`},
	} {
		tt.opts.suitePath, tt.opts.out = writeSuite(t, dir, tt.s), filepath.Join(dir, "out")
		if err := runSuite(context.Background(), tt.opts, &strings.Builder{}); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want %q", tt.name, err, tt.want)
		}
	}
}

// The suite in the repository loads, and every {name} its runs use is prepared or made.
func TestRepositorySuiteIsComplete(t *testing.T) {
	s, err := loadSuite("../suite.json")
	if err != nil {
		t.Fatal(err)
	}
	made := map[string]bool{"tmp": true}
	for _, p := range s.Prepare {
		made[p.Name] = true
	}
	for _, c := range s.Corpora {
		made[c.Name] = true
		if _, err := os.Stat(filepath.Join("..", "..", c.LinesFrom)); err != nil {
			t.Errorf("corpus %s: %v", c.Name, err)
		}
	}
	for _, r := range s.Runs {
		for _, a := range r.Args {
			if i := strings.Index(a, "{"); i >= 0 {
				if name := strings.Trim(a[i:], "{}"); !made[name] && (name != "url" || len(r.Serve) == 0) {
					t.Errorf("run %s uses {%s}, which nothing makes", r.Name, name)
				}
			}
		}
		if r.Claim == "" || (r.Machine != "dev" && r.Machine != "h200") {
			t.Errorf("run %s: claim %q, machine %q", r.Name, r.Claim, r.Machine)
		}
	}
}

func TestParseSMI(t *testing.T) {
	n, busy, mem := parseSMI("90, 1000\n70, 3000\ngarbage\n")
	if n != 2 || busy != 80 || mem != 3000 {
		t.Errorf("parseSMI = %d, %v, %v", n, busy, mem)
	}
}
