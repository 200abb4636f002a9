"""Make real recordings small enough to carry to the GPU machine: each ID.flac (or .wav) of SRC is rounded to BITS
significant bits and written as 16-bit FLAC to DST, which FLAC stores in about BITS bits a sample (its "wasted bits").

  python3 training/pack_recordings.py SRC_DIR DST_DIR [--bits 12] [--ids IDS_FILE]

The 385 LJSpeech clips of ../shared (41.7 minutes) take 64 MB as FLAC and 36 MB at 12 bits: with the checkpoint and
the tree, what fits the device's 64 MiB. Rounding to 12 bits adds noise at about -77 dBFS, and LJSpeech's own
background is near -60 dBFS (the quietest 5 % of each clip's 23 ms frames), so the generator learns the room, not the
rounding. The clip is also checked: mono, 22,050 Hz, or the script stops. Needs sox.
"""
import argparse
import glob
import os
import subprocess
import sys

import numpy as np

SR = 22050


def read_pcm16(path):
    info = subprocess.run(["soxi", "-r", path], check=True, capture_output=True, text=True).stdout.strip()
    chans = subprocess.run(["soxi", "-c", path], check=True, capture_output=True, text=True).stdout.strip()
    if int(info) != SR or int(chans) != 1:
        raise SystemExit(f"{path}: {info} Hz, {chans} channel(s); want {SR} Hz mono")
    raw = subprocess.run(["sox", path, "-t", "raw", "-e", "signed", "-b", "16", "-"], check=True,
                         stdout=subprocess.PIPE).stdout
    return np.frombuffer(raw, np.int16)


def pack(src, dst, bits):
    step = 1 << (16 - bits)
    x = read_pcm16(src).astype(np.int32)
    q = np.clip(np.round(x / step) * step, -32768, 32768 - step).astype(np.int16)
    subprocess.run(["sox", "-t", "raw", "-r", str(SR), "-e", "signed", "-b", "16", "-c", "1", "-", "-C", "8", dst],
                   input=q.tobytes(), check=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("src")
    ap.add_argument("dst")
    ap.add_argument("--bits", type=int, default=12, help="significant bits kept (4..16)")
    ap.add_argument("--ids", help="only the clips with a line in this corpusids file")
    a = ap.parse_args()
    if not 4 <= a.bits <= 16:
        raise SystemExit(f"--bits {a.bits}: want 4..16")
    files = sorted(glob.glob(os.path.join(a.src, "*.flac")) + glob.glob(os.path.join(a.src, "*.wav")))
    if a.ids:
        with open(a.ids, encoding="utf-8") as f:
            want = {line.split("|", 1)[0] for line in f if line.strip()}
        files = [p for p in files if os.path.splitext(os.path.basename(p))[0] in want]
    if not files:
        raise SystemExit(f"{a.src}: no ID.flac or ID.wav clips" + (f" named in {a.ids}" if a.ids else ""))
    os.makedirs(a.dst, exist_ok=True)
    before = after = 0
    for p in files:
        out = os.path.join(a.dst, os.path.splitext(os.path.basename(p))[0] + ".flac")
        pack(p, out, a.bits)
        before += os.path.getsize(p)
        after += os.path.getsize(out)
    print(f"{len(files)} clips, {before / 1e6:.1f} MB -> {after / 1e6:.1f} MB at {a.bits} bits in {a.dst}",
          file=sys.stderr)


if __name__ == "__main__":
    main()
