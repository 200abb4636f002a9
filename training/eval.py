"""Word error rate of the voice against Festival (the teacher) on held-out sentences, by pocketsphinx.

  python3 training/eval.py --ids .traindata/ids.txt --ckpt CKPT_DIR [--out /tmp/ttsgen-eval] [--n 40]

The sentences are the first --n lines of LJ050 (the last LJSpeech chapter) with 6..25 words (no LibriVox
boilerplate); the training ids
carried to the GPU machine come from the first 12,000 lines only (LJ001..LJ046), so none of these was trained on.
Each wav -> 16 kHz mono 16-bit (sox) -> pocketsphinx_continuous -> words; WER = edits / reference words, summed over
all sentences. The voice is synthesised with the torch code of the exported graph (model.Voice.forward) at the
voice config's default scales; --scales 0,1,0 for the deterministic output. Also writes a spectrogram PNG (sox).
"""
import argparse
import json
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import torch
from scipy.io import wavfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from model import apply_duration_gain, load_voice  # noqa: E402


def words(text):
    text = text.lower().replace("-", " ")
    return re.sub(r"[^a-z' ]", " ", text).split()


def edit_distance(ref, hyp):
    d = list(range(len(hyp) + 1))
    for i, r in enumerate(ref, 1):
        prev, d[0] = d[0], i
        for j, h in enumerate(hyp, 1):
            cur = min(d[j] + 1, d[j - 1] + 1, prev + (r != h))
            prev, d[j] = d[j], cur
    return d[len(hyp)]


def recognise(wav):
    wav16 = wav[:-4] + ".16k.wav"
    subprocess.run(["sox", "-R", wav, "-r", "16000", "-c", "1", "-b", "16", wav16], check=True)  # -R: repeatable dither
    r = subprocess.run(["pocketsphinx_continuous", "-infile", wav16, "-logfn", "/dev/null"],
                       capture_output=True, text=True, check=True)
    return " ".join(r.stdout.split())


def select(ids_path, n):
    out = []
    with open(ids_path, encoding="utf-8") as f:
        for line in f:
            uid, ids, text = line.rstrip("\n").split("|")
            boilerplate = "librivox" in text.lower() or "chapter" in text.lower()
            if uid.startswith("LJ050-") and 6 <= len(text.split()) <= 25 and not boilerplate:
                out.append((uid, [int(t) for t in ids.split()], text))
    return out[:n]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ids", default=".traindata/ids.txt")
    ap.add_argument("--ckpt", required=True)
    ap.add_argument("--speaker", type=int, help="which speaker of a checkpoint of several")
    ap.add_argument("--out", default="/tmp/ttsgen-eval")
    ap.add_argument("--n", type=int, default=40)
    ap.add_argument("--scales", default="0.667,1,0.8", help="noise_scale,length_scale,noise_w")
    ap.add_argument("--duration-gain", type=float, default=1.0, help="as given to export.py")
    ap.add_argument("--no-festival", action="store_true", help="skip the teacher (reuse earlier figures)")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    sents = select(a.ids, a.n)
    torch.manual_seed(0)
    voice, ac = load_voice(a.ckpt, a.speaker)
    step = ac["step"]
    if a.duration_gain != 1.0:
        apply_duration_gain(voice, a.duration_gain)
    scales = torch.tensor([float(x) for x in a.scales.split(",")])
    ours = []
    with torch.no_grad():
        for uid, ids, _ in sents:
            audio = voice(torch.tensor([ids]), torch.tensor([len(ids)]), scales)[0, 0, 0].numpy()
            peak = max(1e-4, float(np.abs(audio).max()))
            path = os.path.join(a.out, f"{uid}.ttsgen.wav")
            wavfile.write(path, 22050, (audio / peak * 0.9 * 32767).astype(np.int16))  # Piper-style peak norm
            ours.append(path)
    subprocess.run(["sox", ours[0], "-n", "spectrogram", "-x", "1200", "-y", "257", "-o",
                    os.path.join(a.out, "spectrogram.ttsgen.png")], check=True)
    jobs = [("ttsgen", p, s[2]) for p, s in zip(ours, sents)]
    if not a.no_festival:
        for uid, _, text in sents:
            path = os.path.join(a.out, f"{uid}.festival.wav")
            if not os.path.exists(path):
                subprocess.run(["text2wave", "-o", path], input=text, text=True, check=True,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            jobs.append(("festival", path, text))
        subprocess.run(["sox", os.path.join(a.out, f"{sents[0][0]}.festival.wav"), "-n", "spectrogram", "-x", "1200",
                        "-y", "257", "-o", os.path.join(a.out, "spectrogram.festival.png")], check=True)
    with ThreadPoolExecutor(os.cpu_count() or 2) as ex:
        hyps = list(ex.map(lambda j: recognise(j[1]), jobs))
    totals = {}
    rows = []
    for (system, path, text), hyp in zip(jobs, hyps):
        ref = words(text)
        e = edit_distance(ref, words(hyp))
        t = totals.setdefault(system, [0, 0])
        t[0] += e
        t[1] += len(ref)
        rows.append({"system": system, "wav": os.path.basename(path), "ref": text, "hyp": hyp, "errors": e})
    result = {"checkpoint_step": step, "sentences": len(sents), "scales": a.scales, "duration_gain": a.duration_gain,
              "wer": {s: round(100.0 * e / n, 1) for s, (e, n) in totals.items()}}
    with open(os.path.join(a.out, "wer.json"), "w") as f:
        json.dump({**result, "rows": rows}, f, indent=1)
    for r in rows[:3]:
        print(f"{r['system']:9s} {r['ref']}\n{'':9s} -> {r['hyp']}")
    print(json.dumps(result))


if __name__ == "__main__":
    main()
