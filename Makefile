# ttsgen — see README.md. `make run` sets up, builds and speaks samples/hello.txt; `make test` runs every test.
GO       ?= go
BIN      := bin/ttsgen
FUZZTIME ?= 15s
# Tests that need ONNX Runtime fail (instead of skipping) when it is missing: setup installs it.
export TTSGEN_REQUIRE_ORT := 1
export CGO_ENABLED := 1

.PHONY: all setup build run test fuzz bench train-smoke vet clean

all: build

setup:
	scripts/setup.sh

build: setup
	$(GO) build -buildvcs=auto -o $(BIN) .

run: build
	./$(BIN) synth --file samples/hello.txt -o hello.wav
	@echo "wrote hello.wav"

test: setup
	$(GO) vet ./...
	$(GO) test -count=1 ./...

# Each fuzz target for FUZZTIME; what a fuzzer finds lands in the package's testdata/fuzz and fails `make test` after.
# Go's fuzzer sometimes exits non-zero at the end of its time without a finding ("context deadline exceeded",
# golang/go#51484; seen here in about one run in ten): a run that wrote no new input to testdata/fuzz is tried again,
# up to three runs in all; a real finding always fails at once.
fuzz: setup
	@set -e; for pkg in $$($(GO) list ./...); do \
	  dir=$$($(GO) list -f '{{.Dir}}' $$pkg); \
	  for t in $$(grep -ho '^func Fuzz[A-Za-z0-9_]*' $$dir/*_test.go 2>/dev/null | sed 's/^func //'); do \
	    found() { ls $$dir/testdata/fuzz/$$t 2>/dev/null | wc -l; }; before=$$(found); \
	    for run in 1 2 3; do \
	      echo "fuzz $$pkg $$t ($(FUZZTIME), run $$run)"; \
	      if $(GO) test -run='^$$' -fuzz="^$$t$$" -fuzztime=$(FUZZTIME) $$pkg; then break; fi; \
	      if [ "$$(found)" != "$$before" ]; then echo "fuzz: $$t found a failing input (see $$dir/testdata/fuzz/$$t)"; exit 1; fi; \
	      if [ $$run = 3 ]; then echo "fuzz: $$t failed three times without a finding"; exit 1; fi; \
	      echo "fuzz: $$t stopped without a finding; trying again"; \
	    done; \
	  done; \
	done

# The runs of benchmarks/suite.json for a developer's machine (BENCHMARKS.md says what they gave, and the GPU runs).
bench: build
	$(GO) run ./benchmarks/run -machine dev -bin $(BIN)

# Every mode of the voice's training recipe on a CPU with toy dimensions (training/smoke.sh; needs Debian's
# python3-torch python3-onnx python3-scipy python3-numba festival festvox-us-slt-hts, which `make test` does not).
train-smoke: build
	training/smoke.sh

clean:
	rm -rf bin hello.wav
