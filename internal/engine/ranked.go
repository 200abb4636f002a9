package engine

import (
	"fmt"
	"sync"
	"time"

	"github.com/advancedclimatesystems/gonnx/onnx"
	"github.com/ttsgen/ttsgen/internal/onnxgraph"
	"github.com/ttsgen/ttsgen/internal/ort"
	"google.golang.org/protobuf/proto"
)

// rankedRunner is a graph runner made at its first run, with each of the graph's inputs declared of the rank of the
// tensor it is first given. For a part whose inputs another part computes (a VITS flow reads what the acoustic
// part hands it), only a run says their ranks for sure, and a GPU provider that runs Conv channels last needs
// them declared (onnxgraph.WithRank). A failure to make the runner is every run's error from then on.
type rankedRunner struct {
	graph  *onnx.ModelProto // read only: the runners of one graph share it
	inputs []string
	create func(graph []byte) (graphRunner, error)

	mu     sync.Mutex
	runner graphRunner
	err    error
}

func newRankedRunner(graph *onnx.ModelProto, inputs []string, create func([]byte) (graphRunner, error)) *rankedRunner {
	return &rankedRunner{graph: graph, inputs: inputs, create: create}
}

// get returns the runner, making it for inputs' ranks if it is not made yet.
func (r *rankedRunner) get(inputs []ort.Tensor) (graphRunner, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.runner != nil || r.err != nil {
		return r.runner, r.err
	}
	if len(inputs) != len(r.inputs) {
		return nil, fmt.Errorf("%d inputs for a graph of %d", len(inputs), len(r.inputs))
	}
	ranks := map[string]int{}
	for i, name := range r.inputs {
		ranks[name] = len(inputs[i].Shape)
	}
	ranked := proto.Clone(r.graph).(*onnx.ModelProto)
	onnxgraph.DeclareInputRanks(ranked, ranks)
	graph, err := onnxgraph.Encode(ranked)
	if err != nil {
		r.err = err
		return nil, r.err
	}
	r.runner, r.err = r.create(graph)
	return r.runner, r.err
}

func (r *rankedRunner) Run(inputs []ort.Tensor) ([]ort.Tensor, error) {
	runner, err := r.get(inputs)
	if err != nil {
		return nil, err
	}
	return runner.Run(inputs)
}

func (r *rankedRunner) TryRun(inputs []ort.Tensor) ([]ort.Tensor, error) {
	runner, err := r.get(inputs)
	if err != nil {
		return nil, err
	}
	return runner.TryRun(inputs)
}

func (r *rankedRunner) DeviceTime() time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.runner == nil {
		return 0
	}
	return r.runner.DeviceTime()
}

func (r *rankedRunner) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.runner == nil {
		return nil
	}
	err := r.runner.Close()
	r.runner, r.err = nil, fmt.Errorf("closed")
	return err
}
