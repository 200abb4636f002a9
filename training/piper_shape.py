"""A random-weight voice with the inference graph of a Piper VITS voice, for engine tests and speed measurements.

ttsgen's own voice (model.py) masks every layer. A real Piper voice does not: its decoder (HiFi-GAN) sees whatever is
beyond a sentence's end in a batch, it has a normalising flow at the frame rate before the decoder, and its text
encoder is a transformer with windowed relative attention. This file builds that graph with random weights, at two
sizes:

  --medium  the layer sizes of Piper's "medium" quality (piper_train's defaults: hidden 192, filter 768, 6 encoder
            layers with 2 heads, a flow of 4 coupling layers whose WaveNet has 4 layers of kernel 5, and a "resblock 2"
            HiFi-GAN: 256 channels, upsampling 8,8,4 with kernels 16,16,8, residual kernels 3,5,7 with dilations
            (1,2),(2,6),(3,12)). Speaks noise; for speed only.
  --tiny    the same graph with a few channels, small enough to keep in testdata/ for the engine's tests.

What differs from Piper, on purpose: the stochastic duration predictor's rational-quadratic spline is replaced by an
affine coupling (same convolutions, phoneme rate, well under 1% of the work), and the weights are random. The
graph's inputs, outputs, the one Ceil of the durations and the node name /dec/conv_pre/Conv are Piper's.

  /usr/bin/python3 training/piper_shape.py --tiny --out testdata/piper-shape/tiny-vits.onnx
  python3 training/piper_shape.py --medium --out /tmp/pm/en_US-pmvits-medium.onnx
"""
import argparse
import inspect
import json
import math
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from export import piper_config, check_graph, OPSET  # noqa: E402
from model import upsampling_stack  # noqa: E402

MEDIUM = dict(hidden=192, filt=768, heads=2, layers=6, flow_layers=4, flow_wn_layers=4, dp_filter=192,
              gen_channels=256, gen_rates=(8, 8, 4), gen_kernels=(16, 16, 8))
TINY = dict(hidden=16, filt=32, heads=2, layers=2, flow_layers=2, flow_wn_layers=2, dp_filter=16,
            gen_channels=32, gen_rates=(8, 8, 4), gen_kernels=(16, 16, 8))
RES_KERNELS = (3, 5, 7)
RES_DILATIONS = ((1, 2), (2, 6), (3, 12))
HOP = 256


class ChannelNorm(nn.Module):
    """LayerNorm over the channels of [B, C, T]."""

    def __init__(self, channels):
        super().__init__()
        self.norm = nn.LayerNorm(channels)

    def forward(self, x):
        return self.norm(x.transpose(1, 2)).transpose(1, 2)


