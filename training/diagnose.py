"""Which part of the voice loses the words: the same 30 evaluation sentences, pocketsphinx WER at four points.

  python3 training/diagnose.py --ckpt CKPT_DIR [--out /tmp/ttsgen-diagnose] [--ttsgen bin/ttsgen]

  festival        Festival's own audio (the teacher), resampled to 22,050 Hz
  copy            the generator alone, fed Festival's mel (vocoder copy synthesis)
  teacher-forced  the acoustic model's mel with Festival's durations (found by MAS, as in training) -> generator
  predicted       the whole voice, its own durations, no noise (scales 0, 1, 0)

Each step adds one part's errors to the one before, so the differences say where the next training step should
work. Needs Festival with the HTS slt voice (Debian festival festvox-us-slt-hts), pocketsphinx and sox, the
voice-quality tools (../shared/tools/voice-quality or VQ=DIR) and a built ttsgen (for the phoneme ids).
"""
import argparse
import json
import os
import re
import subprocess
import sys

import numpy as np
import torch
from scipy.io import wavfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from data import MelSpec, load_wav  # noqa: E402
from mas import frame_log_likelihood, mas  # noqa: E402
from model import load_voice, make_latent, path_from_durations  # noqa: E402


def phoneme_ids(ttsgen, texts):
    out = subprocess.run([ttsgen, "phonemize", "--json", "--file", texts], check=True, capture_output=True,
                         text=True).stdout
    return [json.loads(line)["ids"] for line in out.splitlines() if line.strip()]


def festival(text, path):
    subprocess.run(["text2wave", "-eval", "(voice_cmu_us_slt_arctic_hts)", "-o", path], input=text, text=True,
                   check=True, capture_output=True)


def write(path, audio):
    x = np.clip(audio.detach().numpy().reshape(-1), -1, 1)
    wavfile.write(path, 22050, (x * 32767).astype(np.int16))


def wer(vq, texts, d):
    # sox's dither gets a new random seed each run unless repeatable (-R): without it, the same audio scores a
    # point or two apart, as much as the differences between stages
    env = {**os.environ, "SOX_OPTS": (os.environ.get("SOX_OPTS", "") + " -R").strip()}
    out = subprocess.run([os.path.join(vq, "wer_dir.sh"), texts, d], check=True, capture_output=True,
                         text=True, env=env).stdout
    m = re.search(r"WER=([0-9.]+)%", out)
    return float(m.group(1)) if m else float("nan")


@torch.no_grad()
def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ckpt", required=True)
    ap.add_argument("--speaker", type=int, help="which speaker of a checkpoint of several")
    ap.add_argument("--out", default="/tmp/ttsgen-diagnose")
    ap.add_argument("--texts", default=os.path.join(HERE, "eval_sentences.txt"))
    ap.add_argument("--ttsgen", default=os.path.join(HERE, "..", "bin", "ttsgen"))
    a = ap.parse_args()
    vq = os.environ.get("VQ", os.path.join(HERE, "..", "..", "shared", "tools", "voice-quality"))
    stages = ("festival", "copy", "teacher-forced", "predicted")
    for s in stages:
        os.makedirs(os.path.join(a.out, s), exist_ok=True)
    texts = [t.strip() for t in open(a.texts, encoding="utf-8")]
    ids = phoneme_ids(a.ttsgen, a.texts)
    if len(ids) != len(texts):
        raise SystemExit(f"{a.texts}: {len(texts)} lines but phonemize gave {len(ids)} sentences")
    model, ac = load_voice(a.ckpt, a.speaker)
    step = ac["step"]
    melspec = MelSpec()
    frames_ratio = []
    for i, (text, sent_ids) in enumerate(zip(texts, ids), 1):
        fest_path = os.path.join(a.out, "festival", f"{i}.wav")
        if not os.path.exists(fest_path):
            festival(text, fest_path + ".32k.wav")
            write(fest_path, torch.from_numpy(load_wav(fest_path + ".32k.wav")))
            os.remove(fest_path + ".32k.wav")
        audio = torch.from_numpy(load_wav(fest_path)).unsqueeze(0)
        mel = melspec(audio)  # [1,80,T]
        T = mel.shape[2]
        y_mask = torch.ones(1, 1, T)
        write(os.path.join(a.out, "copy", f"{i}.wav"), model.dec(make_latent(mel, y_mask)))

        x = torch.tensor([sent_ids])
        x_len, y_len = torch.tensor([x.shape[1]]), torch.tensor([T])
        x_mask = torch.ones(1, 1, x.shape[1])
        h, mu = model.enc(x, x_mask)
        logp = frame_log_likelihood(mu, mel)
        dur = mas(logp, x_len, y_len).sum(-1).unsqueeze(1)
        path, frac = path_from_durations(dur, T)
        mel_tf = model.frames(torch.matmul(h, path), torch.matmul(mu, path), frac, y_mask)
        write(os.path.join(a.out, "teacher-forced", f"{i}.wav"), model.dec(make_latent(mel_tf, y_mask)))

        pred = model(x, x_len, torch.tensor([0.0, 1.0, 0.0]))
        write(os.path.join(a.out, "predicted", f"{i}.wav"), pred)
        frames_ratio.append(pred.shape[-1] / audio.shape[-1])

    print(f"checkpoint step {step}, {len(texts)} sentences of {a.texts}")
    print("| stage | WER (pocketsphinx) |")
    print("|---|---|")
    for s in stages:
        print(f"| {s} | {wer(vq, a.texts, os.path.join(a.out, s)):.1f}% |")
    print(f"predicted length / Festival's: mean {np.mean(frames_ratio):.3f} "
          f"(range {min(frames_ratio):.2f}-{max(frames_ratio):.2f})")


if __name__ == "__main__":
    main()
