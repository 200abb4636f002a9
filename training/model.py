"""ttsgen's default voice: a small FastSpeech-style acoustic model + a HiFi-GAN-style waveform generator (`dec`).

Graph (export, Piper's signature): phoneme ids -> conv encoder -> duration predictor -> ceil -> length regulation
(cumsum of the ceil'd durations -> one-hot path -> matmul) -> conv frame decoder -> 80-bin log-mel -> latent
[mel*mask ; mask] (81 channels) -> dec (conv_pre ... conv_post) -> waveform, hop 256.

Every layer is masked so that an item's audio does not depend on what else is in its batch. The generator `dec`
is a pure function of the latent: its 81st channel is the frame mask, from which it derives the mask at each
upsampling stage, so a tool that cuts the graph at /dec/conv_pre/Conv's input still gets a batch-safe decoder.
"""
import math
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

N_MELS = 80
HOP = 256
# Standard deviations of the noise that Piper's scales switch on (see README.md: chosen small so that the default
# scales, 0.667 and 0.8, vary the voice a little without harming it).
LATENT_NOISE_STD = 0.1   # in natural-log mel units, times noise_scale
DURATION_NOISE_STD = 0.1  # in log-frames, times noise_w
# Piper's default scales, which export.py writes into every voice's config: what a shipped voice speaks with
INFERENCE_SCALES = {"noise_scale": 0.667, "length_scale": 1, "noise_w": 0.8}


class LayerNormC(nn.Module):
    """LayerNorm over the channel axis of [B, C, T] (per position, so it never mixes batch items or positions)."""

    def __init__(self, channels, eps=1e-5):
        super().__init__()
        self.gamma = nn.Parameter(torch.ones(channels))
        self.beta = nn.Parameter(torch.zeros(channels))
        self.eps = eps
        self.channels = channels

    def forward(self, x):
        x = x.transpose(1, -1)
        x = F.layer_norm(x, (self.channels,), self.gamma, self.beta, self.eps)
        return x.transpose(1, -1)