class RelativeAttention(nn.Module):
    """Multi-head self-attention whose keys and values get a learned embedding per relative offset in -w..w.

    Computed as Piper's graph computes it: the embeddings, padded with zeros to offsets -(L-1)..L-1, meet the
    queries in one matmul per batch ([B,h,L,2L-1]), and a pad-and-reshape "skew" turns those relative logits into
    absolute ones ([B,h,L,L]), and the attention weights back into relative ones for the values. Every step scales
    with the batch; nothing is [L,L,d]."""

    def __init__(self, channels, heads, window=4):
        super().__init__()
        self.heads, self.window, self.dk = heads, window, channels // heads
        self.q = nn.Conv1d(channels, channels, 1)
        self.k = nn.Conv1d(channels, channels, 1)
        self.v = nn.Conv1d(channels, channels, 1)
        self.o = nn.Conv1d(channels, channels, 1)
        self.rel_k = nn.Parameter(torch.randn(2 * window + 1, self.dk) * self.dk ** -0.5)
        self.rel_v = nn.Parameter(torch.randn(2 * window + 1, self.dk) * self.dk ** -0.5)

    def offsets(self, table, n):
        """table's rows for offsets -(n-1)..n-1: [2n-1, d], zero beyond the window."""
        padded = F.pad(table, (0, 0, n, n))  # offset 0 at row n + window
        return padded[self.window + 1:self.window + 2 * n]

    @staticmethod
    def to_absolute(x):
        """[B,h,L,2L-1] by relative offset -> [B,h,L,L] by key position."""
        b, h, n, _ = x.shape
        x = F.pad(x, (0, 1)).reshape(b, h, 2 * n * n)
        x = F.pad(x, (0, n - 1)).reshape(b, h, n + 1, 2 * n - 1)
        return x[:, :, :n, n - 1:]

    @staticmethod
    def to_relative(x):
        """[B,h,L,L] by key position -> [B,h,L,2L-1] by relative offset."""
        b, h, n, _ = x.shape
        x = F.pad(x, (0, n - 1)).reshape(b, h, n * (2 * n - 1))
        x = F.pad(x, (n, 0)).reshape(b, h, n, 2 * n)
        return x[:, :, :, 1:]

    def forward(self, x, mask):
        b, c, n = x.shape
        q = self.q(x).view(b, self.heads, self.dk, n).transpose(2, 3) / math.sqrt(self.dk)  # [B,h,L,d]
        k = self.k(x).view(b, self.heads, self.dk, n)  # [B,h,d,L]
        v = self.v(x).view(b, self.heads, self.dk, n).transpose(2, 3)  # [B,h,L,d]
        scores = torch.matmul(q, k)  # [B,h,L,L]
        scores = scores + self.to_absolute(torch.matmul(q, self.offsets(self.rel_k, n).transpose(0, 1)))
        pair = mask.unsqueeze(2) * mask.unsqueeze(3)  # [B,1,L,L]
        scores = scores.masked_fill(pair == 0, -1e4)
        p = torch.softmax(scores, -1)
        out = torch.matmul(p, v)  # [B,h,L,d]
        out = out + torch.matmul(self.to_relative(p), self.offsets(self.rel_v, n))
        return self.o(out.transpose(2, 3).reshape(b, c, n))

    def forward_by_gather(self, x, mask):
        """The same attention with the offsets gathered into [L,L,d] tables (this file's graph before the ninth
        session): the plain reading, to check forward."""
        b, c, n = x.shape
        q = self.q(x).view(b, self.heads, self.dk, n).transpose(2, 3) / math.sqrt(self.dk)  # [B,h,L,d]
        k = self.k(x).view(b, self.heads, self.dk, n)  # [B,h,d,L]
        v = self.v(x).view(b, self.heads, self.dk, n).transpose(2, 3)  # [B,h,L,d]
        pos = torch.arange(n, device=x.device)
        offset = pos.view(1, -1) - pos.view(-1, 1)  # [L,L]: j - i
        inside = (offset.abs() <= self.window).to(x.dtype).unsqueeze(-1)  # [L,L,1]
        index = offset.clamp(-self.window, self.window) + self.window
        rel_k = self.rel_k[index] * inside  # [L,L,d]
        rel_v = self.rel_v[index] * inside
        scores = torch.matmul(q, k)  # [B,h,L,L]
        # q_i . rel_k[i,j]: as a batch over i of [B*h, d] x [d, L]
        qi = q.permute(2, 0, 1, 3).reshape(n, b * self.heads, self.dk)
        scores = scores + torch.matmul(qi, rel_k.transpose(1, 2)).view(n, b, self.heads, n).permute(1, 2, 0, 3)
        pair = mask.unsqueeze(2) * mask.unsqueeze(3)  # [B,1,L,L]
        scores = scores.masked_fill(pair == 0, -1e4)
        p = torch.softmax(scores, -1)
        out = torch.matmul(p, v)  # [B,h,L,d]
        pi = p.permute(2, 0, 1, 3).reshape(n, b * self.heads, n)
        out = out + torch.matmul(pi, rel_v).view(n, b, self.heads, self.dk).permute(1, 2, 0, 3)
        return self.o(out.transpose(2, 3).reshape(b, c, n))


class TextEncoder(nn.Module):
    def __init__(self, symbols, hidden, filt, heads, layers):
        super().__init__()
        self.hidden = hidden
        self.emb = nn.Embedding(symbols, hidden)
        self.attn = nn.ModuleList([RelativeAttention(hidden, heads) for _ in range(layers)])
        self.norm1 = nn.ModuleList([ChannelNorm(hidden) for _ in range(layers)])
        self.ffn_in = nn.ModuleList([nn.Conv1d(hidden, filt, 3, padding=1) for _ in range(layers)])
        self.ffn_out = nn.ModuleList([nn.Conv1d(filt, hidden, 3, padding=1) for _ in range(layers)])
        self.norm2 = nn.ModuleList([ChannelNorm(hidden) for _ in range(layers)])
        self.proj = nn.Conv1d(hidden, 2 * hidden, 1)

    def forward(self, ids, x_mask):
        x = self.emb(ids).transpose(1, 2) * math.sqrt(self.hidden) * x_mask
        for attn, n1, fi, fo, n2 in zip(self.attn, self.norm1, self.ffn_in, self.ffn_out, self.norm2):
            x = n1(x + attn(x, x_mask))
            y = fo(torch.relu(fi(x * x_mask)) * x_mask) * x_mask
            x = n2(x + y)
        x = x * x_mask
        m, logs = torch.split(self.proj(x) * x_mask, self.hidden, 1)
        return x, m, logs


