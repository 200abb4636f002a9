#!/usr/bin/env bash
# Packs what `ttsgen` needs on the team's GPU machine, which has neither Go, espeak-ng nor ONNX Runtime's WebGPU
# dependencies: the binary (xz), the shared libraries it links, the English espeak-ng data, and from the shared
# device kit (DEVICEKIT, default .devicekit: made by the team's tools/device-kit.sh, run first) the ONNX Runtime library
# and the Vulkan loader packages.
# Festival is left out: benchmarks do not need it, and the whole tree must travel in 64 MiB.
# usage: scripts/device-bundle.sh [DIR]   (default .gpukit; ignored by git; name it in `carry`), then on the device:
#   source DIR/env.sh && /tmp/gpukit/benchsuite -machine h200 -bin /tmp/gpukit/ttsgen.bin -out $OUT
# (the runs of benchmarks/suite.json for that machine; see BENCHMARKS.md).
# PREV=<git revision> also packs that revision's binary as ttsgen-prev.bin, to compare two builds in one call (the
# machines differ by up to 20% from call to call). To fit in the 64 MiB, both binaries then embed the tiny test voice
# as their default voice (the real one is 17 MiB of the bundle): give them the real one from the carried tree, as
# --voice internal/voices/default/en_US-ttsgen-medium.onnx.
set -euo pipefail
dir=${1:-.gpukit}
kit=${DEVICEKIT:-.devicekit}
[ -f "$kit/libonnxruntime.so.1.xz" ] || { echo "no device kit in $kit: make it first with the team's tools/device-kit.sh $kit" >&2; exit 1; }
rm -rf "$dir" && mkdir -p "$dir/debs"
stage=$(mktemp -d) && trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/lib" "$stage/espeak-ng-data"
bins="ttsgen.bin"
if [ -n "${PREV:-}" ]; then
  # go build -overlay swaps the embedded voice for the tiny one without touching the tree.
  slim() { # SRC-ROOT OUT
    local voice
    printf '{"Replace":{' > "$stage/overlay.json"
    for voice in "$1"/internal/voices/default/*.onnx; do
      printf '"%s":"%s"' "$(realpath "$voice")" "$PWD/testdata/tiny-voice/tiny.onnx" >> "$stage/overlay.json"
    done
    printf '}}' >> "$stage/overlay.json"
    (cd "$1" && go build -overlay "$stage/overlay.json" -ldflags "-s -w" -o "$2" .)
  }
  slim . "$stage/ttsgen.bin"
  tree=$(mktemp -d) && git worktree add -q --detach "$tree" "$PREV"
  slim "$tree" "$stage/ttsgen-prev.bin"
  git worktree remove --force "$tree"
  bins="$bins ttsgen-prev.bin"
else
  go build -ldflags "-s -w" -o "$stage/ttsgen.bin" .
fi
# The benchmark suite's harness, and with ENGINE_TEST=1 the engine's checks that need a real GPU (TestOnDevice, run
# from internal/engine): ~15 MB more, so it is left out unless asked for, to keep what is carried small.
go build -ldflags "-s -w" -o "$stage/benchsuite" ./benchmarks/run
extra=""
if [ "${ENGINE_TEST:-}" = 1 ]; then
  go test -c -ldflags "-s -w" -o "$stage/engine.test" ./internal/engine
  extra=engine.test
fi
ldd "$stage/ttsgen.bin" | awk '/=> \//{print $3}' | grep -Ev '/(libc|libm|libdl|libpthread|librt|ld-linux[^/]*)\.so' |
  while read -r lib; do cp -L "$lib" "$stage/lib/"; done
data=$(dirname "$(dpkg -L espeak-ng-data | grep -m1 '/espeak-ng-data/phontab$')")
cp "$data"/{phontab,phonindex,phondata,intonations,en_dict} "$stage/espeak-ng-data/"
cp -r "$data/lang" "$stage/espeak-ng-data/"
if [ -d "$data/voices" ]; then cp -r "$data/voices" "$stage/espeak-ng-data/"; fi
tar -C "$stage" -cf - $bins benchsuite $extra lib espeak-ng-data | xz -T2 -6 > "$dir/ttsgen.tar.xz"
cp "$kit/libonnxruntime.so.1.xz" "$dir/"
cp "$kit"/debs/gl/*.deb "$dir/debs/"
cat > "$dir/env.sh" <<'SH'
# Sourced on the GPU machine: Vulkan loader for WebGPU, the ONNX Runtime library, the ttsgen binary and its libraries.
_k=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
for f in "$_k"/debs/*.deb; do dpkg -x "$f" /; done
ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
mkdir -p /tmp/gpukit
[ -f /tmp/gpukit/libonnxruntime.so.1 ] || xz -dc "$_k/libonnxruntime.so.1.xz" > /tmp/gpukit/libonnxruntime.so.1
[ -x /tmp/gpukit/ttsgen.bin ] || xz -dc "$_k/ttsgen.tar.xz" | tar -C /tmp/gpukit -xf -
export TTSGEN_ORT_LIB=/tmp/gpukit/libonnxruntime.so.1 TTSGEN_ESPEAK_DATA=/tmp/gpukit
export LD_LIBRARY_PATH="/tmp/gpukit/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
ttsgen() { /tmp/gpukit/ttsgen.bin "$@"; }
unset _k
SH
du -sh "$dir"
