"""Export a Voice checkpoint (or a tiny random one) to a Piper-format voice: X.onnx + X.onnx.json.

  python3 training/export.py --ckpt CKPT.pt --out internal/voices/default/en_US-ttsgen-medium.onnx
  python3 training/export.py --tiny --out testdata/tiny-voice/tiny.onnx
"""
import argparse
import copy
import json
import math
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from model import INFERENCE_SCALES, Voice, apply_duration_gain, count_params, load_voice  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
OPSET = 15

EQ_META = "ttsgen_output_eq"  # the model metadata key that records export.py --eq's bands, as given
EQ_TOLERANCE_DB = 0.01  # how far the FIR's magnitude may stray from the biquad's, 50 Hz to 11 kHz
EQ_MAX_TAPS = 1025

TINY = dict(hidden=16, enc_layers=2, dp_filter=16, dec_channels=16, dec_layers=2, gen_channels=16,
            gen_rates=(8, 8, 4), gen_kernels=(16, 16, 8))
# For speed measurements only: the decoder of a Piper "high" quality voice (HiFi-GAN V1: 512 channels, upsampling
# 8,8,2,2 with kernels 16,16,4,4, residual kernels 3,7,11 with six convolutions each), in this architecture. Piper's
# "medium" decoder is this file's default generator; piper_shape.py makes a voice with medium's whole graph.
PIPER_HIGH_DECODER = dict(gen_channels=512, gen_rates=(8, 8, 2, 2), gen_kernels=(16, 16, 4, 4),
                          gen_res_kernels=(3, 7, 11), gen_res_dilations=((1, 1, 3, 1, 5, 1),) * 3)


def piper_config(dataset, quality="medium"):
    with open(os.path.join(HERE, "phoneme_id_map.json")) as f:
        id_map = json.load(f)
    return {
        "audio": {"sample_rate": 22050, "quality": quality},
        "espeak": {"voice": "en-us"},
        "inference": dict(INFERENCE_SCALES),
        "phoneme_type": "espeak",
        "phoneme_map": {},
        "phoneme_id_map": id_map,
        "num_symbols": 256,
        "num_speakers": 1,
        "speaker_id_map": {},
        "piper_version": "1.0.0",
        "language": {"code": "en_US", "family": "en", "region": "US", "name_native": "English",
                     "name_english": "English", "country_english": "United States"},
        "dataset": dataset,
    }


def peaking_fir(spec, sr=22050):
    """spec "F0,GAIN_DB,Q": the magnitude response of a peaking equaliser (the audio-EQ cookbook's biquad: GAIN_DB at
    F0 Hz, a bandwidth of about F0/Q) as a zero-phase FIR (numpy, float64), the shortest of odd length within
    EQ_TOLERANCE_DB of it.
    ONNX has no recursive filter, and zero phase moves no sample in time. The length follows the filter because the
    FIR is a full-rate convolution on every sample: a broad lift needs a few taps, a narrow cut hundreds."""
    import numpy as np
    from scipy import signal
    try:
        f0, gain_db, q = (float(v) for v in spec.split(","))
    except ValueError:
        raise SystemExit(f"--eq {spec}: want F0,GAIN_DB,Q (Hz, dB, quality factor), e.g. 3050,-2,10")
    if not (0 < f0 < sr / 2 and q > 0 and abs(gain_db) <= 12):
        raise SystemExit(f"--eq {spec}: want 0 < F0 < {sr // 2} Hz, Q > 0 and a gain within +-12 dB")
    amp, w0 = 10 ** (gain_db / 40), 2 * math.pi * f0 / sr
    alpha, cos = math.sin(w0) / (2 * q), math.cos(w0)
    b, a = [1 + alpha * amp, -2 * cos, 1 - alpha * amp], [1 + alpha / amp, -2 * cos, 1 - alpha / amp]
    w, h = signal.freqz(b, a, worN=np.linspace(0, math.pi, 4097))
    check = np.linspace(50, min(11000, sr / 2), 2000)
    want = 20 * np.log10(np.abs(signal.freqz(b, a, worN=check, fs=sr)[1]))
    for taps in range(3, EQ_MAX_TAPS + 1, 2):
        fir = signal.firwin2(taps, w / math.pi, np.abs(h), window=None)
        got = 20 * np.log10(np.abs(signal.freqz(fir, worN=check, fs=sr)[1]))
        if np.abs(got - want).max() <= EQ_TOLERANCE_DB:
            return fir
    raise SystemExit(f"--eq {spec}: no FIR of up to {EQ_MAX_TAPS} taps is within {EQ_TOLERANCE_DB} dB of it; "
                     "a narrower band needs a lower Q")


