"""Which part of the voice loses the words or the naturalness: the same sentences at four points, each with
issue 21's three measures (pocketsphinx WER, DNSMOS P.808 / OVRL, steady tone).

  python3 training/diagnose.py --ckpt CKPT_DIR [--speaker N] [--out /tmp/ttsgen-diagnose] [--ttsgen bin/ttsgen]
  python3 training/diagnose.py --ckpt CKPT_DIR --speaker 1 --recordings DIR --ids IDS_FILE [--count 30]

  festival        Festival's own audio (the teacher) of the 30 evaluation sentences, resampled to 22,050 Hz;
   or recording   with --recordings, COUNT real recordings (ID.flac or ID.wav, 22,050 Hz) and their text and ids
                  from IDS_FILE (corpusids' lines; a fixed random choice): the reference for a real speaker's voice
  copy            the generator alone, fed the reference's mel (vocoder copy synthesis)
  teacher-forced  the acoustic model's mel with the reference's durations (found by MAS, as in training) -> generator
  predicted       the whole voice, its own durations, no noise (scales 0, 1, 0)
  VOICE           with --voice VOICE.onnx (repeatable): another voice on the same sentences, through `ttsgen batch`
                  at scales 0/1/0 (e.g. the default voice beside a real speaker's)

Besides those, the frame comb (how far the long-term spectrum stands out at the multiples of the frame rate, 1-5.5
kHz: the generator's buzz, which tone.py sees only where it rides on a formant) and two timbre figures: how far
the stage's long-term spectrum (100 Hz-8 kHz, level set aside, pauses left out) is from the reference's, as an
RMS difference in dB, and the median pitch of the frames whose autocorrelation finds a clear period, with how many
frames do (a generator that fills harmonics with noise makes fewer of them). A second table splits the spectrum's
difference into bands up to 11 kHz: which part of the range a stage has too little or too much of.

Each step adds one part's errors to the one before, so the differences say where the next training step should
work. Recordings that the voice was trained on make copy synthesis an upper bound; the WER of old LJSpeech prose is
not comparable with the evaluation sentences'. Needs pocketsphinx and sox, node (DNSMOS), the voice-quality tools
(../shared/tools/voice-quality or VQ=DIR), and for the Festival reference Festival with the HTS slt voice (Debian
festival festvox-us-slt-hts) and a built ttsgen (for the phoneme ids).
"""
import argparse
import json
import os
import random
import re
import subprocess
import sys

import numpy as np
import torch
from scipy.io import wavfile
from scipy.signal import resample_poly, welch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from data import HOP, SR, MelSpec, find_recordings, load_recording, load_wav, read_ids  # noqa: E402
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


def dnsmos(vq, d):
    """(P.808, OVRL) of the folder's wavs at -26 dBFS, as quality.sh measures them; None where node or the model's
    runtime (vq/node_modules) is missing."""
    if not os.path.isdir(os.path.join(vq, "node_modules")):
        return None
    out = subprocess.run(["node", os.path.join(vq, "dnsmos.js"), "--summary-only", "--rms-db", "-26", d],
                         capture_output=True, text=True)
    try:
        summary = json.loads(out.stdout.strip().splitlines()[-1])
        return summary["P808_MOS"], summary["OVRL"]
    except (IndexError, ValueError, KeyError, TypeError):
        return None


def tone(vq, d):
    """tone.py's figure for the folder ("4.7 dB at 3090 Hz": the most prominent narrow peak between 1 and 10 kHz over
    its +-400 Hz surroundings), as quality.sh reports it."""
    out = subprocess.run([sys.executable, os.path.join(vq, "tone.py"), d], check=True, capture_output=True,
                         text=True).stdout
    m = re.search(r"tone=([0-9.]+ dB at [0-9]+ Hz)", out)
    return m.group(1) if m else "?"


