package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/ttsgen/ttsgen/internal/bench"
)

// suite is benchmarks/suite.json.
type suite struct {
	About   string    `json:"about"`
	Prepare []prepare `json:"prepare"`
	Corpora []corpus  `json:"corpora"`
	Runs    []run     `json:"runs"`
}

// prepare makes a file that runs name as {name}, once per call, on the machines that need it.
type prepare struct {
	Name    string   `json:"name"`
	Machine string   `json:"machine"`
	About   string   `json:"about"`
	Command []string `json:"command"`
	Output  string   `json:"output"`
}

// corpus is an input file made from the repository's sample texts: a manifest of Items one-line prompts ("jsonl") or
// one text of Items sentences ("text"), taking the lines of LinesFrom in turn.
type corpus struct {
	Name      string `json:"name"`
	LinesFrom string `json:"lines_from"`
	Items     int    `json:"items"`
	As        string `json:"as"`
}

// run is one measurement.
type run struct {
	Name    string   `json:"name"`
	Machine string   `json:"machine"`
	Claim   string   `json:"claim"`
	Command string   `json:"command"` // "bench" (default) or "batch"
	Args    []string `json:"args"`
	// LimitSeconds stops a run that hangs (default 300).
	LimitSeconds int `json:"limit_seconds"`
	// Serve, when set, makes the run a bench against `ttsgen serve --addr 127.0.0.1:PORT SERVE...`, started for it
	// ({url} in Args is its address); the server, not the load generator, is the process sampled.
	Serve []string `json:"serve"`
}

type options struct {
	suitePath, machine, bin, out string
	only                         []string
}

// result is what one run gave, as the summary table and results.jsonl record it.
type result struct {
	Name         string        `json:"name"`
	Command      []string      `json:"command"`
	Serve        []string      `json:"serve,omitempty"` // the server a --url run drove
	Error        string        `json:"error,omitempty"`
	WallSeconds  float64       `json:"wall_seconds"`
	Speed        float64       `json:"speed"`
	Speedup      float64       `json:"speedup,omitempty"`
	Report       *bench.Report `json:"report,omitempty"` // bench runs
	Items        int           `json:"items,omitempty"`  // batch runs: rows with status ok
	AudioSeconds float64       `json:"audio_seconds"`
	Usage        usage         `json:"usage"`
}

