#!/bin/bash
# The three measures of a voice (issue 21) on training/eval_sentences.txt (30 plain English sentences, none from
# LJSpeech), printed beside Festival's and real speech's reference figures:
#   pocketsphinx word error rate, DNSMOS P.808 (and OVRL), steady tone (most prominent narrow peak, 1-10 kHz).
# usage (from the repository root, after `make build`):
#   training/quality.sh VOICE.onnx [OUTDIR] [--festival]
# VOICE.onnx is spoken through `ttsgen batch` with the voice config's default scales. Those scales add noise, so two
# syntheses differ (WER by a few points): REPEAT=N speaks the sentences N times, prints each synthesis's row and
# then their mean and range, which is how MODEL_CARD.md compares checkpoints. TEXTS=FILE (one sentence a line) speaks
# other sentences instead (the reference rows stay those of the voice-quality README);
# TEXTS=training/confirm_sentences.txt is the second set verdict.py's rule needs. --festival also speaks the
# sentences with Festival's HTS slt voice (Debian festival festvox-us-slt-hts) and measures it the same way.
# Needs ../shared/tools/voice-quality (or VQ=DIR): Debian pocketsphinx pocketsphinx-en-us sox python3-numpy, node.
set -euo pipefail
voice=${1:?usage: training/quality.sh VOICE.onnx [OUTDIR] [--festival]}
out=${2:-/tmp/ttsgen-quality/$(basename "$voice" .onnx)}
festival=${3:-}
repeat=${REPEAT:-1}
[[ $repeat =~ ^[1-9][0-9]*$ ]] || { echo "quality.sh: REPEAT=$repeat: want a whole number from 1" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
# sox dithers its 16 kHz conversion with a new random seed each run, which alone moves one synthesis's WER by a
# point or two; repeatable mode fixes the seed, so the spread REPEAT shows is the voice's own.
export SOX_OPTS="${SOX_OPTS:+$SOX_OPTS }-R"
texts=${TEXTS:-$here/eval_sentences.txt}
[ -s "$texts" ] || { echo "quality.sh: TEXTS=$texts: no such file, or empty" >&2; exit 2; }
vq=${VQ:-$here/../../shared/tools/voice-quality}
[ -d "$vq" ] || { echo "quality.sh: no voice-quality tools at $vq (set VQ=DIR)" >&2; exit 2; }
if [ ! -d "$vq/node_modules" ]; then  # the shared folder is read-only: install DNSMOS's runtime in a copy
  mkdir -p /tmp/ttsgen-vq && cp -r "$vq"/. /tmp/ttsgen-vq/ && chmod -R u+w /tmp/ttsgen-vq
  (cd /tmp/ttsgen-vq && npm install --ignore-scripts --silent >/dev/null)
  vq=/tmp/ttsgen-vq
fi

# Pocketsphinx scores the same audio worse the louder it is (ttsgen's speech level, -20 dBFS, about 4 points worse
# than the model's own -25 dBFS on the shipped voice), so beside the WER of the audio as made, the table gives the WER
# of each sentence brought to an RMS of -26 dBFS, where DNSMOS measures too: the level-free figure to compare systems by.
at_level() {  # DIR -> a copy of DIR's wavs, each at an RMS of -26 dBFS
  local copy=$1.at-26dBFS
  mkdir -p "$copy"
  /usr/bin/python3 - "$1" "$copy" <<'PY'
import os, sys
import numpy as np
from scipy.io import wavfile
src, dst = sys.argv[1:3]
for name in os.listdir(src):
    if name.endswith(".wav"):
        rate, x = wavfile.read(os.path.join(src, name))
        x = x.astype(np.float64) / 32768.0
        rms = np.sqrt(np.mean(x ** 2)) or 1.0
        y = np.clip(x * 10 ** (-26 / 20) / rms, -1, 32767 / 32768)
        wavfile.write(os.path.join(dst, name), rate, np.round(y * 32768).astype(np.int16))
PY
  echo "$copy"
}

measure() {  # DIR LABEL -> one table row; also appends "WER P808 OVRL TONE" to $out/measures
  local dir=$1 label=$2 wer wer26 mos tone
  wer=$("$vq/wer_dir.sh" "$texts" "$dir" | sed -n 's/^WER=\([0-9.]*\)%.*/\1/p')
  wer26=$("$vq/wer_dir.sh" "$texts" "$(at_level "$dir")" | sed -n 's/^WER=\([0-9.]*\)%.*/\1/p')
  # three decimals: verdict.py's P.808 differences are often a few thousandths, which 0.01 steps would make ties
  mos=$(node "$vq/dnsmos.js" --summary-only --rms-db -26 "$dir" 2>/dev/null | tail -1 |
    python3 -c "import json, sys; d = json.load(sys.stdin); print('%.3f %.3f' % (d['P808_MOS'], d['OVRL']))")
  tone=$(/usr/bin/python3 "$vq/tone.py" "$dir" | sed 's/^tone=//')
  echo "$wer $mos ${tone%% *}" >> "$out/measures"
  printf '| %s | %s%% (%s%% at -26 dBFS) | P.808 %s, OVRL %s | %s |\n' "$label" "$wer" "$wer26" ${mos% *} ${mos#* } "$tone"
}

mkdir -p "$out"
i=0
while IFS= read -r line; do
  i=$((i + 1))
  printf '{"id":"%d","text":"%s"}\n' "$i" "${line//\"/\\\"}"
done < "$texts" > "$out/sentences.jsonl"
: > "$out/measures"
echo "| system | WER (pocketsphinx) | DNSMOS | steady tone |"
echo "|---|---|---|---|"
name=$(basename "$voice" .onnx)
for n in $(seq 1 "$repeat"); do
  dir=$out/voice; [ "$repeat" = 1 ] || dir=$out/voice-$n
  mkdir -p "$dir"
  "$here/../bin/ttsgen" batch "$out/sentences.jsonl" -o "$dir" --voice "$voice" --device cpu --force -q
  label=$name; [ "$repeat" = 1 ] || label="$name, synthesis $n"
  measure "$dir" "$label"
done
if [ "$repeat" != 1 ]; then
  python3 - "$out/measures" "$name" "$repeat" "$here" <<'PY'
import sys
sys.path.insert(0, sys.argv[4])
from verdict import read  # the measures file's reader, shared with the shipping rule
rows = read([sys.argv[1]])
col = lambda i: [r[i] for r in rows]
mean = lambda v: sum(v) / len(v)
w, p, o, t = col(0), col(1), col(2), col(3)
print(f"| **{sys.argv[2]}, mean of {sys.argv[3]}** | **{mean(w):.1f}% ({min(w):.1f}-{max(w):.1f})** | "
      f"**P.808 {mean(p):.2f} ({min(p):.2f}-{max(p):.2f}), OVRL {mean(o):.2f}** | **{mean(t):.1f} dB ({min(t):.1f}-{max(t):.1f})** |")
PY
fi
if [ "$festival" = "--festival" ]; then
  mkdir -p "$out/festival"
  i=0
  while IFS= read -r line; do
    i=$((i + 1))
    echo "$line" | text2wave -eval '(voice_cmu_us_slt_arctic_hts)' -o "$out/festival/$i.wav"
  done < "$texts"
  measure "$out/festival" "Festival HTS slt (these sentences)"
fi
# Reference figures from ../shared/tools/voice-quality/README.md (30 plain English sentences; real speech: 30
# LJSpeech clips): the teacher and the ceiling.
echo "| Festival HTS slt (reference) | 9.8% | P.808 3.78, OVRL 3.02 | 2.9 dB |"
echo "| real LJSpeech (reference) | | P.808 4.09, OVRL 3.30 | 2.8 dB |"
