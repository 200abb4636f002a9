#!/usr/bin/env bash
# The GPU-machine measurements recorded in BENCHMARKS.md. Run from the repository root on the team's H200 machine
# (the `device` tool), after `scripts/device-bundle.sh` here, carrying .gpukit:   bash scripts/gpu-bench.sh [RUN...]
# Each run is one `ttsgen bench --json`; everything lands in $OUT/gpu-bench.tgz (+ the log on stdout).
set -u
source .gpukit/env.sh >/dev/null 2>&1
results=/tmp/gpu-bench && rm -rf "$results" && mkdir -p "$results"
nvidia-smi -L > "$results/gpu.txt" 2>&1
summary() { python3 -c '
import json,sys
r=json.load(open(sys.argv[1]))
b=r.get("baseline") or {}
print("   speed %.0fx  rtf %.5f  qps %.1f  latency p50/p99 %.0f/%.0f ms  first audio p50/p99 %.0f/%.0f ms  rss %.0f MiB  device %s%s" % (
 r["speed"], r["rtf"], r["qps"], r["latency_ms"]["p50"], r["latency_ms"]["p99"], r["first_audio_ms"]["p50"],
 r["first_audio_ms"]["p99"], r["peak_rss_bytes"]/2**20, r["device"],
 ("  | baseline %.0fx, speedup %.2fx" % (b["speed"], r["speedup"])) if b else ""))' "$1" 2>/dev/null; }
only=" $* "   # run names given as arguments: run just those
run() { # NAME LIMIT_SECONDS BENCH-ARGS...
  local name=$1 limit=$2; shift 2
  if [ "$only" != "  " ] && [[ "$only" != *" $name "* ]]; then return; fi
  echo "== $name: ttsgen bench --json $*"
  local start=$SECONDS
  timeout "$limit" /tmp/gpukit/ttsgen.bin bench --json "$@" > "$results/$name.json" 2> "$results/$name.err"
  echo "   exit $? after $((SECONDS - start)) s"; tail -n 3 "$results/$name.err" | cut -c1-300; summary "$results/$name.json"
}
run webgpu_c64      60 --texts samples/bench.txt --device webgpu --concurrency 64 --requests 400 --warmup 8
run webgpu_first    40 --texts samples/short.txt --device webgpu --concurrency 1 --requests 40 --warmup 4
run cpu_vs_seq      80 --texts samples/bench.txt --device cpu --concurrency 32 --requests 100 --compare sequential
run cpu_1thread     40 --texts samples/bench.txt --device cpu --threads 1 --concurrency 1 --requests 8 --warmup 1
run webgpu_whole    45 --texts samples/bench.txt --device webgpu --concurrency 64 --requests 400 --warmup 8 --decoder-window -1
run webgpu_c256     45 --texts samples/bench.txt --device webgpu --concurrency 256 --requests 1000 --warmup 8
run webgpu_open     40 --texts samples/bench.txt --device webgpu --rate 3.33 --requests 80 --warmup 4
run webgpu_memory   70 --texts samples/bench.txt --device webgpu --concurrency 256 --requests 6000 --warmup 0
run webgpu_whole256 45 --texts samples/bench.txt --device webgpu --concurrency 256 --requests 1000 --warmup 8 --decoder-window -1 --max-batch 32
run webgpu_dbatch128 40 --texts samples/bench.txt --device webgpu --concurrency 256 --requests 1000 --warmup 8 --decoder-batch 128
run webgpu_whole_b64 40 --texts samples/bench.txt --device webgpu --concurrency 256 --requests 1000 --warmup 8 --decoder-window -1 --max-batch 64
run webgpu_memory3k 60 --texts samples/bench.txt --device webgpu --concurrency 256 --requests 3000 --warmup 0 --decoder-window -1 --max-batch 32
run cpu_tps2_vs_seq 80 --texts samples/bench.txt --device cpu --concurrency 32 --requests 100 --compare sequential --threads-per-session 2
tar czf "${OUT:-/tmp}/gpu-bench.tgz" -C "$results" .
