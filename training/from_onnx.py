"""An exported voice back to a train.py checkpoint (ac.pt + gen.pt), to resume training from the shipped weights.

  python3 training/from_onnx.py --onnx internal/voices/default/en_US-ttsgen-medium.onnx --step 3167 --out CKPT_DIR

export.py names every initializer after its state_dict key, so the mapping is by name; the load is strict (a
missing or unexpected weight fails). The architecture is train.py's default (the shipped voice's), with the
generator's width read from the graph (train.py --widen-gen makes it wider).
"""
import argparse
import os
import sys

import onnx
import torch
from onnx import numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from model import Voice  # noqa: E402
from train import FULL_SIZE, save_ckpt  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--onnx", required=True)
    ap.add_argument("--step", type=int, required=True, help="the training step the voice was exported at")
    ap.add_argument("--out", required=True)
    ap.add_argument("--half", action="store_true", help="store the weights in float16 (to carry half the bytes)")
    a = ap.parse_args()
    graph = onnx.load(a.onnx).graph
    conv_pre = [i for i in graph.initializer if i.name == "dec.conv_pre.weight"]
    model = Voice(**{**FULL_SIZE, **({"gen_channels": conv_pre[0].dims[0]} if conv_pre else {})})
    want = model.state_dict()
    state = {i.name: torch.from_numpy(numpy_helper.to_array(i).copy()) for i in graph.initializer if i.name in want}
    model.load_state_dict(state, strict=True)
    save_ckpt(model, None, a.step, a.out, {"from_onnx": os.path.basename(a.onnx)}, half=a.half)
    print(f"{a.onnx}: {len(state)} tensors -> {a.out} (step {a.step})")


if __name__ == "__main__":
    main()
