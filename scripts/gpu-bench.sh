#!/usr/bin/env bash
# The GPU-machine measurements recorded in BENCHMARKS.md. Run from the repository root on the team's H200 machine
# (the `device` tool), after `scripts/device-bundle.sh` here, carrying .gpukit:   bash scripts/gpu-bench.sh [RUN...]
# Each run is one `ttsgen bench --json`; everything lands in $OUT/gpu-bench.tgz (+ the log on stdout).
set -u
source .gpukit/env.sh >/dev/null 2>&1
# The device tool brings back only a few files from $OUT, so the results travel as one archive, rewritten after
# every run: a call cut short by its time limit still returns the runs that finished.
results=/tmp/gpu-bench && rm -rf "$results" && mkdir -p "$results"
pack() { tar czf "${OUT:-/tmp}/gpu-bench.tgz" -C "$results" .; }
nvidia-smi -L > "$results/gpu.txt" 2>&1
{ nproc; lscpu; grep -m1 'model name' /proc/cpuinfo; } > "$results/cpu.txt" 2>&1
summary() { python3 -c '
import json,sys
r=json.load(open(sys.argv[1]))
b=r.get("baseline") or {}
print("   speed %.0fx  rtf %.5f  qps %.1f  latency p50/p99 %.0f/%.0f ms  first audio p50/p99 %.0f/%.0f ms  rss %.0f MiB  device %s%s" % (
 r["speed"], r["rtf"], r["qps"], r["latency_ms"]["p50"], r["latency_ms"]["p99"], r["first_audio_ms"]["p50"],
 r["first_audio_ms"]["p99"], r["peak_rss_bytes"]/2**20, r["device"],
 ("  | baseline %.0fx, speedup %.2fx" % (b["speed"], r["speedup"])) if b else ""))' "$1" 2>/dev/null; }
only=" $* "   # run names given as arguments: run just those
gcheap() { # ERR-FILE: with GODEBUG=gctrace=1, the largest Go heap live after a collection and the largest goal
  grep -E '^gc [0-9]' "$1" | sed -E 's/.* ([0-9]+)->([0-9]+)->([0-9]+) MB, ([0-9]+) MB goal.*/\3 \4/' |
    awk 'NF==2 {n++; if ($1>l) l=$1; if ($2>g) g=$2} END {if (n) printf "   Go heap: %d collections, live at most %d MB, goal at most %d MB\n", n, l, g}'
}
memwatch() { # START: every 2 s, seconds since START, the resident KiB of ttsgen and its espeak-ng helpers (the same
  # executable) together, and of the largest process, with what it is (/proc/PID/status: anonymous memory, mapped
  # files, shared memory such as a GPU driver's mappings): flat or growing, and where
  while sleep 2; do
    local pid=$(ps -C ${BIN:-ttsgen.bin} -o pid=,rss= | sort -k2 -n | tail -n 1 | awk '{print $1}')
    ps -C ${BIN:-ttsgen.bin} -o rss= | awk -v t=$((SECONDS - $1)) -v more="$(awk '/^Rss(Anon|File|Shmem):/ {printf " %s", $2}' /proc/${pid:-0}/status 2>/dev/null)" \
      '{s+=$1; if ($1>m) m=$1} END {print t, s, m more}'
  done
}
run() { # NAME LIMIT_SECONDS BENCH-ARGS...   (BIN=ttsgen-prev.bin: the binary device-bundle.sh's PREV built;
  # PREFIX="taskset -c 0": a command to run it under)
  local name=$1 limit=$2; shift 2
  if [ "$only" != "  " ] && [[ "$only" != *" $name "* ]]; then return; fi
  echo "== $name: ttsgen bench --json $*"
  local start=$SECONDS
  # GPU utilisation every 100 ms while the run lasts: is the device busy, or waiting for the host?
  nvidia-smi --query-gpu=utilization.gpu,memory.used --format=csv,noheader,nounits -lms 100 > "$results/$name.gpu.csv" 2>/dev/null &
  local smi=$!
  # Resident memory of ttsgen and its espeak-ng helpers (the same executable), KiB, every 2 s: flat or growing?
  memwatch $start > "$results/$name.rss" &
  local rss=$!
  timeout "$limit" ${PREFIX:-} /tmp/gpukit/${BIN:-ttsgen.bin} bench --json "$@" > "$results/$name.json" 2> "$results/$name.err"
  echo "   exit $? after $((SECONDS - start)) s"; kill $smi $rss 2>/dev/null
  pack
  awk 'NR==1 || NR%10==0 {printf "   rss t=%ss total %d MiB largest %d MiB\n", $1, $2/1024, $3/1024}' "$results/$name.rss" | tail -n 12
  grep -v '^gc [0-9]' "$results/$name.err" | tail -n 3 | cut -c1-300; gcheap "$results/$name.err"; summary "$results/$name.json"
  python3 -c '
import json,sys
r=json.load(open(sys.argv[1])); u=[int(l.split(",")[0]) for l in open(sys.argv[2]) if l.strip()]
st=" ".join("%s %d runs %d items %.1fs (device %.1fs) pad %.0f%%" % (s["stage"],s["runs"],s["items"],s["seconds"],s.get("device_seconds",0),100*(1-s["units"]/max(1,s["padded"]))) for s in r.get("stages") or [])
print("   cpu %.1f s (%.1f cores)  gpu util mean %.0f%% (%d samples)  %s" % (r["cpu_seconds"], r["cpu_seconds"]/r["wall_seconds"], sum(u)/max(1,len(u)), len(u), st))' "$results/$name.json" "$results/$name.gpu.csv" 2>/dev/null
}
check() { # NAME LIMIT_SECONDS TEST-PATTERN: the engine's device-only tests (internal/engine/device_test.go), verbose
  local name=$1 limit=$2 pattern=$3
  if [ "$only" != "  " ] && [[ "$only" != *" $name "* ]]; then return; fi
  echo "== $name: engine.test -test.run $pattern"
  local start=$SECONDS
  (cd internal/engine && TTSGEN_TEST_DEVICE=webgpu TTSGEN_TEST_PIPER_MEDIUM=${pmv:-} timeout "$limit" /tmp/gpukit/engine.test \
    -test.run "$pattern" -test.v -test.count 1) > "$results/$name.txt" 2>&1
  echo "   exit $? after $((SECONDS - start)) s"; pack
  grep -E -- "^(--- |ok|FAIL|PASS)|    --- |Error|SNR" "$results/$name.txt" | cut -c1-200 | tail -n 40
}
probe() { # NAME LIMIT_SECONDS BENCH-PATTERN: internal/engine/device_bench_test.go's benchmarks (decoder and acoustic runs) and
  # ONNX Runtime's profile of the decoder runs, summarised
  local name=$1 limit=$2 pattern=$3
  if [ "$only" != "  " ] && [[ "$only" != *" $name "* ]]; then return; fi
  echo "== $name: engine.test -test.bench $pattern"
  local start=$SECONDS prof=/tmp/probe-prof && rm -rf "$prof" && mkdir -p "$prof"
  (cd internal/engine && TTSGEN_TEST_DEVICE=webgpu TTSGEN_TEST_PIPER_MEDIUM=${pmv:-} TTSGEN_PROBE_PROFILE=$prof/dec timeout "$limit" \
    /tmp/gpukit/engine.test -test.run XXX -test.bench "$pattern" -test.benchtime ${PROBE_RUNS:-20}x) > "$results/$name.txt" 2>&1
  echo "   exit $? after $((SECONDS - start)) s"
  if ls $prof/*.json >/dev/null 2>&1; then
    python3 scripts/ort-profile-summary.py $prof/*.json > "$results/$name.profiles.txt" 2>&1
    python3 -c '
import json,sys,collections,re
# "Api" events are the GPU timestamps of the provider, one per dispatch: the time of the device itself, by operator.
for p in sys.argv[1:]:
    ev=json.load(open(p)); runs=[e["dur"] for e in ev if e.get("name")=="model_run"]; n=max(1,len(runs))
    api=[e for e in ev if e.get("cat")=="Api"]; by=collections.Counter(); cnt=collections.Counter()
    for e in api:
        op=re.split(r"[:\[]",(e.get("args") or {}).get("cache_key","?"))[0]; by[op]+=e["dur"]; cnt[op]+=1
    print("== %s: %d runs, wall %.2f ms/run, GPU %.2f ms/run, %d dispatches/run" % (p.split("/")[-1], n, sum(runs)/n/1000, sum(by.values())/n/1000, len(api)/n))
    for op,us in by.most_common(12): print("   %-28s %8.3f ms/run %6.1f dispatches/run" % (op, us/n/1000, cnt[op]/n))
    # The same by whole program key (its shapes and variant: which Conv of the graph it is).
    byk=collections.Counter(); cntk=collections.Counter()
    for e in api:
        k=(e.get("args") or {}).get("cache_key","?"); byk[k]+=e["dur"]; cntk[k]+=1
    for k,us in byk.most_common(16): print("   %8.3f ms/run %5.1f/run  %s" % (us/n/1000, cntk[k]/n, k[:230]))' $prof/*.json >> "$results/$name.profiles.txt" 2>&1
  fi
  pack; grep -E "^Benchmark|FAIL|panic|Error" "$results/$name.txt" | cut -c1-200 | head -60
}
smoke() { # NAME LIMIT_SECONDS: the commands a user runs, on the GPU, with the results' WAV lengths
  local name=$1 limit=$2
  if [ "$only" != "  " ] && [[ "$only" != *" $name "* ]]; then return; fi
  echo "== $name"
  local out=/tmp/smoke && rm -rf "$out" && mkdir -p "$out"
  head -n 20 samples/bench.txt > "$out/book.txt"
  {
    timeout "$limit" /tmp/gpukit/ttsgen.bin synth --device webgpu --precision fp16 -o "$out/hello16.wav" < samples/hello.txt; echo "synth fp16 exit $?"
    timeout "$limit" /tmp/gpukit/ttsgen.bin synth --device webgpu -o "$out/hello32.wav" < samples/hello.txt; echo "synth fp32 exit $?"
    timeout "$limit" /tmp/gpukit/ttsgen.bin batch "$out/book.txt" -o "$out/pmv" --voice "$pmv" --device webgpu --precision fp16 -q; echo "batch pmv fp16 exit $?"
    cat "$out/pmv/results.jsonl"
    python3 -c '
import wave,sys,glob
for f in sorted(glob.glob(sys.argv[1]+"/**/*.wav", recursive=True)):
    w=wave.open(f); print("%s %.2f s at %d Hz" % (f, w.getnframes()/w.getframerate(), w.getframerate()))' "$out"
  } > "$results/$name.txt" 2>&1
  pack; cat "$results/$name.txt" | cut -c1-200
}
corpus() { # the tenth session's corpora, made once: a prompt set (5,000 one-sentence items) and a book (one text
  # of 2,000 long sentences)
  [ -s /tmp/corpus/prompts.jsonl ] && return
  mkdir -p /tmp/corpus
  python3 -c '
import json
short=[l.strip() for l in open("samples/short.txt") if l.strip()]
with open("/tmp/corpus/prompts.jsonl","w") as f:
    for i in range(5000): f.write(json.dumps({"id":"p%d" % i, "text": short[i % len(short)]})+"\n")
long=[l.strip() for l in open("samples/bench.txt") if l.strip()]
open("/tmp/corpus/book.txt","w").write("\n".join(long*20)+"\n")
with open("/tmp/corpus/prompts100k.jsonl","w") as f:
    for i in range(100000): f.write(json.dumps({"id":"p%d" % i, "text": short[i % len(short)]})+"\n")'
}
batchrun() { # NAME LIMIT BATCH-ARGS...: one `ttsgen batch` (BIN as for run), its summary line, wall time and memory
  local name=$1 limit=$2
  shift 2
  if [ "$only" != "  " ] && [[ "$only" != *" $name "* ]]; then return; fi
  corpus
  echo "== $name: ttsgen batch $*"
  local start=$SECONDS out=/tmp/batch-$name && rm -rf "$out"
  memwatch $start > "$results/$name.rss" &
  local rss=$!
  timeout "$limit" ${PREFIX:-} /tmp/gpukit/${BIN:-ttsgen.bin} batch "$@" -o "$out" > "$results/$name.out" 2> "$results/$name.err"
  echo "   exit $? after $((SECONDS - start)) s"; kill $rss 2>/dev/null
  cp "$out/results.jsonl" "$results/$name.results.jsonl" 2>/dev/null
  pack
  tr '\r' '\n' < "$results/$name.err" | grep -Ev '^ *$|^gc [0-9]' | tail -n 2 | cut -c1-300
  gcheap "$results/$name.err"
  awk 'NR%15==0 {printf "   rss t=%ss total %d MiB\n", $1, $2/1024}' "$results/$name.rss" | tail -n 12
  awk '{if ($2>m) {m=$2; l=$0}} END {split(l, f, " "); printf "   peak resident %d MiB (ttsgen + helpers); largest %d MiB: anon %d, file %d, shmem %d\n", m/1024, f[3]/1024, f[4]/1024, f[5]/1024, f[6]/1024}' "$results/$name.rss"
}
# A random voice with the decoder of Piper's "high" quality (HiFi-GAN V1, 512 channels; training/export.py
# --piper-high-decoder; the second session called it Piper-medium-shaped by mistake), made here with the machine's
# PyTorch when a run names it: for speed only.
pm=/tmp/pm/en_US-pm-medium.onnx
if [[ "$only" == *" pm_"* ]] && [ ! -s "$pm" ]; then
  mkdir -p /tmp/pm && python3 training/export.py --piper-high-decoder --out "$pm" > "$results/pm-export.txt" 2>&1
  tail -n 3 "$results/pm-export.txt"
