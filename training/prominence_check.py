"""Does a form of the prominence loss see the peak that tone.py measures, and does its gradient lower it? On CPU,
before a GPU call trains with it.

usage: python3 training/prominence_check.py --reference DIR [--count 60] [--batches 24] [--top 16] [--ceiling 2.5]
           [--steer STEPS [--batch 16] [--lr 8e-6] [--pool 24] [--pooled-only] [--save DIR]] CKPT_DIR...

DIR holds wavs of the speech the generator learns from (Festival's, as `train.py --wav-dir` leaves them). Each
checkpoint's generator speaks them again from their mel (copy synthesis, as diagnose.py's "copy" stage), and the
same random 8,192-sample segments of reference and output, 64 a batch, make the batches train.py would cut. For each
checkpoint it prints:

  per batch     the loss as train.py computes it with --prominence-top K --prominence-ceiling DB: mean and spread
  pooled/target the output's spectrum over all the batches against the reference's over the same batches, capped
  pooled/cap    the output's spectrum over all the batches against the ceiling alone (train.py --prominence-pool)
  peak          the most prominent bin of the output of the whole clips, pooled, and where it is (tone.py's
                figure, on these clips)

A form of the loss is worth training with if it ranks the generators as tone.py ranks their voices' syntheses
(quality.sh). --steer STEPS then trains a copy of the first checkpoint's generator for STEPS steps on the
reference's mel, once with train.py's mel loss alone (x45) and once with each form of the prominence loss beside it
(x10: per batch against the target, and pooled over --pool batches against the ceiling), AdamW at --lr (train.py's
--lr-gen times --lr-start of a fine-tuning call), and prints the peak of each one's copy synthesis before and after.
There is no discriminator, so it says which way each form pulls, not where a GPU call ends; --save DIR keeps the
pooled form's generator beside the checkpoint's acoustic model, to export and measure, and --pooled-only trains
that form alone (to go on from such a generator). All figures are in
tone.py's dB.
"""
import argparse
import glob
import math
import os
import random
import sys

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from data import HOP, SR, MelSpec, load_wav  # noqa: E402
from model import load_voice, make_latent  # noqa: E402
from train import ProminenceLoss, long_term_spectrum, save_ckpt  # noqa: E402

SEGMENT, BATCH = 8192, 64


def db(nat):
    return nat * 10 / math.log(10)


def copy_synthesis(gen, refs, mels):
    """(reference, output) pairs of equal length: the generator fed each reference's mel."""
    pairs = []
    with torch.no_grad():
        for y, mel in zip(refs, mels):
            out = gen(make_latent(mel, torch.ones(1, 1, mel.shape[2]))).view(-1)
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


def peak(loss, pairs):
    """The most prominent bin of a copy synthesis (copy_synthesis's pairs) of all the clips, pooled: (dB, Hz)."""
    power = sum(long_term_spectrum(out.unsqueeze(0), loss.n_fft, loss.hop, loss.win, 2) * len(out)
                for _, out in pairs)
    prom = loss.prominence_of(power)
    k = prom.argmax().item()
    return db(prom[k].item()), loss.band[k].item() * SR / loss.n_fft


def rank(a, ckpts, refs, mels):
    loss = ProminenceLoss(top=a.top, ceiling_db=a.ceiling)
    print(f"{len(refs)} reference clips, {a.batches} batches of {BATCH} x {SEGMENT} samples, top {a.top} bins, "
          f"ceiling {a.ceiling:g} dB")
    print("| checkpoint | per batch | pooled/target | pooled/cap | peak |")
    print("|---|---|---|---|---|")
    for ckpt in ckpts:
        model, _ = load_voice(ckpt)
        pairs = copy_synthesis(model.dec, refs, mels)
        per, ref_power, out_power = [], 0, 0
        for y, out in batches(pairs, a.batches, a.seed):
            per.append(db(loss(out, y).item()))
            ref_power = ref_power + long_term_spectrum(y, loss.n_fft, loss.hop, loss.win, 2)
            out_power = out_power + long_term_spectrum(out, loss.n_fft, loss.hop, loss.win, 2)
        ref_prom, out_prom = loss.prominence_of(ref_power), loss.prominence_of(out_power)
        vs_target, vs_cap = loss.excess(out_prom, ref_prom).item(), loss.excess(out_prom).item()
        top_db, top_hz = peak(loss, pairs)
        print(f"| {ckpt} | {np.mean(per):.2f} (sd {np.std(per):.2f}) | {db(vs_target):.2f} | {db(vs_cap):.2f} | "
              f"{top_db:.1f} dB at {top_hz:.0f} Hz |")