func loadSuite(path string) (suite, error) {
	var s suite
	data, err := os.ReadFile(path)
	if err != nil {
		return s, fmt.Errorf("reading suite: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return s, fmt.Errorf("reading suite %s: %w", path, err)
	}
	names := map[string]bool{}
	for _, r := range s.Runs {
		if r.Name == "" || names[r.Name] {
			return s, fmt.Errorf("suite %s: run name %q is empty or repeated", path, r.Name)
		}
		names[r.Name] = true
		if r.Command != "" && r.Command != "bench" && r.Command != "batch" {
			return s, fmt.Errorf("suite %s: run %s: command %q (want bench or batch)", path, r.Name, r.Command)
		}
		if len(r.Serve) > 0 && r.Command == "batch" {
			return s, fmt.Errorf("suite %s: run %s: serve is for bench runs", path, r.Name)
		}
	}
	return s, nil
}

// selected are the runs this call makes: those of opts.machine (all when empty), narrowed to opts.only.
func (s suite) selected(opts options) ([]run, error) {
	var runs []run
	for _, r := range s.Runs {
		if (opts.machine == "" || r.Machine == opts.machine) && (len(opts.only) == 0 || slices.Contains(opts.only, r.Name)) {
			runs = append(runs, r)
		}
	}
	for _, name := range opts.only {
		if !slices.ContainsFunc(s.Runs, func(r run) bool { return r.Name == name }) {
			return nil, fmt.Errorf("no run named %q in the suite", name)
		}
	}
	if len(runs) == 0 {
		return nil, fmt.Errorf("no run of the suite is for machine %q", opts.machine)
	}
	return runs, nil
}

func runSuite(ctx context.Context, opts options, w io.Writer) error {
	s, err := loadSuite(opts.suitePath)
	if err != nil {
		return err
	}
	runs, err := s.selected(opts)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(opts.out, 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "ttsgen-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	vars, err := s.makeInputs(ctx, runs, tmp)
	if err != nil {
		return err
	}
	records, err := os.Create(filepath.Join(opts.out, "results.jsonl"))
	if err != nil {
		return err
	}
	defer records.Close()
	fmt.Fprintln(w, tableHeader)
	srvs := &servers{bin: opts.bin}
	defer srvs.stop()
	for i, r := range runs {
		res := r.measure(ctx, opts.bin, vars, tmp, srvs)
		if i+1 == len(runs) || !slices.Equal(runs[i+1].Serve, r.Serve) {
			srvs.stop()
		}
		line, _ := json.Marshal(res)
		if _, err := records.Write(append(line, '\n')); err != nil {
			return fmt.Errorf("writing results: %w", err)
		}
		fmt.Fprintln(w, res.tableRow())
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	return nil
}

// makeInputs prepares what the runs name ({tmp}, the prepared files, the corpora) and returns the substitutions.
func (s suite) makeInputs(ctx context.Context, runs []run, tmp string) (map[string]string, error) {
	vars := map[string]string{"tmp": tmp}
	needs := func(name string) bool {
		return slices.ContainsFunc(runs, func(r run) bool {
			return slices.ContainsFunc(r.Args, func(a string) bool { return strings.Contains(a, "{"+name+"}") })
		})
	}
	for _, c := range s.Corpora {
		if !needs(c.Name) {
			continue
		}
		path, err := c.write(tmp)
		if err != nil {
			return nil, err
		}
		vars[c.Name] = path
	}
	for _, p := range s.Prepare {
		if !needs(p.Name) {
			continue
		}
		argv := expandAll(p.Command, vars)
		out := expand(p.Output, vars)
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
			return nil, err
		}
		cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
		if msg, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("preparing %s (%s): %w\n%s", p.Name, strings.Join(argv, " "), err, tail(msg, 2000))
		}
		vars[p.Name] = out
	}
	return vars, nil
}

func (c corpus) write(dir string) (string, error) {
	data, err := os.ReadFile(c.LinesFrom)
	if err != nil {
		return "", fmt.Errorf("corpus %s: %w", c.Name, err)
	}
	var lines []string
	for _, l := range strings.Split(string(data), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) == 0 || c.Items <= 0 {
		return "", fmt.Errorf("corpus %s: no lines in %s, or items %d", c.Name, c.LinesFrom, c.Items)
	}
	ext := map[string]string{"jsonl": ".jsonl", "text": ".txt"}[c.As]
	if ext == "" {
		return "", fmt.Errorf("corpus %s: as %q (want jsonl or text)", c.Name, c.As)
	}
	path := filepath.Join(dir, c.Name+ext)
	f, err := os.Create(path)
	if err != nil {
		return "", err
	}
	bw := bufio.NewWriter(f)
	for i := range c.Items {
		line := lines[i%len(lines)]
		if c.As == "jsonl" {
			b, _ := json.Marshal(map[string]string{"id": fmt.Sprintf("%s-%d", c.Name, i), "text": line})
			line = string(b)
		}
		bw.WriteString(line + "\n")
	}
	return path, errors.Join(bw.Flush(), f.Close())
}

func expand(s string, vars map[string]string) string {
	for k, v := range vars {
		s = strings.ReplaceAll(s, "{"+k+"}", v)
	}
	return s
}

func expandAll(args []string, vars map[string]string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = expand(a, vars)
	}
	return out
}