fi
# A random voice with the whole inference graph of a Piper "medium" voice (training/piper_shape.py: transformer
# text encoder, flow, "resblock 2" HiFi-GAN of 256 channels; 63 MB like Piper's). The pm_ voice above has the
# decoder of Piper's "high" quality, not medium's. Since the ninth session its attention computes the relative
# offsets as Piper's graph does; pmvg, for runs named pmvg_*, is the graph of the sessions before (offsets gathered
# into [L,L,d] tables, batch-independent work).
pmv=/tmp/pmv/en_US-pmvits-medium.onnx
if [[ "$only" == *" pmv_"* || "$only" == *" probe_"* || "$only" == *" dev_check"* || "$only" == "  " ]] && [ ! -s "$pmv" ]; then
  mkdir -p /tmp/pmv && python3 training/piper_shape.py --medium --out "$pmv" > "$results/pmv-export.txt" 2>&1
  grep -v Warning "$results/pmv-export.txt" | tail -n 2 | cut -c1-200
fi
pmvg=/tmp/pmvg/en_US-pmvits-medium.onnx
if [[ "$only" == *" pmvg_"* ]] && [ ! -s "$pmvg" ]; then
  mkdir -p /tmp/pmvg && python3 training/piper_shape.py --medium --gather-attention --out "$pmvg" > "$results/pmvg-export.txt" 2>&1
  grep -v Warning "$results/pmvg-export.txt" | tail -n 2 | cut -c1-200