def steer(a, ckpt, refs, mels):
    frames = SEGMENT // HOP
    forms = [("mel loss alone", None),
             ("+ per batch", ProminenceLoss(top=a.top, ceiling_db=a.ceiling)),
             (f"+ pooled over {a.pool}", ProminenceLoss(top=a.top, ceiling_db=a.ceiling, pool=a.pool))]
    if a.pooled_only:
        forms = [(name, loss) for name, loss in forms if loss is not None and loss.pool]
    melspec, measure = MelSpec(), ProminenceLoss()
    model, _ = load_voice(ckpt)
    before = peak(measure, copy_synthesis(model.dec, refs, mels))  # every form starts from the same generator
    print(f"\n{ckpt}'s generator, {a.steer} steps of {a.batch} segments at lr {a.lr:g}, ceiling {a.ceiling:g} dB")
    print("| loss | peak before | peak after | mel loss, last 25 steps |")
    print("|---|---|---|---|")
    for name, prominence in forms:
        torch.manual_seed(a.seed)
        rng = random.Random(a.seed)
        model, ac = load_voice(ckpt)
        gen = model.dec
        gen.train()
        for p in gen.parameters():
            p.requires_grad_(True)
        opt = torch.optim.AdamW(gen.parameters(), a.lr, betas=(0.8, 0.99), weight_decay=0.01)
        mel_losses = []
        for _ in range(a.steer):
            ys, ms = [], []
            for _ in range(a.batch):
                i = rng.randrange(len(refs))
                s = rng.randrange(0, min(mels[i].shape[2], len(refs[i]) // HOP) - frames)
                ms.append(mels[i][0, :, s:s + frames])
                ys.append(refs[i][s * HOP:(s + frames) * HOP])
            y = torch.stack(ys)
            y_hat = gen(make_latent(torch.stack(ms), torch.ones(a.batch, 1, frames))).squeeze(1)[:, :y.shape[1]]
            mel_loss = F.l1_loss(melspec(y_hat), melspec(y))
            loss = 45 * mel_loss + (10 * prominence(y_hat, y) if prominence is not None else 0)
            opt.zero_grad()
            loss.backward()
            opt.step()
            mel_losses.append(mel_loss.item())
        gen.eval()
        after = peak(measure, copy_synthesis(gen, refs, mels))
        if a.save and prominence is not None and prominence.pool:
            # float16 where the folder was (save_ckpt casts the acoustic model too when the generator is)
            save_ckpt(model, None, ac["step"] + a.steer, a.save, {"steered_from": ckpt},
                      half=is_half(os.path.join(ckpt, "gen.pt")), half_ac=is_half(os.path.join(ckpt, "ac.pt")))
        print(f"| {name} | {before[0]:.2f} dB at {before[1]:.0f} Hz | {after[0]:.2f} dB at {after[1]:.0f} Hz | "
              f"{np.mean(mel_losses[-25:]):.4f} |")


def is_half(path):
    state = torch.load(path, map_location="cpu", weights_only=False)["model"]
    return next(iter(state.values())).dtype == torch.float16


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reference", required=True, help="folder of the generator's training speech (wav)")
    ap.add_argument("--count", type=int, default=60, help="how many of its wavs (sorted by name)")
    ap.add_argument("--batches", type=int, default=24)
    ap.add_argument("--top", type=int, default=16, help="as train.py --prominence-top")
    ap.add_argument("--ceiling", type=float, default=2.5, help="as train.py --prominence-ceiling, dB")
    ap.add_argument("--seed", type=int, default=0, help="the segments' draw; the same for every checkpoint")
    ap.add_argument("--steer", type=int, default=0, metavar="STEPS",
                    help="then train the first checkpoint's generator STEPS steps with each form (0: do not)")
    ap.add_argument("--batch", type=int, default=16, help="--steer's segments a step")
    ap.add_argument("--lr", type=float, default=8e-6, help="--steer's learning rate")
    ap.add_argument("--pool", type=int, default=24, help="--steer's pooled form: as train.py --prominence-pool")
    ap.add_argument("--pooled-only", action="store_true",
                    help="--steer trains the pooled form alone (to go on from a steered generator: the other forms "
                         "are only there to compare)")
    ap.add_argument("--save", metavar="DIR",
                    help="--steer's generator trained with the pooled form, as a checkpoint folder (export.py --ckpt)")
    ap.add_argument("ckpts", nargs="+", metavar="CKPT_DIR")
    a = ap.parse_args()
    for flag, given in (("--save", a.save), ("--pooled-only", a.pooled_only)):
        if given and not a.steer:
            raise SystemExit(f"{flag} is about --steer's generator: it needs --steer STEPS")
    paths = sorted(glob.glob(os.path.join(a.reference, "*.wav")))[:a.count]
    refs = [torch.from_numpy(load_wav(p)) for p in paths]
    refs = [y for y in refs if len(y) > 2 * SEGMENT]
    if not refs:
        raise SystemExit(f"{a.reference}: no wav longer than {2 * SEGMENT} samples")
    melspec = MelSpec()
    mels = [melspec(y.unsqueeze(0)) for y in refs]  # [1, 80, T]
    rank(a, a.ckpts, refs, mels)
    if a.steer:
        steer(a, a.ckpts[0], refs, mels)


if __name__ == "__main__":
    main()
