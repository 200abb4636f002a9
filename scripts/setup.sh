#!/usr/bin/env bash
# Installs what ttsgen needs to build, test and run on Debian/Ubuntu, and nothing twice:
#  - Debian packages: a C toolchain for cgo, libespeak-ng (phonemes), libopusenc and libmp3lame (the Opus and MP3
#    encoders, through cgo), ffmpeg (AAC output, and the decoder the tests check every format with), npm (to fetch
#    ONNX Runtime), Go if missing;
#  - ONNX Runtime's shared library, from the npm package onnxruntime-node (the one registry that ships a Linux build
#    we can reach), into the cache folder where ttsgen looks for it by itself.
# Re-running it is cheap: every step first checks whether its result is already there.
set -euo pipefail

cd "$(dirname "$0")/.."
say() { printf 'setup: %s\n' "$*" >&2; }

missing=()
for pkg in build-essential pkg-config libespeak-ng-dev espeak-ng-data libopusenc-dev libopus-dev libmp3lame-dev ffmpeg \
  ca-certificates xz-utils; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || missing+=("$pkg")
done
command -v npm >/dev/null 2>&1 || missing+=(npm)
command -v go >/dev/null 2>&1 || missing+=(golang-go)

if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null 2>&1 || { say "need root or sudo to install: ${missing[*]}"; exit 1; }
    sudo=sudo
  fi
  say "installing Debian packages: ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# Which version and where: the rule the binary and the tests follow too (internal/ortlib).
{ read -r ORT_VERSION; read -r ort_lib; } < <(go run ./internal/ortlib/where)
if [ ! -s "$ort_lib" ]; then
  say "fetching ONNX Runtime $ORT_VERSION (npm package onnxruntime-node) into $(dirname "$ort_lib")"
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  (cd "$tmp" && npm pack --silent "onnxruntime-node@$ORT_VERSION" >/dev/null \
     && tar xzf "onnxruntime-node-$ORT_VERSION.tgz" package/bin/napi-v6/linux/x64/libonnxruntime.so.1)
  mkdir -p "$(dirname "$ort_lib")"
  # Copy then rename, so an interrupted setup never leaves a half-written library under the final name.
  cp "$tmp/package/bin/napi-v6/linux/x64/libonnxruntime.so.1" "$ort_lib.partial"
  mv "$ort_lib.partial" "$ort_lib"
fi
say "ready: ONNX Runtime at $ort_lib; $(go version)"
