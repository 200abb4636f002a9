package cmd

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"runtime"
	"time"

	"github.com/spf13/cobra"

	"github.com/ttsgen/ttsgen/internal/atomicfile"
	"github.com/ttsgen/ttsgen/internal/bench"
	"github.com/ttsgen/ttsgen/internal/engine"
	"github.com/ttsgen/ttsgen/internal/pipeline"
)

type benchOptions struct {
	texts       string
	url         string // a speech server to drive instead of the engine in this process
	voice       string
	concurrency int
	rate        float64
	requests    int
	warmup      int
	compare     string
	asJSON      bool
	perRequest  string
	queueSize   int
	tuning      engine.Tuning // --tune: engine knobs to measure; zero values keep the engine's defaults
	tuneHelp    bool          // --tune help: list the keys and run nothing
}

// newBenchCmd builds the command; runF, when set, replaces runBench (tests check the parsed options).
func newBenchCmd(s *settings, streams IO, runF func(*benchOptions) error) *cobra.Command {
	var o benchOptions
	cmd := &cobra.Command{
		Use:   "bench --texts FILE",
		Short: "Measure speed, latency and throughput of synthesis on this machine",
		Long: `Run texts under a load and report speed ("x real time": audio seconds per wall second), rtf, qps, latency
and first-audio percentiles and peak memory. Closed loop (--concurrency) or open loop (--rate, for --requests);
--compare sequential also runs the texts as Piper does (one at a time, batch 1) and reports the speedup of the same
run. --tune KEY=VALUE changes an engine default (--tune help lists them). --url drives any OpenAI-compatible
speech server instead (ttsgen serve, Kokoro-FastAPI...): failures counted by HTTP status, sentences unknown (its
audio does not say); the last example is the load test used for vLLM-served speech: 80 requests of three sentences,
0.3 s apart. A request whose response has not begun within a minute fails. Ctrl-C prints the report so far, marked
partial. Exit status: 0 all answered, 1 some failed (the report says how many, by status), 2 usage, 130 interrupted.`,
		Example: `  ttsgen bench --texts samples/bench.txt --compare sequential
  ttsgen bench --texts samples/short.txt --concurrency 1 --per-request requests.jsonl --json
  ttsgen bench --texts samples/bench.txt --device webgpu --tune decoder-window=256
  ttsgen bench --url http://127.0.0.1:8880 --texts samples/three-sentences.txt --rate 3.333 --requests 80`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.tuneHelp {
				return writeTuneKeys(streams.Out)
			}
			if o.texts == "" {
				return usageErrorf("--texts FILE is required")
			}
			if o.url != "" {
				if err := checkServerURL(o.url); err != nil {
					return err
				}
			}
			if o.url != "" && o.compare != "" {
				return usageErrorf("--compare runs the engine in this process; it does not go with --url")
			}
			if o.compare != "" && o.compare != "sequential" {
				return usageErrorf("--compare %q: the only comparison is \"sequential\"", o.compare)
			}
			if o.compare != "" && o.rate > 0 {
				return usageErrorf("--compare runs the baseline as a closed loop: with --rate the run would be " +
					"capped by the arrival rate and the speedup mean nothing; use --concurrency")
			}
			if cmd.Flags().Changed("rate") && cmd.Flags().Changed("concurrency") {
				return usageErrorf("choose a closed loop (--concurrency) or an open loop (--rate), not both")
			}
			if runF != nil {
				return runF(&o)
			}
			return runBench(cmd.Context(), s, streams, &o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.texts, "texts", "", "file of texts, one per line, or an LJSpeech-style metadata.csv (ID|text|normalized)")
	f.StringVar(&o.url, "url", "", "drive the speech server at `URL` (http://HOST:PORT) over OpenAI's API instead of an engine in this process")
	f.StringVar(&o.voice, "voice", "", "voice name or path (default: the built-in voice; with --url: alloy)")
	f.IntVar(&o.concurrency, "concurrency", 32, "closed loop: concurrent submitters")
	f.Float64Var(&o.rate, "rate", 0, "open loop: requests per second")
	f.IntVar(&o.requests, "requests", 0, "requests to send (default: one per text)")
	f.IntVar(&o.warmup, "warmup", 2, "requests sent first and left out of the figures")
	f.StringVar(&o.compare, "compare", "", `also run a baseline: "sequential" (one at a time, batch 1, as Piper does)`)
	f.BoolVar(&o.asJSON, "json", false, "print exactly one JSON object")
	f.StringVar(&o.perRequest, "per-request", "", "also write one JSON line per measured request to `FILE`: text, phoneme id and sentence counts (null with --url), audio seconds, latency, first audio")
	f.IntVar(&o.queueSize, "queue-size", 0, "sentences the engine holds, queued and running, before a submitter waits (0 = the device's default)")
	f.Var(tuneFlag{&o.tuning, &o.tuneHelp}, "tune", "engine tuning, repeatable; --tune help lists the keys")
	return cmd
}

func runBench(ctx context.Context, s *settings, streams IO, o *benchOptions) error {
	if err := checkInputFile("--texts", o.texts, "a file of texts, one per line"); err != nil {
		return err // before the engine starts or a request goes out
	}
	texts, err := bench.ReadTexts(o.texts)
	if err != nil {
		return err
	}
	con := newConsole(streams, s.quiet())
	load := bench.Load{Concurrency: o.concurrency, Rate: o.rate, Requests: o.requests, Warmup: o.warmup}
	if o.rate > 0 {
		load.Concurrency = 0
	}
	// The settings give the device, threads, precision and warnings; bench the queue and the tuning.
	tuned := func(opts *engine.Options) {
		opts.QueueSize, opts.Tuning = o.queueSize, o.tuning
	}
	var report bench.Report
	if o.url != "" {
		report, err = benchServer(ctx, o, texts, load)
	} else {
		report, err = benchOnce(ctx, s, con, o.voice, texts, load, tuned)
	}
	// A run whose requests all failed, or that was interrupted, writes its records too: their errors are there.
	if o.perRequest != "" && report.PerRequest != nil {
		if werr := writeRequestRecords(o.perRequest, report.PerRequest); werr != nil {
			return errors.Join(err, werr)
		}
	}
	if err != nil && !report.Interrupted {
		if ctx.Err() != nil {
			return errors.New("bench interrupted before any request was measured: no report")
		}
		return err
	}
	if o.compare == "sequential" && !report.Interrupted {
		con.Printf("baseline: the same texts one at a time, as Piper runs them...\n")
		seqLoad := bench.Load{Concurrency: 1, Requests: o.requests, Warmup: o.warmup}
		baseline, err := benchOnce(ctx, s, con, o.voice, texts, seqLoad, sequentialEngine)
		switch {
		case baseline.Interrupted: // compared with the baseline's partial figures, which the report says are
			report.CompareTo(baseline)
		case err != nil && ctx.Err() != nil: // interrupted before the baseline measured anything: the run's report alone
		case err != nil:
			return fmt.Errorf("baseline: %w", err)
		default:
			report.CompareTo(baseline)
		}
	}
	write := report.WriteTable
	if o.asJSON {
		write = report.WriteJSON
	}
	if err := write(streams.Out); err != nil {
		return err
	}
	if ctx.Err() != nil { // Execute exits 130 and prints this; the report says what was done, and that it is partial
		return benchInterrupted(report, o.compare != "")
	}
	if report.Errors > 0 { // figures of a run that lost requests are not the ones asked for: said, and exit 1
		return exitError{code: ExitFailure, err: fmt.Errorf("%d of %d requests failed; first: %s",
			report.Errors, report.Requests, report.FirstError)}
	}
	return nil
}

// benchInterrupted says how far an interrupted run got: an error that is not context.Canceled, so that Execute
// prints it (on stderr: with --json, the report on stdout is the JSON object alone).
func benchInterrupted(report bench.Report, compared bool) error {
	switch {
	case report.Interrupted:
		return fmt.Errorf("bench interrupted after %d of %d requests: the report is of those alone",
			report.Requests, report.RequestsPlanned)
	case report.Baseline != nil && report.Baseline.Interrupted:
		return fmt.Errorf("bench interrupted in its baseline, after %d of %d of its requests: "+
			"the speedup is over those alone", report.Baseline.Requests, report.Baseline.RequestsPlanned)
	case compared && report.Baseline == nil:
		return errors.New("bench interrupted before its baseline measured anything: " +
			"the report is the run's, with no speedup")
	}
	return errors.New("bench interrupted once every request was answered: the report is whole")
}

// checkServerURL refuses a --url that is not http(s)://HOST[:PORT][/PATH] as a usage error, before any work: Go's HTTP
// client would take "localhost:8880" for a URL of the scheme "localhost" and fail every request.
func checkServerURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
		return usageErrorf("--url %q: want http://HOST:PORT (or https://), the speech server's address", raw)
	}
	return nil
}

