"""Speaking-rate calibration: how much longer Festival says TRAINING sentences than the voice does.

  python3 training/calibrate.py --ids .traindata/ids.txt --trained CKPT_DIR/trained_ids.txt --ckpt CKPT_DIR

The duration predictor is fitted by squared error on log-durations, which predicts the geometric mean of each
phoneme's duration: below the arithmetic mean, so the voice speaks a little too fast. This measures the ratio of
total speech length (leading/trailing silence trimmed) Festival/voice over --n sentences that the voice was trained
on (not the held-out evaluation set); export.py --duration-gain G adds log(G) to the duration predictor's output.
"""
import argparse
import os
import subprocess
import sys

import numpy as np
import torch
from scipy.io import wavfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from model import load_voice  # noqa: E402


def speech_seconds(x, sr):
    x = np.abs(x.astype(np.float32))
    idx = np.nonzero(x > 0.02 * x.max())[0]
    return (idx[-1] - idx[0]) / sr if len(idx) else 0.0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ids", default=".traindata/ids.txt")
    ap.add_argument("--trained", required=True)
    ap.add_argument("--ckpt", required=True)
    ap.add_argument("--speaker", type=int, help="which speaker of a checkpoint of several")
    ap.add_argument("--n", type=int, default=30)
    ap.add_argument("--tmp", default="/tmp/ttsgen-calibrate")
    a = ap.parse_args()
    os.makedirs(a.tmp, exist_ok=True)
    trained = set(open(a.trained).read().split())
    sents = []
    for line in open(a.ids, encoding="utf-8"):
        uid, ids, text = line.rstrip("\n").split("|")
        if uid in trained:
            sents.append((uid, [int(t) for t in ids.split()], text))
        if len(sents) == a.n:
            break
    voice, ac = load_voice(a.ckpt, a.speaker)
    step = ac["step"]
    ours = theirs = 0.0
    with torch.no_grad():
        for uid, ids, text in sents:
            audio = voice(torch.tensor([ids]), torch.tensor([len(ids)]), torch.tensor([0.0, 1.0, 0.0]))
            ours += speech_seconds(audio[0, 0, 0].numpy(), 22050)
            path = os.path.join(a.tmp, uid + ".wav")
            if not os.path.exists(path):
                subprocess.run(["text2wave", "-o", path], input=text, text=True, check=True,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            sr, x = wavfile.read(path)
            theirs += speech_seconds(x, sr)
    print(f"step {step}: {len(sents)} trained sentences, speech {ours:.1f} s (voice) vs {theirs:.1f} s (Festival): "
          f"duration gain {theirs / ours:.4f}")


if __name__ == "__main__":
    main()