def equaliser_fir(spec, sr=22050):
    """spec: one or more peaking bands "F0,GAIN_DB,Q" joined by "/" (e.g. a broad lift and a narrow cut); their
    zero-phase FIRs convolved into one, which is zero-phase too, so the graph gains a single convolution."""
    import numpy as np
    bands = [peaking_fir(band, sr) for band in spec.split("/")]
    fir = bands[0]
    for band in bands[1:]:
        fir = np.convolve(fir, band)
    return torch.tensor(fir, dtype=torch.float32)


def export(model, out_path, dataset, quality="medium", eq=None):
    model = copy.deepcopy(model).float().eval().cpu()
    model.dec.balanced_at_export = model.dec.balanced
    model.dec.bake_balanced()  # the upsampling weights as trained (projected), in plain ConvTranspose nodes
    if eq:
        model.dec.set_output_eq(equaliser_fir(eq))
    ids = torch.randint(3, 150, (2, 30), dtype=torch.int64)
    lengths = torch.tensor([30, 21], dtype=torch.int64)
    scales = torch.tensor([0.667, 1.0, 0.8], dtype=torch.float32)
    # the TorchScript exporter: its node names ("/dec/conv_pre/Conv") are what ttsgen splits at (torch < 2.5 has
    # only that one and no `dynamo` argument)
    legacy = {"dynamo": False} if tuple(int(v) for v in torch.__version__.split(".")[:2]) >= (2, 5) else {}
    with torch.no_grad():
        torch.onnx.export(
            model, (ids, lengths, scales), out_path, opset_version=OPSET,
            input_names=["input", "input_lengths", "scales"], output_names=["output"],
            dynamic_axes={"input": {0: "batch_size", 1: "phonemes"}, "input_lengths": {0: "batch_size"},
                          "output": {0: "batch_size", 3: "time"}},
            do_constant_folding=True, **legacy)
    if eq:  # from_onnx.py reads it back: a checkpoint read from this voice has no equaliser
        import onnx
        m = onnx.load(out_path)
        onnx.helper.set_model_props(m, {EQ_META: eq})
        onnx.save(m, out_path)
    with open(out_path + ".json", "w") as f:
        json.dump(piper_config(dataset, quality), f, indent=2, ensure_ascii=False)
        f.write("\n")
    check_graph(out_path)
    if model.dec.balanced_at_export:
        check_balanced(out_path)


def check_graph(path, inputs=("input", "input_lengths", "scales")):
    """Fail unless the graph has Piper's signature, one Ceil [B,1,L], and /dec/conv_pre/Conv."""
    import onnx
    m = onnx.load(path)
    onnx.checker.check_model(m)
    ins = {i.name: i for i in m.graph.input}
    assert list(ins) == list(inputs), list(ins)
    assert [o.name for o in m.graph.output] == ["output"]
    ceils = [n for n in m.graph.node if n.op_type == "Ceil"]
    assert len(ceils) == 1, f"want exactly one Ceil node, got {len(ceils)}"
    convpre = [n for n in m.graph.node if n.name == "/dec/conv_pre/Conv"]
    assert len(convpre) == 1, "no /dec/conv_pre/Conv node"
    ops = sorted({n.op_type for n in m.graph.node})
    print(f"{path}: {os.path.getsize(path) / 1e6:.2f} MB, opset {m.opset_import[0].version}, Ceil -> "
          f"{ceils[0].output[0]}, conv_pre input {convpre[0].input[0]}, ops {ops}")


