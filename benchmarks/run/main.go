// Command run measures the runs of benchmarks/suite.json on this machine: each one a `ttsgen bench --json` (or a
// `ttsgen batch`) in its own process, whose resident memory and, where nvidia-smi exists, GPU use are sampled while it
// runs. It prints one table row per run and writes every report to -out.
//
//	go run ./benchmarks/run -machine dev                     # the runs for a developer's machine
//	go run ./benchmarks/run -machine h200 -bin ttsgen.bin    # on the GPU machine, with a carried binary
//	go run ./benchmarks/run -only cpu2-one-thread,cpu2-batched-vs-sequential
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
)

func main() {
	opts := options{}
	flag.StringVar(&opts.suitePath, "suite", "benchmarks/suite.json", "the suite file")
	flag.StringVar(&opts.machine, "machine", "", "run the runs and preparations for this machine (dev, h200); empty = all")
	only := flag.String("only", "", "comma-separated run names: run just these")
	flag.StringVar(&opts.bin, "bin", "bin/ttsgen", "the ttsgen binary to measure")
	flag.StringVar(&opts.out, "out", "benchmarks/out", "folder for each run's report, samples and the summary")
	flag.Parse()
	if *only != "" {
		opts.only = strings.Split(*only, ",")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := runSuite(ctx, opts, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "benchmarks:", err)
		os.Exit(1)
	}
}
