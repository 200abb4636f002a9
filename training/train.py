"""Train ttsgen's default voice on Festival-generated speech (see README.md for the commands).

One process does everything inside a wall-clock budget: starts Festival on the CPU cores (a first share of the
sentences, then the rest in the background while the GPU already trains), computes log-mels on the GPU, and trains
the acoustic model (alignment by monotonic alignment search against the per-phoneme mel prior, duration predictor,
frame decoder) and the waveform generator `dec` (mel L1 + multi-resolution STFT + a small GAN) in the same steps.
The generator sees ground-truth mels and, more and more, the acoustic model's own teacher-forced mels.
Either half can train alone: --freeze-acoustic trains the generator on the frozen acoustic model's mels, computed once;
--freeze-generator trains the acoustic model (with --mel-adv, against a mel discriminator; with --prominence, against
the tone of the generator's audio from its mels) and keeps the generator.
Checkpoints are plain state dicts split into files under 16 MiB: ac.pt (acoustic), gen.pt (dec), disc.pt, and
mdisc.pt with --mel-adv.
"""
import time

T0 = time.time()  # the budget counts from here, before the slow imports

import argparse  # noqa: E402
import contextlib  # noqa: E402
import math  # noqa: E402
import os  # noqa: E402
import random  # noqa: E402
import sys  # noqa: E402
from dataclasses import dataclass  # noqa: E402

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import data  # noqa: E402
import mas as mas_mod  # noqa: E402
from model import (HOP, INFERENCE_SCALES, LATENT_NOISE_STD, N_MELS, Voice, count_params,  # noqa: E402
                   duration_loss, make_latent, path_from_durations, read_checkpoint, synthesis_durations)


def log(*a):
    print(f"[{time.time() - T0:6.1f}s]", *a, flush=True)


# ---------------------------------------------------------------- discriminators (small HiFi-GAN MPD + MSD)
def conv_stack(convs, post, x):
    """A discriminator's body: LeakyReLU after each conv, then the output conv; every activation is kept, for
    feature matching. Returns (scores flattened, activations)."""
    feats = []
    for layer in convs:
        x = F.leaky_relu(layer(x), 0.1)
        feats.append(x)
    x = post(x)
    feats.append(x)
    return x.flatten(1), feats