class ConvBlock(nn.Module):
    """Residual masked conv block: x + Conv1x1(GELU(LN(Conv_k(x))))."""

    def __init__(self, channels, kernel, dilation=1, dropout=0.0):
        super().__init__()
        self.conv = nn.Conv1d(channels, channels, kernel, dilation=dilation, padding=dilation * (kernel - 1) // 2)
        self.norm = LayerNormC(channels)
        self.pw = nn.Conv1d(channels, channels, 1)
        self.drop = nn.Dropout(dropout)

    def forward(self, x, mask):
        y = self.conv(x * mask)
        y = self.pw(F.gelu(self.norm(y)))
        return (x + self.drop(y)) * mask


class TextEncoder(nn.Module):
    def __init__(self, n_symbols, hidden, layers, kernel=5, dropout=0.1):
        super().__init__()
        self.emb = nn.Embedding(n_symbols, hidden)
        nn.init.normal_(self.emb.weight, 0.0, hidden ** -0.5)
        dil = [1, 1, 2, 1, 1, 2, 1, 1]
        self.blocks = nn.ModuleList([ConvBlock(hidden, kernel, dil[i % len(dil)], dropout) for i in range(layers)])
        self.proj_m = nn.Conv1d(hidden, N_MELS, 1)

    def forward(self, ids, x_mask, bias=None):
        """bias: [B,H,1] added to every phoneme's embedding (a speaker's, see Voice.speaker_biases), or None."""
        x = self.emb(ids).transpose(1, 2)  # [B,H,L]
        if bias is not None:
            x = x + bias
        x = x * x_mask
        for b in self.blocks:
            x = b(x, x_mask)
        mu = self.proj_m(x) * x_mask  # per-phoneme mean log-mel: the prior that alignment search matches frames to
        return x, mu


class DurationPredictor(nn.Module):
    def __init__(self, hidden, filt, kernel=3, dropout=0.1):
        super().__init__()
        self.c1 = nn.Conv1d(hidden, filt, kernel, padding=kernel // 2)
        self.n1 = LayerNormC(filt)
        self.c2 = nn.Conv1d(filt, filt, kernel, padding=kernel // 2)
        self.n2 = LayerNormC(filt)
        self.proj = nn.Conv1d(filt, 1, 1)
        self.drop = nn.Dropout(dropout)

    def forward(self, x, x_mask):
        x = self.drop(self.n1(torch.relu(self.c1(x * x_mask))))
        x = self.drop(self.n2(torch.relu(self.c2(x * x_mask))))
        return self.proj(x * x_mask) * x_mask  # log of (frames - 0.5); see duration_target


class FrameDecoder(nn.Module):
    """Frames (expanded phoneme states + prior mean + position inside the phoneme) -> 80-bin log-mel."""

    DILATIONS = (1, 2, 4, 1, 2, 4, 1, 2)  # block i's dilation is DILATIONS[i % 8]

    def __init__(self, hidden, channels, layers, kernel=5, dropout=0.0):
        super().__init__()
        self.channels, self.kernel, self.dropout = channels, kernel, dropout
        self.pre = nn.Conv1d(hidden + N_MELS + 1, channels, 1)
        self.blocks = nn.ModuleList([self.new_block(i) for i in range(layers)])
        self.post = nn.Conv1d(channels, N_MELS, 1)

    def new_block(self, i):
        """Block i as this decoder makes it (Voice.deepen_frames appends more the same way)."""
        return ConvBlock(self.channels, self.kernel, self.DILATIONS[i % len(self.DILATIONS)], self.dropout)

    def reach(self):
        """How many frames either side of an output frame it depends on: its convolutions' half-widths, summed (its
        other layers work frame by frame)."""
        return sum(b.conv.dilation[0] * (b.conv.kernel_size[0] // 2) for b in self.blocks)

    def forward(self, h, mu, frac, y_mask, bias=None):
        """bias: [B,channels,1] added after the input projection (a speaker's), or None."""
        x = self.pre(torch.cat([h, mu, frac], 1))
        if bias is not None:
            x = x + bias
        x = x * y_mask
        for b in self.blocks:
            x = b(x, y_mask)
        return (mu + self.post(x)) * y_mask


def phase_balanced(weight, stride):
    """Project a ConvTranspose1d kernel [C_in, C_out, K] (K a multiple of stride) onto the kernels whose taps for
    each output phase (tap index mod stride) add up to the same sum, for every channel pair.

    A transposed convolution gives output phase p the gain sum_j w[p + j*stride]; where these differ, even a constant
    input comes out periodic with period `stride`. Through the generator's three stages (strides 8, 8, 4) that gives
    patterns of period 256 samples (lines at every multiple of 22,050/256 = 86.1 Hz, the frame rate), 32 samples
    (689 Hz) and 4 samples (5,512 Hz): the steady "buzz" of young HiFi-GAN generators. Balanced kernels are exactly
    those of a nearest-neighbour upsampling followed by a convolution of K - stride + 1 taps (resize-convolution,
    Odena et al. 2016), which has no such pattern, at the transposed convolution's cost. This is the orthogonal
    projection: each tap of phase p moves by (mean phase sum - sum of phase p) / (K / stride)."""
    c_in, c_out, k = weight.shape
    w = weight.view(c_in, c_out, k // stride, stride)  # [..., j, p]: tap j*stride + p
    sums = w.sum(2, keepdim=True)
    return (w + (sums.mean(3, keepdim=True) - sums) / (k // stride)).view(c_in, c_out, k)


def stage_mask(mask, factor):
    """[B,1,T] frame mask -> [B,1,T*factor] sample mask (repeat each value `factor` times)."""
    return mask.unsqueeze(-1).repeat(1, 1, 1, factor).flatten(2)


class ResBlock2(nn.Module):
    def __init__(self, channels, kernel, dilations):
        super().__init__()
        self.convs = nn.ModuleList(
            [nn.Conv1d(channels, channels, kernel, dilation=d, padding=d * (kernel - 1) // 2) for d in dilations])

    def forward(self, x, mask):
        for c in self.convs:
            x = (x + c(F.leaky_relu(x, 0.1))) * mask
        return x


def upsampling_stack(channels, rates, kernels, res_kernels, res_dilations, resblock):
    """HiFi-GAN's body: per rate, a transposed convolution that halves the channels, then one resblock(ch, kernel,
    dilations) per residual kernel. Returns (ups, resblocks, channels out)."""
    ups, resblocks, ch = nn.ModuleList(), nn.ModuleList(), channels
    for r, k in zip(rates, kernels):
        ups.append(nn.ConvTranspose1d(ch, ch // 2, k, stride=r, padding=(k - r) // 2))
        ch //= 2
        for rk, rd in zip(res_kernels, res_dilations):
            resblocks.append(resblock(ch, rk, rd))
    return ups, resblocks, ch


# The inverse-STFT head's log-magnitudes are clipped here (e^5 ~ 150, far above any speech bin) so that an early
# training step cannot overflow; its magnitude bias starts at e^-4, a quiet hiss rather than full-scale noise.
ISTFT_LOGMAG_MAX = 5.0
ISTFT_LOGMAG_INIT = -4.0


class ISTFTHead(nn.Module):
    """Log-magnitudes and phases per STFT bin [B, n_fft+2, T] -> waveform [B,1,T*hop]: an inverse real DFT,
    Hann-windowed and overlap-added (torch.istft's sum, normalised by the window's squared overlap), written as one
    transposed convolution with a fixed kernel so that the exported graph needs no STFT operator. Phases are
    pi*sin(.) of the input, as in iSTFTNet (Kaneko et al. 2022): bounded, and smooth across the +-pi seam.
    The last upsampling stage of a HiFi-GAN generator runs its resblocks at the full sample rate; this head replaces
    it, so the stages before it can be wider for the same CPU cost."""

    def __init__(self, n_fft, hop):
        super().__init__()
        if n_fft % 2 or n_fft % hop or (n_fft - hop) % 2:
            raise ValueError(f"inverse-STFT head: n_fft {n_fft} and hop {hop} must be even, n_fft a multiple of the hop")
        self.n_fft, self.hop, self.n_bins = n_fft, hop, n_fft // 2 + 1
        n = torch.arange(n_fft, dtype=torch.float64)
        k = torch.arange(self.n_bins, dtype=torch.float64).unsqueeze(1)
        window = torch.hann_window(n_fft, periodic=True, dtype=torch.float64)
        # irfft: x[n] = (1/N) sum_k c_k (Re X_k cos(2 pi k n / N) - Im X_k sin(2 pi k n / N)), c = 1 at DC and
        # Nyquist, 2 between
        c = torch.full((self.n_bins, 1), 2.0, dtype=torch.float64)
        c[0] = c[-1] = 1.0
        angle = 2 * math.pi * k * n / n_fft
        envelope = (window ** 2).view(n_fft // hop, hop).sum(0).mean()  # constant for Hann at these hops
        basis = torch.cat([c * torch.cos(angle), -c * torch.sin(angle)]) * window / (n_fft * envelope)
        self.register_buffer("kernel", basis.unsqueeze(1).float(), persistent=False)  # [2*bins, 1, n_fft]

    def forward(self, spec, mask):
        """spec [B, 2*bins, T] (log-magnitudes, then phase inputs), mask [B,1,T] -> [B,1,T*hop]."""
        b = self.n_bins
        mag = torch.exp(torch.clamp(spec[:, :b], max=ISTFT_LOGMAG_MAX))
        phase = math.pi * torch.sin(spec[:, b:])
        coeffs = torch.cat([mag * torch.cos(phase), mag * torch.sin(phase)], 1) * mask
        return F.conv_transpose1d(coeffs, self.kernel, stride=self.hop, padding=(self.n_fft - self.hop) // 2)


class Generator(nn.Module):
    """HiFi-GAN (V3-like, "resblock 2") generator over the latent [mel*mask ; mask] (N_MELS+1 channels). With
    `istft=(n_fft, hop)` its last stage is an ISTFTHead instead of a transposed convolution (the rates then multiply
    to HOP / hop)."""

    def __init__(self, channels=256, rates=(8, 8, 4), kernels=(16, 16, 8),
                 res_kernels=(3, 5, 7), res_dilations=((1, 2), (2, 6), (3, 12)), balanced=True, istft=None):
        super().__init__()
        assert math.prod(rates) * (istft[1] if istft else 1) == HOP
        assert all(k % r == 0 for r, k in zip(rates, kernels)), "kernels must be multiples of their strides"
        self.rates = list(rates)
        # upsampling kernels projected onto phase_balanced() in every forward (training); bake_balanced() writes the
        # projection into the weights for export, so the graph holds plain ConvTranspose nodes
        self.balanced = balanced
        self.conv_pre = nn.Conv1d(N_MELS + 1, channels, 7, padding=3)
        self.ups, self.resblocks, ch = upsampling_stack(channels, rates, kernels, res_kernels, res_dilations, ResBlock2)
        self.n_res = len(res_kernels)
        self.istft = ISTFTHead(*istft) if istft else None
        self.conv_post = nn.Conv1d(ch, 2 * self.istft.n_bins if istft else 1, 7, padding=3)
        for m in self.modules():
            if isinstance(m, (nn.Conv1d, nn.ConvTranspose1d)):
                nn.init.normal_(m.weight, 0.0, 0.01)
        if istft:
            with torch.no_grad():
                self.conv_post.bias[:self.istft.n_bins].fill_(ISTFT_LOGMAG_INIT)
        # a fixed equaliser on the audio, set only for export (set_output_eq); not a weight, so not in checkpoints
        self.register_buffer("eq_fir", None, persistent=False)

    def set_output_eq(self, fir):
        """Filter the audio with fir, a zero-phase FIR of odd length (export.py --eq): a correction that training
        never sees, so a fine-tune from a voice read back does not learn to undo it."""
        if fir.dim() != 1 or fir.numel() % 2 == 0:
            raise ValueError(f"the equaliser must be one odd-length kernel, not of shape {list(fir.shape)}")
        self.eq_fir = fir.view(1, 1, -1).to(self.conv_pre.weight)
        self.eq_pad = fir.numel() // 2  # a plain int: traced, the kernel's shape would be a tensor

    def forward(self, latent):
        mask = (latent[:, N_MELS:N_MELS + 1] > 0.5).to(latent.dtype)
        x = self.conv_pre(latent) * mask
        factor = 1
        for i, up in enumerate(self.ups):
            factor *= self.rates[i]
            m = stage_mask(mask, factor)
            x = F.leaky_relu(x, 0.1)
            if self.balanced:
                x = F.conv_transpose1d(x, phase_balanced(up.weight, up.stride[0]), up.bias, up.stride, up.padding)
            else:
                x = up(x)
            x = x * m
            xs = None
            for j in range(self.n_res):
                y = self.resblocks[i * self.n_res + j](x, m)
                xs = y if xs is None else xs + y
            x = xs / self.n_res
        x = self.conv_post(F.leaky_relu(x, 0.01))
        if self.istft is not None:
            x = self.istft(x, stage_mask(mask, factor))
        audio_mask = stage_mask(mask, HOP)
        audio = torch.tanh(x) * audio_mask
        if self.eq_fir is not None:  # masked on both sides: zeros past a sentence's end, as every layer keeps them
            audio = F.conv1d(audio, self.eq_fir, padding=self.eq_pad) * audio_mask
        return audio

    @torch.no_grad()
    def bake_balanced(self):
        """Write the phase-balanced projection into the upsampling weights (same function, plain ConvTranspose)."""
        if self.balanced:
            for up in self.ups:
                up.weight.copy_(phase_balanced(up.weight, up.stride[0]))
            self.balanced = False


def make_latent(mel, y_mask):
    return torch.cat([mel * y_mask, y_mask], 1)


def path_from_durations(w_ceil, t_max):
    """w_ceil [B,1,L] integer-valued frames -> path [B,L,T] (1 where frame t belongs to phoneme l), frac [B,1,T]."""
    cum = torch.cumsum(w_ceil, -1)  # [B,1,L]
    start = cum - w_ceil
    t = torch.arange(t_max, device=w_ceil.device).to(w_ceil.dtype).view(1, -1, 1)  # [1,T,1]
    end_ = cum.transpose(1, 2)  # [B,L,1]
    start_ = start.transpose(1, 2)
    tt = t.transpose(1, 2)  # [1,1,T]
    path = ((tt < end_) & (tt >= start_)).to(w_ceil.dtype)  # [B,L,T]
    # position of each frame inside its phoneme, in (0, 1): helps the conv decoder shape the phoneme over time
    f_start = torch.matmul(start, path)  # [B,1,T]
    f_dur = torch.matmul(w_ceil, path)
    frac = (tt - f_start + 0.5) / torch.clamp_min(f_dur, 1.0)
    return path, frac * (f_dur > 0).to(w_ceil.dtype)


def synthesis_durations(logw, x_mask, noise_w, length_scale):
    """Synthesis's durations from the predictor's log-durations logw [B,1,L]: Piper's duration noise, the length
    scale, rounded up to whole frames. Returns (w_ceil [B,1,L], each item's length in frames [B], at least 1)."""
    logw = logw + torch.randn_like(logw) * (DURATION_NOISE_STD * noise_w)
    w = torch.exp(logw) * x_mask * length_scale
    w_ceil = torch.ceil(w)
    return w_ceil, torch.clamp_min(torch.sum(w_ceil, [1, 2]), 1.0)


def acoustic_probe():
    """A fixed teacher-forced input for checking that a changed voice computes what it did: (ids [2,30], x_mask
    [2,1,30] with one item padded, durations [2,1,30] of 1-5 frames, their largest sum). Drawn from its own
    generator, so it never touches the global random state."""
    rng = torch.Generator().manual_seed(0)
    ids = torch.randint(3, 150, (2, 30), generator=rng)
    x_mask = (torch.arange(30).unsqueeze(0) < torch.tensor([[30], [21]])).float().unsqueeze(1)
    w = torch.randint(1, 6, (2, 1, 30), generator=rng).float() * x_mask
    return ids, x_mask, w, int(w.sum(-1).max())


class Voice(nn.Module):
    def __init__(self, n_symbols=256, hidden=192, enc_layers=6, dp_filter=256, dec_channels=256, dec_layers=6,
                 gen_channels=256, gen_rates=(8, 8, 4), gen_kernels=(16, 16, 8),
                 gen_res_kernels=(3, 5, 7), gen_res_dilations=((1, 2), (2, 6), (3, 12)), gen_balanced=True,
                 gen_istft=None, n_speakers=1):
        super().__init__()
        self.cfg = dict(n_symbols=n_symbols, hidden=hidden, enc_layers=enc_layers, dp_filter=dp_filter,
                        dec_channels=dec_channels, dec_layers=dec_layers, gen_channels=gen_channels,
                        gen_rates=list(gen_rates), gen_kernels=list(gen_kernels),
                        gen_res_kernels=list(gen_res_kernels), gen_res_dilations=[list(d) for d in gen_res_dilations],
                        gen_balanced=gen_balanced, gen_istft=list(gen_istft) if gen_istft else None,
                        n_speakers=n_speakers)
        self.enc = TextEncoder(n_symbols, hidden, enc_layers)
        self.dp = DurationPredictor(hidden, dp_filter)
        self.frames = FrameDecoder(hidden, dec_channels, dec_layers)
        self.dec = Generator(gen_channels, gen_rates, gen_kernels, gen_res_kernels, gen_res_dilations, gen_balanced,
                             gen_istft)
        if n_speakers > 1:
            # Training only: one bias per speaker on the encoder's input and one on the frame decoder's, so speakers
            # share everything else (text coverage from one, timbre from another). A speaker is exported by folding
            # its biases into enc.emb and frames.pre (single_speaker), so the graph stays Piper's single-speaker one.
            # Zero at the start: a single-speaker checkpoint loaded into speaker 0 behaves exactly as before.
            self.spk_enc = nn.Embedding(n_speakers, hidden)
            self.spk_frames = nn.Embedding(n_speakers, dec_channels)
            nn.init.zeros_(self.spk_enc.weight)
            nn.init.zeros_(self.spk_frames.weight)

    def speaker_biases(self, sid):
        """sid [B] long -> (encoder bias [B,hidden,1], frame-decoder bias [B,channels,1]); (None, None) for a
        single-speaker voice."""
        if self.cfg["n_speakers"] <= 1:
            return None, None
        return self.spk_enc(sid).unsqueeze(-1), self.spk_frames(sid).unsqueeze(-1)

    @torch.no_grad()
    def single_speaker(self, sid):
        """This voice as speaker `sid` alone: the same outputs for that speaker, in a single-speaker Voice (the
        encoder's input bias is added to every embedding row, the frame decoder's to its input projection's bias).
        Fails unless the folded voice gives that speaker's mel, prior and durations to float rounding."""
        cfg = dict(self.cfg, n_speakers=1)
        out = Voice(**cfg)
        state = {k: v.clone() for k, v in self.state_dict().items() if not k.startswith(("spk_enc.", "spk_frames."))}
        if self.cfg["n_speakers"] > 1:
            state["enc.emb.weight"] += self.spk_enc.weight[sid]
            state["frames.pre.bias"] += self.spk_frames.weight[sid]
        out.load_state_dict(state)
        was_training = self.training
        self.eval()
        out.eval()
        ids, x_mask, w, t_max = acoustic_probe()
        want = self.acoustic(ids, x_mask, w, t_max, torch.full((2,), sid))
        got = out.acoustic(ids, x_mask, w, t_max)
        for name, g, e in zip(("mel", "mu", "logw"), got, want):
            err = float((g - e).abs().max())
            if not err < 1e-4:
                raise AssertionError(f"speaker {sid} folded: {name} differs by {err:g}")
        self.train(was_training)
        return out.train(was_training)

    @torch.no_grad()
    def widen_generator(self, channels, seed=0):
        """Give the generator `channels` at its input (every stage grows alike) without changing what it computes,
        so a trained voice can gain capacity and go on training (Net2Net-style). The new channels' incoming weights
        and biases are zero, so they stay zero; their outgoing weights are small random numbers (the generator's own
        initialisation), so gradients reach the incoming ones: zero both ways, they would never train. Fails unless
        the wider generator gives the same audio."""
        old = self.dec
        c = self.cfg
        if channels <= old.conv_pre.out_channels or channels % 2 ** len(c["gen_rates"]):
            raise ValueError(f"widen the generator from {old.conv_pre.out_channels} channels to more, a multiple "
                             f"of {2 ** len(c['gen_rates'])}; got {channels}")
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            new = Generator(channels, c["gen_rates"], c["gen_kernels"], c["gen_res_kernels"], c["gen_res_dilations"],
                            old.balanced, c["gen_istft"])
        convs = (nn.Conv1d, nn.ConvTranspose1d)
        for a, b in zip((m for m in old.modules() if isinstance(m, convs)),
                        (m for m in new.modules() if isinstance(m, convs))):
            w = a.weight if isinstance(a, nn.Conv1d) else a.weight.transpose(0, 1)  # [out, in, k]
            v = b.weight if isinstance(b, nn.Conv1d) else b.weight.transpose(0, 1)
            o, i = w.shape[:2]
            v[o:] = 0
            v[:o, :i] = w
            b.bias.zero_()
            b.bias[:o] = a.bias
        rng = torch.Generator().manual_seed(0)
        latent = torch.cat([torch.randn(1, N_MELS, 12, generator=rng), torch.ones(1, 1, 12)], 1)
        err = float((new(latent) - old(latent)).abs().max())
        if not err < 1e-5:
            raise AssertionError(f"the generator widened to {channels} channels: audio differs by {err:g}")
        self.dec = new.train(old.training)
        self.cfg["gen_channels"] = channels

    @torch.no_grad()
    def deepen_frames(self, blocks):
        """Append `blocks` residual blocks to the frame decoder without changing what it computes, so a trained voice
        can gain acoustic capacity and go on training. A block adds its output to its input; a new block's last
        (pointwise) convolution starts at zero, so it adds nothing, while its gradient is not zero, so it trains.
        The frame decoder costs about 20 MMAC a second of audio a block (192 channels), against 1.9 GMAC for the
        generator: depth here is nearly free on a CPU. Fails unless the deeper voice gives the same mel."""
        if blocks < 1:
            raise ValueError(f"add at least one block to the frame decoder; got {blocks}")
        frames, c = self.frames, self.cfg
        was_training = self.training
        self.eval()
        ids, x_mask, w, t_max = acoustic_probe()
        want = self.acoustic(ids, x_mask, w, t_max)[0]
        first = c["dec_layers"]
        for i in range(first, first + blocks):
            b = frames.new_block(i)
            nn.init.zeros_(b.pw.weight)
            nn.init.zeros_(b.pw.bias)
            frames.blocks.append(b)
        c["dec_layers"] = first + blocks
        got = self.acoustic(ids, x_mask, w, t_max)[0]
        self.train(was_training)
        err = float((got - want).abs().max())
        if not err < 1e-5:
            raise AssertionError(f"the frame decoder deepened by {blocks} blocks: mel differs by {err:g}")

    @torch.no_grad()
    def istft_generator(self, channels, n_fft=16, seed=0):
        """Replace the generator's last stage (a transposed convolution and resblocks at the full sample rate) by an
        ISTFTHead whose hop is that stage's rate, keeping the trained stages before it, widened to `channels`
        (widen_generator). The head starts untrained: the voice is meant to go on training its generator alone.
        A generator that already ends in a head gets one of another n_fft at the same hop: a finer or coarser
        frequency grid, whose conv_post starts over while every stage before it is kept."""
        c = self.cfg
        width = self.dec.conv_pre.out_channels
        if c["gen_istft"]:
            if n_fft == c["gen_istft"][0]:
                raise ValueError(f"the generator already ends in an inverse-STFT head of n_fft {n_fft}")
            if channels != width:
                raise ValueError(f"the generator has {width} channels; a new head keeps them")
            rates, kernels, hop = c["gen_rates"], c["gen_kernels"], c["gen_istft"][1]
        else:
            if len(c["gen_rates"]) < 2:
                raise ValueError("the generator needs a stage before the one the head replaces")
            if channels > width:
                self.widen_generator(channels, seed)
            elif channels != width:
                raise ValueError(f"the generator has {width} channels; it can only widen")
            rates, kernels, hop = c["gen_rates"][:-1], c["gen_kernels"][:-1], c["gen_rates"][-1]
        old = self.dec
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            new = Generator(channels, rates, kernels, c["gen_res_kernels"], c["gen_res_dilations"], old.balanced,
                            (n_fft, hop))
        dropped = (f"ups.{len(new.ups)}.", "conv_post.") + tuple(
            f"resblocks.{i}." for i in range(len(new.resblocks), len(old.resblocks)))
        kept = {k: v for k, v in old.state_dict().items() if not k.startswith(dropped)}
        missing, unexpected = new.load_state_dict(kept, strict=False)
        if unexpected or any(not k.startswith("conv_post.") for k in missing):
            raise AssertionError(f"inverse-STFT generator: weights do not carry over: missing {missing}, "
                                 f"unexpected {unexpected}")
        self.dec = new.train(old.training)
        c.update(gen_rates=list(rates), gen_kernels=list(kernels), gen_istft=[n_fft, hop])

    def acoustic(self, ids, x_mask, w_frames, t_max, sid=None):
        """Teacher-forced acoustic pass (training): durations w_frames [B,1,L] given; sid [B] for several speakers."""
        b_enc, b_frames = self.speaker_biases(sid) if sid is not None else (None, None)
        h, mu = self.enc(ids, x_mask, b_enc)
        path, frac = path_from_durations(w_frames, t_max)
        mel, y_mask = self.frames_along(h, mu, path, frac, b_frames)
        logw = self.dp(h.detach(), x_mask)
        return mel, mu, logw, y_mask

    def frames_along(self, h, mu, path, frac, b_frames=None):
        """The frame decoder's mels for the phoneme states h and means mu laid out along path and frac
        (path_from_durations'). Returns (mel [B,80,T], y_mask [B,1,T])."""
        y_mask = (path.sum(1, keepdim=True) > 0).to(h.dtype)
        return self.frames(torch.matmul(h, path), torch.matmul(mu, path), frac, y_mask, b_frames), y_mask

    def forward(self, input, input_lengths, scales):
        """Piper's inference signature: (input [B,L] int64, input_lengths [B] int64, scales [3]) -> [B,1,1,T]."""
        noise_scale = scales[0]
        length_scale = scales[1]
        noise_w = scales[2]
        L = input.shape[1]
        x_mask = (torch.arange(L, device=input.device).unsqueeze(0) < input_lengths.unsqueeze(1)).unsqueeze(1)
        x_mask = x_mask.to(torch.float32)
        h, mu = self.enc(input, x_mask)
        w_ceil, y_lengths = synthesis_durations(self.dp(h, x_mask), x_mask, noise_w, length_scale)
        t_max = y_lengths.max().to(torch.int64)
        path, frac = path_from_durations(w_ceil, t_max)
        mel, y_mask = self.frames_along(h, mu, path, frac)
        mel = mel + torch.randn_like(mel) * (LATENT_NOISE_STD * noise_scale)
        audio = self.dec(make_latent(mel, y_mask))  # [B,1,T*HOP]
        return audio.unsqueeze(1)


def duration_target(d):
    """MAS frame counts (>= 1) -> the log-duration target. exp(target) = d - 0.5, so ceil() at inference gives
    back d for predictions within half a frame, instead of adding half a frame to every phoneme."""
    return torch.log(torch.clamp_min(d - 0.5, 0.1))


LINEAR_BETA = 8.0  # frames: phonemes' errors are almost all under this (99% of durations are <= 12 frames)
# exp() of the prediction stays within ~0.02..1,100 frames, so a wild early step cannot overflow the frame losses
LOGW_MIN, LOGW_MAX = -4.0, 7.0


def duration_loss(kind, logw, d, x_mask):
    """The duration predictor's loss over real phonemes: logw [B,1,L] predicted, d [B,1,L] aligned frames (>= 1).
    log: squared error against duration_target (fits geometric means: the voice speaks short); linear: Huber in frames
    with a LINEAR_BETA knee (fits means); lognormal: log-domain relative durations plus each utterance's total length.
    train_dp.py's docstring says why each exists."""
    n = x_mask.sum()
    if kind == "log":
        return (((logw - duration_target(d)) ** 2) * x_mask).sum() / n
    if kind == "linear":
        pred = torch.exp(logw.clamp(LOGW_MIN, LOGW_MAX))
        return (F.smooth_l1_loss(pred, d - 0.5, reduction="none", beta=LINEAR_BETA) * x_mask).sum() / n
    if kind != "lognormal":
        raise ValueError(f"unknown duration loss {kind!r}")
    err = (logw - duration_target(d)) * x_mask
    centred = (err - err.sum(-1, keepdim=True) / x_mask.sum(-1, keepdim=True)) * x_mask
    pred_sum = torch.logsumexp(logw.masked_fill(x_mask == 0, -math.inf), -1)
    true_sum = torch.log(((d - 0.5) * x_mask).sum(-1))
    return (centred ** 2).sum() / n + ((pred_sum - true_sum) ** 2).mean()


def apply_duration_gain(model, gain):
    """Scale every predicted duration by `gain` (speaking-rate calibration, see calibrate.py): exp(logw + log g)."""
    with torch.no_grad():
        model.dp.proj.bias.add_(math.log(gain))


def read_checkpoint(ckpt_dir):
    """A checkpoint folder's ac.pt and gen.pt -> (ac, gen), ac's cfg and step made the folder's: the generator's shape
    (the gen_* keys) from gen.pt, the file that holds the generator, and the later of the two steps, the last step
    anything in the folder was trained. The two agree in every folder train.py writes; they differ where a generator
    was put beside an acoustic model read back from a voice file (from_onnx.py), as training/README.md's step 6j does,
    which this says on stderr."""
    ac = torch.load(os.path.join(ckpt_dir, "ac.pt"), map_location="cpu", weights_only=False)
    gen = torch.load(os.path.join(ckpt_dir, "gen.pt"), map_location="cpu", weights_only=False)
    ac["cfg"] = {**ac["cfg"], **{k: v for k, v in gen["cfg"].items() if k.startswith("gen_")}}
    if ac["step"] != gen["step"]:
        print(f"{ckpt_dir}: ac.pt is at step {ac['step']}, gen.pt at step {gen['step']}: the folder's step is "
              f"{max(ac['step'], gen['step'])}", file=sys.stderr, flush=True)
        ac["step"] = max(ac["step"], gen["step"])
    return ac, gen


def load_voice(ckpt_dir, speaker=None):
    """A checkpoint folder (train.py's ac.pt + gen.pt, float16 or float32) -> (the Voice in float32, in eval mode;
    ac.pt's contents: cfg, step, the acoustic model's state dict and whatever else the run recorded). A checkpoint of
    several speakers needs `speaker`, and gives that speaker's single-speaker Voice."""
    ac, gen = read_checkpoint(ckpt_dir)
    voice = Voice(**ac["cfg"])
    voice.load_state_dict({k: v.float() for k, v in {**ac["model"], **gen["model"]}.items()})
    n = voice.cfg["n_speakers"]
    if n > 1 or speaker is not None:
        if n == 1 or speaker is None or not 0 <= speaker < n:
            raise SystemExit(f"{ckpt_dir} has {n} speaker(s): --speaker 0..{n - 1} is needed for several, and only "
                             "for several")
        voice = voice.single_speaker(speaker)
    return voice.eval(), ac


def count_params(m):
    return sum(p.numel() for p in m.parameters())


if __name__ == "__main__":
    v = Voice()
    print("total", count_params(v), "enc", count_params(v.enc), "dp", count_params(v.dp), "frames",
          count_params(v.frames), "dec", count_params(v.dec))
