package engine

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"testing"
	"time"

	"github.com/ttsgen/ttsgen/internal/ort"
	"github.com/ttsgen/ttsgen/internal/ort/orttest"
)

// BenchmarkEngine measures throughput (seconds of audio per wall second) for the CPU layouts the defaults were
// chosen from. It uses the tiny voice unless TTSGEN_BENCH_VOICE names another Piper-format voice, e.g.:
//
//	TTSGEN_BENCH_VOICE=/path/voice.onnx go test ./internal/engine -run '^$' -bench Engine -benchtime 1x
func BenchmarkEngine(b *testing.B) {
	orttest.Need(b)
	voice := orttest.Voice(b, tinyVoicePath)
	if path := os.Getenv("TTSGEN_BENCH_VOICE"); path != "" {
		var err error
		if voice, err = os.ReadFile(path); err != nil {
			b.Fatal(err)
		}
	}
	sentences := 48
	if s := os.Getenv("TTSGEN_BENCH_SENTENCES"); s != "" {
		fmt.Sscan(s, &sentences)
	}
	rng := rand.New(rand.NewPCG(7, 8))
	var corpus [][]int64
	for range sentences {
		corpus = append(corpus, sentence(rng, 20+rng.IntN(130))) // 43..303 ids: LJSpeech-like sentences
	}
	threads := 2
	for _, layout := range []struct{ perSession, batch, window, windows int }{
		{1, 1, 0, 0}, {1, 2, 0, 0}, {1, 4, 0, 0}, {1, 8, 0, 0}, {2, 1, 0, 0}, {2, 4, 0, 0}, {1, 4, 64, 4}, {1, 4, 128, 2},
	} {
		name := fmt.Sprintf("threads%d/perSession%d/batch%d", threads, layout.perSession, layout.batch)
		if layout.window > 0 {
			name += fmt.Sprintf("/window%dx%d", layout.window, layout.windows)
		}
		b.Run(name, func(b *testing.B) {
			e, err := NewEngine(Options{Device: ort.DeviceCPU, Threads: threads, QueueSize: 64, Tuning: Tuning{ThreadsPerSession: layout.perSession, MaxBatch: layout.batch, DecoderWindow: layout.window, DecoderBatch: layout.windows}})
			if err != nil {
				b.Fatal(err)
			}
			defer e.Close()
			m, err := e.Load("bench", voice, ModelConfig{SampleRate: 22050})
			if err != nil {
				b.Fatal(err)
			}
			var samples int
			start := time.Now()
			for range b.N {
				results := make(chan (<-chan Result), len(corpus))
				go func() {
					for _, ids := range corpus {
						results <- e.Submit(context.Background(), m, Request{IDs: ids, Scales: Scales{0.667, 1, 0.8}})
					}
					close(results)
				}()
				for ch := range results {
					res := <-ch
					if res.Err != nil {
						b.Fatal(res.Err)
					}
					samples += len(res.Audio)
				}
			}
			wall := time.Since(start).Seconds()
			b.ReportMetric(float64(samples)/22050/wall, "x-realtime")
		})
	}
}
