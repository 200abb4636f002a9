package engine

import (
	"sync"
	"time"
)

// Stage names of StageStats.
const (
	stageWhole    = "whole"    // whole sentences through the voice graph
	stageText     = "text"     // the text part of a split voice's acoustic part, when it runs apart (on the GPU)
	stageTextCPU  = "text-cpu" // the same on a CPU session (TextDevice auto, when the GPU was busy)
	stageAcoustic = "acoustic" // the acoustic part of a split voice (what is left of it after the text part)
	stageFlow     = "flow"     // the flow of a split voice, when it runs apart (on the GPU)
	stageDecoder  = "decoder"  // decoder windows of a split voice
	stageHead     = "head"     // a tiled voice's head (tail.go): the whole sentence up to its decoder's tail
	stageTail     = "tail"     // a tiled voice's tail, tile by tile
)

// StageStats sums up the device runs of one stage since the engine started: what a tuning run needs to see where
// the time goes.
type StageStats struct {
	Stage string `json:"stage"` // "whole", "text", "text-cpu", "acoustic", "flow", "decoder", "head" or "tail"
	Runs  int    `json:"runs"`
	Items int    `json:"items"` // sentences (whole, acoustic, head) or windows (decoder) or tiles (tail) run
	// Units is the real work in those runs: phonemes for whole, acoustic and head runs, frames for decoder windows
	// and tail tiles; Padded is what the runs' tensors held, padding (windows' and tiles' margins, silent windows)
	// included.
	Units  int `json:"units"`
	Padded int `json:"padded"`
	// Seconds is the workers' time in runs, from handing the tensors over to having the output back (waiting
	// for a serialised device included); it can exceed wall time when runs overlap.
	Seconds float64 `json:"seconds"`
	// DeviceSeconds is the time the stage's runs held a serialised device (WebGPU runs one at a time): its
	// share of the device, with the waits for it left out. Kept for split voices' stages; absent for stages that
	// ran on the CPU, for whole sentences, and on a device whose runs are not serialised (CUDA).
	DeviceSeconds float64 `json:"device_seconds,omitempty"`
}

type stageStats struct {
	mu     sync.Mutex
	stages []StageStats
}

func (s *stageStats) add(stage string, items, units, padded int, start, end time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := 0
	for i < len(s.stages) && s.stages[i].Stage != stage {
		i++
	}
	if i == len(s.stages) {
		s.stages = append(s.stages, StageStats{Stage: stage})
	}
	st := &s.stages[i]
	st.Runs++
	st.Items += items
	st.Units += units
	st.Padded += padded
	st.Seconds += end.Sub(start).Seconds()
}

// record counts one run of a batch of whole sentences (or their acoustic part).
func (s *stageStats) record(stage string, batch []*item, start, end time.Time) {
	s.recordPadded(stage, batch, 0, start, end)
}

// recordPadded is record for a run whose sentences were padded to width ids (0: to the longest of them).
func (s *stageStats) recordPadded(stage string, batch []*item, width int, start, end time.Time) {
	units := 0
	for _, it := range batch {
		units += len(it.req.IDs)
		width = max(width, len(it.req.IDs))
	}
	s.add(stage, len(batch), units, len(batch)*width, start, end)
}

// recordWindows counts one decoder run of n windows padded to rows, each of frames frames read with margins as
// span frames.
func (s *stageStats) recordWindows(n, rows, frames, span int, start, end time.Time) {
	s.add(stageDecoder, n, n*frames, rows*span, start, end)
}

// Stats reports the device runs of each stage so far, in the order stages first ran.
func (e *Engine) Stats() []StageStats {
	e.stats.mu.Lock()
	stages := append([]StageStats(nil), e.stats.stages...)
	e.stats.mu.Unlock()
	held := map[string]time.Duration{}
	e.mu.Lock()
	for _, m := range e.models {
		if m.split != nil {
			for stage, t := range m.split.deviceTimes() {
				held[stage] += t - m.split.warmUpDeviceTimes[stage]
			}
		}
	}
	e.mu.Unlock()
	for i := range stages {
		stages[i].DeviceSeconds = held[stages[i].Stage].Seconds()
	}
	return stages
}

// deviceTimes is how long each stage's sessions of a split voice have held a serialised device.
func (s *splitModel) deviceTimes() map[string]time.Duration {
	held := map[string]time.Duration{}
	for stage, runners := range map[string][]graphRunner{stageText: s.text, stageAcoustic: s.acoustic,
		stageFlow: s.flow, stageDecoder: s.decoder} {
		for _, r := range runners {
			held[stage] += r.DeviceTime()
		}
	}
	return held
}
