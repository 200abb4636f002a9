package bench_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/ttsgen/ttsgen/internal/bench"
)

// The ttsgen bench command's shape: a concurrent run compared with the same
// texts sent one at a time. Real time here, so only counts are printed.
func ExampleRun() {
	synth := func(ctx context.Context, text string) (bench.Outcome, error) {
		words := len(strings.Fields(text))
		return bench.Outcome{AudioSeconds: 0.4 * float64(words), Sentences: 1}, ctx.Err()
	}
	texts := []string{"Hello there.", "The quick brown fox jumps over the lazy dog."}
	ctx := context.Background()

	report, err := bench.Run(ctx, texts, bench.Load{Concurrency: 4, Requests: 40}, synth)
	if err != nil {
		fmt.Println(err)
		return
	}
	baseline, err := bench.Run(ctx, texts, bench.Load{Concurrency: 1}, synth)
	if err != nil {
		fmt.Println(err)
		return
	}
	report.CompareTo(baseline)
	fmt.Printf("%s: %d requests, %d sentences, %.1f s of audio; baseline %d requests\n",
		report.Mode, report.Requests, *report.Sentences, report.AudioSeconds, report.Baseline.Requests)
	// Output: closed-loop: 40 requests, 40 sentences, 88.0 s of audio; baseline 2 requests
}