def check_balanced(path):
    """Fail unless every ConvTranspose kernel of the graph is phase-balanced (model.phase_balanced): the export
    carried the projection that training used, so no frame-periodic tone comes from the upsampling. An inverse-STFT
    head's fixed overlap-add kernel (/dec/istft/) is not an upsampling kernel and is left out."""
    import onnx
    from onnx import numpy_helper
    m = onnx.load(path)
    weights = {i.name: numpy_helper.to_array(i) for i in m.graph.initializer}
    for n in m.graph.node:
        if n.op_type != "ConvTranspose" or n.name.startswith("/dec/istft/"):
            continue
        stride = next(a.ints[0] for a in n.attribute if a.name == "strides")
        w = weights[n.input[1]]
        sums = w.reshape(w.shape[0], w.shape[1], -1, stride).sum(2)  # per channel pair and output phase
        spread = float(abs(sums - sums.mean(-1, keepdims=True)).max())
        assert spread <= 1e-5 * max(1.0, float(abs(w).max())), f"{n.name}: phase sums differ by {spread:g}"
    print(f"{path}: every ConvTranspose kernel phase-balanced")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ckpt", help="folder with train.py's ac.pt + gen.pt")
    ap.add_argument("--tiny", action="store_true", help="tiny random weights, for engine tests")
    ap.add_argument("--piper-high-decoder", action="store_true",
                    help="random weights with the decoder of Piper's high quality, for speed measurements (it speaks noise)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--dataset", default="ttsgen-festival-slt")
    ap.add_argument("--duration-gain", type=float, default=1.0, help="from calibrate.py")
    ap.add_argument("--speaker", type=int,
                    help="a checkpoint of several speakers (train.py --real-ids): the one to export, as a "
                         "single-speaker voice (its biases folded into the weights; the graph is unchanged)")
    ap.add_argument("--eq", metavar="F0,GAIN_DB,Q[/F0,GAIN_DB,Q...]",
                    help="end the graph in a fixed equaliser of peaking bands (one zero-phase FIR after the "
                         "generator's tanh), which training never sees: 3000,1,0.5 is the shipped voice's broad "
                         "lift, 3000,1,0.5/3060,-1.5,10 adds a narrow cut at its 3 kHz bump "
                         "(training/README.md step 7 says what each costs)")
    ap.add_argument("--unbalanced", action="store_true",
                    help="upsampling weights as stored, not projected (a checkpoint trained before phase_balanced)")
    a = ap.parse_args()
    if a.tiny or a.piper_high_decoder:
        torch.manual_seed(1234)
        model = Voice(**(TINY if a.tiny else PIPER_HIGH_DECODER))
        # random weights would give ~zero-length or huge durations; make each phoneme last 2..4 frames
        with torch.no_grad():
            model.dp.proj.bias.fill_(1.0)
            # the generator's training init (std 0.01) would make a near-constant output; make it input-dependent
            model.enc.proj_m.weight.mul_(20.0)
            model.frames.post.weight.mul_(20.0)
            for m in model.dec.modules():
                if isinstance(m, (torch.nn.Conv1d, torch.nn.ConvTranspose1d)):
                    torch.nn.init.normal_(m.weight, 0.0, 0.5 / (m.weight.shape[1] * m.weight.shape[2]) ** 0.5)
        dataset = "ttsgen-tiny-random" if a.tiny else "ttsgen-piper-high-decoder-random"
    else:
        model, ac = load_voice(a.ckpt, a.speaker)  # a speaker's fold is checked there (Voice.single_speaker)
        print("checkpoint step", ac["step"] if a.speaker is None else f"{ac['step']}, speaker {a.speaker} folded in")
        if a.unbalanced:
            model.dec.balanced = False  # the flag only decides whether forward and bake_balanced project the kernels
        if a.duration_gain != 1.0:
            apply_duration_gain(model, a.duration_gain)
        dataset = a.dataset
    print("params", count_params(model), "dec", count_params(model.dec))
    export(model, a.out, dataset, "medium", eq=a.eq)


if __name__ == "__main__":
    main()