// measure runs r once, in its own process, sampling it while it runs.
func (r run) measure(ctx context.Context, bin string, vars map[string]string, tmp string, srvs *servers) result {
	limit := 300 * time.Second
	if r.LimitSeconds > 0 {
		limit = time.Duration(r.LimitSeconds) * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	var srv *server
	if len(r.Serve) > 0 {
		var err error
		if srv, err = srvs.get(ctx, expandAll(r.Serve, vars)); err != nil {
			return result{Name: r.Name, Error: err.Error()}
		}
		vars = maps.Clone(vars)
		vars["url"] = srv.url
	}
	args := expandAll(r.Args, vars)
	outDir := filepath.Join(tmp, "batch-"+r.Name)
	if r.Command == "batch" {
		args = append([]string{"batch"}, append(args, "-o", outDir, "-q")...)
	} else {
		args = append([]string{"bench", "--json"}, args...)
	}
	res := result{Name: r.Name, Command: append([]string{bin}, args...)}
	if srv != nil {
		res.Serve = srv.cmd.Args
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		res.Error = err.Error()
		return res
	}
	sampled := cmd.Process.Pid
	if srv != nil {
		sampled = srv.cmd.Process.Pid
	}
	sampling := startSampling(sampled)
	err := cmd.Wait()
	res.Usage = sampling.stop()
	if srv == nil && cmd.ProcessState != nil {
		res.Usage.PeakRSSBytes = max(res.Usage.PeakRSSBytes, exitedRSS(cmd.ProcessState))
	}
	res.WallSeconds = time.Since(start).Seconds()
	if err != nil {
		res.Error = fmt.Sprintf("%v: %s", err, strings.TrimSpace(tail(stderr.Bytes(), 500)))
		if srv != nil {
			if how, exited := srv.exitedWith(); exited {
				res.Error += "; its server exited: " + how
			}
		}
		return res
	}
	if r.Command == "batch" {
		res.Items, res.AudioSeconds, err = readBatchResults(filepath.Join(outDir, "results.jsonl"))
		if err != nil {
			res.Error = err.Error()
		} else if res.WallSeconds > 0 {
			res.Speed = res.AudioSeconds / res.WallSeconds
		}
		os.RemoveAll(outDir)
		return res
	}
	var rep bench.Report
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		res.Error = fmt.Sprintf("reading its report: %v", err)
		return res
	}
	res.Report, res.Speed, res.Speedup, res.AudioSeconds = &rep, rep.Speed, rep.Speedup, rep.AudioSeconds
	return res
}

// readBatchResults counts a batch's ok rows and their audio.
func readBatchResults(path string) (ok int, audioSeconds float64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var row struct {
			Status       string  `json:"status"`
			AudioSeconds float64 `json:"audio_seconds"`
		}
		if json.Unmarshal(sc.Bytes(), &row) == nil && row.Status == "ok" {
			ok++
			audioSeconds += row.AudioSeconds
		}
	}
	return ok, audioSeconds, sc.Err()
}

func tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

const tableHeader = "| run | speed (x real time) | speedup | latency p50 / p99 | first audio p50 / p99 | peak memory | GPU busy |\n|---|---|---|---|---|---|---|"

func (res result) tableRow() string {
	if res.Error != "" {
		return fmt.Sprintf("| %s | failed: %s | | | | | |", res.Name, strings.ReplaceAll(res.Error, "\n", " "))
	}
	speedup, latency, first := "", "", ""
	if res.Speedup > 0 {
		speedup = fmt.Sprintf("%.2fx", res.Speedup)
	}
	if rep := res.Report; rep != nil {
		latency = fmt.Sprintf("%.0f / %.0f ms", rep.LatencyMS.P50, rep.LatencyMS.P99)
		first = fmt.Sprintf("%.0f / %.0f ms", rep.FirstAudioMS.P50, rep.FirstAudioMS.P99)
	} else {
		latency = fmt.Sprintf("%d items in %.1f s", res.Items, res.WallSeconds)
	}
	gpu := ""
	if res.Usage.GPUSamples > 0 {
		gpu = fmt.Sprintf("%.0f%%, %.1f GiB", res.Usage.GPUBusyPercent, res.Usage.GPUMemoryMiB/1024)
	}
	return fmt.Sprintf("| %s | %.1f | %s | %s | %s | %.0f MiB | %s |", res.Name, res.Speed, speedup, latency, first,
		float64(res.Usage.PeakRSSBytes)/(1<<20), gpu)
}
