"""Training data: Festival (HTS "slt") speaks LJSpeech sentences; audio resampled 32 kHz -> 22,050 Hz; log-mel
features. Phoneme ids come from corpusids (ttsgen's own phonemizer), one line per utterance: ID|ids...|text."""
import gzip
import io
import os
import subprocess
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import torch
from scipy.io import wavfile
from scipy.signal import resample_poly

SR = 22050
N_FFT = 1024
HOP = 256
N_MELS = 80
MEL_FMAX = 8000.0  # the voice's mel features end here


def read_ids(path):
    """corpusids' lines (ID|ids|text) -> [(ID, [ids], text)]; PATH may be gzipped (.gz), to carry less."""
    items = []
    with (gzip.open if path.endswith(".gz") else open)(path, "rt", encoding="utf-8") as f:
        for line in f:
            parts = line.rstrip("\n").split("|")
            if len(parts) < 3 or not parts[1].strip():
                continue
            items.append((parts[0], [int(t) for t in parts[1].split()], parts[2]))
    return items


def scheme_string(text):
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def sortish_batches(lengths, batch, rng):
    """Endless batches of indices into `lengths`: draw 8 batches' worth at random, sort them by length, cut them into
    batches and shuffle those, so a batch pads little and the order stays random. rng: random.Random or the module.
    Every batch is full (unless there are fewer items than one batch): from a small corpus (385 recordings in batches
    of 64) a short remainder was every 7th step a batch of one utterance. What a round leaves out, the next draws."""
    n = min(len(lengths), batch * 8)
    if n > batch:
        n -= n % batch
    while True:
        pool = rng.sample(range(len(lengths)), n)
        pool.sort(key=lambda i: lengths[i])
        chunks = [pool[i:i + batch] for i in range(0, len(pool), batch)]
        rng.shuffle(chunks)
        yield from chunks


def start_festival(items, wav_dir, workers):
    """Start `workers` long-running festival processes, each saying its share of items into wav_dir/ID.wav.
    Returns the processes (one process per share avoids Festival's start-up cost per sentence)."""
    os.makedirs(wav_dir, exist_ok=True)
    procs = []
    for w in range(workers):
        share = items[w::workers]
        if not share:
            continue
        # named by process too: two runs sharing wav_dir must not overwrite each other's scripts (each file of
        # audio is named by its sentence, so theirs can be shared)
        script = os.path.join(wav_dir, f"_worker{os.getpid()}-{w}.scm")
        with open(script, "w", encoding="utf-8") as f:
            for uid, _, text in share:
                out = os.path.join(wav_dir, uid + ".wav")
                # write to a temporary name, then rename, so a reader never sees half a file
                f.write(f"(utt.save.wave (utt.synth (Utterance Text {scheme_string(text)})) "
                        f"{scheme_string(out + '.tmp')} 'riff)\n(system {scheme_string(f'mv {out}.tmp {out}')})\n")
        procs.append(subprocess.Popen(["festival", "-b", script], stdout=subprocess.DEVNULL,
                                      stderr=subprocess.DEVNULL))
    return procs


def load_wav(path):
    sr, x = wavfile.read(path)
    x = x.astype(np.float32) / 32768.0
    if sr != SR:
        g = np.gcd(sr, SR)
        x = resample_poly(x, SR // g, sr // g).astype(np.float32)
    n = (len(x) // HOP) * HOP
    return x[:n]


def load_recording(path):
    """A real recording: ID.wav, or ID.flac decoded by the `flac` command (Debian's; the GPU machine has no FLAC
    library for Python, and FLAC is what makes the recordings small enough to carry)."""
    if path.endswith(".flac"):
        wav = subprocess.run(["flac", "-d", "-s", "-c", path], check=True, stdout=subprocess.PIPE).stdout
        return load_wav(io.BytesIO(wav))
    return load_wav(path)


def find_recordings(items, rec_dir):
    """The items (read_ids' tuples) that have a recording in rec_dir, ID.flac or else ID.wav, and those files' paths;
    stops unless there is one at least."""
    found, paths = [], []
    for it in items:
        for ext in (".flac", ".wav"):
            path = os.path.join(rec_dir, it[0] + ext)
            if os.path.exists(path):
                found.append(it)
                paths.append(path)
                break
    if not found:
        raise SystemExit(f"no recordings in {rec_dir} for any of the {len(items)} ids")
    return found, paths


def load_recordings(items, rec_dir, threads=16):
    """The items that have a recording in rec_dir (ID.flac or ID.wav), and their audio."""
    found, paths = find_recordings(items, rec_dir)
    with ThreadPoolExecutor(threads) as ex:
        return found, list(ex.map(load_recording, paths))


def load_wavs(uids, wav_dir, threads=16):
    with ThreadPoolExecutor(threads) as ex:
        return list(ex.map(lambda u: load_wav(os.path.join(wav_dir, u + ".wav")), uids))


def mel_filterbank(sr=SR, n_fft=N_FFT, n_mels=N_MELS, fmin=0.0, fmax=MEL_FMAX):
    """Slaney-style mel filterbank (area-normalised triangles), [n_mels, n_fft//2+1]."""
    def hz_to_mel(f):
        f = np.asarray(f, dtype=np.float64)
        lin = f / (200.0 / 3)
        log = 15.0 + np.log(np.maximum(f, 1e-10) / 1000.0) / (np.log(6.4) / 27.0)
        return np.where(f >= 1000.0, log, lin)

    def mel_to_hz(m):
        m = np.asarray(m, dtype=np.float64)
        lin = m * (200.0 / 3)
        log = 1000.0 * np.exp((np.log(6.4) / 27.0) * (m - 15.0))
        return np.where(m >= 15.0, log, lin)

    fft_f = np.linspace(0, sr / 2, n_fft // 2 + 1)
    mel_f = mel_to_hz(np.linspace(hz_to_mel(fmin), hz_to_mel(fmax), n_mels + 2))
    fdiff = np.diff(mel_f)
    ramps = mel_f[:, None] - fft_f[None, :]
    w = np.zeros((n_mels, len(fft_f)))
    for i in range(n_mels):
        lower = -ramps[i] / fdiff[i]
        upper = ramps[i + 2] / fdiff[i + 1]
        w[i] = np.maximum(0, np.minimum(lower, upper))
    w *= (2.0 / (mel_f[2:n_mels + 2] - mel_f[:n_mels]))[:, None]
    return torch.tensor(w, dtype=torch.float32)


class MelSpec(torch.nn.Module):
    """audio [B, N] (N a multiple of HOP) -> natural-log mel [B, 80, N/HOP] (HiFi-GAN's framing). The voice's features
    end at MEL_FMAX; a generator loss may take a wider band (train.py --loss-fmax)."""

    def __init__(self, fmax=MEL_FMAX):
        super().__init__()
        self.register_buffer("fb", mel_filterbank(fmax=fmax))
        self.register_buffer("win", torch.hann_window(N_FFT))

    def forward(self, x):
        x = torch.nn.functional.pad(x.float().unsqueeze(1), ((N_FFT - HOP) // 2, (N_FFT - HOP) // 2),
                                    mode="reflect").squeeze(1)
        s = torch.stft(x, N_FFT, HOP, N_FFT, self.win, center=False, return_complex=True)
        mag = torch.sqrt(s.real ** 2 + s.imag ** 2 + 1e-9)
        return torch.log(torch.clamp(torch.matmul(self.fb, mag), min=1e-5))
