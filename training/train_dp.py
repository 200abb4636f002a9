"""Retrain a checkpoint's duration predictor alone, on a CPU, from alignment durations: no audio needed.

  python3 training/train_dp.py --ckpt CKPT_DIR --durations FILE [FILE ...] --ids IDS_FILE --out OUT_DIR
      [--loss log|linear|lognormal] [--steps N] [--batch 64] [--lr 1e-3] [--holdout 200] [--init fresh|ckpt] [--seed 1]

train.py fits `dp` by squared error on log-durations, which predicts each phoneme's geometric-mean duration: below
the arithmetic mean, so the voice speaks ~13% too fast, and short consonants, whose log-durations spread the most,
lose the most (~25%). `dp` reads the encoder's states detached, so it can be refitted afterwards: the states are
computed once from the phoneme ids (IDS_FILE: corpusids' ID|ids|text), the targets are the alignment durations
(FILE: ID|frames per phoneme id, from train.py --dump-durations), and the rest of the checkpoint is copied unchanged,
so export.py --ckpt OUT_DIR exports it. Losses (--loss, default linear; all over real phonemes only):

  log        squared error of logw against duration_target(d): train.py's loss, the control.
  linear     Huber (smooth L1) between exp(logw) and d - 0.5, in frames, quadratic for errors under model.LINEAR_BETA
             frames: that part fits the conditional mean, which ceil() then turns into the mean duration. A Huber
             with a 1-frame knee is linear for most errors and fits nearer the median, which for a skewed duration
             distribution is the geometric mean again (360 Festival sentences, held-out frames ratio after 300 steps:
             knee 1 frame 0.93, 4 frames 0.96, 8 frames 0.97, plain squared error 0.98); the linear tail keeps long
             pauses (50+ frames) from dominating the gradient.
  lognormal  log-domain squared error split in two: an utterance's mean log-error squared is the part that pins its
             overall level to the geometric mean, so it is replaced by the squared log-ratio of the utterance's
             predicted frames (sum of exp(logw)) to its true frames (sum of d - 0.5); the rest, the log-errors about
             their utterance's mean, still fits the relative durations in the log domain. Adding the ratio term to the
             full log loss instead would stop half-way: with equal weights the two pull the level to the midpoint of
             the geometric and arithmetic means.

Validation (every VAL_EVERY steps and at the end, on the --holdout utterances) rounds as inference does:
ceil(exp(logw)), no noise.
"""
import argparse
import json
import math
import os
import random
import shutil
import sys
import time

import torch
from torch.nn.utils.rnn import pad_sequence

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import data  # noqa: E402
from model import DurationPredictor, duration_loss, load_voice  # noqa: E402

T0 = time.time()
VAL_EVERY = 200


def log(*a):
    print(f"[{time.time() - T0:6.1f}s]", *a, flush=True)


def read_durations(paths):
    dur = {}
    for p in paths:
        with open(p, encoding="utf-8") as f:
            for line in f:
                uid, _, rest = line.rstrip("\n").partition("|")
                if rest.strip():
                    dur[uid] = [int(t) for t in rest.split()]
    return dur


def masks(lengths):
    lmax = int(max(lengths))
    return (torch.arange(lmax).unsqueeze(0) < torch.tensor(lengths).unsqueeze(1)).float().unsqueeze(1)


@torch.no_grad()
def encoder_states(model, utts, batch):
    """Each utterance's encoder output h, [L, hidden] (length-sorted batches: less padding to compute)."""
    order = sorted(range(len(utts)), key=lambda i: len(utts[i]["ids"]))
    for k in range(0, len(order), batch):
        sel = [utts[i] for i in order[k:k + batch]]
        ids = pad_sequence([u["ids"] for u in sel], batch_first=True)
        h = model.enc(ids, masks([len(u["ids"]) for u in sel]))[0]
        for j, u in enumerate(sel):
            u["h"] = h[j, :, :len(u["ids"])].t().contiguous()


def collate(utts):
    """Padded batch: h [B,H,L], ids [B,L], d [B,1,L] (1 where padded, so its log stays finite), x_mask [B,1,L]."""
    h = pad_sequence([u["h"] for u in utts], batch_first=True).transpose(1, 2)
    ids = pad_sequence([u["ids"] for u in utts], batch_first=True)
    d = pad_sequence([u["d"] for u in utts], batch_first=True, padding_value=1.0).unsqueeze(1)
    return h, ids, d, masks([len(u["ids"]) for u in utts])


def batches(utts, batch, rng):
    """Sortish batches of utterances by phoneme count (data.sortish_batches, as train.py samples)."""
    for c in data.sortish_batches([len(u["ids"]) for u in utts], batch, rng):
        yield [utts[i] for i in c]


@torch.no_grad()
def validate(dp, val, batch, n_symbols):
    """Inference-rounded metrics over the held-out phonemes, and per id: (count, true frames, predicted frames)."""
    dp.eval()
    se = ae = pred_sum = true_sum = n = 0.0
    per_id = torch.zeros(3, n_symbols, dtype=torch.float64)
    for k in range(0, len(val), batch):
        h, ids, d, x_mask = collate(val[k:k + batch])
        pred = torch.ceil(torch.exp(dp(h, x_mask)))
        m = x_mask.bool()
        p, t, i = pred[m].double(), d[m].double(), ids[x_mask[:, 0].bool()]
        se += ((torch.log(p) - torch.log(t)) ** 2).sum().item()
        ae += (p - t).abs().sum().item()
        pred_sum += p.sum().item()
        true_sum += t.sum().item()
        n += p.numel()
        per_id[0].index_add_(0, i, torch.ones_like(p))
        per_id[1].index_add_(0, i, t)
        per_id[2].index_add_(0, i, p)
    dp.train()
    return {"rmse_log": math.sqrt(se / n), "ratio": pred_sum / true_sum, "mae": ae / n}, per_id