fi
run webgpu_c64      60 --texts samples/bench.txt --device webgpu --concurrency 64 --requests 400 --warmup 8
run webgpu_first    40 --texts samples/short.txt --device webgpu --concurrency 1 --requests 40 --warmup 4
run cpu_vs_seq      80 --texts samples/bench.txt --device cpu --concurrency 32 --requests 100 --compare sequential
run cpu_1thread     40 --texts samples/bench.txt --device cpu --threads 1 --concurrency 1 --requests 8 --warmup 1
run webgpu_whole    45 --texts samples/bench.txt --device webgpu --concurrency 64 --requests 400 --warmup 8 --tune decoder-window=-1
run webgpu_c256     45 --texts samples/bench.txt --device webgpu --concurrency 256 --requests 1000 --warmup 8
run webgpu_open     40 --texts samples/bench.txt --device webgpu --rate 3.33 --requests 80 --warmup 4
run webgpu_memory   70 --texts samples/bench.txt --device webgpu --concurrency 256 --requests 6000 --warmup 0
run webgpu_whole256 45 --texts samples/bench.txt --device webgpu --concurrency 256 --requests 1000 --warmup 8 --tune decoder-window=-1 --tune max-batch=32
run webgpu_dbatch128 40 --texts samples/bench.txt --device webgpu --concurrency 256 --requests 1000 --warmup 8 --tune decoder-batch=128
run webgpu_whole_b64 40 --texts samples/bench.txt --device webgpu --concurrency 256 --requests 1000 --warmup 8 --tune decoder-window=-1 --tune max-batch=64
run webgpu_memory3k 60 --texts samples/bench.txt --device webgpu --concurrency 256 --requests 3000 --warmup 0 --tune decoder-window=-1 --tune max-batch=32
run cpu_tps2_vs_seq 80 --texts samples/bench.txt --device cpu --concurrency 32 --requests 100 --compare sequential --tune threads-per-session=2
# 2026-12-02, second session: upsampling, provider options, batch budgets, CPU scaling, a Piper-medium-shaped voice.
B="--texts samples/bench.txt"
run cpu_t1        30 $B --device cpu --threads 1 --concurrency 2 --requests 8 --warmup 2 --tune upsampling=polyphase
run cpu_t2        30 $B --device cpu --threads 2 --concurrency 4 --requests 12 --warmup 2 --tune upsampling=polyphase
run cpu_t4        30 $B --device cpu --threads 4 --concurrency 8 --requests 24 --warmup 2 --tune upsampling=polyphase
run cpu_t8        30 $B --device cpu --threads 8 --concurrency 16 --requests 48 --warmup 2 --tune upsampling=polyphase
run cpu_t16       30 $B --device cpu --threads 16 --concurrency 32 --requests 96 --warmup 2 --tune upsampling=polyphase
run cpu_t16_ct    30 $B --device cpu --threads 16 --concurrency 32 --requests 96 --warmup 2 --tune upsampling=convtranspose
run cpu_poly_vs_seq 60 $B --device cpu --concurrency 32 --requests 100 --warmup 2 --compare sequential --tune upsampling=polyphase
W="$B --device webgpu --concurrency 64 --requests 400 --warmup 8"
run wg_ct         40 $W --tune upsampling=convtranspose
run wg_poly       40 $W --tune upsampling=polyphase
run wg_poly_noval 40 $W --tune upsampling=polyphase --tune provider-option=validationMode=disabled
run wg_poly_noval_ep 40 $W --tune upsampling=polyphase --tune provider-option=ep.webgpuexecutionprovider.validationMode=disabled
run wg_poly_512   40 $W --tune upsampling=polyphase --tune max-batch-phonemes=512
run wg_poly_2k    40 $W --tune upsampling=polyphase --tune max-batch-phonemes=2048 --tune max-batch=32
run wg_poly_4k    40 $W --tune upsampling=polyphase --tune max-batch-phonemes=4096 --tune max-batch=32
run wg_poly_if4   40 $W --tune upsampling=polyphase --tune in-flight=4
run wg_win_poly   40 $W --tune upsampling=polyphase --tune decoder-window=64
run wg_win_poly_d64 40 $W --tune upsampling=polyphase --tune decoder-window=64 --tune decoder-batch=64
run wg_win128_poly 40 $W --tune upsampling=polyphase --tune decoder-window=128 --tune decoder-batch=16
F="--texts samples/short.txt --device webgpu --concurrency 1 --requests 40"
run wg_first_poly 40 $F --warmup 4 --tune upsampling=polyphase
run wg_first_poly_seen 60 $F --warmup 40 --tune upsampling=polyphase
run wg_first_ct_seen 60 $F --warmup 40 --tune upsampling=convtranspose
P="$B --voice $pm --device webgpu --concurrency 64 --requests 200 --warmup 8"
run pm_ct         60 $P --tune upsampling=convtranspose
run pm_poly       60 $P --tune upsampling=polyphase
run pm_poly_2k    60 $P --tune upsampling=polyphase --tune max-batch-phonemes=2048 --tune max-batch=32
run pm_win_poly   60 $P --tune upsampling=polyphase --tune decoder-window=64 --tune decoder-batch=32
run pm_cpu_1t     40 $B --voice $pm --device cpu --threads 1 --concurrency 1 --requests 2 --warmup 1
# Second call: where the time goes (ORT profiles), the acoustic part on the CPU, buffer caching, CPU system time.
mkdir -p /tmp/prof
WP="$B --device webgpu --concurrency 64 --requests 100 --warmup 4 --tune upsampling=polyphase"
run wg_prof_whole2k 40 $WP --tune max-batch-phonemes=2048 --tune max-batch=32 --tune ort-profile=/tmp/prof/whole2k
run wg_prof_win   40 $WP --tune decoder-window=64 --tune ort-profile=/tmp/prof/win
run wg_prof_hyb   40 $WP --tune decoder-window=64 --tune acoustic-device=cpu --tune ort-profile=/tmp/prof/hyb
NOVAL="--tune provider-option=ep.webgpuexecutionprovider.validationMode=disabled"
run wg_hyb        40 $W --tune upsampling=polyphase --tune decoder-window=64 --tune acoustic-device=cpu
run wg_hyb_noval  40 $W --tune upsampling=polyphase --tune decoder-window=64 --tune acoustic-device=cpu $NOVAL
run wg_hyb_d16    40 $W --tune upsampling=polyphase --tune decoder-window=64 --tune acoustic-device=cpu --tune decoder-batch=16
run wg_hyb_d48    40 $W --tune upsampling=polyphase --tune decoder-window=64 --tune acoustic-device=cpu --tune decoder-batch=48
run wg_hyb_w128_d16 40 $W --tune upsampling=polyphase --tune decoder-window=128 --tune acoustic-device=cpu --tune decoder-batch=16
run wg_hyb_w128_d24 40 $W --tune upsampling=polyphase --tune decoder-window=128 --tune acoustic-device=cpu --tune decoder-batch=24
run wg_poly_2k_noval 40 $W --tune upsampling=polyphase --tune max-batch-phonemes=2048 --tune max-batch=32 $NOVAL
run wg_poly_3k    40 $W --tune upsampling=polyphase --tune max-batch-phonemes=3072 --tune max-batch=32
run wg_poly_4k_simple 40 $W --tune upsampling=polyphase --tune max-batch-phonemes=4096 --tune max-batch=32 --tune provider-option=ep.webgpuexecutionprovider.storageBufferCacheMode=simple
run wg_hyb_d64_simple 40 $W --tune upsampling=polyphase --tune decoder-window=64 --tune acoustic-device=cpu --tune decoder-batch=64 --tune provider-option=ep.webgpuexecutionprovider.storageBufferCacheMode=simple
SIMPLE="--tune provider-option=ep.webgpuexecutionprovider.storageBufferCacheMode=simple"
run wg_hyb_d32_simple 40 $W --tune upsampling=polyphase --tune decoder-window=64 --tune acoustic-device=cpu --tune decoder-batch=32 $SIMPLE
run wg_hyb_d128_simple 40 $W --tune upsampling=polyphase --tune decoder-window=64 --tune acoustic-device=cpu --tune decoder-batch=128 $SIMPLE
run wg_hyb_w128_d48_simple 40 $W --tune upsampling=polyphase --tune decoder-window=128 --tune acoustic-device=cpu --tune decoder-batch=48 $SIMPLE
run wg_hyb_d64_simple_noval 40 $W --tune upsampling=polyphase --tune decoder-window=64 --tune acoustic-device=cpu --tune decoder-batch=64 $SIMPLE $NOVAL
run wg_poly_2k_simple 40 $W --tune upsampling=polyphase --tune max-batch-phonemes=2048 --tune max-batch=32 $SIMPLE
run pm_hyb_d64_simple 60 $P --tune upsampling=polyphase --tune decoder-window=64 --tune decoder-batch=64 --tune acoustic-device=cpu $SIMPLE
HYB="--tune upsampling=polyphase --tune decoder-window=64 --tune acoustic-device=cpu --tune decoder-batch=64 $SIMPLE $NOVAL"
run wg_first_hyb  40 $F --warmup 4 $HYB
run wg_first_2k   40 $F --warmup 4 --tune upsampling=polyphase --tune max-batch-phonemes=2048 --tune max-batch=32 $NOVAL
run wg_hyb_mem3k  60 $B --device webgpu --concurrency 256 --requests 3000 --warmup 0 $HYB
run pm_hyb        60 $P --tune upsampling=polyphase --tune decoder-window=64 --tune decoder-batch=32 --tune acoustic-device=cpu
run cpu_t16_tps2  30 $B --device cpu --threads 16 --tune threads-per-session=2 --concurrency 32 --requests 96 --warmup 2 --tune upsampling=polyphase
# Third call: the defaults after the second (WebGPU: acoustic part on the CPU, 64-frame decoder windows), and
# what might still beat them.
D="$B --device webgpu --concurrency 64 --requests 400 --warmup 8"
run wg_default    40 $D
run wg_w128_m12_d24 40 $D --tune decoder-window=128 --tune decoder-margin=12 --tune decoder-batch=24
run wg_m12        40 $D --tune decoder-margin=12
run wg_m12_d36    40 $D --tune decoder-margin=12 --tune decoder-batch=36
run wg_nchw       40 $D --tune provider-option=ep.webgpuexecutionprovider.preferredLayout=NCHW
run wg_first_default 40 --texts samples/short.txt --device webgpu --concurrency 1 --requests 40 --warmup 4
run wg_default_256 40 $B --device webgpu --concurrency 256 --requests 1000 --warmup 8
run wg_memory_default 70 $B --device webgpu --concurrency 256 --requests 3000 --warmup 0
run cpu_default_vs_seq 80 $B --device cpu --concurrency 32 --requests 100 --warmup 2 --compare sequential
run pm_default    60 $B --voice $pm --device webgpu --concurrency 64 --requests 200 --warmup 8
# Fourth call: the defaults after the third (128-frame windows, 24 per run), the baseline as Piper runs (the
# voice's own ConvTranspose).
run wg_default4   40 $D
run wg_default4_m12 40 $D --tune decoder-margin=12
run wg_default4_256 60 $B --device webgpu --concurrency 256 --requests 2000 --warmup 8
run wg_first_default4 40 --texts samples/short.txt --device webgpu --concurrency 1 --requests 40 --warmup 4
run cpu_default4_vs_seq 80 $B --device cpu --concurrency 32 --requests 100 --warmup 2 --compare sequential
run wg_m12_256    60 $B --device webgpu --concurrency 256 --requests 2000 --warmup 8 --tune decoder-margin=12
run wg_m12_first  40 --texts samples/short.txt --device webgpu --concurrency 1 --requests 40 --warmup 4 --tune decoder-margin=12
# Third session (2026-12-02 afternoon): a voice with Piper medium's whole graph; padding masks (mask.go) on and off;
# a 100,000-request corpus on the GPU.
V="$B --voice $pmv --device webgpu"
run pmv_default   60 $V --concurrency 64 --requests 400 --warmup 8
run pmv_nomask    60 $V --concurrency 64 --requests 400 --warmup 8 --tune no-padding-masks
run pmv_256       60 $V --concurrency 256 --requests 1000 --warmup 8
run pmv_acoustic_gpu 60 $V --concurrency 64 --requests 400 --warmup 8 --tune acoustic-device=webgpu
run pmv_whole     60 $V --concurrency 64 --requests 400 --warmup 8 --tune decoder-window=-1
run pmv_cpu_vs_seq 100 $B --voice $pmv --device cpu --concurrency 32 --requests 100 --warmup 2 --compare sequential
run wg_default5   40 $D
run wg_nomask5    40 $D --tune no-padding-masks
run wg_10k        90 --texts samples/short.txt --device webgpu --concurrency 256 --requests 10000 --warmup 0
# Third session, second call: a VITS voice's flow cut out of the acoustic part and run on the GPU (whole batches).
run pmv_flow      60 $V --concurrency 64 --requests 400 --warmup 8
run pmv_flow_256  60 $V --concurrency 256 --requests 1000 --warmup 8
run pmv_flow_mb32 60 $V --concurrency 256 --requests 1000 --warmup 8 --tune max-batch=32 --tune max-batch-phonemes=4096
run pmv_flow_gw1_256 60 $V --concurrency 256 --requests 1000 --warmup 8 --tune acoustic-gpu-workers=1
run pmv_flow_gw2_256 60 $V --concurrency 256 --requests 1000 --warmup 8 --tune acoustic-gpu-workers=2
run pmv_flow_w256_256 60 $V --concurrency 256 --requests 1000 --warmup 8 --tune decoder-window=256 --tune decoder-batch=12
run pmv_agpu_256_mb32 60 $V --concurrency 256 --requests 1000 --warmup 8 --tune acoustic-device=webgpu --tune max-batch=32 --tune max-batch-phonemes=8192
run pmv_flow_first 40 --texts samples/short.txt --voice $pmv --device webgpu --concurrency 1 --requests 40 --warmup 4
run pmv_flow_open 40 $V --rate 3.33 --requests 80 --warmup 4
run wg_default6   40 $D
# CPU scaling with decoder windows: 128 frames x 32 KiB at the widest layer keep a session's activations near 4 MiB,
# so 16 sessions may fit the 300 MiB L3 where whole 8-second sentences (22 MiB per tensor) do not.
run cpu_t1b       30 $B --device cpu --threads 1 --concurrency 2 --requests 8 --warmup 2
run cpu_t16b      30 $B --device cpu --threads 16 --concurrency 32 --requests 96 --warmup 2
run cpu_w128_t1   30 $B --device cpu --threads 1 --concurrency 2 --requests 8 --warmup 2 --tune decoder-window=128 --tune decoder-batch=1
run cpu_w128_t16  30 $B --device cpu --threads 16 --concurrency 32 --requests 96 --warmup 2 --tune decoder-window=128 --tune decoder-batch=1
run cpu_w64_t1    30 $B --device cpu --threads 1 --concurrency 2 --requests 8 --warmup 2 --tune decoder-window=64 --tune decoder-batch=2
run cpu_w64_t16   30 $B --device cpu --threads 16 --concurrency 32 --requests 96 --warmup 2 --tune decoder-window=64 --tune decoder-batch=2
# Fourth session: the text part (encoder, durations) on the GPU, float16 flow and decoder, and on-device checks.
check dev_check 240 TestOnDevice
run pmv_base_256   60 $V --concurrency 256 --requests 1000 --warmup 8
run pmv_text_256   60 $V --concurrency 256 --requests 1000 --warmup 8 --tune text-device=webgpu
run pmv_text16_256 60 $V --concurrency 256 --requests 1000 --warmup 8 --tune text-device=webgpu --precision fp16
run pmv_16_256     60 $V --concurrency 256 --requests 1000 --warmup 8 --precision fp16
run pmv_text16_mb32 60 $V --concurrency 256 --requests 1000 --warmup 8 --tune text-device=webgpu --precision fp16 --tune max-batch=32 --tune max-batch-phonemes=4096
run pmv_text16_mb32_d48 60 $V --concurrency 256 --requests 1000 --warmup 8 --tune text-device=webgpu --precision fp16 --tune max-batch=32 --tune max-batch-phonemes=4096 --tune decoder-batch=48
run pmv_text16_mb64_d48 60 $V --concurrency 256 --requests 1000 --warmup 8 --tune text-device=webgpu --precision fp16 --tune max-batch=64 --tune max-batch-phonemes=8192 --tune decoder-batch=48
run pmv_16_d48     60 $V --concurrency 256 --requests 1000 --warmup 8 --precision fp16 --tune decoder-batch=48
run pmv_16_mb32_d48 60 $V --concurrency 256 --requests 1000 --warmup 8 --precision fp16 --tune decoder-batch=48 --tune max-batch=32 --tune max-batch-phonemes=4096
# Fourth session, third call: the text part on the GPU when it is free (--tune text-device=auto), float16, bigger runs.
F="$V --concurrency 256 --requests 1000 --warmup 8 --precision fp16 --tune max-batch=32 --tune max-batch-phonemes=4096 --tune decoder-batch=48"
run pmv_a_cpu      60 $F --tune text-device=cpu
run pmv_a_gpu      60 $F --tune text-device=webgpu
run pmv_a_auto     60 $F --tune text-device=auto
run pmv_a_auto_mb64 60 $F --tune text-device=auto --tune max-batch=64 --tune max-batch-phonemes=8192
run pmv_a_auto_fp32 60 $V --concurrency 256 --requests 1000 --warmup 8 --tune max-batch=32 --tune max-batch-phonemes=4096 --tune text-device=auto
run pmv_a_auto_first 40 --texts samples/short.txt --voice $pmv --device webgpu --concurrency 1 --requests 40 --warmup 4 --tune text-device=auto --precision fp16
run wg_def16_d48   60 $B --device webgpu --concurrency 256 --requests 2000 --warmup 8 --precision fp16 --tune decoder-batch=48
run wg_def16_d48_auto 60 $B --device webgpu --concurrency 256 --requests 2000 --warmup 8 --precision fp16 --tune decoder-batch=48 --tune text-device=auto
run pmv_a_auto_3k  90 $F --tune text-device=auto --requests 3000
# Fourth session, fourth call: where the GPU's time goes (device seconds per stage), and fewer, bigger decoder runs.
G="$V --concurrency 256 --requests 1000 --warmup 8 --precision fp16 --tune max-batch=32 --tune max-batch-phonemes=4096"
run pmv_b_auto     60 $G
run pmv_b_d64      60 $G --tune decoder-batch=64
run pmv_b_w256     60 $G --tune decoder-window=256 --tune decoder-batch=24
run pmv_b_w192     60 $G --tune decoder-window=192 --tune decoder-batch=32
run pmv_b_fp32     60 $V --concurrency 256 --requests 1000 --warmup 8 --tune max-batch=32 --tune max-batch-phonemes=4096
run pmv_b_defaults 60 $V --concurrency 256 --requests 1000 --warmup 8
run wg_b_def16_mb32 60 $B --device webgpu --concurrency 256 --requests 2000 --warmup 8 --precision fp16 --tune max-batch=32 --tune max-batch-phonemes=4096
run wg_b_def16     60 $B --device webgpu --concurrency 256 --requests 2000 --warmup 8 --precision fp16
# Fifth call: auto takes the GPU only when nobody holds or waits for it (deviceLock.TryLockIdle).
run pmv_c_auto     60 $G
run pmv_c_cpu      60 $G --tune text-device=cpu
run pmv_c_16       60 $V --concurrency 256 --requests 1000 --warmup 8 --precision fp16
run pmv_c_auto_d64 60 $G --tune decoder-batch=64
run pmv_c_defaults 60 $V --concurrency 256 --requests 1000 --warmup 8
run pmv_c_first    40 --texts samples/short.txt --voice $pmv --device webgpu --concurrency 1 --requests 40 --warmup 4 --precision fp16
run pmv_c_auto_3k  90 $G --requests 3000
# Sixth call: the new defaults (text part auto, 32-sentence acoustic batches, 64 windows per float16 decoder run).
run pmv_d_16       90 $V --concurrency 256 --requests 3000 --warmup 8 --precision fp16
run pmv_d_32       60 $V --concurrency 256 --requests 1000 --warmup 8
run pmv_d_first16  40 --texts samples/short.txt --voice $pmv --device webgpu --concurrency 1 --requests 40 --warmup 4 --precision fp16
run pmv_d_first32  40 --texts samples/short.txt --voice $pmv --device webgpu --concurrency 1 --requests 40 --warmup 4
run wg_d_def       60 $B --device webgpu --concurrency 256 --requests 2000 --warmup 8
run wg_d_def16     60 $B --device webgpu --concurrency 256 --requests 2000 --warmup 8 --precision fp16
# Seventh call: the commands a user runs, on the GPU; one more sample of the float16 defaults.
smoke smoke_cli 60
run pmv_e_16       60 $V --concurrency 256 --requests 1000 --warmup 8 --precision fp16
run pmv_text16_w256 60 $V --concurrency 256 --requests 1000 --warmup 8 --tune text-device=webgpu --precision fp16 --tune decoder-window=256 --tune decoder-batch=12
run pmv_text_first 40 --texts samples/short.txt --voice $pmv --device webgpu --concurrency 1 --requests 40 --warmup 4 --tune text-device=webgpu
run pmv_text16_first 40 --texts samples/short.txt --voice $pmv --device webgpu --concurrency 1 --requests 40 --warmup 4 --tune text-device=webgpu --precision fp16
run wg_default7    60 $B --device webgpu --concurrency 256 --requests 2000 --warmup 8
run wg_default7_16 60 $B --device webgpu --concurrency 256 --requests 2000 --warmup 8 --precision fp16
run pmv_text16_2k  90 $V --concurrency 256 --requests 3000 --warmup 8 --tune text-device=webgpu --precision fp16
# Fifth session, first call: a WebGPU run taken apart (transfers alone; decoder runs with and without their audio
# coming back; ONNX Runtime's profile of them), and the defaults for reference.
probe probe_dec 240 'DeviceTransfers|DeviceDecoder'
# Second call: the decoder's GPU time by operator; masks and layout.
probe probe_dec2 240 'DeviceDecoder'
run pmv_f_16       60 $V --concurrency 256 --requests 1000 --warmup 8 --precision fp16
run pmv_f_32       60 $V --concurrency 256 --requests 1000 --warmup 8
# Fifth session, third call (commit 06dedd4: planned outputs, strips): correctness on the device, then the defaults.
check dev_check_g 240 TestOnDevice
run pmv_g_16       60 $V --concurrency 256 --requests 1000 --warmup 8 --precision fp16
run pmv_g_32       60 $V --concurrency 256 --requests 1000 --warmup 8
run pmv_g_16_3k    90 $V --concurrency 256 --requests 3000 --warmup 8 --precision fp16
run pmv_g_first16  40 --texts samples/short.txt --voice $pmv --device webgpu --concurrency 1 --requests 40 --warmup 4 --precision fp16
run wg_g_def       60 $B --device webgpu --concurrency 256 --requests 2000 --warmup 8
run wg_g_def16     60 $B --device webgpu --concurrency 256 --requests 2000 --warmup 8 --precision fp16
# Fourth call (float16 inputs for the decoder, float16 latents for the flow; --tune no-strips): what strips, float16
# transfers and 256-frame windows (now that a sentence's last window is not mostly padding) buy, in one call.
probe probe_dec3 120 'DeviceDecoder/fp16/(audio|prealloc|half-in)'
run pmv_h_16        60 $V --concurrency 256 --requests 1000 --warmup 8 --precision fp16
run pmv_h_16_nostr  60 $V --concurrency 256 --requests 1000 --warmup 8 --precision fp16 --tune no-strips
run pmv_h_16_w256   60 $V --concurrency 256 --requests 1000 --warmup 8 --precision fp16 --tune decoder-window=256 --tune decoder-batch=32
run pmv_h_32        60 $V --concurrency 256 --requests 1000 --warmup 8
run pmv_h_32_nostr  60 $V --concurrency 256 --requests 1000 --warmup 8 --tune no-strips
run pmv_h_32_w256   60 $V --concurrency 256 --requests 1000 --warmup 8 --tune decoder-window=256 --tune decoder-batch=12
run pmv_h_16_3k     90 $V --concurrency 256 --requests 3000 --warmup 8 --precision fp16
run pmv_h_16w_3k    90 $V --concurrency 256 --requests 3000 --warmup 8 --precision fp16 --tune decoder-window=256 --tune decoder-batch=32
run wg_h_def16      60 $B --device webgpu --concurrency 256 --requests 2000 --warmup 8 --precision fp16
# Fifth call (float16 transfers reverted): strips and 256-frame windows in float16, the defaults once more.
run pmv_i_16        60 $V --concurrency 256 --requests 1000 --warmup 8 --precision fp16
run pmv_i_16_nostr  60 $V --concurrency 256 --requests 1000 --warmup 8 --precision fp16 --tune no-strips
run pmv_i_16_w256   60 $V --concurrency 256 --requests 1000 --warmup 8 --precision fp16 --tune decoder-window=256 --tune decoder-batch=32
run pmv_i_16_3k     90 $V --concurrency 256 --requests 3000 --warmup 8 --precision fp16
run pmv_i_32        60 $V --concurrency 256 --requests 1000 --warmup 8
run pmv_i_first16   40 --texts samples/short.txt --voice $pmv --device webgpu --concurrency 1 --requests 40 --warmup 4 --precision fp16
run wg_i_def        60 $B --device webgpu --concurrency 256 --requests 2000 --warmup 8
# Sixth call (flow outputs planned from its input's shape): correctness on the device, the defaults.
check dev_check_j 200 TestOnDevice
run pmv_j_16        60 $V --concurrency 256 --requests 1000 --warmup 8 --precision fp16
run pmv_j_16_3k     90 $V --concurrency 256 --requests 3000 --warmup 8 --precision fp16
run pmv_j_32        60 $V --concurrency 256 --requests 1000 --warmup 8
# Sixth session, first call: the polyphase interleave written for channels-last Convs, and the split graphs' inputs
# declared of rank 3 (ONNX Runtime then keeps WebGPU's layout through the flow and the decoder), against the build
# before them (BIN=ttsgen-prev.bin, commit given to device-bundle.sh as PREV). Both binaries embed the tiny voice
# in this call, to fit the bundle: the default voice comes from the tree.
DV="--voice internal/voices/default/en_US-ttsgen-medium.onnx"
run auto_k          30 $B $DV --requests 20 --warmup 0   # --device auto must pick webgpu here (a GPU device node)
run pmv_k_16        60 $V --concurrency 256 --requests 1000 --warmup 8 --precision fp16
BIN=ttsgen-prev.bin run pmv_k_16_prev 60 $V --concurrency 256 --requests 1000 --warmup 8 --precision fp16
run pmv_k_32        60 $V --concurrency 256 --requests 1000 --warmup 8
BIN=ttsgen-prev.bin run pmv_k_32_prev 60 $V --concurrency 256 --requests 1000 --warmup 8
check dev_check_k 200 TestOnDevice
run pmv_k_16_3k     90 $V --concurrency 256 --requests 3000 --warmup 8 --precision fp16
run pmv_k_first16   40 --texts samples/short.txt --voice $pmv --device webgpu --concurrency 1 --requests 40 --warmup 4 --precision fp16
run pmv_k_first32   40 --texts samples/short.txt --voice $pmv --device webgpu --concurrency 1 --requests 40 --warmup 4
run wg_k_def        60 $B $DV --device webgpu --concurrency 256 --requests 2000 --warmup 8
BIN=ttsgen-prev.bin run wg_k_def_prev 60 $B $DV --device webgpu --concurrency 256 --requests 2000 --warmup 8
run wg_k_def16      60 $B $DV --device webgpu --concurrency 256 --requests 2000 --warmup 8 --precision fp16
PROBE_RUNS=10 probe probe_dec_k 120 'DeviceDecoder/fp16/audio'
# CPU scaling: one session with the whole process on one core (PREFIX=taskset), as before (its helpers and Go's
# own work on the other cores), and 16 sessions.
PREFIX="taskset -c 0" run cpu_k_t1pin 40 $B $DV --device cpu --threads 1 --concurrency 2 --requests 8 --warmup 2
run cpu_k_t1        40 $B $DV --device cpu --threads 1 --concurrency 2 --requests 8 --warmup 2
run cpu_k_t16       40 $B $DV --device cpu --threads 16 --concurrency 32 --requests 96 --warmup 2
# Second call: with the layout Transposes gone, do bigger decoder runs or 256-frame windows pay now; the text part
# on the CPU only (the device is the limit: its runs hold it 95% of the time); the defaults again for the noise.
run pmv_l_16        60 $V --concurrency 256 --requests 1000 --warmup 8 --precision fp16
run pmv_l_16_d96    60 $V --concurrency 256 --requests 1000 --warmup 8 --precision fp16 --tune decoder-batch=96
run pmv_l_16_w256   60 $V --concurrency 256 --requests 1000 --warmup 8 --precision fp16 --tune decoder-window=256 --tune decoder-batch=32
run pmv_l_16_tcpu   60 $V --concurrency 256 --requests 1000 --warmup 8 --precision fp16 --tune text-device=cpu
run pmv_l_32_w256   60 $V --concurrency 256 --requests 1000 --warmup 8 --tune decoder-window=256 --tune decoder-batch=12
run pmv_l_32        60 $V --concurrency 256 --requests 1000 --warmup 8
run pmv_l_first16_tcpu 40 --texts samples/short.txt --voice $pmv --device webgpu --concurrency 1 --requests 40 --warmup 4 --precision fp16 --tune text-device=cpu
# Third call (commit 'WebGPU's decoder windows are 256 frames'): the new defaults against 128-frame windows.
W128="--tune decoder-window=128"
check dev_check_m 200 TestOnDevice
run pmv_m_16        60 $V --concurrency 256 --requests 1000 --warmup 8 --precision fp16
run pmv_m_16_w128   60 $V --concurrency 256 --requests 1000 --warmup 8 --precision fp16 $W128
run pmv_m_32        60 $V --concurrency 256 --requests 1000 --warmup 8
run pmv_m_32_w128   60 $V --concurrency 256 --requests 1000 --warmup 8 $W128
run pmv_m_16_3k     90 $V --concurrency 256 --requests 3000 --warmup 8 --precision fp16
run pmv_m_16_3k_w128 90 $V --concurrency 256 --requests 3000 --warmup 8 --precision fp16 $W128
run pmv_m_first16   40 --texts samples/short.txt --voice $pmv --device webgpu --concurrency 1 --requests 40 --warmup 4 --precision fp16
run pmv_m_first16_w128 40 --texts samples/short.txt --voice $pmv --device webgpu --concurrency 1 --requests 40 --warmup 4 --precision fp16 $W128
run wg_m_def        60 $B --device webgpu --concurrency 256 --requests 2000 --warmup 8
run wg_m_def_w128   60 $B --device webgpu --concurrency 256 --requests 2000 --warmup 8 $W128
# Seventh session, one call (BIN=ttsgen-prev.bin: the session's first commit, f93a5e7, before LayerNorm fusion;
# both binaries embed the tiny voice, the default voice comes from the tree as $DV). Correctness on the device (the
# text part with fused LayerNorms against the CPU's); first audio, with each request's record; the defaults; the
# decoder's GPU time by program; the machine's own scaling beside the CPU engine's.
REQ() { echo "--per-request $results/$1.requests.jsonl"; }
profiled() { # NAME LIMIT_SECONDS BENCH-ARGS...: a run with ONNX Runtime's profiler on, its profiles summarised
  local name=$1 prof=/tmp/prof_$1
  rm -rf "$prof" && mkdir -p "$prof"
  run "$@" --ort-profile "$prof/p"
  if ls "$prof"/*.json >/dev/null 2>&1; then
    python3 scripts/ort-profile-summary.py "$prof"/*.json > "$results/$name.profiles.txt" 2>&1; rm -rf "$prof"; pack
  fi
}
check dev_check_n 150 TestOnDevice
run pmv_n_first32   40 --texts samples/short.txt --voice $pmv --device webgpu --concurrency 1 --requests 100 --warmup 4 $(REQ pmv_n_first32)
BIN=ttsgen-prev.bin run pmv_n_first32_prev 40 --texts samples/short.txt --voice $pmv --device webgpu --concurrency 1 --requests 100 --warmup 4 $(REQ pmv_n_first32_prev)
run pmv_n_first16   40 --texts samples/short.txt --voice $pmv --device webgpu --concurrency 1 --requests 100 --warmup 4 --precision fp16 $(REQ pmv_n_first16)
BIN=ttsgen-prev.bin run pmv_n_first16_prev 40 --texts samples/short.txt --voice $pmv --device webgpu --concurrency 1 --requests 100 --warmup 4 --precision fp16 $(REQ pmv_n_first16_prev)
# Where a one-sentence request's time goes: each session's runs, from ONNX Runtime's profiler.
profiled pmv_n_first32_prof 40 --texts samples/short.txt --voice $pmv --device webgpu --concurrency 1 --requests 20 --warmup 4
run pmv_n_32        60 $V --concurrency 256 --requests 1000 --warmup 8
BIN=ttsgen-prev.bin run pmv_n_32_prev 60 $V --concurrency 256 --requests 1000 --warmup 8
run pmv_n_16        60 $V --concurrency 256 --requests 1000 --warmup 8 --precision fp16
BIN=ttsgen-prev.bin run pmv_n_16_prev 60 $V --concurrency 256 --requests 1000 --warmup 8 --precision fp16
run wg_n_def        60 $B $DV --device webgpu --concurrency 256 --requests 2000 --warmup 8
PROBE_RUNS=10 probe probe_dec_n 150 'DeviceDecoder/fp(32|16)/(audio|post4|profile)'
PROBE_RUNS=1 probe probe_cpu_n 90 'MachineScaling'
run cpu_n_t1        40 $B $DV --device cpu --threads 1 --concurrency 2 --requests 8 --warmup 2
run cpu_n_t16       40 $B $DV --device cpu --threads 16 --concurrency 32 --requests 96 --warmup 2
# Second call (commit: warm-up on batches of one and two sentences): first audio and the defaults against the
# session's first commit again (each pair in the other order this time); the text part's and flow's runs taken apart.
run pmv_o_first32   40 --texts samples/short.txt --voice $pmv --device webgpu --concurrency 1 --requests 100 --warmup 4 $(REQ pmv_o_first32)
BIN=ttsgen-prev.bin run pmv_o_first32_prev 40 --texts samples/short.txt --voice $pmv --device webgpu --concurrency 1 --requests 100 --warmup 4 $(REQ pmv_o_first32_prev)
run pmv_o_first16   40 --texts samples/short.txt --voice $pmv --device webgpu --concurrency 1 --requests 100 --warmup 4 --precision fp16 $(REQ pmv_o_first16)
BIN=ttsgen-prev.bin run pmv_o_first16_prev 40 --texts samples/short.txt --voice $pmv --device webgpu --concurrency 1 --requests 100 --warmup 4 --precision fp16 $(REQ pmv_o_first16_prev)
profiled pmv_o_first32_prof 40 --texts samples/short.txt --voice $pmv --device webgpu --concurrency 1 --requests 20 --warmup 4
BIN=ttsgen-prev.bin run pmv_o_32_prev 60 $V --concurrency 256 --requests 1000 --warmup 8
run pmv_o_32        60 $V --concurrency 256 --requests 1000 --warmup 8
BIN=ttsgen-prev.bin run pmv_o_16_prev 60 $V --concurrency 256 --requests 1000 --warmup 8 --precision fp16
run pmv_o_16        60 $V --concurrency 256 --requests 1000 --warmup 8 --precision fp16
PROBE_RUNS=10 probe probe_ac_o 150 'DeviceAcoustic'
PROBE_RUNS=1 probe probe_cpu_o 60 'MachineScaling/(arith|conv-l2)'
# Third call (additions of zeros dropped from GPU graphs; warm-up on 3, 4 and 32 ids), against 3d20143 as
# ttsgen-prev.bin; the machine-scaling probe with its Convs on tensors made once.
check dev_check_p 100 TestOnDevice
run pmv_p_32        60 $V --concurrency 256 --requests 1000 --warmup 8
BIN=ttsgen-prev.bin run pmv_p_32_prev 60 $V --concurrency 256 --requests 1000 --warmup 8
BIN=ttsgen-prev.bin run pmv_p_32_prev2 60 $V --concurrency 256 --requests 1000 --warmup 8
run pmv_p_32b       60 $V --concurrency 256 --requests 1000 --warmup 8
run pmv_p_16        60 $V --concurrency 256 --requests 1000 --warmup 8 --precision fp16
BIN=ttsgen-prev.bin run pmv_p_16_prev 60 $V --concurrency 256 --requests 1000 --warmup 8 --precision fp16
run pmv_p_first32   40 --texts samples/short.txt --voice $pmv --device webgpu --concurrency 1 --requests 100 --warmup 4 $(REQ pmv_p_first32)
run wg_p_def        60 $B $DV --device webgpu --concurrency 256 --requests 2000 --warmup 8
PROBE_RUNS=10 probe probe_ac_p 150 'DeviceAcoustic/plain'
PROBE_RUNS=1 probe probe_cpu_p 90 'MachineScaling'
run cpu_p_t1        40 $B $DV --device cpu --threads 1 --concurrency 2 --requests 8 --warmup 2
run cpu_p_t16       40 $B $DV --device cpu --threads 16 --concurrency 32 --requests 96 --warmup 2
# Fourth call (commit: tiled decoder tails on the CPU): CPU scaling with tiles (the new default) and without
# (--tune tail-tile=-1), and the tile size; the default voice (masks itself) and the Piper medium graph (does not).
NOTILE="--tune tail-tile=-1"
run cpu_q_t1        40 $B $DV --device cpu --threads 1 --concurrency 2 --requests 8 --warmup 2
run cpu_q_t1_whole  40 $B $DV --device cpu --threads 1 --concurrency 2 --requests 8 --warmup 2 $NOTILE
run cpu_q_t16       40 $B $DV --device cpu --threads 16 --concurrency 32 --requests 96 --warmup 2
run cpu_q_t16_whole 40 $B $DV --device cpu --threads 16 --concurrency 32 --requests 96 --warmup 2 $NOTILE
run cpu_q_t16_128   40 $B $DV --device cpu --threads 16 --concurrency 32 --requests 96 --warmup 2 --tune tail-tile=128
run cpu_q_t16_512   40 $B $DV --device cpu --threads 16 --concurrency 32 --requests 96 --warmup 2 --tune tail-tile=512
run cpu_q_t1_b      40 $B $DV --device cpu --threads 1 --concurrency 2 --requests 8 --warmup 2
run cpu_q_t1_whole_b 40 $B $DV --device cpu --threads 1 --concurrency 2 --requests 8 --warmup 2 $NOTILE
run cpu_q_vs_seq    90 $B $DV --device cpu --threads 16 --concurrency 32 --requests 96 --warmup 2 --compare sequential
run pmv_q_cpu_t1    60 $B --voice $pmv --device cpu --threads 1 --concurrency 2 --requests 6 --warmup 1
run pmv_q_cpu_t1_whole 60 $B --voice $pmv --device cpu --threads 1 --concurrency 2 --requests 6 --warmup 1 $NOTILE
run pmv_q_cpu_t16   60 $B --voice $pmv --device cpu --threads 16 --concurrency 32 --requests 64 --warmup 2
run pmv_q_cpu_t16_whole 60 $B --voice $pmv --device cpu --threads 16 --concurrency 32 --requests 64 --warmup 2 $NOTILE
# Fifth call: the same CPU comparison with three times the requests (the fourth call's one-session runs, 8
# requests, differed by 20% between two runs of one setting).
run cpu_r_t1        60 $B $DV --device cpu --threads 1 --concurrency 2 --requests 24 --warmup 2
run cpu_r_t1_whole  60 $B $DV --device cpu --threads 1 --concurrency 2 --requests 24 --warmup 2 $NOTILE
PREFIX="taskset -c 0" run cpu_r_t1pin 60 $B $DV --device cpu --threads 1 --concurrency 2 --requests 24 --warmup 2
run cpu_r_t16       40 $B $DV --device cpu --threads 16 --concurrency 32 --requests 288 --warmup 2
run cpu_r_t16_whole 40 $B $DV --device cpu --threads 16 --concurrency 32 --requests 288 --warmup 2 $NOTILE
# Sixth call: the session's last commit (after review fixes), what a user runs, on the GPU and the CPU.
check dev_check_s 100 TestOnDevice
smoke smoke_cli_s 90
run cpu_s_t16       40 $B $DV --device cpu --threads 16 --concurrency 32 --requests 288 --warmup 2
run pmv_s_first32   40 --texts samples/short.txt --voice $pmv --device webgpu --concurrency 1 --requests 100 --warmup 4 $(REQ pmv_s_first32)
# Seventh call: 512-frame decoder windows (half the margin frames of 256) at the same frames per run.
W512="--tune decoder-window=512"
run pmv_t_32        60 $V --concurrency 256 --requests 1000 --warmup 8
run pmv_t_32_w512   60 $V --concurrency 256 --requests 1000 --warmup 8 $W512
run pmv_t_16        60 $V --concurrency 256 --requests 1000 --warmup 8 --precision fp16
run pmv_t_16_w512   60 $V --concurrency 256 --requests 1000 --warmup 8 --precision fp16 $W512
run pmv_t_32_w512b  60 $V --concurrency 256 --requests 1000 --warmup 8 $W512
run pmv_t_32b       60 $V --concurrency 256 --requests 1000 --warmup 8
run pmv_t_first32_w512 40 --texts samples/short.txt --voice $pmv --device webgpu --concurrency 1 --requests 100 --warmup 4 $W512
# Eighth session, first call: TestOnDevice with 512-frame windows on the H200; ONNX Runtime's WebGPU option
# maxNumPendingDispatches (dispatches encoded before a submit, default 16) and more float32 windows per run (the
# buffer cache's 160 MiB bucket allows 9 of 512 frames); where the CPU's 16 sessions lose speed, head against tail
# (the stages "head" and "tail" of a tiled voice), and whether Go's garbage collector takes a share.
PD="--tune provider-option=ep.webgpuexecutionprovider.maxNumPendingDispatches"
check dev_check_u 150 TestOnDevice
run pmv_u_32        60 $V --concurrency 256 --requests 1000 --warmup 8
run pmv_u_32_pd4    60 $V --concurrency 256 --requests 1000 --warmup 8 $PD=4
run pmv_u_32_pd64   60 $V --concurrency 256 --requests 1000 --warmup 8 $PD=64
run pmv_u_32_pd256  60 $V --concurrency 256 --requests 1000 --warmup 8 $PD=256
run pmv_u_32_d8     60 $V --concurrency 256 --requests 1000 --warmup 8 --tune decoder-batch=8
run pmv_u_32_d9     60 $V --concurrency 256 --requests 1000 --warmup 8 --tune decoder-batch=9
run pmv_u_32b       60 $V --concurrency 256 --requests 1000 --warmup 8
run cpu_u_t1        60 $B $DV --device cpu --threads 1 --concurrency 2 --requests 24 --warmup 2
run cpu_u_t16       40 $B $DV --device cpu --threads 16 --concurrency 32 --requests 288 --warmup 2
PREFIX="env GOGC=off" run cpu_u_t16_gcoff 40 $B $DV --device cpu --threads 16 --concurrency 32 --requests 288 --warmup 2
# Second call (commit 7dbeab8, reverted after it; --worker-threads needs its binary: CPU workers locked to their
# OS threads): CPU sessions free, locked and pinned, one and 16; float32 on the Piper medium graph over 3,000
# requests (the 1,000-request runs held the device 83-91% of their ~10 s).
for wt in free locked pinned; do
  run cpu_v_t1_$wt  60 $B $DV --device cpu --threads 1 --concurrency 2 --requests 24 --warmup 2 --worker-threads $wt
  run cpu_v_t16_$wt 40 $B $DV --device cpu --threads 16 --concurrency 32 --requests 288 --warmup 2 --worker-threads $wt
done
run cpu_v_t16_locked_b 40 $B $DV --device cpu --threads 16 --concurrency 32 --requests 288 --warmup 2 --worker-threads locked
run cpu_v_t16_free_b   40 $B $DV --device cpu --threads 16 --concurrency 32 --requests 288 --warmup 2 --worker-threads free
run pmv_v_32_3k        90 $V --concurrency 256 --requests 3000 --warmup 8
run pmv_v_32_3k_d8     90 $V --concurrency 256 --requests 3000 --warmup 8 --tune decoder-batch=8
run pmv_v_32_3k_locked 90 $V --concurrency 256 --requests 3000 --warmup 8 --worker-threads locked
run pmv_v_16_3k        90 $V --concurrency 256 --requests 3000 --warmup 8 --precision fp16
# (Locked and pinned worker threads measured no different from free ones on the CPU: the option was reverted.)
# Third call: a WebGPU engine's 16 workers run the text part on their CPU sessions and wait for the device for the
# flow and decoder runs, so a few of them always wait (11.8 of 16 cores busy) while the device idles 12-13% of a
# 3,000-request run: more workers than cores.
run pmv_w_32_3k      90 $V --concurrency 256 --requests 3000 --warmup 8
run pmv_w_32_3k_t20  90 $V --concurrency 256 --requests 3000 --warmup 8 --threads 20
run pmv_w_32_3k_t24  90 $V --concurrency 256 --requests 3000 --warmup 8 --threads 24
run pmv_w_32_3k_t32  90 $V --concurrency 256 --requests 3000 --warmup 8 --threads 32
run pmv_w_32_3k_b    90 $V --concurrency 256 --requests 3000 --warmup 8
run pmv_w_32_3k_t24b 90 $V --concurrency 256 --requests 3000 --warmup 8 --threads 24
# Fourth call: where the text part's CPU runs spend their time (each of them ~100 ms a sentence on one core,
# the CPU's share of the work that keeps the device fed).
profiled pmv_x_32_prof 90 $V --concurrency 256 --requests 400 --warmup 8
# Fifth call (commit 05c4f94, reverted after it: dedicated GPU workers, 2 by default, ran the flows and decoder
# windows, and the other workers the acoustic parts on the CPU without waiting for the device): against every
# worker running its batch's flow itself (--gpu-workers -1, as before) and the session's first commit
# (ttsgen-prev.bin); fewer CPU workers; first audio; the default voice; a corpus-sized run. --gpu-workers needs
# that commit's binary.
run pmv_y_32_3k      90 $V --concurrency 256 --requests 3000 --warmup 8
run pmv_y_32_3k_old  90 $V --concurrency 256 --requests 3000 --warmup 8 --gpu-workers -1
run pmv_y_32_3k_t14  90 $V --concurrency 256 --requests 3000 --warmup 8 --threads 14
run pmv_y_16_3k      90 $V --concurrency 256 --requests 3000 --warmup 8 --precision fp16
run pmv_y_first32    40 --texts samples/short.txt --voice $pmv --device webgpu --concurrency 1 --requests 100 --warmup 4
run wg_y_def         60 $B $DV --device webgpu --concurrency 256 --requests 2000 --warmup 8
BIN=ttsgen-prev.bin run wg_y_def_prev 60 $B $DV --device webgpu --concurrency 256 --requests 2000 --warmup 8
run pmv_y_32_6k     150 $V --concurrency 256 --requests 6000 --warmup 8
# Ninth session, first call: the Piper medium graph with Piper's own relative attention (pmv) against the graph
# of the sessions before (pmvg); short decoder runs whenever the device is idle (--eager-windows, off by default)
# against the defaults (8 float32 windows per run since commit 7a0f861); and a batch's text part run on the CPU a
# piece at a time (--tune text-piece=N sentences), the rest handed to the GPU once it idles.
run pmvg_z_32_3k         90 $B --voice $pmvg --device webgpu --concurrency 256 --requests 3000 --warmup 8
for i in a b; do
  p=4 && [ $i = b ] && p=2
  run pmv_z_32_3k_$i       90 $V --concurrency 256 --requests 3000 --warmup 8
  run pmv_z_32_3k_eager_$i 90 $V --concurrency 256 --requests 3000 --warmup 8 --eager-windows
  run pmv_z_32_3k_p${p}_eager 90 $V --concurrency 256 --requests 3000 --warmup 8 --eager-windows --tune text-piece=$p
done
run pmv_z_32_3k_p4       90 $V --concurrency 256 --requests 3000 --warmup 8 --tune text-piece=4
run pmv_z_16_3k_eager    90 $V --concurrency 256 --requests 3000 --warmup 8 --precision fp16 --eager-windows
run pmv_z_first32_eager  40 --texts samples/short.txt --voice $pmv --device webgpu --concurrency 1 --requests 100 --warmup 4 --eager-windows
# (--eager-windows, slower in both pairs, was removed after this call: those runs need commit eb6cd2d's binary.)
# Second call (commit 39a48e4; pieces of 2 became the default after it): pieces of 2 and 4 sentences against whole batches (-1), twice each in turn; one CPU memory arena
# shared by all CPU sessions (the default from this call's commit) against one per session (--tune session-arenas, as
# before), on the GPU and on the CPU; memory over 6,000 requests; the default voice, which has a small text part.
# First, the engine's device checks with the new Piper medium graph.
check dev_check_z2 150 'TestOnDevice'
for i in a b; do
  for p in -1 2 4; do
    run pmv_z2_32_3k_p${p}_$i 90 $V --concurrency 256 --requests 3000 --warmup 8 --tune text-piece=$p
  done
done
run pmv_z2_32_3k_p2_arenas 90 $V --concurrency 256 --requests 3000 --warmup 8 --tune text-piece=2 --tune session-arenas
run pmv_z2_32_6k_p2       150 $V --concurrency 256 --requests 6000 --warmup 8 --tune text-piece=2
run cpu_z2_t1              60 $B $DV --device cpu --threads 1 --concurrency 2 --requests 24 --warmup 2
run cpu_z2_t16             40 $B $DV --device cpu --threads 16 --concurrency 32 --requests 288 --warmup 2
run cpu_z2_t16_arenas      40 $B $DV --device cpu --threads 16 --concurrency 32 --requests 288 --warmup 2 --tune session-arenas
run wg_z2_def_p-1          60 $B $DV --device webgpu --concurrency 256 --requests 2000 --warmup 8 --tune text-piece=-1
run wg_z2_def_p2           60 $B $DV --device webgpu --concurrency 256 --requests 2000 --warmup 8 --tune text-piece=2
# Third call (commit 2177d88: pieces of 2 and the shared arena the defaults): memory over 6,000 requests.
run pmv_z3_32_6k 110 $V --concurrency 256 --requests 6000 --warmup 8
# Tenth session, first call: whether the shared CPU arena lifts 16 CPU sessions' scaling (ninth session, call 2:
# 77% of 16 x one against 69% with one arena each, one run of each), three of each in turn; transparent huge pages
# for ONNX Runtime's allocations (glibc's malloc asking for them); and what one session loses when the other 15
# cores are busy with something else (loaded, below): an interpreter loop (the clock the cores share), small
# matrix products in cache (the same with AVX-512 arithmetic, as ONNX Runtime's kernels do) or copies of large
# arrays (memory bandwidth), against the same run with 15 idle cores.
{ echo "THP enabled: $(cat /sys/kernel/mm/transparent_hugepage/enabled 2>&1)"; echo "THP defrag: $(cat /sys/kernel/mm/transparent_hugepage/defrag 2>&1)"
  ldd --version 2>&1 | head -n 1; python3 -c 'import numpy; numpy.show_config()' 2>&1 | grep -iA3 'blas\|simd' | head -n 30; } >> "$results/cpu.txt"
neighbour() { # KIND: the program each of the 15 neighbour processes runs
  case $1 in
    spin)   echo 'while True: pass' ;;
    matmul) echo 'import numpy as np
a = np.full((192, 192), 0.5, np.float32)
while True: a @ a' ;;
    copy)   echo 'import numpy as np
a = np.ones(64 << 20, np.float32); b = np.empty_like(a)
while True: np.copyto(b, a)' ;;
  esac
}
loaded() { # KIND NAME LIMIT BENCH-ARGS...: run NAME on core 0 while cores 1-15 (or those in $CORES) each run a
  # KIND neighbour (idle: none); FREE=1: neither the run nor its 15 neighbours bound to a core
  local kind=$1 name=$2 pids="" i
  shift
  if [ "$only" != "  " ] && [[ "$only" != *" $name "* ]]; then return; fi
  if [ "$kind" != idle ]; then
    for i in ${CORES:-$(seq 1 15)}; do
      $([ -n "${FREE:-}" ] || echo taskset -c $i) env OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 python3 -c "$(neighbour $kind)" &
      pids="$pids $!"
    done
    sleep 3
  fi
  PREFIX="$([ -n "${FREE:-}" ] || echo taskset -c 0)" run "$@"
  [ -z "$pids" ] || kill $pids
  wait $pids 2>/dev/null
}
T16="$B $DV --device cpu --threads 16 --concurrency 32 --requests 288 --warmup 2"
T1="$B $DV --device cpu --threads 1 --concurrency 2 --requests 24 --warmup 2"
run cpu_n2_t1 60 $T1
for i in a b c; do
  run cpu_n_t16_$i        40 $T16
  run cpu_n_t16_arenas_$i 40 $T16 --tune session-arenas
done
HUGE="env GLIBC_TUNABLES=glibc.malloc.hugetlb=1"
PREFIX="$HUGE" run cpu_n_t1_huge  60 $T1
PREFIX="$HUGE" run cpu_n_t16_huge 40 $T16
for kind in idle spin matmul copy; do
  loaded $kind cpu_n_t1pin_$kind 60 $T1
done
run cpu_n_t16_d 40 $T16
# Second call: one session on core 0 lost 21% beside 15 cores running an interpreter loop, as much as beside
# matrix products or copies. Cores the host pairs as hyperthreads (one VM core's sibling) would slow it alone;
# a clock the cores share slows it more as more cores are busy, whichever they are.
T1S="$B $DV --device cpu --threads 1 --concurrency 2 --requests 12 --warmup 2"
for cores in none 1 2 8 15 1-3 1-7 8-15 1-15; do
  CORES="$(seq ${cores%-*} ${cores#*-} 2>/dev/null)" loaded $([ $cores = none ] && echo idle || echo spin) cpu_o_pin_spin_$cores 40 $T1S
done
# Third call: one session on any core, its neighbours too (as the engine's 16 sessions run), with the other cores
# idle and with 15 interpreter loops, beside 16 sessions, twice in turn; then memory over a long corpus with the
# defaults on the Piper medium graph: 45,000 requests (~52,000 sentences) is what fits the call beside the CPU runs
# at ~1,190x (the default voice ran 100,000 requests, 106,000 sentences, in earlier sessions).
for i in a b; do
  FREE=1 loaded idle cpu_n3_t1_idle_$i 60 $T1
  FREE=1 loaded spin cpu_n3_t1_spin_$i 60 $T1
  run cpu_n3_t16_$i 40 $T16
done
run pmv_n3_45k 420 --texts samples/short.txt --voice $pmv --device webgpu --concurrency 256 --requests 45000 --warmup 0
# Fourth call: short sentences run at ~370 a second, so 100,000 requests (~106,000 sentences) fit one call.
run pmv_n4_100k 420 --texts samples/short.txt --voice $pmv --device webgpu --concurrency 256 --requests 100000 --warmup 0
# Fifth call (ttsgen-prev.bin = e21c798): what `ttsgen batch` gets out of the GPU. Before, a batch kept 64 items in
# flight and each text 64 sentences; now the sentences of all items together fill the engine's queue (1,024 on the
# GPU with a split voice): a prompt set of 5,000 one-sentence items and a book of 2,000 sentences, each before and
# after.
for b in prev new; do
  bin=ttsgen.bin && [ $b = prev ] && bin=ttsgen-prev.bin
  BIN=$bin batchrun pmv_n5_prompts_$b 120 /tmp/corpus/prompts.jsonl --voice $pmv --device webgpu
  BIN=$bin batchrun pmv_n5_book_$b 120 /tmp/corpus/book.txt --voice $pmv --device webgpu
done
# Eleventh session, first call (ttsgen-prev.bin = 91cee19, the engine's queue of 4 x workers x batch = 1,024 on
# the H200; ttsgen.bin: workers x batch = 256, since commit fe183c5). The prepared runs of the tenth session, with
# the queue of 1,024 as the other side: `ttsgen batch` on a prompt set and a book, and `bench` on long sentences at
# 256 requests; then bench at 1,024 requests of short sentences, to tell whether the 6.9 GiB the prompt set held
# with 1,024 in flight is the engine's or the batch command's. Go's collector traces its heap (gcheap) and memwatch
# splits the resident memory, so native memory (ONNX Runtime, the driver) shows apart from Go's.
GC="env GODEBUG=gctrace=1"
for b in new prev; do
  bin=ttsgen.bin && [ $b = prev ] && bin=ttsgen-prev.bin
  PREFIX="$GC" BIN=$bin batchrun pmv_o_prompts_$b 120 /tmp/corpus/prompts.jsonl --voice $pmv --device webgpu
done
for b in new prev; do
  bin=ttsgen.bin && [ $b = prev ] && bin=ttsgen-prev.bin
  PREFIX="$GC" BIN=$bin batchrun pmv_o_book_$b 120 /tmp/corpus/book.txt --voice $pmv --device webgpu
done
for i in a b; do
  run pmv_o_32_3k_$i 90 $V --concurrency 256 --requests 3000 --warmup 8
  BIN=ttsgen-prev.bin run pmv_o_32_3k_prev_$i 90 $V --concurrency 256 --requests 3000 --warmup 8
done
S="--texts samples/short.txt --voice $pmv --device webgpu --requests 5000 --warmup 8"
PREFIX="$GC" BIN=ttsgen-prev.bin run pmv_o_short_1024_prev 90 $S --concurrency 1024
PREFIX="$GC" run pmv_o_short_256 90 $S --concurrency 256
# Second call: the 6.9 GiB was Go's heap (2.9 GB live) in go-audio/wav's encoders, 2.6 MB reserved for each of the
# 1,024 files in flight; commit baf013b writes WAV without it. And the deeper queue was faster on short sentences
# (bench at 1,024 in flight 1,124x against 926x at 256: 4% padding against 28%, batches twice as full). So: batch
# with the queue of 1,024 (ttsgen.bin: the working tree, 4 x workers x batch) against 256 (ttsgen-prev.bin =
# 97288cc), both writing WAV without go-audio; and bench's queue depth swept with --queue-size.
for b in q1024 q256; do
  bin=ttsgen.bin && [ $b = q256 ] && bin=ttsgen-prev.bin
  PREFIX="$GC" BIN=$bin batchrun pmv_p_prompts_$b 120 /tmp/corpus/prompts.jsonl --voice $pmv --device webgpu
  PREFIX="$GC" BIN=$bin batchrun pmv_p_book_$b 120 /tmp/corpus/book.txt --voice $pmv --device webgpu
done
for q in 256 512 1024 2048; do
  BIN=ttsgen-prev.bin run pmv_p_short_q$q 90 $S --concurrency $q --queue-size $q
done
for q in 512 1024; do
  BIN=ttsgen-prev.bin run pmv_p_long_q$q 90 $V --concurrency $q --queue-size $q --requests 3000 --warmup 8
done
# Third call (commit of the queue of 1,024 again, the real default voice embedded): the defaults as shipped. The
# CPU's 16 sessions against one session of the engine and against one thread run as Piper runs the voice (bench's
# sequential baseline with --threads 1: batch 1, the graph as exported, the issue's "1 thread gave 12.7x"), twice;
# bench on short and long sentences at 1,024 in flight; last, a prompt set of 100,000 items through `ttsgen batch`
# (memory over a whole corpus, every file written). The call ran the CPU runs as cpu_q_t1_* and cpu_q_t16_*, names
# an earlier session's runs have (so that session's cpu_q_t1_b ran too, first): renamed since.
for i in a b; do
  run cpu_r_t1_$i 90 $T1 --compare sequential
  run cpu_r_t16_$i 40 $T16
done
run pmv_q_short 90 $S --concurrency 1024
run pmv_q_long 90 $V --concurrency 1024 --requests 3000 --warmup 8
PREFIX="$GC" batchrun pmv_q_prompts100k 330 /tmp/corpus/prompts100k.jsonl --voice $pmv --device webgpu
# Last, being long: 100,000 requests (106,000 sentences) through one engine on the GPU.
run wg_100k      420 --texts samples/short.txt --device webgpu --concurrency 256 --requests 100000 --warmup 0
if ls /tmp/prof/*.json >/dev/null 2>&1; then python3 scripts/ort-profile-summary.py /tmp/prof/*.json > "$results/profiles.txt" 2>&1; fi
pack
