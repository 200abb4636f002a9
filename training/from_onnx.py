"""An exported voice back to a train.py checkpoint (ac.pt + gen.pt), to resume training from the shipped weights.

  python3 training/from_onnx.py --onnx internal/voices/default/en_US-ttsgen-medium.onnx --step 3167 --out CKPT_DIR

export.py names every initializer after its state_dict key, so the mapping is by name; the load is strict (a
missing or unexpected weight fails). The architecture is train.py's default (the shipped voice's), with the
frame decoder's depth and the generator's width and last stage read from the graph: train.py --deepen-frames adds
frame decoder blocks, --widen-gen makes the generator wider, and --istft-head ends it in an inverse-STFT head. The
head's n_fft follows from its two outputs a bin (log-magnitude and phase), its hop from the frame's samples (HOP) over
the rates of the upsampling stages left before it.
"""
import argparse
import inspect
import math
import os
import sys

import onnx
import torch
from onnx import numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from model import HOP, Voice  # noqa: E402
from export import EQ_META  # noqa: E402
from train import FULL_SIZE, save_ckpt  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--onnx", required=True)
    ap.add_argument("--step", type=int, required=True, help="the training step the voice was exported at")
    ap.add_argument("--out", required=True)
    ap.add_argument("--half", action="store_true", help="store the weights in float16 (to carry half the bytes)")
    a = ap.parse_args()
    voice = onnx.load(a.onnx)
    graph = voice.graph
    model = Voice(**{**FULL_SIZE, **graph_shape(graph)})
    want = model.state_dict()
    state = {i.name: torch.from_numpy(numpy_helper.to_array(i).copy()) for i in graph.initializer if i.name in want}
    model.load_state_dict(state, strict=True)
    save_ckpt(model, None, a.step, a.out, {"from_onnx": os.path.basename(a.onnx)}, half=a.half)
    print(f"{a.onnx}: {len(state)} tensors -> {a.out} (step {a.step})")
    eq = {p.key: p.value for p in voice.metadata_props}.get(EQ_META)
    if eq:  # a fixed filter, not a weight: export.py adds it, and must again to make the same voice
        print(f"{a.onnx} ends in export.py's --eq {eq}, which a checkpoint does not hold: export with --eq {eq} to "
              f"make this voice again")


def graph_shape(graph):
    """The Voice arguments by which the graph differs from the default: the frame decoder's depth (--deepen-frames),
    the generator's width (--widen-gen), and an inverse-STFT head in place of its last stage (--istft-head)."""
    dims = {i.name: list(i.dims) for i in graph.initializer}
    shape = {"dec_layers": sum(1 for n in dims if n.startswith("frames.blocks.") and n.endswith(".conv.weight"))}
    if "dec.conv_pre.weight" in dims:
        shape["gen_channels"] = dims["dec.conv_pre.weight"][0]
    post_out = dims.get("dec.conv_post.weight", [1])[0]
    if post_out > 1:  # per STFT bin a log-magnitude and a phase: 2 * (n_fft / 2 + 1) channels
        default = inspect.signature(Voice).parameters
        rates, kernels = list(default["gen_rates"].default), list(default["gen_kernels"].default)
        n_ups = sum(1 for n in dims if n.startswith("dec.ups.") and n.endswith(".weight"))
        shape.update(gen_rates=rates[:n_ups], gen_kernels=kernels[:n_ups],
                     gen_istft=[post_out - 2, HOP // math.prod(rates[:n_ups])])
    return shape


if __name__ == "__main__":
    main()
