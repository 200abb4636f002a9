"""Does the prominence loss see the peak that tone.py measures? Each form of it, on several generators' audio.

usage: python3 training/prominence_rank.py --reference DIR [--count 60] [--batches 24] [--top 16] [--ceiling 2.5]
           CKPT_DIR...

DIR holds wavs of the speech the generator learns from (Festival's, as `train.py --wav-dir` leaves them). Each
checkpoint's generator speaks them again from their mel (copy synthesis, as diagnose.py's "copy" stage), and the
same random 8,192-sample segments of reference and output, 64 a batch, make the batches train.py would cut. For each
checkpoint it prints:

  per batch     the loss as train.py computes it with --prominence-top K --prominence-ceiling DB: mean and spread
  pooled/target the output's spectrum over all the batches against the reference's over the same batches, capped
  pooled/cap    the output's spectrum over all the batches against the ceiling alone (train.py --prominence-pool)
  peak          the pooled output's most prominent bin and where it is (tone.py's figure, on these clips)

A form of the loss is worth training with if it ranks the generators as tone.py ranks their voices' syntheses
(quality.sh). All figures are in tone.py's dB.
"""
import argparse
import glob
import math
import os
import random
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from data import SR, MelSpec, load_wav  # noqa: E402
from model import load_voice, make_latent  # noqa: E402
from train import ProminenceLoss, long_term_spectrum  # noqa: E402

SEGMENT, BATCH = 8192, 64


def db(nat):
    return nat * 10 / math.log(10)


def copy_synthesis(ckpt, refs):
    """(reference, output) pairs of equal length: the checkpoint's generator fed each reference's mel."""
    model, _ = load_voice(ckpt)
    melspec = MelSpec()
    pairs = []
    with torch.no_grad():
        for y in refs:
            mel = melspec(y.unsqueeze(0))
            out = model.dec(make_latent(mel, torch.ones(1, 1, mel.shape[2]))).view(-1)
            n = min(len(out), len(y))
            pairs.append((y[:n], out[:n]))
    return pairs


def batches(pairs, count, seed):
    rng = random.Random(seed)
    for _ in range(count):
        picks = []
        for _ in range(BATCH):
            y, out = pairs[rng.randrange(len(pairs))]
            s = rng.randrange(0, len(y) - SEGMENT)
            picks.append((y[s:s + SEGMENT], out[s:s + SEGMENT]))
        yield torch.stack([p[0] for p in picks]), torch.stack([p[1] for p in picks])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reference", required=True, help="folder of the generator's training speech (wav)")
    ap.add_argument("--count", type=int, default=60, help="how many of its wavs (sorted by name)")
    ap.add_argument("--batches", type=int, default=24)
    ap.add_argument("--top", type=int, default=16, help="as train.py --prominence-top")
    ap.add_argument("--ceiling", type=float, default=2.5, help="as train.py --prominence-ceiling, dB")
    ap.add_argument("--seed", type=int, default=0, help="the segments' draw; the same for every checkpoint")
    ap.add_argument("ckpts", nargs="+", metavar="CKPT_DIR")
    a = ap.parse_args()
    paths = sorted(glob.glob(os.path.join(a.reference, "*.wav")))[:a.count]
    refs = [torch.from_numpy(load_wav(p)) for p in paths]
    refs = [y for y in refs if len(y) > 2 * SEGMENT]
    if not refs:
        raise SystemExit(f"{a.reference}: no wav longer than {2 * SEGMENT} samples")
    loss = ProminenceLoss(top=a.top, ceiling_db=a.ceiling)
    print(f"{len(refs)} reference clips, {a.batches} batches of {BATCH} x {SEGMENT} samples, top {a.top} bins, "
          f"ceiling {a.ceiling:g} dB")
    print("| checkpoint | per batch | pooled/target | pooled/cap | peak |")
    print("|---|---|---|---|---|")
    for ckpt in a.ckpts:
        per, ref_power, out_power = [], 0, 0
        for y, out in batches(copy_synthesis(ckpt, refs), a.batches, a.seed):
            per.append(db(loss(out, y).item()))
            ref_power = ref_power + long_term_spectrum(y, loss.n_fft, loss.hop, loss.win, 2)
            out_power = out_power + long_term_spectrum(out, loss.n_fft, loss.hop, loss.win, 2)
        ref_prom, out_prom = loss.prominence_of(ref_power), loss.prominence_of(out_power)
        vs_target = loss.worst(torch.relu(out_prom - ref_prom.clamp_max(loss.ceiling))).item()
        vs_cap = loss.worst(torch.relu(out_prom - loss.ceiling)).item()
        peak = out_prom.argmax().item()
        print(f"| {ckpt} | {np.mean(per):.2f} (sd {np.std(per):.2f}) | {db(vs_target):.2f} | {db(vs_cap):.2f} | "
              f"{db(out_prom[peak].item()):.1f} dB at {loss.band[peak].item() * SR / loss.n_fft:.0f} Hz |")


if __name__ == "__main__":
    main()