class PeriodDisc(nn.Module):
    def __init__(self, period, ch=(32, 64, 128, 256)):
        super().__init__()
        self.period = period
        layers, c_in = [], 1
        for c in ch:
            layers.append(nn.Conv2d(c_in, c, (5, 1), (3, 1), padding=(2, 0)))
            c_in = c
        layers.append(nn.Conv2d(c_in, c_in, (5, 1), 1, padding=(2, 0)))
        self.convs = nn.ModuleList(layers)
        self.post = nn.Conv2d(c_in, 1, (3, 1), 1, padding=(1, 0))

    def forward(self, x):
        b, c, t = x.shape
        if t % self.period:
            x = F.pad(x, (0, self.period - t % self.period), "reflect")
            t = x.shape[-1]
        x = x.view(b, c, t // self.period, self.period)
        return conv_stack(self.convs, self.post, x)


class ScaleDisc(nn.Module):
    def __init__(self):
        super().__init__()
        self.convs = nn.ModuleList([
            nn.Conv1d(1, 32, 15, 1, padding=7),
            nn.Conv1d(32, 64, 41, 4, groups=4, padding=20),
            nn.Conv1d(64, 128, 41, 4, groups=16, padding=20),
            nn.Conv1d(128, 256, 41, 4, groups=16, padding=20),
            nn.Conv1d(256, 256, 5, 1, padding=2),
        ])
        self.post = nn.Conv1d(256, 1, 3, 1, padding=1)

    def forward(self, x):
        return conv_stack(self.convs, self.post, x)


class SpectrogramDisc(nn.Module):
    """UnivNet-style resolution discriminator on a linear magnitude spectrogram: a steady tone or a frame-periodic
    pattern is a line across time here, which 2-D convolutions see at once."""

    def __init__(self, n_fft, hop, ch=32):
        super().__init__()
        self.n_fft, self.hop = n_fft, hop
        self.register_buffer("win", torch.hann_window(n_fft), persistent=False)
        self.convs = nn.ModuleList([
            nn.Conv2d(1, ch, (3, 9), padding=(1, 4)),
            nn.Conv2d(ch, ch, (3, 9), (1, 2), padding=(1, 4)),
            nn.Conv2d(ch, ch, (3, 9), (1, 2), padding=(1, 4)),
            nn.Conv2d(ch, ch, (3, 9), (1, 2), padding=(1, 4)),
            nn.Conv2d(ch, ch, (3, 3), padding=(1, 1)),
        ])
        self.post = nn.Conv2d(ch, 1, (3, 3), padding=(1, 1))

    def forward(self, x):
        with torch.autocast(x.device.type, enabled=False):
            s = torch.stft(x.squeeze(1).float(), self.n_fft, self.hop, self.n_fft, self.win, return_complex=True)
            x = s.abs().clamp_min(1e-7).transpose(1, 2).unsqueeze(1)  # [B,1,frames,bins]
        return conv_stack(self.convs, self.post, x)


class Discriminator(nn.Module):
    """HiFi-GAN's period (2, 3, 5, 7, 11) and scale discriminators, small, plus three resolution discriminators."""

    def __init__(self):
        super().__init__()
        self.discs = nn.ModuleList([PeriodDisc(p) for p in (2, 3, 5, 7, 11)] + [ScaleDisc()]
                                   + [SpectrogramDisc(n, h) for n, h in ((512, 128), (1024, 256), (2048, 512))])

    def forward(self, x):
        return [d(x) for d in self.discs]


class MelDisc(nn.Module):
    """Tells Festival's log-mel segments from the acoustic model's ([B,80,frames]): an L1-trained acoustic model
    predicts the mean of what it has seen, blurring vowels' formants, and the generator cannot restore detail the mel
    lacks. 2-D convolutions over (frequency, time) see a formant's sharpness at once."""

    def __init__(self, ch=32):
        super().__init__()
        self.convs = nn.ModuleList([
            nn.Conv2d(1, ch, (5, 3), padding=(2, 1)),
            nn.Conv2d(ch, ch, (5, 3), (2, 1), padding=(2, 1)),
            nn.Conv2d(ch, 2 * ch, (5, 3), (2, 2), padding=(2, 1)),
            nn.Conv2d(2 * ch, 2 * ch, (5, 3), (2, 1), padding=(2, 1)),
            nn.Conv2d(2 * ch, 2 * ch, (3, 3), padding=(1, 1)),
        ])
        self.post = nn.Conv2d(2 * ch, 1, (3, 3), padding=(1, 1))

    def forward(self, mel):
        return conv_stack(self.convs, self.post, mel.unsqueeze(1))


# ---------------------------------------------------------------- losses
class MultiResSTFTLoss(nn.Module):
    def __init__(self, res=((512, 128), (1024, 256), (2048, 512))):
        super().__init__()
        self.res = res
        for n, _ in res:
            self.register_buffer(f"w{n}", torch.hann_window(n))

    def forward(self, y_hat, y):
        loss = 0.0
        for n, h in self.res:
            w = getattr(self, f"w{n}")
            a = torch.stft(y_hat.float(), n, h, n, w, return_complex=True).abs().clamp_min(1e-6)
            b = torch.stft(y.float(), n, h, n, w, return_complex=True).abs().clamp_min(1e-6)
            sc = torch.linalg.norm(b - a, dim=(1, 2)) / torch.linalg.norm(b, dim=(1, 2)).clamp_min(1e-6)
            loss = loss + sc.mean() + F.l1_loss(torch.log(a), torch.log(b))
        return loss / len(self.res)


def long_term_spectrum(x, n_fft, hop, win, power):
    """The whole batch's long-term spectrum: |STFT|**power of x [B, N], averaged over items and frames -> [bins]."""
    s = torch.stft(x.float(), n_fft, hop, n_fft, win, return_complex=True).abs()
    return (s if power == 1 else s ** power).mean(dim=(0, 2))


class FrameCombLoss(nn.Module):
    """How much more the generator's long-term spectrum peaks at multiples of the frame rate (22,050/256 Hz) than the
    target audio's does, 1-10 kHz: the buzz that tone.py measures. A 2,048-point STFT puts those multiples on every 8th
    bin exactly; each one's level is taken against the mean of the 4 bins on either side, in log units, and only an
    excess over the target audio's own is penalised (voiced speech has harmonics there too)."""

    def __init__(self, sr=22050, n_fft=2048, hop=512, lo=1000.0, hi=10000.0):
        super().__init__()
        self.n_fft, self.hop = n_fft, hop
        self.register_buffer("win", torch.hann_window(n_fft), persistent=False)
        step = n_fft // HOP  # bins between multiples of the frame rate
        ks = [b for b in range(step, n_fft // 2 - 4, step) if lo <= b * sr / n_fft <= hi]
        self.register_buffer("peaks", torch.tensor(ks), persistent=False)
        self.register_buffer("sides", torch.tensor([[b + d for d in (-4, -3, -2, -1, 1, 2, 3, 4)] for b in ks]),
                             persistent=False)

    def contrast(self, x):
        spec = long_term_spectrum(x, self.n_fft, self.hop, self.win, 1).clamp_min(1e-7)
        return torch.log(spec[self.peaks]) - torch.log(spec[self.sides].mean(1))

    def forward(self, y_hat, y):
        return F.relu(self.contrast(y_hat) - self.contrast(y).detach()).mean()


class ProminenceLoss(nn.Module):
    """How much more any narrow band of the generator's long-term spectrum stands out of its +-400 Hz surroundings
    than the target audio's does, 1-10 kHz: tone.py's measure, made differentiable (a mean over the surroundings
    instead of their median). FrameCombLoss looks only at exact multiples of the frame rate against their +-43 Hz
    sides, so a bump tens of Hz wide (the voice's strongest, at 3.1 kHz) lifts both and goes unseen. The target is
    the same segments' audio, so the speech itself cancels and what is left is the generator's own.

    top=K averages only the K bins whose excess over the target's is largest: the mean over all ~840 bins of the band
    gives a bump ten bins wide about 1 % of the loss's pull, and tone.py reports the single worst peak.

    ceiling_db caps the target's prominence: Festival's audio has the 3 kHz bump itself (2.8-4.0 dB by tone.py), so an
    excess over it leaves the voice at least that high; capped, the loss pulls every bin down to the cap.

    pool=N measures instead the generator's spectrum averaged over about N batches (a running mean) against the
    ceiling alone. One batch's spectrum is too noisy for a bump of a few dB: on four generators whose tone.py peaks
    were 3.8-4.8 dB, the per-batch loss was the same for all (0.58-0.59 nat, sd 0.06), and so was the excess of
    their spectrum pooled over 24 batches over the target's pooled the same way; the pooled spectrum's excess over
    the ceiling alone ranked them as tone.py did (training/README.md 6y). The running mean's value is the loss's,
    the gradient is the current batch's at full strength, so the weight means what it does unpooled."""

    def __init__(self, sr=22050, n_fft=2048, hop=512, lo=1000.0, hi=10000.0, near=60.0, far=400.0, top=0,
                 ceiling_db=None, pool=0):
        super().__init__()
        if pool and ceiling_db is None:
            raise ValueError("a pooled prominence loss measures against the ceiling: it needs ceiling_db")
        self.n_fft, self.hop, self.top, self.pool = n_fft, hop, top, pool
        # prominence() is in natural-log units of power; tone.py's dB are 10*log10 of it
        self.ceiling = None if ceiling_db is None else ceiling_db * math.log(10) / 10
        self.register_buffer("running", torch.zeros(n_fft // 2 + 1), persistent=False)
        self.seen = 0
        self.register_buffer("win", torch.hann_window(n_fft), persistent=False)
        df = sr / n_fft
        reach = int(far // df)
        ring = torch.tensor([1.0 if near < abs(k) * df <= far else 0.0 for k in range(-reach, reach + 1)])
        self.register_buffer("ring", (ring / ring.sum()).view(1, 1, -1), persistent=False)
        band = [b for b in range(n_fft // 2 + 1) if lo <= b * df <= hi]
        self.register_buffer("band", torch.tensor(band), persistent=False)

    def prominence(self, x):
        return self.prominence_of(long_term_spectrum(x, self.n_fft, self.hop, self.win, 2))

    def prominence_of(self, power):
        spec = torch.log(power.clamp_min(1e-10))
        around = F.conv1d(spec.view(1, 1, -1), self.ring, padding=self.ring.shape[-1] // 2).view(-1)
        return (spec - around)[self.band]

    def excess(self, prom, target=None):
        """The loss of a prominence (prominence_of's) over a target's, capped at the ceiling, or over the ceiling
        alone when there is no target: the mean of the top bins' excess, or of every bin's."""
        if target is None:
            target = self.ceiling
        elif self.ceiling is not None:
            target = target.clamp_max(self.ceiling)
        excess = F.relu(prom - target)
        return excess.topk(min(self.top, excess.numel())).values.mean() if self.top else excess.mean()

    def forward(self, y_hat, y):
        if self.pool:
            return self.pooled(y_hat)
        return self.excess(self.prominence(y_hat), self.prominence(y).detach())

    def pooled(self, y_hat):
        power = long_term_spectrum(y_hat, self.n_fft, self.hop, self.win, 2)
        with torch.no_grad():
            self.seen += 1
            self.running += (power.detach().float() - self.running) / min(self.seen, self.pool)
        return self.excess(self.prominence_of(self.running + (power - power.detach())))


class BandLevelLoss(nn.Module):
    """How far the generator's long-term spectrum is from the target audio's, band by band (a third of an octave
    wide, from 100 Hz to the Nyquist frequency), in log power: diagnose.py's band table, made a loss. The mel loss
    is an L1 over each frame's log levels, so it fits their medians; a band's long-term level is a mean of power,
    which the loud frames decide, and there the inverse-STFT generator stayed short at 1-2 kHz and over above 6 kHz
    with the mel loss taken to 11,025 Hz (MODEL_CARD.md). The target is the same segments' audio."""

    def __init__(self, sr=22050, n_fft=2048, hop=512, lo=100.0):
        super().__init__()
        self.n_fft, self.hop = n_fft, hop
        self.register_buffer("win", torch.hann_window(n_fft), persistent=False)
        freqs = torch.arange(n_fft // 2 + 1) * sr / n_fft
        edges = [lo]
        while edges[-1] < sr / 2:
            edges.append(edges[-1] * 2 ** (1 / 3))
        members = [(freqs >= a) & (freqs < b) for a, b in zip(edges, edges[1:])]
        weights = torch.stack([m.float() / m.sum() for m in members if m.any()])  # [bands, bins], rows mean a band
        self.register_buffer("weights", weights, persistent=False)

    def levels(self, x):
        return torch.log(self.weights @ long_term_spectrum(x, self.n_fft, self.hop, self.win, 2) + 1e-10)

    def forward(self, y_hat, y):
        return (self.levels(y_hat) - self.levels(y).detach()).abs().mean()


def masked_mean(x, mask):
    return (x * mask).sum() / (mask.sum() * (x.shape[1] if x.dim() == 3 and mask.shape[1] == 1 else 1)).clamp_min(1)


# ---------------------------------------------------------------- data on the GPU
class Corpus:
    """All utterances in flat GPU tensors: ids padded [N, Lmax], mels [80, frames], audio [samples], speaker ids.

    real_share: with utterances of speaker 1 (real recordings) among Festival's (speaker 0), the share of batch items
    drawn from speaker 1, whatever the two corpora's sizes (its utterances are repeated in the sampling pool)."""

    def __init__(self, dev, real_share=0.5):
        self.dev = dev
        self.real_share = real_share
        self.uids, self.ids, self.x_len, self.mels, self.y_len, self.audio, self.spk = [], [], [], [], [], [], []
        self.melspec = data.MelSpec().to(dev)

    @torch.no_grad()
    def add(self, items, wavs, speaker=0):
        for (uid, ids, _), wav in zip(items, wavs):
            if len(wav) < 40 * HOP:
                continue
            self.uids.append(uid)
            self.spk.append(speaker)
            a = torch.from_numpy(wav).to(self.dev)
            mel = self.melspec(a.unsqueeze(0))[0]
            self.ids.append(torch.tensor(ids, dtype=torch.long))
            self.x_len.append(len(ids))
            self.mels.append(mel)
            self.y_len.append(mel.shape[1])
            self.audio.append(a)
        self._build()

    def _build(self):
        n = len(self.ids)
        lmax = max(self.x_len)
        ids = torch.zeros(n, lmax, dtype=torch.long)
        for i, t in enumerate(self.ids):
            ids[i, :len(t)] = t
        self.ids_pad = ids.to(self.dev)
        self.x_len_t = torch.tensor(self.x_len, device=self.dev)
        self.y_len_t = torch.tensor(self.y_len, device=self.dev)
        self.spk_t = torch.tensor(self.spk, device=self.dev)
        self.mel_flat = torch.cat(self.mels, 1)
        self.audio_flat = torch.cat(self.audio)
        self.frame_off = torch.cumsum(torch.tensor([0] + self.y_len[:-1], device=self.dev), 0)
        self.order = sorted(range(n), key=lambda i: self.y_len[i])
        self.hours = sum(self.y_len) * HOP / data.SR / 3600

    def __len__(self):
        return len(self.ids)

    def sampling_pool(self):
        """Utterance indices to draw batches from: each once, or, with both speakers present, speaker 1's repeated so
        that they make about real_share of the pool."""
        real = [i for i, s in enumerate(self.spk) if s == 1]
        synth = [i for i, s in enumerate(self.spk) if s != 1]
        if not real or not synth:
            return list(range(len(self.spk)))
        repeat = max(1, round(self.real_share / (1 - self.real_share) * len(synth) / len(real)))
        return synth + real * repeat

    def batches(self, batch):
        """Sortish batches of utterances by frame count (data.sortish_batches), as index tensors on the device."""
        pool = self.sampling_pool()
        for c in data.sortish_batches([self.y_len[i] for i in pool], batch, random):
            yield torch.tensor([pool[j] for j in c], device=self.dev)

    def padded(self, flat, sel, T):
        """Per-frame features stored like mel_flat ([C, frames], utterances back to back) -> [B,C,T], zero-padded."""
        y_len = self.y_len_t[sel]
        t = torch.arange(T, device=self.dev)
        idx = self.frame_off[sel].unsqueeze(1) + torch.minimum(t.unsqueeze(0), (y_len - 1).unsqueeze(1))
        return flat[:, idx].permute(1, 0, 2) * (t.unsqueeze(0) < y_len.unsqueeze(1)).float().unsqueeze(1)

    def get(self, sel):
        x_len = self.x_len_t[sel]
        y_len = self.y_len_t[sel]
        L = int(x_len.max())
        T = int(y_len.max())
        T = ((T + 63) // 64) * 64  # fewer distinct shapes (cudnn benchmarks each)
        ids = self.ids_pad[sel, :L]
        t = torch.arange(T, device=self.dev)
        y_mask = (t.unsqueeze(0) < y_len.unsqueeze(1)).float().unsqueeze(1)
        mel = self.padded(self.mel_flat, sel, T)  # [B,80,T]
        return ids, x_len, mel, y_len, y_mask, T, self.spk_t[sel]


# ---------------------------------------------------------------- checkpoints
# The architecture of the shipped voice (train.py's default; from_onnx.py rebuilds it from the exported graph).
FULL_SIZE = dict(hidden=192, enc_layers=6, dp_filter=256, dec_channels=192, dec_layers=6, gen_channels=256)


FILE_LIMIT = 16 * 2**20  # the device machine returns files of at most 16 MiB


def save_ckpt(model, disc, step, out_dir, extra, half=False, mel_disc=None, half_ac=False):
    """half: the weights in float16 (half the bytes to carry; enough to evaluate or to resume a fine-tune from).
    half_ac: only the acoustic model's weights in float16 (a frozen one that was read from float16 loses nothing,
    and the next call's carry stays under the device's limit). A part whose float32 weights would not fit in a file
    the device machine returns (a deepened frame decoder's) is saved in float16 too, as a fine-tune resumes from."""
    os.makedirs(out_dir, exist_ok=True)
    to_half = lambda v: v.half() if v.is_floating_point() else v  # noqa: E731
    cast = to_half if half else (lambda v: v)
    cast_ac = to_half if half_ac else cast
    ac = {k: cast_ac(v) for k, v in model.state_dict().items() if not k.startswith("dec.")}
    gen = {k: cast(v) for k, v in model.state_dict().items() if k.startswith("dec.")}
    for name, part in (("ac.pt", ac), ("gen.pt", gen)):
        if sum(v.numel() * v.element_size() for v in part.values()) > FILE_LIMIT - 2**20:  # 1 MiB for the rest
            part.update({k: to_half(v) for k, v in part.items()})
            log(f"{name} in float16: its float32 weights would not fit in {FILE_LIMIT // 2**20} MiB")
    meta = {"cfg": model.cfg, "step": step, **extra}
    torch.save({**meta, "model": ac}, os.path.join(out_dir, "ac.pt"))
    torch.save({**meta, "model": gen}, os.path.join(out_dir, "gen.pt"))
    files = ["ac.pt", "gen.pt"]
    if disc is not None:
        # the discriminator in half precision: it only has to resume, and the carried files must stay small
        torch.save({**meta, "model": {k: v.half() for k, v in disc.state_dict().items()}},
                   os.path.join(out_dir, "disc.pt"))
        files.append("disc.pt")
    if mel_disc is not None:
        torch.save({**meta, "model": {k: v.half() for k, v in mel_disc.state_dict().items()}},
                   os.path.join(out_dir, "mdisc.pt"))
        files.append("mdisc.pt")
    for f in files:
        log(f"saved {f}: {os.path.getsize(os.path.join(out_dir, f)) / 2**20:.1f} MiB")


def load_ckpt(d):
    ac, gen = read_checkpoint(d)
    disc_p = os.path.join(d, "disc.pt")
    disc = torch.load(disc_p, map_location="cpu", weights_only=False) if os.path.exists(disc_p) else None
    state = {**ac["model"], **gen["model"]}
    return ac, state, disc


def merged_checkpoint(d, out_path):
    """ac.pt + gen.pt -> one checkpoint for export.py."""
    ac, state, _ = load_ckpt(d)
    torch.save({"cfg": ac["cfg"], "step": ac["step"], "model": state}, out_path)


# ---------------------------------------------------------------- training
def mel_adversary(mel_disc, opt_md, mel_pred, mel, y_len, seg):
    """One step of the mel discriminator on a segment of each utterance (Festival's mel against the prediction), then
    the acoustic model's adversarial and feature-matching losses on the same segments. Returns (d, adv, fm)."""
    b = mel.shape[0]
    seg = min(seg, int(y_len.min()))
    starts = (torch.rand(b, device=mel.device) * (y_len - seg).float()).long()
    fidx = starts.unsqueeze(1) + torch.arange(seg, device=mel.device).unsqueeze(0)
    bidx = torch.arange(b, device=mel.device).unsqueeze(1)
    real = mel[bidx, :, fidx].permute(0, 2, 1)
    fake = mel_pred[bidx, :, fidx].permute(0, 2, 1)
    (r, _), (f, _) = mel_disc(real), mel_disc(fake.detach())
    loss_d = ((1 - r) ** 2).mean() + (f ** 2).mean()
    opt_md.zero_grad(set_to_none=True)
    loss_d.backward()
    torch.nn.utils.clip_grad_norm_(mel_disc.parameters(), 100.0)
    opt_md.step()
    f, f_feats = mel_disc(fake)
    with torch.no_grad():
        _, r_feats = mel_disc(real)
    loss_adv = ((1 - f) ** 2).mean()
    loss_fm = sum(F.l1_loss(ff, rf) for ff, rf in zip(f_feats, r_feats)) / len(f_feats)
    return loss_d.detach(), loss_adv, loss_fm


def align(model, ids, x_len, mel, y_len, b_enc, amp=contextlib.nullcontext()):
    """The text encoder's h and mu for a batch, and its monotonic alignment's durations: what the training step and
    aligned_batches both start from. amp: the autocast to run the encoder under. Returns (x_mask, h, mu, durations
    [B,1,L], seconds spent in MAS)."""
    x_mask = (torch.arange(ids.shape[1], device=ids.device).unsqueeze(0) < x_len.unsqueeze(1)).float().unsqueeze(1)
    with amp:
        h, mu = model.enc(ids, x_mask, b_enc)
    h, mu = h.float(), mu.float()
    with torch.no_grad():
        logp = mas_mod.frame_log_likelihood(mu, mel)
        t_m = time.time()
        path = mas_mod.mas(logp, x_len, y_len)  # [B,L,T]
        mas_s = time.time() - t_m
    return x_mask, h, mu, path.sum(-1).unsqueeze(1), mas_s


@dataclass
class Rig:
    """What the training steps work with, built once before the loop, so that a step takes it whole instead of each
    piece as an argument. mel_disc and opt_md are None without --mel-adv; fresh_disc, fresh_mel_disc: that
    discriminator was not resumed (its adversarial losses wait --adv-delay steps)."""
    model: Voice
    ac_params: list
    opt_ac: torch.optim.Optimizer
    opt_g: torch.optim.Optimizer
    disc: Discriminator
    opt_d: torch.optim.Optimizer
    fresh_disc: bool
    mel_disc: MelDisc | None
    opt_md: torch.optim.Optimizer | None
    fresh_mel_disc: bool
    loss_melspec: nn.Module  # the generator's mel loss (--loss-fmax), not the voice's features
    stft_loss: MultiResSTFTLoss
    comb_loss: FrameCombLoss
    prominence_loss: ProminenceLoss
    band_loss: BandLevelLoss
    amp: object  # the autocast context of the forward passes
    dev: torch.device
    zero: torch.Tensor  # what a loss that is not computed logs as


def acoustic_step(rig, a, corpus, sel, batch, k):
    """One optimiser step of the acoustic model (prior, frame decoder, duration predictor) on batch (corpus.get(sel)),
    aligned under its current weights; with --mel-adv the mel discriminator's step too, whose losses it returns apart
    (they are logged last). With --freeze-generator and --prominence, the prominence loss of the frozen generator's
    audio from the predicted mels trains the acoustic model: the generator makes its steady 3.1 kHz bump more from
    the acoustic model's smooth mels than from Festival's (training/README.md 6n), and mels are what can change.
    k: steps this run. Returns (losses, mel_losses, mel_pred, grad norm, seconds in MAS)."""
    ids, x_len, mel, y_len, y_mask, T, sid = batch
    model, amp = rig.model, rig.amp
    b_enc, b_frames = model.speaker_biases(sid)
    x_mask, h, mu, dur, mas_s = align(model, ids, x_len, mel, y_len, b_enc, amp)
    path2, frac = path_from_durations(dur, T)
    mu_exp = torch.matmul(mu, path2)
    with amp:
        mel_pred = model.frames(torch.matmul(h, path2), mu_exp, frac, y_mask, b_frames)
        logw = model.dp(h.detach(), x_mask)
    mel_pred = mel_pred.float()
    n_frames = y_mask.sum() * N_MELS
    loss_prior = 0.5 * (((mel - mu_exp) ** 2) * y_mask).sum() / n_frames
    err_ac = (mel_pred - mel).abs() * y_mask
    loss_mel_ac = err_ac.sum() / n_frames
    with torch.no_grad():  # the recordings' share of it, to watch the second speaker learn
        real = (sid == 1).float().view(-1, 1, 1)
        loss_mel_real = (err_ac * real).sum() / ((y_mask * real).sum() * N_MELS).clamp_min(1)
    loss_dur = duration_loss(a.dur_loss, logw.float(), dur, x_mask)
    losses = {"prior": loss_prior, "mel_ac": loss_mel_ac, "mel_ac_real": loss_mel_real, "dur": loss_dur}
    loss_ac = loss_prior + loss_mel_ac + loss_dur
    if a.freeze_generator and a.prominence:
        if a.prominence_layout == "predicted":
            mel_seg, y = synthesis_segments(model, h, mu, logw, x_mask, b_frames, a.seg, a.vbatch, amp), None
        else:
            bidx, fidx, y = generator_segments(a, corpus, sel, batch, rig.dev)
            mel_seg = mel_pred[bidx, :, fidx].permute(0, 2, 1)
        with amp:
            y_hat = model.dec(make_latent(mel_seg, torch.ones_like(mel_seg[:, :1])))
        losses["prom"] = rig.prominence_loss(y_hat.float().squeeze(1), None if y is None else y.squeeze(1))
        loss_ac = loss_ac + a.prominence * losses["prom"]
    mel_losses = {}
    if rig.mel_disc is not None:
        loss_md, loss_madv, loss_mfm = mel_adversary(rig.mel_disc, rig.opt_md, mel_pred, mel, y_len, a.seg * 2)
        mel_losses = {"md": loss_md, "madv": loss_madv, "mfm": loss_mfm}
        madv_on = 0.0 if rig.fresh_mel_disc and k < a.adv_delay else 1.0
        loss_ac = loss_ac + madv_on * a.mel_adv * (loss_madv + 2 * loss_mfm)
    rig.opt_ac.zero_grad(set_to_none=True)
    loss_ac.backward()
    gn_ac = torch.nn.utils.clip_grad_norm_(rig.ac_params, 5.0)
    rig.opt_ac.step()
    return losses, mel_losses, mel_pred, gn_ac, mas_s


def synthesis_segments(model, h, mu, logw, x_mask, b_frames, seg, n, amp):
    """Segments of mels as synthesis makes them for a batch's first n sentences: laid out by the duration
    predictor's durations (logw, with the shipped voice's noise), not the alignment's, and with its latent noise.
    diagnose.py placed the 1.3 kHz steady peak under the voice's own durations (training/README.md 6za), and the loss
    on these, capped at 1 dB, took it out (6zb). Gradients reach the encoder's h and mu and the frame decoder; the
    rounded durations pass none. Returns [n,80,seg] mels, each from a random start inside its sentence.
    The frame decoder runs on each segment with its reach either side, not on whole sentences: the same frames (past
    a sentence's ends the window is masked, as padding is) at a fraction of the cost."""
    n = min(n, h.shape[0])
    with torch.no_grad():
        w_ceil, lengths = synthesis_durations(logw[:n].float(), x_mask[:n], INFERENCE_SCALES["noise_w"],
                                              INFERENCE_SCALES["length_scale"])
        t_max = int(lengths.max())
        path, frac = path_from_durations(w_ceil, t_max)
        starts = (torch.rand(n, device=h.device) * (lengths - seg).clamp_min(0)).long()
        reach = model.frames.reach()
        widx = starts.unsqueeze(1) + torch.arange(-reach, seg + reach, device=h.device).unsqueeze(0)  # [n,W]
        inside = ((widx >= 0) & (widx < t_max)).to(path.dtype).unsqueeze(1)  # [n,1,W]
        widx = widx.clamp(0, t_max - 1).unsqueeze(1)
        path = torch.gather(path, 2, widx.expand(-1, path.shape[1], -1)) * inside
        frac = torch.gather(frac, 2, widx) * inside
    with amp:
        mel, _ = model.frames_along(h[:n], mu[:n], path, frac, None if b_frames is None else b_frames[:n])
    mel = mel[:, :, reach:reach + seg].float()
    return mel + torch.randn_like(mel) * (LATENT_NOISE_STD * INFERENCE_SCALES["noise_scale"])


def generator_segments(a, corpus, sel, batch, dev):
    """Where the generator trains on batch (corpus.get(sel)): the batch's first vbatch items, or with --voc-real-only
    vbatch segments of its recordings (cycled), each a.seg frames from a random start; always as many, since each new
    shape would make cudnn benchmark again. Returns (item index [vb,1], frame index [vb,seg], target audio
    [vb,1,seg*HOP]): mel[bidx, :, fidx].permute(0, 2, 1) is a [vb,80,seg] segment of a batch's mels."""
    _, _, _, y_len, _, _, sid = batch
    seg = a.seg
    real_items = (sid == 1).nonzero().squeeze(1) if a.voc_real_only else None
    if real_items is not None and len(real_items):
        vsel = real_items[torch.arange(a.vbatch, device=dev) % len(real_items)]
    else:
        vsel = torch.arange(min(a.vbatch, len(sel)), device=dev)
    starts = (torch.rand(len(vsel), device=dev) * (y_len[vsel] - seg).clamp_min(0).float()).long()
    fidx = starts.unsqueeze(1) + torch.arange(seg, device=dev).unsqueeze(0)
    sidx = (corpus.frame_off[sel[vsel]] + starts).unsqueeze(1) * HOP + torch.arange(seg * HOP, device=dev)
    sidx = sidx.clamp_max(corpus.audio_flat.shape[0] - 1)
    return vsel.unsqueeze(1), fidx, corpus.audio_flat[sidx].unsqueeze(1)


def generator_step(rig, a, corpus, sel, batch, mel_pred, step, k):
    """One step of the discriminators, then one of the waveform generator, on segments of batch (corpus.get(sel)) fed
    their ground-truth mels or, a share ramping up with step, mel_pred's teacher-forced ones. k: steps this run; in
    the first --disc-warmup of them the generator does not step. Returns (losses, the generator's grad norm, that
    share)."""
    _, _, mel, _, _, _, _ = batch
    model, disc, amp, dev, zero = rig.model, rig.disc, rig.amp, rig.dev, rig.zero
    bidx, fidx, y = generator_segments(a, corpus, sel, batch, dev)
    vb = len(bidx)
    mel_gt_seg = mel[bidx, :, fidx].permute(0, 2, 1)  # [vb,80,seg]
    mel_gta_seg = mel_pred.detach()[bidx, :, fidx].permute(0, 2, 1)
    p_gta = a.gta_max * min(1.0, step / max(1, a.gta_ramp))
    use_gta = (torch.rand(vb, 1, 1, device=dev) < p_gta).float()
    mel_in = use_gta * mel_gta_seg + (1 - use_gta) * mel_gt_seg
    mel_in = mel_in + torch.randn_like(mel_in) * LATENT_NOISE_STD * torch.rand(vb, 1, 1, device=dev)
    disc_only = k < a.disc_warmup
    with amp, torch.set_grad_enabled(not disc_only):
        y_hat = model.dec(make_latent(mel_in, torch.ones_like(mel_in[:, :1])))
    y_hat = y_hat.float()

    # At rate 0 (--disc-lr-scale 0) a step leaves the discriminator as it is: its loss is still logged, but its
    # backward pass and step would cost time on every step for nothing.
    train_d = any(g["lr"] > 0 for g in rig.opt_d.param_groups)
    with amp, torch.set_grad_enabled(train_d):
        d_real = disc(y)
        d_fake = disc(y_hat.detach())
    loss_d = sum(((1 - r.float()) ** 2).mean() + (f.float() ** 2).mean()
                 for (r, _), (f, _) in zip(d_real, d_fake))
    if train_d:
        rig.opt_d.zero_grad(set_to_none=True)
        loss_d.backward()
        torch.nn.utils.clip_grad_norm_(disc.parameters(), 100.0)
        rig.opt_d.step()
    if disc_only:
        return {"d": loss_d}, zero, p_gta

    with amp:
        d_fake = disc(y_hat)
    loss_adv = sum(((1 - f.float()) ** 2).mean() for f, _ in d_fake)
    loss_fm = sum(F.l1_loss(ff.float(), rf.detach().float())
                  for (_, fr), (_, ffs) in zip(d_real, d_fake) for rf, ff in zip(fr, ffs))
    loss_mel = F.l1_loss(rig.loss_melspec(y_hat.squeeze(1)), rig.loss_melspec(y.squeeze(1)))
    loss_stft = rig.stft_loss(y_hat.squeeze(1), y.squeeze(1))
    loss_comb = rig.comb_loss(y_hat.squeeze(1), y.squeeze(1)) if a.comb else zero
    loss_prom = rig.prominence_loss(y_hat.squeeze(1), y.squeeze(1)) if a.prominence else zero
    loss_band = rig.band_loss(y_hat.squeeze(1), y.squeeze(1)) if a.band_level else zero
    adv_on = 0.0 if rig.fresh_disc and k < a.adv_delay else 1.0
    loss_g = (45 * loss_mel + 15 * loss_stft + a.comb * loss_comb + a.prominence * loss_prom
              + a.band_level * loss_band + adv_on * (loss_adv + 2 * loss_fm))
    rig.opt_g.zero_grad(set_to_none=True)
    loss_g.backward()
    gn_g = torch.nn.utils.clip_grad_norm_(model.dec.parameters(), 100.0)
    rig.opt_g.step()
    losses = {"d": loss_d, "adv": loss_adv, "fm": loss_fm, "mel_g": loss_mel, "stft": loss_stft, "comb": loss_comb,
              "prom": loss_prom, "band": loss_band}
    return losses, gn_g, p_gta


def check_flags(a, ap):
    """Refuse flags that contradict each other or are out of range, before anything slow runs. Returns the
    prominence loss's band: {} for ProminenceLoss's own, or --prominence-band's {"lo", "hi"}."""
    band = {}
    if a.real_ids and not a.real:
        raise SystemExit("--real-ids needs --real (the folder of the recordings)")
    if a.freeze_acoustic and a.mel_adv:
        raise SystemExit("--mel-adv trains the acoustic model, which --freeze-acoustic keeps as loaded")
    if a.disc_warmup and a.freeze_generator:
        raise SystemExit("--disc-warmup trains the waveform discriminator against the generator, which "
                         "--freeze-generator leaves out")
    if a.disc_lr_scale != 1.0 and a.freeze_generator:
        raise SystemExit("--disc-lr-scale sets the waveform discriminator's rate beside the generator's, which "
                         "--freeze-generator leaves out")
    if a.disc_lr_scale < 0:
        raise SystemExit(f"--disc-lr-scale {a.disc_lr_scale}: want 0 or more")
    if a.disc_warmup < 0:
        raise SystemExit(f"--disc-warmup {a.disc_warmup}: want 0 or more steps")
    if a.freeze_acoustic and a.freeze_generator:
        raise SystemExit("--freeze-acoustic and --freeze-generator together would train nothing")
    if a.prominence_top < 0 or (a.prominence_top and not a.prominence):
        raise SystemExit(f"--prominence-top {a.prominence_top}: want a number of bins from 1, with --prominence W")
    if a.prominence_ceiling is not None and (a.prominence_ceiling < 0 or not a.prominence):
        raise SystemExit(f"--prominence-ceiling {a.prominence_ceiling}: want 0 dB or more, with --prominence W")
    if a.prominence_pool < 0 or (a.prominence_pool and a.prominence_ceiling is None):
        raise SystemExit(f"--prominence-pool {a.prominence_pool}: want a number of batches from 1, with "
                         "--prominence-ceiling DB (the pooled spectrum is measured against the ceiling)")
    if a.prominence_layout == "predicted" and not (a.freeze_generator and a.prominence_pool):
        raise SystemExit("--prominence-layout predicted lays out the acoustic model's mels for the frozen generator, "
                         "with no target audio to match: it needs --freeze-generator and --prominence-pool N")
    if a.prominence_band is not None:
        try:
            lo, hi = (float(v) for v in a.prominence_band.split(","))
            if not 0 < lo < hi <= data.SR / 2:
                raise ValueError
        except ValueError:
            raise SystemExit(f"--prominence-band {a.prominence_band}: want LO,HI in Hz with 0 < LO < HI <= "
                             f"{data.SR // 2}")
        if not a.prominence:
            raise SystemExit("--prominence-band sets the prominence loss's band: it needs --prominence W")
        band = {"lo": lo, "hi": hi}
    if a.freeze_generator and (a.widen_gen or a.istft_head):
        raise SystemExit("--widen-gen and --istft-head make a generator to train, which --freeze-generator keeps "
                         "as loaded")
    if a.deepen_frames and (a.freeze_acoustic or not a.resume):
        raise SystemExit(f"--deepen-frames {a.deepen_frames}: the new blocks deepen a trained voice (--resume) and must "
                         "train, which --freeze-acoustic does not")
    if a.widen_gen and a.istft_head:
        raise SystemExit("--istft-head CHANNELS widens the stages it keeps itself; leave out --widen-gen")
    if a.istft_head and not a.resume:
        raise SystemExit("--istft-head converts a trained generator: it needs --resume")
    if a.istft_nfft != ap.get_default("istft_nfft") and not a.istft_head:
        raise SystemExit(f"--istft-nfft {a.istft_nfft}: it sizes the head that --istft-head makes")
    if not data.MEL_FMAX <= a.loss_fmax <= data.SR / 2:
        raise SystemExit(f"--loss-fmax {a.loss_fmax:g}: want {data.MEL_FMAX:g} (the features' band) to "
                         f"{data.SR // 2} Hz")
    if a.freeze_generator and a.loss_fmax != data.MEL_FMAX:
        raise SystemExit("--loss-fmax sets the generator's loss, and --freeze-generator keeps the generator as loaded")
    for flag, weight in (("--band-level", a.band_level), ("--comb", a.comb)):  # the generator's losses alone
        if weight < 0 or (weight and a.freeze_generator):
            raise SystemExit(f"{flag} {weight:g}: want a weight from 0 for the generator's loss, which "
                             "--freeze-generator does not train")
    return band


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ids", required=True, help="corpusids output: ID|ids|text")
    ap.add_argument("--n", type=int, default=2000, help="utterances to use (from the top of the ids file)")
    ap.add_argument("--skip", type=int, default=0, help="ids lines to skip first (fresh sentences on resume)")
    ap.add_argument("--first", type=int, default=500, help="utterances generated before training starts")
    ap.add_argument("--wav-dir", default="/tmp/ttsgen-wavs")
    ap.add_argument("--workers", type=int, default=16)
    ap.add_argument("--budget", type=float, default=480, help="seconds from process start to the final save")
    ap.add_argument("--max-steps", type=int, default=10 ** 9)
    ap.add_argument("--batch", type=int, default=48)
    ap.add_argument("--vbatch", type=int, default=32, help="vocoder segments per step")
    ap.add_argument("--seg", type=int, default=32, help="vocoder segment, frames")
    ap.add_argument("--lr-ac", type=float, default=1e-3)
    ap.add_argument("--lr-gen", type=float, default=4e-4)
    ap.add_argument("--gta-max", type=float, default=0.5, help="final share of teacher-forced mels fed to dec")
    ap.add_argument("--gta-ramp", type=int, default=1500, help="steps over which that share ramps from 0")
    ap.add_argument("--warmup", type=int, default=300)
    ap.add_argument("--lr-end", type=float, default=1.0,
                    help="learning-rate factor reached at the end of the budget (linear in elapsed time from 1)")
    ap.add_argument("--lr-start", type=float, default=1.0, help="learning-rate factor at the start of this run")
    ap.add_argument("--adv-delay", type=int, default=200,
                    help="steps (from the run's start, --disc-warmup's included) before the generator sees a fresh "
                         "discriminator's losses; meanwhile the generator trains on its other losses, unless "
                         "--disc-warmup holds it")
    ap.add_argument("--disc-warmup", type=int, default=0, metavar="STEPS",
                    help="the first STEPS steps of this run train the waveform discriminator alone, at --lr-gen "
                         "(not scaled by --lr-start/--lr-end), against the generator as loaded; the generator's "
                         "learning-rate warmup starts after them. A fresh discriminator at a fine-tune's low rate "
                         "stays weak for thousands of steps, while the generator drifts on its other losses")
    ap.add_argument("--disc-lr-scale", type=float, default=1.0, metavar="F",
                    help="the waveform discriminator's learning rate once the generator trains: F times --lr-gen "
                         "with the --lr-start/--lr-end schedule (--disc-warmup's steps stay at the full rate); 0 "
                         "holds it as loaded. "
                         "Generator calls lost DNSMOS P.808 while the discriminator's loss kept falling")
    ap.add_argument("--mel-adv", type=float, default=0.0,
                    help="weight of a mel discriminator's losses (LSGAN + feature matching) on the acoustic model's "
                         "predicted mels, against over-smoothed formants; 0: none")
    ap.add_argument("--intake-every", type=float, default=45,
                    help="seconds between intakes of the sentences Festival has finished meanwhile")
    ap.add_argument("--mid-save", default="",
                    help="comma-separated seconds: at each, also save the weights (float16, no discriminator) to "
                         "OUT/mid-SECONDS, to pick the best point of a run afterwards")
    ap.add_argument("--real", help="a folder of real recordings ID.flac or ID.wav (22,050 Hz mono) to train on "
                                   "instead of Festival's speech (--ids gives their phoneme ids), or beside it as a "
                                   "second speaker (with --real-ids)")
    ap.add_argument("--real-ids", help="the recordings' phoneme ids: train on them as speaker 1 and on Festival's "
                                       "speech of --ids as speaker 0, in the same batches (export.py --speaker 1 "
                                       "makes the recordings' voice)")
    ap.add_argument("--real-share", type=float, default=0.5, help="share of batch items from the recordings")
    ap.add_argument("--voc-real-only", action="store_true",
                    help="the generator trains on the recordings' segments alone (the exported speaker's audio)")
    ap.add_argument("--freeze-acoustic", action="store_true",
                    help="train the generator alone: the acoustic model's teacher-forced mels are computed once (and "
                         "at each intake) and its weights stay as loaded; with --real-ids, Festival is not run")
    ap.add_argument("--widen-gen", type=int, default=0, metavar="CHANNELS",
                    help="widen the resumed generator to CHANNELS at its input (256 in the shipped voice), computing "
                         "the same audio at first (Voice.widen_generator); 320 keeps one CPU thread above 15x real time")
    ap.add_argument("--deepen-frames", type=int, default=0, metavar="BLOCKS",
                    help="append BLOCKS residual blocks to the resumed voice's frame decoder (6 in the shipped voice), "
                         "computing the same mel at first (Voice.deepen_frames): acoustic capacity at about 1 %% of "
                         "the voice's CPU time a block")
    ap.add_argument("--istft-head", type=int, default=0, metavar="CHANNELS",
                    help="replace the resumed generator's last stage by an inverse-STFT head and widen the stages "
                         "before it to CHANNELS (Voice.istft_generator); the head starts untrained. 320 runs faster "
                         "on a CPU than the 256-channel generator with its last stage (BENCHMARKS.md). On a "
                         "generator that already ends in a head, CHANNELS must be its width and --istft-nfft another "
                         "n_fft: the head is replaced and its conv_post starts over")
    ap.add_argument("--istft-nfft", type=int, default=16, metavar="N",
                    help="with --istft-head: the head's FFT size at the replaced stage's hop (4 in the shipped "
                         "voice's generator); 32 gives twice 16's frequency grid")
    ap.add_argument("--loss-fmax", type=float, default=data.MEL_FMAX, metavar="HZ",
                    help="upper edge of the generator's mel loss; the voice's mel features stay at 8,000 Hz, and "
                         "above the loss's edge only the STFT loss and the discriminators see the audio. HiFi-GAN "
                         "takes this loss to the Nyquist frequency (11025)")
    ap.add_argument("--dur-loss", choices=("log", "linear", "lognormal"), default="log",
                    help="the duration predictor's loss (model.duration_loss; linear fits mean durations, log "
                         "the geometric means that runs 1-7 used)")
    ap.add_argument("--enc-lr", type=float, default=1.0,
                    help="learning-rate factor of the text encoder's embedding and conv blocks (a fine-tune on "
                         "little data keeps what the encoder learnt from many sentences)")
    ap.add_argument("--resume")
    ap.add_argument("--out", required=True)
    ap.add_argument("--small", action="store_true", help="toy dimensions for a CPU smoke test")
    ap.add_argument("--cpu-size", action="store_true", help="a mid-size acoustic model that a CPU can train")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--comb", type=float, default=0.0,
                    help="weight of the frame-rate comb loss (FrameCombLoss) in the generator's loss")
    ap.add_argument("--prominence", type=float, default=0.0,
                    help="weight of the long-term spectrum prominence loss (ProminenceLoss) in the generator's loss; "
                         "with --freeze-generator, in the acoustic model's, through the frozen generator")
    ap.add_argument("--prominence-top", type=int, default=0, metavar="K",
                    help="the prominence loss averages only the K bins that exceed the target audio's prominence "
                         "most (0: all of them)")
    ap.add_argument("--prominence-band", metavar="LO,HI",
                    help="the band, in Hz, whose bins the prominence loss looks at (default: tone.py's, 1-10 kHz). "
                         "Held to the generator's 3.1 kHz bump (2500,3500), it moved the bump to 3.6 kHz, out of the "
                         "band (training/README.md 6r)")
    ap.add_argument("--prominence-ceiling", type=float, metavar="DB",
                    help="the prominence loss's target is the target audio's own prominence, at most DB (tone.py's "
                         "dB): Festival's audio has the 3 kHz bump too, so without a ceiling the loss stops at it")
    ap.add_argument("--prominence-pool", type=int, default=0, metavar="N",
                    help="the prominence loss measures the generator's spectrum averaged over about N batches "
                         "against --prominence-ceiling alone, not each batch's against its target audio: one "
                         "batch's is too noisy to see a peak of a few dB (training/README.md 6y)")
    ap.add_argument("--prominence-layout", choices=("alignment", "predicted"), default="alignment",
                    help="with --freeze-generator, which durations lay out the mels the prominence loss hears: the "
                         "alignment's (default, beside the target audio) or the duration predictor's, as synthesis "
                         "does (training/README.md 6zb: this one took the 1.3 kHz peak out)")
    ap.add_argument("--band-level", type=float, default=0.0, metavar="W",
                    help="weight of the long-term band level loss (BandLevelLoss) in the generator's loss")
    ap.add_argument("--freeze-generator", action="store_true",
                    help="train the acoustic model alone (with --mel-adv: sharper mels); the generator and its "
                         "discriminators stay as loaded")
    ap.add_argument("--dump-durations", action="store_true",
                    help="after the final save, write OUT/durations.txt: each utterance's alignment (frames per "
                         "phoneme id) under the final weights, the targets train_dp.py fits a duration predictor to")
    a = ap.parse_args()
    prominence_band = check_flags(a, ap)

    random.seed(a.seed)
    torch.manual_seed(a.seed)
    dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    cuda = dev.type == "cuda"
    log(f"torch {torch.__version__}, device {dev}, {torch.cuda.get_device_name() if cuda else ''}, numba MAS "
        f"{mas_mod.HAVE_NUMBA}")
    if cuda:
        torch.backends.cudnn.benchmark = True
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True
    if mas_mod.HAVE_NUMBA:  # check the fast MAS against the reference once, on random data
        lp = torch.randn(3, 20, 90)
        xl, yl = torch.tensor([20, 11, 5]), torch.tensor([90, 60, 20])
        if not torch.equal(mas_mod.mas_numba(lp, xl, yl), mas_mod.mas_torch(lp, xl, yl)):
            log("numba MAS disagrees with the torch reference: using torch")
            mas_mod.HAVE_NUMBA = False

    all_items = data.read_ids(a.ids)
    items = all_items[a.skip:a.skip + a.n]
    if not items:
        raise SystemExit(f"--skip {a.skip} --n {a.n}: {a.ids} has {len(all_items)} sentences, none after the first "
                         f"{a.skip}")
    if len(items) < a.n:
        log(f"{a.ids} has {len(all_items)} sentences: training on the {len(items)} after the first {a.skip}")
    random.Random(a.seed).shuffle(items)
    corpus = Corpus(dev, a.real_share)
    pending = None
    rest = []
    mixed = bool(a.real_ids)
    if mixed:
        rec_items, wavs = data.load_recordings(data.read_ids(a.real_ids), a.real, a.workers)
        corpus.add(rec_items, wavs, speaker=1)
        log(f"speaker 1, real recordings from {a.real}: {len(corpus)} utterances, {corpus.hours:.2f} h")
    if a.real and not mixed:
        items, wavs = data.load_recordings(items, a.real, a.workers)
        corpus.add(items, wavs)
        log(f"real recordings from {a.real}: {len(corpus)} utterances, {corpus.hours:.2f} h")
    elif not (mixed and a.freeze_acoustic):  # a frozen acoustic model needs no Festival beside the recordings
        first, rest = items[:a.first], items[a.first:]
        procs = data.start_festival(first, a.wav_dir, a.workers)
        for p in procs:
            p.wait()
        corpus.add(first, data.load_wavs([u for u, _, _ in first], a.wav_dir))
        log(f"first share: {len(corpus)} utterances, {corpus.hours:.2f} h")
        if rest:
            pending = data.start_festival(rest, a.wav_dir, max(1, a.workers - 3))
    t_intake = time.time()
    mid_saves = sorted(float(t) for t in a.mid_save.split(",") if t.strip())

    n_speakers = 2 if mixed else 1
    if a.small:
        model = Voice(hidden=32, enc_layers=2, dp_filter=32, dec_channels=32, dec_layers=2, gen_channels=32,
                      n_speakers=n_speakers)
    elif a.cpu_size:
        model = Voice(hidden=128, enc_layers=4, dp_filter=128, dec_channels=128, dec_layers=4, gen_channels=256,
                      n_speakers=n_speakers)
    else:
        model = Voice(**FULL_SIZE, n_speakers=n_speakers)
    disc = Discriminator()
    mel_disc = MelDisc() if a.mel_adv else None
    start_step = 0
    ac_was_half = False
    fresh_disc = fresh_mel_disc = True
    if a.resume:
        ac, state, dstate = load_ckpt(a.resume)
        cfg = {**ac["cfg"], "n_speakers": max(n_speakers, ac["cfg"].get("n_speakers", 1))}
        model = Voice(**cfg)
        missing, unexpected = model.load_state_dict(state, strict=False)
        # a single-speaker checkpoint starts a mixed run as speaker 0; its speakers' tables start at zero
        if unexpected or any(not k.startswith(("spk_enc.", "spk_frames.")) for k in missing):
            raise SystemExit(f"{a.resume}: weights do not fit: missing {missing}, unexpected {unexpected}")
        if dstate is not None:
            disc.load_state_dict({k: v.float() for k, v in dstate["model"].items()})
            fresh_disc = False
        mdisc_p = os.path.join(a.resume, "mdisc.pt")
        if mel_disc is not None and os.path.exists(mdisc_p):
            mstate = torch.load(mdisc_p, map_location="cpu", weights_only=False)["model"]
            mel_disc.load_state_dict({k: v.float() for k, v in mstate.items()})
            fresh_mel_disc = False
        start_step = ac["step"]
        ac_was_half = all(v.dtype == torch.float16 for v in ac["model"].values() if v.is_floating_point())
        log(f"resumed from {a.resume} at step {start_step}")
    if a.widen_gen:
        try:
            model.widen_generator(a.widen_gen)
        except ValueError as e:
            raise SystemExit(f"--widen-gen: {e}")
        log(f"generator widened to {a.widen_gen} channels, the same audio: {count_params(model.dec)} parameters")
    if a.deepen_frames:
        try:
            model.deepen_frames(a.deepen_frames)
        except ValueError as e:
            raise SystemExit(f"--deepen-frames: {e}")
        log(f"frame decoder deepened to {model.cfg['dec_layers']} blocks, the same mel: "
            f"{count_params(model.frames)} parameters")
    if a.istft_head:
        try:
            model.istft_generator(a.istft_head, n_fft=a.istft_nfft)
        except ValueError as e:
            raise SystemExit(f"--istft-head: {e}")
        log(f"generator's last stage replaced by an inverse-STFT head {model.cfg['gen_istft']}, {a.istft_head} "
            f"channels: {count_params(model.dec)} parameters")
    model.to(dev).train()
    disc.to(dev).train()
    opt_md = None
    if mel_disc is not None:
        mel_disc.to(dev).train()
        opt_md = torch.optim.AdamW(mel_disc.parameters(), a.lr_gen, betas=(0.8, 0.99), weight_decay=0.01)
    log(f"params: voice {count_params(model)} (enc {count_params(model.enc)}, dp {count_params(model.dp)}, "
        f"frames {count_params(model.frames)}, dec {count_params(model.dec)}), disc {count_params(disc)}")
    ac_params = [p for n, p in model.named_parameters() if not n.startswith("dec.")]
    if a.freeze_generator:  # kept as loaded; with --prominence its gradient passes through it to the mels, no further
        model.dec.requires_grad_(False)
    enc_core = {id(p) for n, p in model.named_parameters() if n.startswith(("enc.emb.", "enc.blocks."))}
    opt_ac = torch.optim.AdamW([
        {"params": [p for p in ac_params if id(p) in enc_core], "factor": a.enc_lr},
        {"params": [p for p in ac_params if id(p) not in enc_core], "factor": 1.0},
    ], a.lr_ac, betas=(0.9, 0.98), weight_decay=0.01)
    opt_g = torch.optim.AdamW(model.dec.parameters(), a.lr_gen, betas=(0.8, 0.99), weight_decay=0.01)
    opt_d = torch.optim.AdamW(disc.parameters(), a.lr_gen, betas=(0.8, 0.99), weight_decay=0.01)
    base = [(opt_ac, a.lr_ac), (opt_g, a.lr_gen), (opt_d, a.lr_gen)] + ([(opt_md, a.lr_gen)] if mel_disc else [])
    amp = torch.autocast("cuda", dtype=torch.bfloat16) if cuda else torch.autocast("cpu", enabled=False)
    if a.loss_fmax != data.MEL_FMAX:
        log(f"the generator's mel loss spans 0-{a.loss_fmax:g} Hz (the voice's features: 0-{data.MEL_FMAX:g} Hz)")
    if a.prominence_pool:
        log(f"the prominence loss: the generator's spectrum over about {a.prominence_pool} batches against "
            f"{a.prominence_ceiling:g} dB"
            + (", on mels laid out by the predicted durations" if a.prominence_layout == "predicted" else ""))
    elif a.prominence_ceiling is not None:
        log(f"the prominence loss's target: the target audio's own prominence, at most {a.prominence_ceiling:g} dB")
    rig = Rig(model=model, ac_params=ac_params, opt_ac=opt_ac, opt_g=opt_g, disc=disc, opt_d=opt_d,
              fresh_disc=fresh_disc, mel_disc=mel_disc, opt_md=opt_md, fresh_mel_disc=fresh_mel_disc,
              loss_melspec=corpus.melspec if a.loss_fmax == data.MEL_FMAX else data.MelSpec(a.loss_fmax).to(dev),
              stft_loss=MultiResSTFTLoss().to(dev), comb_loss=FrameCombLoss().to(dev),
              prominence_loss=ProminenceLoss(top=a.prominence_top, ceiling_db=a.prominence_ceiling,
                                              pool=a.prominence_pool,
                                              **prominence_band).to(dev),
              band_loss=BandLevelLoss().to(dev),
              amp=amp, dev=dev,
              zero=torch.zeros((), device=dev))

    if a.freeze_acoustic:
        corpus.gta_flat = teacher_forced_mels(model, corpus, a.batch)
    batches = corpus.batches(a.batch)
    step = start_step
    t_last, n_last = time.time(), 0
    hist = {}
    snap, snap_step = None, step
    mas_time = 0.0
    while True:
        if time.time() - T0 > a.budget or step - start_step >= a.max_steps:
            break
        if pending is not None and time.time() - t_intake > a.intake_every:
            # take in what Festival has finished so far (files appear whole: written under .tmp, then renamed)
            finished = all(p.poll() is not None for p in pending)
            ready = [it for it in rest if os.path.exists(os.path.join(a.wav_dir, it[0] + ".wav"))]
            if ready:
                corpus.add(ready, data.load_wavs([u for u, _, _ in ready], a.wav_dir))
                if a.freeze_acoustic:
                    corpus.gta_flat = teacher_forced_mels(model, corpus, a.batch)
                batches = corpus.batches(a.batch)
                done_ids = {u for u, _, _ in ready}
                rest = [it for it in rest if it[0] not in done_ids]
            t_intake = time.time()
            if finished:
                pending = None
                log(f"all data in: {len(corpus)} utterances, {corpus.hours:.2f} h")
            elif ready:
                log(f"data in so far: {len(corpus)} utterances, {corpus.hours:.2f} h")
        if mid_saves and time.time() - T0 > mid_saves[0]:
            save_ckpt(model, None, step, os.path.join(a.out, f"mid-{mid_saves[0]:g}"),
                      {"hours": corpus.hours, "utterances": len(corpus)}, half=True)
            mid_saves.pop(0)
        k = step - start_step
        warm = min(1.0, (k + 1) / a.warmup)
        done = min(1.0, (time.time() - T0) / a.budget)
        decay = a.lr_start + (a.lr_end - a.lr_start) * done
        for opt, lr in base:
            if opt is opt_g:
                factor = max(0.0, min(1.0, (k - a.disc_warmup + 1) / a.warmup)) * decay
            elif opt is opt_d:  # its own warm-up at the full rate, then beside the generator's schedule
                factor = warm if k < a.disc_warmup else warm * decay * a.disc_lr_scale
            else:
                factor = warm * decay
            for g in opt.param_groups:
                g["lr"] = lr * factor * g.get("factor", 1.0)

        # ---- acoustic model (utterance lengths vary: cudnn benchmarking each new shape cost minutes in run 1)
        if cuda:
            torch.backends.cudnn.benchmark = False
        sel = next(batches)
        batch = corpus.get(sel)
        T = batch[5]  # the batch's frames, padded
        if a.freeze_acoustic:
            ac_losses, mel_losses, gn_ac = {}, {}, rig.zero
            mel_pred = corpus.padded(corpus.gta_flat, sel, T)
        else:
            ac_losses, mel_losses, mel_pred, gn_ac, mas_s = acoustic_step(rig, a, corpus, sel, batch, k)
            mas_time += mas_s

        if a.freeze_generator:
            gen_losses, gn_g, p_gta = {}, rig.zero, 0.0
        else:
            # ---- waveform generator on segments of the same utterances (fixed shapes: benchmarking pays)
            if cuda:
                torch.backends.cudnn.benchmark = True
            gen_losses, gn_g, p_gta = generator_step(rig, a, corpus, sel, batch, mel_pred, step, k)

        step += 1
        # a frozen part's losses are not computed; the mel discriminator's come last
        for kname, v in {**ac_losses, **gen_losses, **mel_losses}.items():
            hist.setdefault(kname, []).append(v.detach())
        if step % 50 == 0 or step == start_step + 1:
            vals = {kk: torch.stack(v).mean().item() for kk, v in hist.items()}
            hist = {}
            dt = time.time() - t_last
            rate = (step - start_step - n_last) / max(dt, 1e-9)
            t_last, n_last = time.time(), step - start_step
            log(f"step {step} " + " ".join(f"{kk} {v:.4f}" for kk, v in vals.items())
                + f" | lr x{warm * decay:.2f} mas {mas_time / max(dt, 1e-9):.0%} gn_ac {gn_ac.item():.2f} "
                  f"gn_g {gn_g.item():.1f} gta {p_gta:.2f} | {rate:.2f} step/s "
                  f"B {len(sel)}x{T} mem {torch.cuda.max_memory_allocated() / 2**30 if cuda else 0:.1f}G"
                + (" | discriminator alone" if k < a.disc_warmup else ""))
            mas_time = 0.0
            if not all(math.isfinite(v) for v in vals.values()):
                if snap is None:
                    log("non-finite loss and no snapshot: stopping without saving")
                    sys.exit(1)
                log(f"non-finite loss: going back to the snapshot of step {snap_step} and stopping")
                model.load_state_dict(snap[0])
                disc.load_state_dict(snap[1])
                step = snap_step
                break
            if step % 250 == 0:  # known-good weights to fall back on
                snap = ({k: v.detach().clone() for k, v in model.state_dict().items()},
                        {k: v.detach().clone() for k, v in disc.state_dict().items()})
                snap_step = step

    if pending is not None:
        for p in pending:
            p.kill()
    log(f"training done: {step - start_step} steps this run, {step} total, {len(corpus)} utterances "
        f"({corpus.hours:.2f} h)")
    # a frozen generator's discriminator that was never loaded is untrained: saving it would pass for the real one
    kept_disc = None if a.freeze_generator and fresh_disc else disc
    save_ckpt(model, kept_disc, step, a.out, {"hours": corpus.hours, "utterances": len(corpus)}, mel_disc=mel_disc,
              half_ac=a.freeze_acoustic and ac_was_half)
    with open(os.path.join(a.out, "trained_ids.txt"), "w") as f:
        f.write("\n".join(corpus.uids) + "\n")
    if a.dump_durations:
        dump_durations(model, corpus, os.path.join(a.out, "durations.txt"), a.batch)


def aligned_batches(model, corpus, batch):
    """The corpus in length order, a batch at a time, aligned under the model's current weights (eval mode, no
    gradients): yields (sel, corpus.get's batch, the encoder's h and mu, MAS durations [B,1,L]). What --freeze-acoustic
    and --dump-durations read; the training step aligns the same way (align), timed and autocast."""
    for i in range(0, len(corpus), batch):
        sel = torch.tensor(corpus.order[i:i + batch], device=corpus.dev)
        got = corpus.get(sel)
        ids, x_len, mel, y_len, _, _, sid = got
        _, h, mu, dur, _ = align(model, ids, x_len, mel, y_len, model.speaker_biases(sid)[0])
        yield sel, got, h, mu, dur


@torch.no_grad()
def teacher_forced_mels(model, corpus, batch):
    """The acoustic model's mel of every utterance with its own alignment's durations (what the generator is fed as
    GTA input), stored like corpus.mel_flat: for --freeze-acoustic, which computes them once instead of every step."""
    was_training = model.training
    model.eval()
    out = torch.zeros_like(corpus.mel_flat)
    for sel, (_, _, _, y_len, y_mask, T, sid), h, mu, dur in aligned_batches(model, corpus, batch):
        path, frac = path_from_durations(dur, T)
        pred = model.frames(torch.matmul(h, path), torch.matmul(mu, path), frac, y_mask, model.speaker_biases(sid)[1])
        for j, u in enumerate(sel.tolist()):
            n = int(y_len[j])
            off = int(corpus.frame_off[u])
            out[:, off:off + n] = pred[j, :, :n]
    model.train(was_training)
    log(f"teacher-forced mels of {len(corpus)} utterances (acoustic model frozen)")
    return out


@torch.no_grad()
def dump_durations(model, corpus, path, batch):
    """Each utterance's monotonic alignment under the given weights, as "uid|frames per phoneme id": a few MB that
    carry what a duration predictor learns from, so train_dp.py can fit one on a CPU without the audio."""
    model.eval()
    with open(path, "w") as f:
        for sel, (_, x_len, _, _, _, _, _), _, _, dur in aligned_batches(model, corpus, batch):
            for j, u in enumerate(sel.tolist()):
                d = dur[j, 0, :int(x_len[j])].long().tolist()
                f.write(corpus.uids[u] + "|" + " ".join(map(str, d)) + "\n")
    log(f"durations of {len(corpus)} utterances -> {path}")


if __name__ == "__main__":
    main()