// benchServer runs one measured load against the speech server at o.url.
func benchServer(ctx context.Context, o *benchOptions, texts []string, load bench.Load) (bench.Report, error) {
	target := bench.Speech{URL: o.url, Voice: o.voice, APIKey: cmp.Or(os.Getenv("TTSGEN_API_KEY"), os.Getenv("OPENAI_API_KEY")),
		Client: bench.NewSpeechClient(max(load.Concurrency, 64))}
	report, err := bench.Run(ctx, texts, load, target.Synth())
	report.Server = o.url
	report.Voice = cmp.Or(o.voice, "alloy")
	return report, err
}

// sequentialEngine makes the engine behave like Piper: the voice's graph as it is (no polyphase rewrite, no tiles;
// one sentence at a time has no padding, so no padding masks either), one session using every core (what ONNX
// Runtime does by default) with its own memory arena, one sentence at a time, batch 1, whole sentences, float32.
func sequentialEngine(o *engine.Options) {
	threads := o.Threads
	if threads <= 0 {
		threads = runtime.NumCPU()
	}
	t := &o.Tuning
	o.Threads, t.ThreadsPerSession = threads, threads
	t.MaxBatch, t.InFlight = 1, 1
	t.Upsampling, t.DecoderWindow, t.TailTile = engine.UpsamplingConvTranspose, -1, -1
	o.Precision = engine.PrecisionFloat32
	t.SessionArenas = true
}