def active_frames(x, frame):
    """x's frames of `frame` samples within 30 dB of its loudest, so pauses do not weigh in: [n, frame]."""
    fr = x[:len(x) // frame * frame].reshape(-1, frame)
    e = 10 * np.log10((fr ** 2).mean(1) + 1e-12)
    return fr[e > e.max() - 30]


BANDS_HZ = [0, 500, 1000, 2000, 4000, 6000, 8000, 9000, SR // 2]
MATCHED_HZ = (100, 8000)  # where levels are matched and the spectrum distance is taken


def matched(freq):
    return (freq >= MATCHED_HZ[0]) & (freq <= MATCHED_HZ[1])


def long_term_spectrum(clips):
    """The clips' (22,050 Hz) mean power spectrum in dB up to half the sample rate, with the mean level of its
    100 Hz-8 kHz part removed: (frequencies, dB)."""
    total = None
    for x in clips:
        freq, p = welch(active_frames(x, 441).reshape(-1), SR, nperseg=1024)
        total = p if total is None else total + p
    db = 10 * np.log10(total + 1e-20)
    return freq, db - db[matched(freq)].mean()


def spectrum_distance(freq, stage_db, ref_db):
    """The RMS difference of two long-term spectra over 100 Hz-8 kHz, in dB."""
    band = matched(freq)
    return float(np.sqrt(((stage_db[band] - ref_db[band]) ** 2).mean()))


def band_differences(freq, stage_db, ref_db):
    """The mean difference of two long-term spectra in each of BANDS_HZ, in dB: where a stage is duller or
    brighter than the reference (above 8 kHz too, where the distance does not look)."""
    return [float((stage_db - ref_db)[(freq >= lo) & (freq < hi)].mean()) for lo, hi in zip(BANDS_HZ, BANDS_HZ[1:])]


FRAME_COMB_HZ = (1000, 5500)  # where the shipped voices' comb stands out; above, the generator's hiss hides it


def frame_comb(clips, n_fft=8192):
    """How far the clips' long-term spectrum stands out at the multiples of the frame rate (22,050/256 = 86.1 Hz)
    between 1 and 5.5 kHz, over the midpoints between them, in dB: the frame-periodic buzz of a generator. tone.py
    reports only the single most prominent peak, so a comb of a dB or so shows there only where it rides on a
    formant's bump; speech's own harmonics move with the pitch and average out here (Festival's audio: about 0).
    n_fft of 32 frames puts every multiple on an exact bin, 32 bins apart. Clips shorter than n_fft are left out."""
    total = None
    for x in clips:
        if len(x) < n_fft:
            continue
        fr = np.lib.stride_tricks.sliding_window_view(x, n_fft)[::n_fft // 4] * np.hanning(n_fft)
        p = (np.abs(np.fft.rfft(fr, axis=1)) ** 2).sum(0)
        total = p if total is None else total + p
    if total is None:
        return float("nan")
    db = 10 * np.log10(total + 1e-20)
    step = n_fft // HOP
    peaks = [b for b in range(step, n_fft // 2 - step, step) if FRAME_COMB_HZ[0] <= b * SR / n_fft < FRAME_COMB_HZ[1]]
    return float(np.mean([db[b] - (db[b - step // 2] + db[b + step // 2]) / 2 for b in peaks]))


def pitch(clips):
    """(median F0 in Hz, frames with a clear period) of the clips (22,050 Hz): 40 ms frames at 16 kHz whose
    normalised autocorrelation peaks above 0.6 between 70 and 400 Hz."""
    f0 = []
    lo, hi = 16000 // 400, 16000 // 70
    for x in clips:
        for fr in active_frames(resample_poly(x, 320, 441), 640):
            fr = fr - fr.mean()
            ac = np.correlate(fr, fr, "full")[len(fr) - 1:]
            lag = lo + int(np.argmax(ac[lo:hi]))
            if ac[0] > 0 and ac[lag] / ac[0] > 0.6:
                f0.append(16000 / lag)
    return (float(np.median(f0)) if f0 else 0.0), len(f0)


def recorded_sentences(rec_dir, ids_file, count):
    """[(text, ids, path)] of `count` recordings in rec_dir that have a line in ids_file, chosen at random (fixed)."""
    items, paths = find_recordings(read_ids(ids_file), rec_dir)
    found = [(text, ids, path) for (_, ids, text), path in zip(items, paths)]
    random.Random(3).shuffle(found)
    return found[:count]


@torch.no_grad()
def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ckpt", required=True)
    ap.add_argument("--speaker", type=int, help="which speaker of a checkpoint of several")
    ap.add_argument("--out", default="/tmp/ttsgen-diagnose")
    ap.add_argument("--texts", default=os.path.join(HERE, "eval_sentences.txt"))
    ap.add_argument("--ttsgen", default=os.path.join(HERE, "..", "bin", "ttsgen"))
    ap.add_argument("--recordings", help="a folder of real recordings to use as the reference instead of Festival")
    ap.add_argument("--ids", help="with --recordings: corpusids' file with the recordings' text and phoneme ids")
    ap.add_argument("--count", type=int, default=30, help="with --recordings: how many")
    ap.add_argument("--voice", action="append", default=[],
                    help="another voice (ONNX) to speak the same sentences through ttsgen, as a row of its own")
    a = ap.parse_args()
    vq = os.environ.get("VQ", os.path.join(HERE, "..", "..", "shared", "tools", "voice-quality"))
    if not os.path.isdir(os.path.join(vq, "node_modules")) and os.path.isdir("/tmp/ttsgen-vq/node_modules"):
        vq = "/tmp/ttsgen-vq"  # the copy quality.sh installs DNSMOS's runtime in
    reference = "recording" if a.recordings else "festival"
    voices = {os.path.basename(v).removesuffix(".onnx"): v for v in a.voice}
    stages = (reference, "copy", "teacher-forced", "predicted", *voices)
    for s in stages:
        os.makedirs(os.path.join(a.out, s), exist_ok=True)
    if a.recordings:
        if not a.ids:
            raise SystemExit("--recordings needs --ids (their text and phoneme ids)")
        chosen = recorded_sentences(a.recordings, a.ids, a.count)
        texts = [t for t, _, _ in chosen]
        ids = [i for _, i, _ in chosen]
        a.texts = os.path.join(a.out, "texts.txt")
        with open(a.texts, "w", encoding="utf-8") as f:
            f.write("\n".join(texts) + "\n")
    else:
        texts = [t.strip() for t in open(a.texts, encoding="utf-8")]
        ids = phoneme_ids(a.ttsgen, a.texts)
        if len(ids) != len(texts):
            raise SystemExit(f"{a.texts}: {len(texts)} lines but phonemize gave {len(ids)} sentences")
    model, ac = load_voice(a.ckpt, a.speaker)
    step = ac["step"]
    melspec = MelSpec()
    frames_ratio = []
    for i, (text, sent_ids) in enumerate(zip(texts, ids), 1):
        ref_path = os.path.join(a.out, reference, f"{i}.wav")
        if a.recordings:
            write(ref_path, torch.from_numpy(load_recording(chosen[i - 1][2])))
        elif not os.path.exists(ref_path):
            festival(text, ref_path + ".32k.wav")
            write(ref_path, torch.from_numpy(load_wav(ref_path + ".32k.wav")))
            os.remove(ref_path + ".32k.wav")
        audio = torch.from_numpy(load_wav(ref_path)).unsqueeze(0)
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

    if voices:  # one `ttsgen batch` a voice, as quality.sh speaks: the voice loads once, not once a sentence
        sentences = os.path.join(a.out, "sentences.jsonl")
        with open(sentences, "w", encoding="utf-8") as f:
            f.writelines(json.dumps({"id": str(i), "text": text}) + "\n" for i, text in enumerate(texts, 1))
    for name, voice in voices.items():
        subprocess.run([a.ttsgen, "batch", sentences, "-o", os.path.join(a.out, name), "--voice", voice,
                        "--noise-scale", "0", "--noise-w", "0", "--device", "cpu", "--force", "-q"], check=True)

    print(f"checkpoint step {step}, {len(texts)} sentences of {a.texts}")
    print(f"| stage | WER (pocketsphinx) | DNSMOS P.808 | OVRL | steady tone | frame comb | spectrum vs {reference} "
          "| F0 median (clear frames) |")
    print("|---|---|---|---|---|---|---|---|")
    ref_spectrum = None
    bands = {}
    for s in stages:  # the reference first
        d = os.path.join(a.out, s)
        mos = dnsmos(vq, d)
        p808, ovrl = (f"{mos[0]:.2f}", f"{mos[1]:.2f}") if mos else ("", "")
        clips = [load_wav(os.path.join(d, f)) for f in sorted(os.listdir(d)) if f.endswith(".wav")]
        freq, stage_spectrum = long_term_spectrum(clips)
        ref_spectrum = stage_spectrum if ref_spectrum is None else ref_spectrum
        spectrum = spectrum_distance(freq, stage_spectrum, ref_spectrum)
        bands[s] = band_differences(freq, stage_spectrum, ref_spectrum)
        f0, clear = pitch(clips)
        print(f"| {s} | {wer(vq, a.texts, d):.1f}% | {p808} | {ovrl} | {tone(vq, d)} | {frame_comb(clips):+.2f} dB "
              f"| {spectrum:.1f} dB | {f0:.0f} Hz ({clear}) |")
    print(f"predicted length / {reference}'s: mean {np.mean(frames_ratio):.3f} "
          f"(range {min(frames_ratio):.2f}-{max(frames_ratio):.2f})")
    print(f"\nlong-term spectrum against {reference}'s by band, dB (levels matched over 100 Hz-8 kHz):")
    print("| stage | " + " | ".join(f"{lo / 1000:g}-{hi / 1000:g} kHz" for lo, hi in zip(BANDS_HZ, BANDS_HZ[1:]))
          + " |")
    print("|---" * len(BANDS_HZ) + "|")
    for s in stages[1:]:
        print(f"| {s} | " + " | ".join(f"{v:+.1f}" for v in bands[s]) + " |")


if __name__ == "__main__":
    main()
