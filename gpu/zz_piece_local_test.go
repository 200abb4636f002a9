package gpu

import (
	"math/rand/v2"
	"os"
	"testing"
	"time"
)

func TestZZPieceCost(t *testing.T) {
	path := os.Getenv("PMV")
	if path == "" {
		t.Skip()
	}
	needORT(t)
	voice, _ := os.ReadFile(path)
	graph, io, err := prepareGraph(voice)
	if err != nil {
		t.Fatal(err)
	}
	sv, err := splitGraph(graph, true)
	if err != nil {
		t.Fatal(err)
	}
	cut, err := cutText(sv.acoustic)
	if err != nil {
		t.Fatal(err)
	}
	text, err := ortBackend{}.newGraphRunner(cut.text, cut.textInputs, cut.boundary, DeviceCPU, 1)
	if err != nil {
		t.Fatal(err)
	}
	sm := &splitModel{voice: &splitVoice{io: io, text: cut}}
	perRow, ok, err := textPieceOutputs(text, cut, io)
	t.Log(perRow, ok, err)
	sm.textPerRow = perRow
	rng := rand.New(rand.NewPCG(1, 2))
	lengths := []int{}
	for range 13 {
		lengths = append(lengths, 250+rng.IntN(60))
	}
	in := paddedBatch(rng, lengths...)
	for _, piece := range []int{0, 7, 4, 3, 2, 1, 0, 4, 2} {
		best := time.Hour
		for range 3 {
			sm.text, sm.textCPU = []graphRunner{&busyRunner{graphRunner: text, busy: 99}}, []graphRunner{text}
			start := time.Now()
			if _, _, err := sm.runText(0, piece, acousticInputs(in, io), time.Now); err != nil {
				t.Fatal(err)
			}
			best = min(best, time.Since(start))
		}
		t.Logf("piece %d: %v", piece, best)
	}
}

func TestZZRunCost(t *testing.T) {
	path := os.Getenv("PMV")
	if path == "" {
		t.Skip()
	}
	needORT(t)
	voice, _ := os.ReadFile(path)
	graph, io, _ := prepareGraph(voice)
	sv, _ := splitGraph(graph, true)
	cut, _ := cutText(sv.acoustic)
	text, err := ortBackend{}.newGraphRunner(cut.text, cut.textInputs, cut.boundary, DeviceCPU, 1)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, width := range []int{300, 100} {
		for _, size := range []int{1, 2, 4, 13, 1} {
			lengths := []int{}
			for range size {
				lengths = append(lengths, width)
			}
			in := paddedBatch(rng, lengths...)
			best := time.Hour
			for range 3 {
				start := time.Now()
				if _, err := text.runGraph(acousticInputs(in, io)); err != nil {
					t.Fatal(err)
				}
				best = min(best, time.Since(start))
			}
			t.Logf("width %d size %d: %v (%v per sentence)", width, size, best, best/time.Duration(size))
		}
	}
}