// benchOnce runs one measured load on a fresh runtime (so the baseline and the engine don't share sessions).
func benchOnce(ctx context.Context, s *settings, con *console, voice string, texts []string, load bench.Load,
	tune ...engineTuning) (bench.Report, error) {
	rt, err := s.newRuntime(con, true, tune...)
	if err != nil {
		return bench.Report{}, err
	}
	defer rt.close()
	lv, err := rt.loadVoice(voice)
	if err != nil {
		return bench.Report{}, err
	}
	cfg := lv.Voice.Config
	opt := pipeline.SpeakOptions{Scales: pipeline.Defaults{}.Scales(cfg.Inference, nil, nil, nil)}
	synth := func(ctx context.Context, text string) (bench.Outcome, error) {
		start := time.Now()
		sentences, err := rt.frontend.Sentences(text, cfg)
		if err != nil {
			return bench.Outcome{}, err
		}
		// The first sentence streams (engine.Request.Stream): its first audio is its first chunk, which a voice app
		// could play while the engine decodes the rest (in continuous-batching mode; else its whole audio).
		first := make(chan []float32, 1)
		results := make([]<-chan engine.Result, len(sentences))
		for i, sent := range sentences {
			req := engine.Request{IDs: sent.IDs, Speaker: opt.Speaker, Scales: opt.Scales}
			if i == 0 {
				req.Stream = first
			}
			results[i] = rt.engine.Submit(ctx, lv.Model, req)
		}
		out := bench.Outcome{Sentences: len(sentences)}
		for _, sent := range sentences {
			out.Phonemes += len(sent.IDs)
		}
		for i, ch := range results {
			var res engine.Result
			if i == 0 {
				select {
				case <-first:
					out.FirstAudio = time.Since(start)
					res = <-ch
				case res = <-ch:
					out.FirstAudio = time.Since(start)
				}
			} else {
				res = <-ch
			}
			if res.Err != nil {
				return out, res.Err
			}
			out.AudioSeconds += float64(len(res.Audio)) / float64(cfg.Audio.SampleRate)
		}
		return out, nil
	}
	report, err := bench.Run(ctx, texts, load, synth)
	if err != nil && !report.Interrupted {
		return report, err
	}
	report.Device = string(rt.engine.Device()) // an interrupted run's partial report says where it ran too
	report.Stages = rt.engine.Stats()
	report.Voice = lv.Voice.Name
	return report, err
}

// writeRequestRecords writes records to path as JSON lines, through a temporary file like every output.
func writeRequestRecords(path string, records []bench.RequestRecord) error {
	return atomicfile.Write(path, "", nil, func(f *os.File) error {
		enc := json.NewEncoder(f)
		for _, r := range records {
			if err := enc.Encode(r); err != nil {
				return err
			}
		}
		return nil
	})
}
