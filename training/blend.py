"""Interpolate two checkpoints of one voice: every weight of A and B (ac.pt, gen.pt) as (1 - w) * A + w * B.

Two points of one training run lie in one basin, so the weights between them are a voice too, often with some of
each end's gains (Wortsman et al. 2022, "model soups"). Used where a call trades one measure for another
(MODEL_CARD.md): the blend is judged like any checkpoint, by quality.sh and verdict.py.

usage: python3 training/blend.py --a CK_A --b CK_B --weight W --out DIR
The architectures must match (ac.pt's cfg); DIR gets ac.pt and gen.pt in float32, with B's step and the blend's
recipe recorded, and B's disc.pt if it has one, so that training can resume from the blend.
"""
import argparse
import os
import shutil

import torch


def load(ckpt_dir, name):
    return torch.load(os.path.join(ckpt_dir, name), map_location="cpu", weights_only=False)


def blend(a_dir, b_dir, weight, out_dir):
    if not 0.0 <= weight <= 1.0:
        raise SystemExit(f"--weight {weight}: want a share of B between 0 and 1")
    os.makedirs(out_dir, exist_ok=True)
    for name in ("ac.pt", "gen.pt"):
        a, b = load(a_dir, name), load(b_dir, name)
        if a["cfg"] != b["cfg"]:
            raise SystemExit(f"{name}: {a_dir} and {b_dir} are different architectures: {a['cfg']} vs {b['cfg']}")
        if a["model"].keys() != b["model"].keys():
            raise SystemExit(f"{name}: {a_dir} and {b_dir} hold different weights")
        weights = {k: (1 - weight) * a["model"][k].float() + weight * b["model"][k].float()
                   if a["model"][k].is_floating_point() else b["model"][k] for k in b["model"]}
        torch.save({**b, "model": weights, "blend": {"a": a_dir, "a_step": a["step"], "b": b_dir, "weight": weight}},
                   os.path.join(out_dir, name))
    if os.path.exists(os.path.join(b_dir, "disc.pt")):
        shutil.copy(os.path.join(b_dir, "disc.pt"), out_dir)
    print(f"{out_dir}: {1 - weight:g} x {a_dir} + {weight:g} x {b_dir}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--a", required=True, help="checkpoint folder (weight 1 - W)")
    ap.add_argument("--b", required=True, help="checkpoint folder (weight W)")
    ap.add_argument("--weight", type=float, required=True, help="B's share, 0..1")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    blend(a.a, a.b, a.weight, a.out)


if __name__ == "__main__":
    main()
