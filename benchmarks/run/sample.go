package main

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"
)

// usage is what sampling saw of a run: the most resident memory of the process and its children together (ttsgen's
// espeak-ng helpers are its children), and the GPU's mean busy share and most memory in use, where nvidia-smi exists.
type usage struct {
	PeakRSSBytes   int64   `json:"peak_rss_bytes"`
	GPUSamples     int     `json:"gpu_samples,omitempty"`
	GPUBusyPercent float64 `json:"gpu_busy_percent,omitempty"`
	GPUMemoryMiB   float64 `json:"gpu_memory_mib,omitempty"`
}

const sampleEvery = 200 * time.Millisecond

type sampler struct {
	pid  int
	done chan struct{}
	wg   sync.WaitGroup
	mu   sync.Mutex
	u    usage
	smi  *exec.Cmd
	out  bytes.Buffer
}

func startSampling(pid int) *sampler {
	s := &sampler{pid: pid, done: make(chan struct{})}
	if path, err := exec.LookPath("nvidia-smi"); err == nil {
		s.smi = exec.Command(path, "--query-gpu=utilization.gpu,memory.used", "--format=csv,noheader,nounits",
			"-lms", strconv.Itoa(int(sampleEvery/time.Millisecond)))
		s.smi.Stdout = &s.out
		if s.smi.Start() != nil {
			s.smi = nil
		}
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		tick := time.NewTicker(sampleEvery)
		defer tick.Stop()
		for {
			s.sampleMemory()
			select {
			case <-s.done:
				return
			case <-tick.C:
			}
		}
	}()
	return s
}

func (s *sampler) sampleMemory() {
	rss := treeRSS(s.pid)
	s.mu.Lock()
	s.u.PeakRSSBytes = max(s.u.PeakRSSBytes, rss)
	s.mu.Unlock()
}

func (s *sampler) stop() usage {
	close(s.done)
	s.wg.Wait()
	if s.smi != nil {
		_ = s.smi.Process.Kill()
		_ = s.smi.Wait()
		s.u.GPUSamples, s.u.GPUBusyPercent, s.u.GPUMemoryMiB = parseSMI(s.out.String())
	}
	return s.u
}

// parseSMI reads nvidia-smi's "util, memory" lines: samples, mean utilisation, most memory.
func parseSMI(out string) (n int, busy, memory float64) {
	var sum float64
	for _, line := range strings.Split(out, "\n") {
		fields := strings.Split(line, ",")
		if len(fields) != 2 {
			continue
		}
		u, err1 := strconv.ParseFloat(strings.TrimSpace(fields[0]), 64)
		m, err2 := strconv.ParseFloat(strings.TrimSpace(fields[1]), 64)
		if err1 != nil || err2 != nil {
			continue
		}
		n++
		sum += u
		memory = max(memory, m)
	}
	if n > 0 {
		busy = sum / float64(n)
	}
	return n, busy, memory
}

// treeRSS is the resident memory of pid and all its descendants, from /proc (0 where it is unreadable).
func treeRSS(pid int) int64 {
	total := vmRSS(pid)
	for _, child := range children(pid) {
		total += treeRSS(child)
	}
	return total
}

func vmRSS(pid int) int64 {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			if fields := strings.Fields(rest); len(fields) == 2 {
				kb, _ := strconv.ParseInt(fields[0], 10, 64)
				return kb * 1024
			}
		}
	}
	return 0
}

func children(pid int) []int {
	tasks, _ := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/task")
	var out []int
	for _, t := range tasks {
		data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/task/" + t.Name() + "/children")
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(data)) {
			if c, err := strconv.Atoi(f); err == nil {
				out = append(out, c)
			}
		}
	}
	return out
}