def symbol_names():
    with open(os.path.join(HERE, "phoneme_id_map.json"), encoding="utf-8") as f:
        id_map = json.load(f)
    names = {}
    for sym, ids in id_map.items():
        for i in ids:
            names[i] = names[i] + "|" + sym if i in names else sym
    return names


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ckpt", required=True, help="folder with ac.pt + gen.pt")
    ap.add_argument("--durations", nargs="+", required=True, help="ID|frames per phoneme id (later files win)")
    ap.add_argument("--ids", required=True, help="corpusids output: ID|ids|text")
    ap.add_argument("--out", required=True)
    ap.add_argument("--loss", choices=("log", "linear", "lognormal"), default="linear")
    ap.add_argument("--steps", type=int, default=2000)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--holdout", type=int, default=200, help="utterances held out for validation")
    ap.add_argument("--init", choices=("fresh", "ckpt"), default="ckpt",
                    help="start from the checkpoint's dp weights, or from a new initialisation")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()

    torch.set_num_threads(2)
    torch.manual_seed(a.seed)
    model, ac = load_voice(a.ckpt)
    log(f"{a.ckpt}: step {ac['step']}, loss {a.loss}, init {a.init}")

    durs = read_durations(a.durations)
    utts, mismatched = [], 0
    for uid, ids, _ in data.read_ids(a.ids):
        d = durs.pop(uid, None)
        if d is None:
            continue
        if len(d) != len(ids):
            mismatched += 1
            continue
        utts.append({"ids": torch.tensor(ids), "d": torch.tensor(d, dtype=torch.float32)})
    log(f"{len(utts)} utterances with ids and durations; skipped {mismatched} whose duration count differs from "
        f"their id count, {len(durs)} with durations but no ids")
    if len(utts) <= a.holdout:
        raise SystemExit(f"{len(utts)} utterances: nothing left to train on after --holdout {a.holdout}")

    encoder_states(model, utts, a.batch)
    log(f"encoder states of {len(utts)} utterances, {sum(len(u['ids']) for u in utts)} phoneme ids")
    rng = random.Random(a.seed)
    rng.shuffle(utts)
    train, val = utts[:-a.holdout], utts[-a.holdout:]

    dp = model.dp if a.init == "ckpt" else DurationPredictor(model.cfg["hidden"], model.cfg["dp_filter"])
    dp.train()
    opt = torch.optim.AdamW(dp.parameters(), a.lr, betas=(0.9, 0.98), weight_decay=0.01)
    n_symbols = model.cfg["n_symbols"]

    def report(step, losses):
        metrics, per_id = validate(dp, val, a.batch, n_symbols)
        train_loss = f"loss {sum(losses) / len(losses):.4f} " if losses else ""
        log(f"step {step} {train_loss}| held-out {len(val)}: rmse_log {metrics['rmse_log']:.4f} "
            f"frames ratio {metrics['ratio']:.4f} mae {metrics['mae']:.3f}")
        return per_id

    per_id = report(0, [])
    stream = batches(train, a.batch, rng)
    losses = []
    for step in range(1, a.steps + 1):
        for g in opt.param_groups:
            g["lr"] = a.lr * (0.1 + 0.45 * (1 + math.cos(math.pi * (step - 1) / a.steps)))
        h, _, d, x_mask = collate(next(stream))
        loss = duration_loss(a.loss, dp(h, x_mask), d, x_mask)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(dp.parameters(), 5.0)
        opt.step()
        losses.append(loss.item())
        if step % VAL_EVERY == 0 or step == a.steps:
            if not all(math.isfinite(v) for v in losses):
                raise SystemExit(f"non-finite loss by step {step}: nothing saved")
            per_id = report(step, losses)
            losses = []

    names = symbol_names()
    count, true_f, pred_f = per_id
    lost = sorted((i for i in range(n_symbols) if count[i] > 0), key=lambda i: -(true_f[i] - pred_f[i]).item())
    log("the 12 symbols that lose the most frames (held-out): symbol n mean_true mean_pred")
    for i in lost[:12]:
        print(f"  {names.get(i, f'#{i}')!r} {int(count[i])} {true_f[i] / count[i]:.2f} {pred_f[i] / count[i]:.2f}")

    os.makedirs(a.out, exist_ok=True)
    new_dp = {"dp." + k: v.detach() for k, v in dp.state_dict().items()}
    state = {k: new_dp[k].to(v.dtype) if k in new_dp else v for k, v in ac["model"].items()}
    torch.save({**ac, "dp_loss": a.loss, "model": state}, os.path.join(a.out, "ac.pt"))
    shutil.copyfile(os.path.join(a.ckpt, "gen.pt"), os.path.join(a.out, "gen.pt"))
    log(f"saved {a.out}/ac.pt (new dp, {a.loss} loss) and gen.pt (copied)")


if __name__ == "__main__":
    main()