class DilatedDepthwise(nn.Module):
    """Dilated depthwise-separable convolutions (the duration predictor's feature stack)."""

    def __init__(self, channels, layers=3, kernel=3):
        super().__init__()
        self.dw = nn.ModuleList([nn.Conv1d(channels, channels, kernel, groups=channels, dilation=kernel ** i,
                                           padding=kernel ** i * (kernel - 1) // 2) for i in range(layers)])
        self.pw = nn.ModuleList([nn.Conv1d(channels, channels, 1) for _ in range(layers)])
        self.n1 = nn.ModuleList([ChannelNorm(channels) for _ in range(layers)])
        self.n2 = nn.ModuleList([ChannelNorm(channels) for _ in range(layers)])

    def forward(self, x, mask, g=None):
        if g is not None:
            x = x + g
        for dw, pw, n1, n2 in zip(self.dw, self.pw, self.n1, self.n2):
            y = F.gelu(n1(dw(x * mask)))
            y = F.gelu(n2(pw(y)))
            x = x + y
        return x * mask


class DurationFlowPredictor(nn.Module):
    """Noise -> log-durations through reversed coupling flows conditioned on the text (Piper's default predictor is
    stochastic like this; its spline transform is an affine one here)."""

    def __init__(self, hidden, filt, flows=4, gin=0):
        super().__init__()
        self.pre = nn.Conv1d(hidden, filt, 1)
        self.cond = nn.Conv1d(gin, filt, 1) if gin else None
        self.feat = DilatedDepthwise(filt)
        self.proj = nn.Conv1d(filt, filt, 1)
        self.flow_pre = nn.ModuleList([nn.Conv1d(1, filt, 1) for _ in range(flows)])
        self.flow_feat = nn.ModuleList([DilatedDepthwise(filt) for _ in range(flows)])
        self.flow_post = nn.ModuleList([nn.Conv1d(filt, 2, 1) for _ in range(flows)])
        self.shift = nn.Parameter(torch.zeros(1, 2, 1))
        self.log_scale = nn.Parameter(torch.zeros(1, 2, 1))

    def forward(self, x, x_mask, noise_w, speaker=None):
        h = self.pre(x)
        if self.cond is not None:
            h = h + self.cond(speaker)
        g = self.proj(self.feat(h, x_mask)) * x_mask
        z = torch.randn(x.size(0), 2, x.size(2), device=x.device, dtype=x.dtype) * noise_w
        for pre, feat, post in zip(reversed(self.flow_pre), reversed(self.flow_feat), reversed(self.flow_post)):
            z = torch.flip(z, [1])
            z0, z1 = torch.split(z, 1, 1)
            h = feat(pre(z0), x_mask, g)
            m, logs = torch.split(post(h) * x_mask, 1, 1)
            z = torch.cat([z0, (z1 - m) * torch.exp(-logs) * x_mask], 1)
        z = (z - self.shift) * torch.exp(-self.log_scale) * x_mask
        return z[:, :1]


class WaveNet(nn.Module):
    """Gated non-causal WaveNet over frames (the flow's coupling network)."""

    def __init__(self, hidden, layers, kernel=5, gin=0):
        super().__init__()
        self.hidden = hidden
        self.cond = nn.Conv1d(gin, 2 * hidden * layers, 1) if gin else None
        self.inputs = nn.ModuleList([nn.Conv1d(hidden, 2 * hidden, kernel, padding=kernel // 2) for _ in range(layers)])
        self.res_skip = nn.ModuleList([nn.Conv1d(hidden, 2 * hidden if i < layers - 1 else hidden, 1)
                                       for i in range(layers)])

    def forward(self, x, mask, speaker=None):
        out = torch.zeros_like(x)
        cond = self.cond(speaker) if self.cond is not None else None
        for i, (conv, rs) in enumerate(zip(self.inputs, self.res_skip)):
            h = conv(x)
            if cond is not None:
                h = h + cond[:, 2 * self.hidden * i:2 * self.hidden * (i + 1)]
            a, b = torch.split(h, self.hidden, 1)
            y = rs(torch.tanh(a) * torch.sigmoid(b))
            if i < len(self.inputs) - 1:
                x = (x + y[:, :self.hidden]) * mask
                out = out + y[:, self.hidden:]
            else:
                out = out + y
        return out * mask


class Flow(nn.Module):
    """Mean-only affine couplings with channel flips, run in reverse (latent prior -> decoder input)."""

    def __init__(self, channels, layers, wn_layers, gin=0):
        super().__init__()
        self.half = channels // 2
        self.pre = nn.ModuleList([nn.Conv1d(self.half, channels, 1) for _ in range(layers)])
        self.wn = nn.ModuleList([WaveNet(channels, wn_layers, gin=gin) for _ in range(layers)])
        self.post = nn.ModuleList([nn.Conv1d(channels, self.half, 1) for _ in range(layers)])

    def forward(self, z, mask, speaker=None):
        for pre, wn, post in zip(reversed(self.pre), reversed(self.wn), reversed(self.post)):
            z = torch.flip(z, [1])
            z0, z1 = torch.split(z, self.half, 1)
            m = post(wn(pre(z0) * mask, mask, speaker)) * mask
            z = torch.cat([z0, (z1 - m) * mask], 1)
        return z


class ResBlock2(nn.Module):
    def __init__(self, channels, kernel, dilations):
        super().__init__()
        self.convs = nn.ModuleList([nn.Conv1d(channels, channels, kernel, dilation=d, padding=d * (kernel - 1) // 2)
                                    for d in dilations])

    def forward(self, x):
        for c in self.convs:
            x = x + c(F.leaky_relu(x, 0.1))
        return x


class Generator(nn.Module):
    """HiFi-GAN with "resblock 2", unmasked like Piper's."""

    def __init__(self, latent, channels, rates, kernels, gin=0):
        super().__init__()
        self.conv_pre = nn.Conv1d(latent, channels, 7, padding=3)
        self.cond = nn.Conv1d(gin, channels, 1) if gin else None
        self.ups, self.resblocks, ch = upsampling_stack(channels, rates, kernels, RES_KERNELS, RES_DILATIONS, ResBlock2)
        self.conv_post = nn.Conv1d(ch, 1, 7, padding=3, bias=False)

    def forward(self, x, speaker=None):
        x = self.conv_pre(x)
        if self.cond is not None:
            x = x + self.cond(speaker)
        n = len(RES_KERNELS)
        for i, up in enumerate(self.ups):
            x = up(F.leaky_relu(x, 0.1))
            x = sum(self.resblocks[i * n + j](x) for j in range(n)) / n
        return torch.tanh(self.conv_post(F.leaky_relu(x)))


class PiperShapedVoice(nn.Module):
    def __init__(self, symbols=256, hidden=192, filt=768, heads=2, layers=6, flow_layers=4, flow_wn_layers=4,
                 dp_filter=192, gen_channels=256, gen_rates=(8, 8, 4), gen_kernels=(16, 16, 8), speakers=1, gin=0):
        super().__init__()
        assert math.prod(gen_rates) == HOP
        self.speakers = speakers
        self.emb_g = nn.Embedding(speakers, gin) if speakers > 1 else None
        gin = gin if speakers > 1 else 0
        self.enc_p = TextEncoder(symbols, hidden, filt, heads, layers)
        self.dp = DurationFlowPredictor(hidden, dp_filter, gin=gin)
        self.flow = Flow(hidden, flow_layers, flow_wn_layers, gin=gin)
        self.dec = Generator(hidden, gen_channels, gen_rates, gen_kernels, gin=gin)

    def forward(self, input, input_lengths, scales, sid=None):
        noise_scale, length_scale, noise_w = scales[0], scales[1], scales[2]
        n = input.shape[1]
        x_mask = (torch.arange(n, device=input.device).unsqueeze(0) < input_lengths.unsqueeze(1)).unsqueeze(1)
        x_mask = x_mask.to(torch.float32)
        x, m_p, logs_p = self.enc_p(input, x_mask)
        speaker = self.emb_g(sid).unsqueeze(-1) if self.emb_g is not None else None  # [B, gin, 1]
        logw = self.dp(x, x_mask, noise_w, speaker)
        w_ceil = torch.ceil(torch.exp(logw) * x_mask * length_scale)
        y_lengths = torch.clamp_min(torch.sum(w_ceil, [1, 2]), 1).long()
        t = y_lengths.max()
        frames = torch.arange(t, device=input.device)
        y_mask = (frames.unsqueeze(0) < y_lengths.unsqueeze(1)).unsqueeze(1).to(torch.float32)  # [B,1,T]
        end = torch.cumsum(w_ceil, -1).transpose(1, 2)  # [B,L,1]
        start = end - w_ceil.transpose(1, 2)
        path = ((frames.view(1, 1, -1) < end) & (frames.view(1, 1, -1) >= start)).to(torch.float32)  # [B,L,T]
        m = torch.matmul(m_p, path)
        logs = torch.matmul(logs_p, path)
        z_p = m + torch.randn_like(m) * torch.exp(logs) * noise_scale
        z = self.flow(z_p, y_mask, speaker)
        return self.dec(z * y_mask, speaker).unsqueeze(1)  # [B,1,1,T*HOP]


def randomise(model):
    """Weights that give varied, bounded audio and 2-4 frames per phoneme, instead of the silence of zero weights."""
    torch.manual_seed(1234)
    with torch.no_grad():
        for p in model.parameters():
            p.normal_(0.0, 0.02)
        for mod in model.modules():
            if isinstance(mod, nn.LayerNorm):
                mod.weight.fill_(1.0)
                mod.bias.zero_()
        model.enc_p.emb.weight.normal_(0.0, 1.0 / math.sqrt(model.enc_p.hidden))
        model.enc_p.proj.weight.normal_(0.0, 0.3)
        model.dp.shift.fill_(-1.0)  # log-durations near 1: exp(1) = 2.7 frames per phoneme
        if model.emb_g is not None:  # speakers that differ plainly, or mixing them in a batch would prove nothing
            model.emb_g.weight.normal_(0.0, 1.0)
        for m in model.dec.modules():
            if isinstance(m, (nn.Conv1d, nn.ConvTranspose1d)):
                if isinstance(m, nn.Conv1d):
                    fan_in = m.weight.shape[1] * m.weight.shape[2]
                else:  # [in, out, k]: each output sample sums in x k/stride products
                    fan_in = m.weight.shape[0] * m.weight.shape[2] // m.stride[0]
                m.weight.normal_(0.0, 0.7 / fan_in ** 0.5)
                if m.bias is not None:
                    m.bias.normal_(0.0, 0.1)


def export(model, out_path, dataset):
    model = model.float().eval()
    ids = torch.randint(3, 150, (2, 30), dtype=torch.int64)
    lengths = torch.tensor([30, 21], dtype=torch.int64)
    scales = torch.tensor([0.667, 1.0, 0.8], dtype=torch.float32)
    args, names, axes = (ids, lengths, scales), ["input", "input_lengths", "scales"], {
        "input": {0: "batch_size", 1: "phonemes"}, "input_lengths": {0: "batch_size"}, "output": {0: "batch_size", 3: "time"}}
    if model.speakers > 1:  # Piper's multi-speaker signature: a fourth input, one speaker id per item
        args, names, axes = args + (torch.tensor([0, 1], dtype=torch.int64),), names + ["sid"], {**axes, "sid": {0: "batch_size"}}
    kwargs = {}
    if "dynamo" in inspect.signature(torch.onnx.export).parameters:
        kwargs["dynamo"] = False  # the TorchScript exporter names nodes like Piper's (/dec/conv_pre/Conv)
    with torch.no_grad():
        torch.onnx.export(model, args, out_path, opset_version=OPSET, input_names=names, output_names=["output"],
                          dynamic_axes=axes, do_constant_folding=True, **kwargs)
    config = piper_config(dataset, "medium")
    if model.speakers > 1:
        config["num_speakers"] = model.speakers
        config["speaker_id_map"] = {f"speaker{i}": i for i in range(model.speakers)}
    with open(out_path + ".json", "w") as f:
        json.dump(config, f, indent=2, ensure_ascii=False)
        f.write("\n")
    check_graph(out_path, names)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    size = ap.add_mutually_exclusive_group(required=True)
    size.add_argument("--medium", action="store_true", help="Piper medium's layer sizes (speed measurements)")
    size.add_argument("--tiny", action="store_true", help="a few channels (engine tests)")
    ap.add_argument("--speakers", type=int, default=1, help="more than 1: a multi-speaker voice (Piper's \"sid\" input)")
    ap.add_argument("--gather-attention", action="store_true",
                    help="attention offsets gathered into [L,L,d] tables, as this file made them before the ninth "
                         "session (batch-independent O(L^2) work): to compare measurements across that change")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    if a.gather_attention:
        RelativeAttention.forward = RelativeAttention.forward_by_gather
    torch.manual_seed(1234)
    gin = (512 if a.medium else 8) if a.speakers > 1 else 0  # piper_train's gin_channels for multi-speaker voices
    model = PiperShapedVoice(**(MEDIUM if a.medium else TINY), speakers=a.speakers, gin=gin)
    randomise(model)
    params = sum(p.numel() for p in model.parameters())
    print("params", params, "dec", sum(p.numel() for p in model.dec.parameters()),
          "flow", sum(p.numel() for p in model.flow.parameters()))
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    export(model, a.out, "ttsgen-piper-shape-" + ("medium" if a.medium else "tiny") + "-random")


if __name__ == "__main__":
    main()
