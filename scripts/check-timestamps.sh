#!/usr/bin/env bash
# Judges ttsgen's word timestamps against an independent aligner: a speech recogniser's own word times on the same
# audio. Speaks scripts/timestamps-check.txt (twenty sentences: numbers, abbreviations, punctuation) with the
# built-in voice into a WAV and its --timestamps JSON, runs CMU PocketSphinx (Debian's pocketsphinx and
# pocketsphinx-en-us, installed here if missing) on the audio, pairs the words both found (a diff of the two word
# lists) and prints the median and 90th percentile of |start difference|. Usage: scripts/check-timestamps.sh
# [path/to/ttsgen] (default bin/ttsgen).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-bin/ttsgen}
missing=()
for pkg in pocketsphinx pocketsphinx-en-us ffmpeg; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || missing+=("$pkg")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "check-timestamps: installing ${missing[*]}" >&2
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$bin" synth -q --file scripts/timestamps-check.txt -o "$tmp/speech.wav" --timestamps "$tmp/words.json"
ffmpeg -v error -i "$tmp/speech.wav" -ar 16000 -ac 1 "$tmp/speech16k.wav"
# -remove_silence no: with it on, PocketSphinx drops the frames its voice detector calls silence and then counts
# its word times without them, so they run early after every pause (by 100 ms and more mid-sentence).
pocketsphinx_continuous -infile "$tmp/speech16k.wav" -time yes -remove_silence no 2>/dev/null > "$tmp/sphinx.txt"
python3 - "$tmp/words.json" "$tmp/sphinx.txt" <<'PY'
import difflib, json, re, statistics, sys
ours = json.load(open(sys.argv[1]))["words"]
theirs = []
for line in open(sys.argv[2]):
    parts = line.split()
    if len(parts) == 4 and re.fullmatch(r"[0-9.]+", parts[1]):
        word = re.sub(r"\(\d+\)$", "", parts[0]).lower()
        if not word.startswith(("<", "[")):
            theirs.append((word, float(parts[1])))
key = lambda w: re.sub(r"[^a-z']", "", w.lower())
a = [key(w["word"]) for w in ours]
b = [w for w, _ in theirs]
diffs = []
for block in difflib.SequenceMatcher(None, a, b, autojunk=False).get_matching_blocks():
    for k in range(block.size):
        diffs.append(abs(ours[block.a + k]["start"] - theirs[block.b + k][1]))
if not diffs:
    sys.exit("check-timestamps: no word in common with the recogniser")
diffs.sort()
print(f"words: {len(ours)} timed by ttsgen, {len(theirs)} recognised, {len(diffs)} in both")
print(f"|start difference|: median {1000*statistics.median(diffs):.0f} ms, "
      f"90th percentile {1000*diffs[int(0.9*(len(diffs)-1))]:.0f} ms, max {1000*diffs[-1]:.0f} ms")
PY
