#!/bin/bash
# Every mode of the training recipe, end to end, on a CPU in under a minute, with toy dimensions: Festival's
# speech alone (tone losses, alignments dumped), the duration predictor refitted, a second speaker beside it, the
# generator alone on that speaker, two checkpoints blended, that generator widened, its last stage replaced by an
# inverse-STFT head (its mel loss to 11,025 Hz), the acoustic model alone with the mel discriminator and with the
# prominence loss through the frozen generator, its frame decoder deepened, the mel discriminator with the whole
# voice, and each checkpoint exported and spoken by ttsgen; then diagnose.py's spectrum by band and frame comb,
# prominence_check.py's tables, and verdict.py's rule.
# It checks that the recipe runs and that what it makes is a voice ttsgen accepts, not that the voice is good
# (quality.sh).
# usage (from the repository root, after `make build`): training/smoke.sh [WORKDIR]
# Needs Debian's python3-torch python3-onnx python3-scipy python3-numba festival festvox-us-slt-hts.
# The "recordings" of the second speaker are Festival's own wavs (ID.wav), so nothing outside the repository is read.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$here/..
work=${1:-$(mktemp -d /tmp/ttsgen-train-smoke.XXXXXX)}
py=${PYTHON:-/usr/bin/python3}
mkdir -p "$work"
log() { echo "smoke: $*" >&2; }
fail() { echo "smoke: FAILED: $*" >&2; exit 1; }

cd "$root"
[ -x bin/ttsgen ] || fail "no bin/ttsgen: run make build first"
go run ./training/corpusids -metadata testdata/ljspeech/metadata-sample.csv -out "$work/all_ids.txt" 2>/dev/null
# short sentences keep Festival quick: 24 for speaker 0, 8 for the "recorded" speaker 1
awk -F'|' 'length($3) < 90 && n++ < 32' "$work/all_ids.txt" > "$work/short.txt"
[ "$(wc -l < "$work/short.txt")" = 32 ] || fail "fewer than 32 short sentences in the sample metadata"
head -24 "$work/short.txt" > "$work/ids.txt"
tail -8 "$work/short.txt" > "$work/rec_ids.txt"
mkdir -p "$work/rec"
while IFS='|' read -r uid _ text; do
  echo "$text" | text2wave -eval '(voice_cmu_us_slt_arctic_hts)' -o "$work/rec/$uid.wav"
done < "$work/rec_ids.txt"

train() { "$py" training/train.py --workers 2 --batch 6 --vbatch 4 --seg 16 --small --wav-dir "$work/wavs" "$@" \
  > "$work/last.log" 2>&1 || { cat "$work/last.log" >&2; fail "train.py $*"; }; }
changed() {  # CK_A CK_B FILE [PREFIX]: succeeds if any weight of FILE (ac.pt, gen.pt) named PREFIX... differs
  local rc=0
  "$py" - "$@" <<'PY' || rc=$?
import sys, torch
a, b = (torch.load(f"{d}/{sys.argv[3]}", map_location="cpu", weights_only=False)["model"] for d in sys.argv[1:3])
prefix = sys.argv[4] if len(sys.argv) > 4 else ""
sys.exit(10 if any(not torch.equal(a[k], b[k]) for k in a if k.startswith(prefix)) else 11)
PY
  case $rc in 10) return 0 ;; 11) return 1 ;; *) fail "could not compare $3 of $1 and $2" ;; esac
}
speak() {  # CKPT OUT [export args]: export, then speak a sentence through ttsgen with it
  local ck=$1 out=$2; shift 2
  "$py" training/export.py --ckpt "$ck" --out "$out" "$@" > "$work/last.log" 2>&1 ||
    { cat "$work/last.log" >&2; fail "export.py --ckpt $ck $*"; }
  bin/ttsgen synth "The smoke test speaks." --voice "$out" -o "${out%.onnx}.wav" -q ||
    fail "ttsgen could not speak with $out"
  [ "$(stat -c %s "${out%.onnx}.wav")" -gt 10000 ] || fail "${out%.onnx}.wav is too short"
}

log "batches: full ones only, and every utterance drawn"
"$py" - <<'PY' || fail "sortish_batches made a short batch or never drew some utterances"
import random, sys
sys.path.insert(0, "training")
from data import sortish_batches
g = sortish_batches(list(range(385)), 64, random.Random(1))  # the LJSpeech clips: 385 = 6 x 64 + 1
seen = [next(g) for _ in range(60)]
assert {len(b) for b in seen} == {64}, sorted({len(b) for b in seen})
assert len({i for b in seen for i in b}) == 385
assert len(next(sortish_batches(list(range(5)), 64, random.Random(1)))) == 5  # fewer than a batch: all of them
PY

log "Festival's speech alone, tone losses, alignments dumped"
train --ids "$work/ids.txt" --n 24 --first 12 --max-steps 6 --comb 20 --prominence 10 --dump-durations --out "$work/ck1"
[ "$(wc -l < "$work/ck1/durations.txt")" -ge 12 ] || fail "durations.txt has fewer lines than the utterances"
speak "$work/ck1" "$work/v1.onnx"

log "duration predictor refitted (train_dp.py)"
"$py" training/train_dp.py --ckpt "$work/ck1" --durations "$work/ck1/durations.txt" --ids "$work/ids.txt" \
  --out "$work/dp" --steps 20 --holdout 4 --batch 8 > "$work/last.log" 2>&1 || { cat "$work/last.log" >&2; fail "train_dp.py"; }
speak "$work/dp" "$work/v_dp.onnx"

log "a second speaker beside Festival's (--real --real-ids), from the single-speaker checkpoint"
train --ids "$work/ids.txt" --n 24 --first 12 --max-steps 4 --real "$work/rec" --real-ids "$work/rec_ids.txt" \
  --voc-real-only --dur-loss linear --resume "$work/ck1" --out "$work/ck2"
grep -q "speaker 1, real recordings" "$work/last.log" || fail "the recordings were not taken in as speaker 1"
speak "$work/ck2" "$work/v2.onnx" --speaker 1
"$py" training/export.py --ckpt "$work/ck2" --out "$work/none.onnx" > "$work/last.log" 2>&1 &&
  fail "export.py took a checkpoint of two speakers without --speaker"
grep -q -- "--speaker 0..1" "$work/last.log" || fail "export.py's refusal does not name --speaker"

log "the generator alone (--freeze-acoustic): the acoustic weights must stay as loaded"
train --ids "$work/rec_ids.txt" --max-steps 3 --real "$work/rec" --real-ids "$work/rec_ids.txt" --voc-real-only \
  --freeze-acoustic --prominence 10 --prominence-top 16 --prominence-band 2500,3500 --prominence-ceiling 2.5 \
  --resume "$work/ck2" --out "$work/ck3"
grep -q "teacher-forced mels of 8 utterances" "$work/last.log" || fail "--freeze-acoustic did not precompute 8 mels"
grep -q "target audio's own prominence, at most 2.5 dB" "$work/last.log" || fail "--prominence-ceiling 2.5 is not logged"
! grep -q "first share" "$work/last.log" || fail "--freeze-acoustic with --real-ids ran Festival"
! changed "$work/ck2" "$work/ck3" ac.pt || fail "--freeze-acoustic changed the acoustic model"
changed "$work/ck2" "$work/ck3" gen.pt || fail "--freeze-acoustic left the generator as it was"
speak "$work/ck3" "$work/v3.onnx" --speaker 1

log "the generator alone with the prominence loss pooled over batches (--prominence-pool)"
train --ids "$work/rec_ids.txt" --max-steps 3 --real "$work/rec" --real-ids "$work/rec_ids.txt" --voc-real-only \
  --freeze-acoustic --prominence 10 --prominence-top 16 --prominence-ceiling 2.5 --prominence-pool 8 \
  --resume "$work/ck2" --out "$work/ck3p"
grep -q "spectrum over about 8 batches against 2.5 dB" "$work/last.log" || fail "--prominence-pool 8 is not logged"
grep -q " prom [0-9]" "$work/last.log" || fail "--prominence-pool logged no prominence loss"
changed "$work/ck2" "$work/ck3p" gen.pt || fail "--prominence-pool did not train the generator"

log "--disc-warmup: the discriminator trains alone first, then the generator trains too"
train --ids "$work/rec_ids.txt" --max-steps 3 --real "$work/rec" --real-ids "$work/rec_ids.txt" --voc-real-only \
  --freeze-acoustic --disc-warmup 3 --warmup 1 --resume "$work/ck3" --out "$work/ck3w"
grep -q "discriminator alone" "$work/last.log" || fail "--disc-warmup's steps are not logged as the discriminator's alone"
! changed "$work/ck3" "$work/ck3w" gen.pt || fail "--disc-warmup 3 changed the generator in 3 steps"
changed "$work/ck3" "$work/ck3w" disc.pt || fail "--disc-warmup 3 left the discriminator as it was"
train --ids "$work/rec_ids.txt" --max-steps 3 --real "$work/rec" --real-ids "$work/rec_ids.txt" --voc-real-only \
  --freeze-acoustic --disc-warmup 2 --warmup 1 --resume "$work/ck3" --out "$work/ck3w"
changed "$work/ck3" "$work/ck3w" gen.pt || fail "the generator did not train after --disc-warmup 2's steps"
"$py" training/train.py --ids "$work/rec_ids.txt" --freeze-generator --disc-warmup 5 --out "$work/none" \
  > "$work/last.log" 2>&1 && fail "train.py took --disc-warmup with --freeze-generator"
grep -q -- "which --freeze-generator leaves out" "$work/last.log" || fail "train.py's refusal of --disc-warmup does not say why"

log "--disc-lr-scale 0: the generator trains against a discriminator held as loaded"
train --ids "$work/rec_ids.txt" --max-steps 2 --real "$work/rec" --real-ids "$work/rec_ids.txt" --voc-real-only \
  --freeze-acoustic --disc-lr-scale 0 --warmup 1 --resume "$work/ck3w" --out "$work/ck3s"
changed "$work/ck3w" "$work/ck3s" gen.pt || fail "the generator did not train with --disc-lr-scale 0"
! changed "$work/ck3w" "$work/ck3s" disc.pt || fail "--disc-lr-scale 0 changed the discriminator"
"$py" training/train.py --ids "$work/rec_ids.txt" --freeze-generator --disc-lr-scale 0.5 --out "$work/none" \
  > "$work/last.log" 2>&1 && fail "train.py took --disc-lr-scale with --freeze-generator"
grep -q -- "which --freeze-generator leaves out" "$work/last.log" || fail "train.py's refusal of --disc-lr-scale does not say why"

log "two checkpoints of one run blended (blend.py): weight 0 is the first, 0.5 a voice"
"$py" training/blend.py --a "$work/ck2" --b "$work/ck3" --weight 0 --out "$work/blend0" > "$work/last.log" 2>&1 &&
  "$py" training/blend.py --a "$work/ck2" --b "$work/ck3" --weight 0.5 --out "$work/blend5" > "$work/last.log" 2>&1 ||
  { cat "$work/last.log" >&2; fail "blend.py"; }
! changed "$work/ck2" "$work/blend0" gen.pt || fail "blend.py --weight 0 is not the first checkpoint"
changed "$work/ck2" "$work/blend5" gen.pt || fail "blend.py --weight 0.5 is the first checkpoint"
speak "$work/blend5" "$work/v_blend.onnx" --speaker 1
"$py" training/blend.py --a "$work/ck2" --b "$work/ck1" --weight 0.5 --out "$work/blendx" > "$work/last.log" 2>&1 &&
  fail "blend.py blended two architectures"
grep -q "different architectures" "$work/last.log" || fail "blend.py's refusal does not say the architectures differ"

log "the generator widened (--widen-gen), same audio at first; from_onnx.py reads the width back, and an inverse-STFT head"
train --ids "$work/rec_ids.txt" --max-steps 2 --real "$work/rec" --real-ids "$work/rec_ids.txt" --voc-real-only \
  --freeze-acoustic --widen-gen 48 --resume "$work/ck3" --out "$work/ck5"
grep -q "generator widened to 48 channels" "$work/last.log" || fail "--widen-gen did not widen the generator"
"$py" - "$work/ck5" <<'PY' || fail "the widened generator's new channels did not train (their weights are still zero)"
import sys, torch
g = torch.load(f"{sys.argv[1]}/gen.pt", map_location="cpu", weights_only=False)["model"]
assert g["dec.conv_pre.weight"].shape[0] == 48 and g["dec.conv_pre.weight"][32:].abs().sum() > 0
PY
speak "$work/ck5" "$work/v5.onnx" --speaker 1
# from_onnx.py knows the shipped architecture only, so its round trips need full-size voices (random weights): one
# widened, one with an inverse-STFT head and one with a deeper frame decoder, whose weights must come back as they
# went out (the checkpoints of such a voice are otherwise its only copy)
"$py" - "$work/full320" "$work/full_istft" "$work/full_deep" <<'PY' > "$work/last.log" 2>&1 || { cat "$work/last.log" >&2; fail "full-size voices"; }
import sys
sys.path.insert(0, "training")
from model import Voice
from train import FULL_SIZE, save_ckpt
import torch
def perturb(v):  # as trained weights are: else the exporter merges equal tensors (the norms' ones and zeros)
    for p in v.parameters():
        p.data += 0.01 * torch.randn_like(p)
widened, istft, deepened = Voice(**FULL_SIZE), Voice(**FULL_SIZE), Voice(**FULL_SIZE)
perturb(widened)
widened.widen_generator(320)
istft.istft_generator(320)
perturb(istft)  # after the conversion, so that the new head's weights are not their initial ones
deepened.deepen_frames(6)  # 12 blocks: the acoustic model's float32 weights outgrow a 16 MiB file
perturb(deepened)
save_ckpt(widened, None, 1, sys.argv[1], {})
save_ckpt(istft, None, 1, sys.argv[2], {})
save_ckpt(deepened, None, 1, sys.argv[3], {})
PY
"$py" training/export.py --ckpt "$work/full320" --out "$work/full320.onnx" > "$work/last.log" 2>&1 &&
  "$py" training/from_onnx.py --onnx "$work/full320.onnx" --step 1 --out "$work/full320b" > "$work/last.log" 2>&1 ||
  { cat "$work/last.log" >&2; fail "from_onnx.py could not read a widened voice back"; }
log "--eq: the voice ends in a fixed equaliser, its audio the plain voice's through it; from_onnx.py says so"
"$py" training/export.py --ckpt "$work/full320" --out "$work/full320eq.onnx" --eq 3050,-2,10 > "$work/last.log" 2>&1 &&
  "$py" training/from_onnx.py --onnx "$work/full320eq.onnx" --step 1 --out "$work/full320eqb" > "$work/last.log" 2>&1 ||
  { cat "$work/last.log" >&2; fail "export.py --eq, or from_onnx.py on its voice"; }
grep -q -- "export with --eq 3050,-2,10" "$work/last.log" || fail "from_onnx.py did not say that the voice has --eq 3050,-2,10"
for v in full320 full320eq; do
  bin/ttsgen synth "The smoke test speaks." --voice "$work/$v.onnx" -o "$work/$v.wav" --noise-scale 0 --noise-w 0 -q ||
    fail "ttsgen could not speak with $v.onnx"
done
"$py" - "$work/full320.wav" "$work/full320eq.wav" <<'PY' || fail "--eq's voice is not the plain voice through a 2 dB cut at 3,050 Hz"
import sys, wave, numpy as np
from scipy import signal
sys.path.insert(0, "training")
from export import equaliser_fir, peaking_fir
def read(path):
    with wave.open(path) as w:
        return np.frombuffer(w.readframes(w.getnframes()), dtype=np.int16).astype(float)
fir = peaking_fir("3050,-2,10")
_, h = signal.freqz(fir, worN=[1000, 3050, 6000], fs=22050)
gain = 20 * np.log10(np.abs(h))
assert abs(gain[1] + 2) < 0.06 and abs(gain[0]) < 0.06 and abs(gain[2]) < 0.06, gain
# the FIR is a full-rate convolution, so its length is the voice's cost: a broad lift must stay short
broad = peaking_fir("3000,1,0.5")
_, hb = signal.freqz(broad, worN=[1000, 3000, 6000], fs=22050)
assert len(broad) <= 31 < len(fir), (len(broad), len(fir))
gb = 20 * np.log10(np.abs(hb))  # +1 dB at 3 kHz, and broad: well above 0 dB at 1 and 6 kHz, where a narrow band is flat
assert abs(gb[1] - 1) < 0.02 and 0.2 < gb[0] < 0.8 and 0.2 < gb[2] < 0.8, gb
# two bands make one FIR, still zero-phase, whose response in dB is the sum of theirs
both = equaliser_fir("3000,1,0.5/3050,-2,10").numpy()
assert len(both) == len(broad) + len(fir) - 1 and np.allclose(both, both[::-1]), len(both)
_, hs = signal.freqz(both, worN=[1000, 3050, 6000], fs=22050)
_, hb2 = signal.freqz(broad, worN=[1000, 3050, 6000], fs=22050)
assert np.allclose(20 * np.log10(np.abs(hs)), 20 * np.log10(np.abs(hb2)) + gain, atol=1e-3), (hs, hb2, gain)
plain, eq = read(sys.argv[1]), read(sys.argv[2])
want = np.convolve(plain, fir, mode="same")
assert len(plain) == len(eq), (len(plain), len(eq))
err = np.abs(eq - want).max()  # the plain voice's int16 rounding, filtered: a few LSB
unfiltered = np.abs(plain - want).max()  # what err would be if the graph left the filter out (tens of LSB)
assert err <= 4 and unfiltered > 4 * max(err, 1), (err, unfiltered)
PY
"$py" training/export.py --ckpt "$work/full_deep" --out "$work/full_deep.onnx" > "$work/last.log" 2>&1 &&
  "$py" training/from_onnx.py --onnx "$work/full_deep.onnx" --step 1 --out "$work/full_deepb" > "$work/last.log" 2>&1 ||
  { cat "$work/last.log" >&2; fail "from_onnx.py could not read a deepened voice back"; }
"$py" - "$work/full_deep" "$work/full_deepb" <<'PY' || fail "from_onnx.py read a deepened voice back wrong"
import os, sys, torch
a, b = (torch.load(f"{d}/ac.pt", map_location="cpu", weights_only=False) for d in sys.argv[1:3])
assert a["cfg"]["dec_layers"] == b["cfg"]["dec_layers"] == 12, (a["cfg"]["dec_layers"], b["cfg"]["dec_layers"])
for d in sys.argv[1:3]:  # saved in float16, to fit the device machine's files
    assert os.path.getsize(f"{d}/ac.pt") < 16 * 2**20, os.path.getsize(f"{d}/ac.pt")
assert a["model"]["frames.pre.weight"].dtype == torch.float16
assert a["model"].keys() == b["model"].keys()
for k, want in a["model"].items():
    assert torch.equal(want, b["model"][k]), f"{k} changed on the way"
PY
"$py" training/export.py --ckpt "$work/full_istft" --out "$work/full_istft.onnx" > "$work/last.log" 2>&1 &&
  "$py" training/from_onnx.py --onnx "$work/full_istft.onnx" --step 1 --out "$work/full_istftb" > "$work/last.log" 2>&1 ||
  { cat "$work/last.log" >&2; fail "from_onnx.py could not read an inverse-STFT voice back"; }
"$py" - "$work/full_istft" "$work/full_istftb" <<'PY' || fail "from_onnx.py read an inverse-STFT voice back wrong"
import sys, torch
a, b = (torch.load(f"{d}/gen.pt", map_location="cpu", weights_only=False) for d in sys.argv[1:3])
assert a["cfg"]["gen_istft"] == b["cfg"]["gen_istft"] == [16, 4], (a["cfg"]["gen_istft"], b["cfg"]["gen_istft"])
sys.path.insert(0, "training")
from model import phase_balanced
assert a["model"].keys() == b["model"].keys()
for k, want in a["model"].items():  # export writes the upsampling kernels' phase-balanced projection, as trained
    if k.startswith("dec.ups.") and k.endswith(".weight"):
        want = phase_balanced(want, a["cfg"]["gen_rates"][int(k.split(".")[2])])
    assert torch.allclose(want, b["model"][k], rtol=1e-6, atol=1e-7), f"{k} changed on the way"
PY

log "the inverse-STFT head's overlap-add is torch.istft's"
"$py" - <<'PY' || fail "ISTFTHead does not compute torch.istft"
import math, sys, torch
sys.path.insert(0, "training")
from model import ISTFTHead
torch.manual_seed(0)
head, frames = ISTFTHead(16, 4), 40
spec = torch.randn(1, 9, frames, dtype=torch.complex64)
spec[:, 0].imag = spec[:, -1].imag = 0  # a real signal's DC and Nyquist bins
want = torch.istft(spec, 16, 4, window=torch.hann_window(16), center=True)  # [1, 4*(frames-1)]
phase_in = torch.asin(spec.angle() / math.pi)  # the head's phase is pi*sin(input)
got = head(torch.cat([spec.abs().log(), phase_in], 1), torch.ones(1, 1, frames))[0, 0]
assert got.shape[-1] == 4 * frames, got.shape
# the head starts its windows 2 samples before torch.istft's centred ones; edges lack torch's window normalisation
err = float((got[2 + 16:2 + want.shape[-1] - 16] - want[0, 16:-16]).abs().max())
assert err < 1e-5, err
PY
log "the generator's last stage replaced by an inverse-STFT head (--istft-head), trained alone"
train --ids "$work/rec_ids.txt" --max-steps 2 --real "$work/rec" --real-ids "$work/rec_ids.txt" --voc-real-only \
  --freeze-acoustic --istft-head 48 --loss-fmax 11025 --band-level 10 --resume "$work/ck3" --out "$work/ck8"
grep -q "inverse-STFT head \[16, 4\], 48 channels" "$work/last.log" || fail "--istft-head did not convert the generator"
grep -Eq " band [0-9.]*[1-9]" "$work/last.log" || fail "--band-level's loss is not logged, or is zero"
grep -q "mel loss spans 0-11025 Hz" "$work/last.log" || fail "--loss-fmax 11025 did not widen the generator's mel loss"
"$py" - "$work/ck3" "$work/ck8" <<'PY' || fail "the inverse-STFT generator lacks the head's shape or still has the stage it replaces"
import sys, torch
a, b = (torch.load(f"{d}/gen.pt", map_location="cpu", weights_only=False)["model"] for d in sys.argv[1:3])
assert b["dec.conv_post.weight"].shape[:2] == (18, 12), b["dec.conv_post.weight"].shape  # 9 bins x (log-mag, phase)
assert "dec.ups.2.weight" not in b and "dec.ups.2.weight" in a
PY
speak "$work/ck8" "$work/v8.onnx" --speaker 1
# its generator beside an acoustic model saved without the head, earlier and in float16 (as one read back from the
# shipped voice is): the generator's shape comes from gen.pt, for export and for resuming; the step goes on from the
# later part's; the frozen acoustic model is saved in the float16 it was read in
mkdir -p "$work/ck8mix" && cp "$work/ck8/gen.pt" "$work/ck8/disc.pt" "$work/ck8mix/"
"$py" - "$work/ck3/ac.pt" "$work/ck8mix/ac.pt" <<'PY'
import sys, torch
ac = torch.load(sys.argv[1], map_location="cpu", weights_only=False)
ac["model"] = {k: v.half() if v.is_floating_point() else v for k, v in ac["model"].items()}
torch.save(ac, sys.argv[2])
PY
speak "$work/ck8mix" "$work/v8mix.onnx" --speaker 1
ck8_step=$("$py" -c 'import sys, torch; print(torch.load(sys.argv[1], map_location="cpu", weights_only=False)["step"])' "$work/ck8/gen.pt")
grep -q "checkpoint step $ck8_step, speaker 1" "$work/last.log" ||
  fail "export.py did not give a folder of two steps the later part's step ($ck8_step)"
train --ids "$work/rec_ids.txt" --max-steps 1 --real "$work/rec" --real-ids "$work/rec_ids.txt" --voc-real-only \
  --freeze-acoustic --loss-fmax 11025 --resume "$work/ck8mix" --out "$work/ck8b"
"$py" - "$work/ck3" "$work/ck8" "$work/ck8mix" "$work/ck8b" <<'PY' || fail "a folder of parts from two steps resumed at the wrong step, or its frozen float16 acoustic model came back changed"
import sys, torch
ld = lambda d, f: torch.load(f"{d}/{f}", map_location="cpu", weights_only=False)  # noqa: E731
ck3, ck8, mix, out = sys.argv[1:5]
assert ld(ck3, "ac.pt")["step"] < ld(ck8, "gen.pt")["step"]
assert ld(out, "gen.pt")["step"] == ld(ck8, "gen.pt")["step"] + 1, (ld(out, "gen.pt")["step"], ld(ck8, "gen.pt")["step"])
a, b = ld(mix, "ac.pt")["model"], ld(out, "ac.pt")["model"]
assert all(b[k].dtype == a[k].dtype and torch.equal(a[k], b[k]) for k in a), "ac.pt changed or left float16"
PY
grep -q "the folder's step is $ck8_step" "$work/last.log" || fail "train.py did not say which step a folder of two steps goes on from"

log "a finer inverse-STFT head (--istft-nfft 32) on that generator: the stages before it kept, conv_post new"
"$py" - <<'PY' || fail "a new head did not keep the generator's stages, or took the n_fft it already has"
import sys, torch
sys.path.insert(0, "training")
from model import Voice
v = Voice(hidden=32, enc_layers=2, dp_filter=32, dec_channels=32, dec_layers=2, gen_channels=32)
v.istft_generator(48)
before = {k: t.clone() for k, t in v.dec.state_dict().items()}
v.istft_generator(48, n_fft=32)
after = v.dec.state_dict()
assert v.cfg["gen_istft"] == [32, 4] and after["conv_post.weight"].shape[0] == 34, v.cfg["gen_istft"]
assert all(torch.equal(before[k], after[k]) for k in before if not k.startswith("conv_post.")), "a kept stage changed"
try:
    v.istft_generator(48, n_fft=32)
    sys.exit("a head of the n_fft it has was taken")
except ValueError as e:
    assert "already ends in an inverse-STFT head of n_fft 32" in str(e), e
PY
train --ids "$work/rec_ids.txt" --max-steps 2 --real "$work/rec" --real-ids "$work/rec_ids.txt" --voc-real-only \
  --freeze-acoustic --istft-head 48 --istft-nfft 32 --resume "$work/ck8" --out "$work/ck9"
grep -q "inverse-STFT head \[32, 4\], 48 channels" "$work/last.log" || fail "--istft-nfft 32 did not regrid the head"
speak "$work/ck9" "$work/v9.onnx" --speaker 1
"$py" training/train.py --ids "$work/rec_ids.txt" --small --istft-nfft 32 --out "$work/ck7" > "$work/last.log" 2>&1 &&
  fail "train.py took --istft-nfft without --istft-head"
grep -q -- "it sizes the head that --istft-head makes" "$work/last.log" || fail "train.py's refusal of --istft-nfft does not say why"

log "the acoustic model alone (--freeze-generator) with the mel discriminator, two speakers, widened generator"
train --ids "$work/ids.txt" --n 24 --first 12 --max-steps 3 --real "$work/rec" --real-ids "$work/rec_ids.txt" \
  --freeze-generator --mel-adv 1 --adv-delay 0 --resume "$work/ck5" --out "$work/ck6"
[ -f "$work/ck6/mdisc.pt" ] || fail "--freeze-generator --mel-adv saved no mdisc.pt"
[ -f "$work/ck6/disc.pt" ] || fail "--freeze-generator dropped the discriminator it resumed"
grep -q "madv" "$work/last.log" && ! grep -q "mel_g" "$work/last.log" ||
  fail "--freeze-generator's log should show the mel discriminator's losses and none of the frozen generator's"
! changed "$work/ck5" "$work/ck6" gen.pt || fail "--freeze-generator changed the generator"
changed "$work/ck5" "$work/ck6" ac.pt frames. || fail "--freeze-generator left the frame decoder as it was"
speak "$work/ck6" "$work/v6.onnx" --speaker 1

log "the frame decoder deepened (--deepen-frames), the same mel at first, its new blocks trained"
train --ids "$work/ids.txt" --n 24 --first 12 --max-steps 2 --freeze-generator --deepen-frames 2 \
  --resume "$work/ck6" --out "$work/ck6deep"
grep -q "frame decoder deepened to 4 blocks, the same mel" "$work/last.log" || fail "--deepen-frames did not deepen the frame decoder"
"$py" - "$work/ck6deep" <<'PY' || fail "the deepened frame decoder's new blocks did not train (their last convolutions are still zero)"
import sys, torch
a = torch.load(f"{sys.argv[1]}/ac.pt", map_location="cpu", weights_only=False)
assert a["cfg"]["dec_layers"] == 4, a["cfg"]["dec_layers"]
assert all(a["model"][f"frames.blocks.{i}.pw.weight"].abs().sum() > 0 for i in (2, 3))
PY
speak "$work/ck6deep" "$work/v6deep.onnx" --speaker 1
"$py" training/train.py --ids "$work/rec_ids.txt" --small --freeze-acoustic --deepen-frames 2 --resume "$work/ck6" \
  --out "$work/ck7" > "$work/last.log" 2>&1 && fail "train.py took --deepen-frames with --freeze-acoustic"
grep -q -- "which --freeze-acoustic does not" "$work/last.log" || fail "train.py's refusal of --deepen-frames does not say why"
mkdir -p "$work/ck6nodisc" && cp "$work/ck6/ac.pt" "$work/ck6/gen.pt" "$work/ck6nodisc/"
train --ids "$work/ids.txt" --n 24 --first 12 --max-steps 1 --real "$work/rec" --real-ids "$work/rec_ids.txt" \
  --freeze-generator --resume "$work/ck6nodisc" --out "$work/ck6b"
[ ! -f "$work/ck6b/disc.pt" ] || fail "--freeze-generator saved an untrained discriminator as disc.pt"
log "the acoustic model alone with the prominence loss through the frozen generator (--freeze-generator --prominence)"
# the toy generator barely responds to its mels, hence the weight: its gradient is ~0.0015 a unit of it
gn_ac() { sed -n 's/.* gn_ac \([0-9.]*\) .*/\1/p' "$work/last.log" | head -1; }
plain=$(gn_ac)
pulls_twice() {  # succeeds if the last run's first acoustic gradient norm is at least twice the plain run's
  "$py" -c "import sys; sys.exit(float(sys.argv[2]) < 2 * float(sys.argv[1]))" "$plain" "$(gn_ac)"; }
train --ids "$work/ids.txt" --n 24 --first 12 --max-steps 1 --real "$work/rec" --real-ids "$work/rec_ids.txt" \
  --freeze-generator --prominence 100000 --resume "$work/ck6nodisc" --out "$work/ck6p"
grep -q " prom [0-9]" "$work/last.log" || fail "--freeze-generator --prominence logged no prominence loss"
pulls_twice ||
  fail "--freeze-generator --prominence 100000 did not reach the acoustic model (gradient norm $(gn_ac) against $plain)"
! changed "$work/ck6nodisc" "$work/ck6p" gen.pt || fail "--freeze-generator --prominence changed the generator"
log "the same, the prominence loss hearing mels laid out by the predicted durations (--prominence-layout predicted)"
train --ids "$work/ids.txt" --n 24 --first 12 --max-steps 1 --real "$work/rec" --real-ids "$work/rec_ids.txt" \
  --freeze-generator --prominence 100000 --prominence-ceiling 0 --prominence-pool 4 --prominence-layout predicted \
  --resume "$work/ck6nodisc" --out "$work/ck6q"
grep -q "on mels laid out by the predicted durations" "$work/last.log" || fail "--prominence-layout predicted is not logged"
pulls_twice ||
  fail "--prominence-layout predicted did not reach the acoustic model (gradient norm $(gn_ac) against $plain)"
! changed "$work/ck6nodisc" "$work/ck6q" gen.pt || fail "--prominence-layout predicted changed the generator"
log "synthesis_segments runs the frame decoder on each segment's window and gets the whole sentences' frames"
(cd training && "$py" - <<'PY') || fail "synthesis_segments' windows are not the frame decoder's whole-sentence frames"
import contextlib, torch
from model import Voice, FrameDecoder, path_from_durations, synthesis_durations, LATENT_NOISE_STD, INFERENCE_SCALES
from train import synthesis_segments
torch.manual_seed(0)
L, seg = 40, 32
x_mask = (torch.arange(L).unsqueeze(0) < torch.tensor([[40], [33], [25], [14]])).float().unsqueeze(1)
h, mu = torch.randn(4, 32, L) * x_mask, torch.randn(4, 80, L) * x_mask
logw = torch.full((4, 1, L), 1.4) + 0.3 * torch.randn(4, 1, L)  # about 4-5 frames a phoneme: every item > seg

def whole(model, seed):  # the frame decoder over whole sentences, then cut: what the windows must give
    torch.manual_seed(seed)
    w_ceil, lengths = synthesis_durations(logw, x_mask, INFERENCE_SCALES["noise_w"], INFERENCE_SCALES["length_scale"])
    assert int(lengths.min()) > seg, lengths
    path, frac = path_from_durations(w_ceil, int(lengths.max()))
    starts = (torch.rand(4) * (lengths - seg).clamp_min(0)).long()
    mel, _ = model.frames_along(h, mu, path, frac)
    mel = mel[torch.arange(4).unsqueeze(1), :, starts.unsqueeze(1) + torch.arange(seg)].permute(0, 2, 1).contiguous()
    return mel + torch.randn_like(mel) * (LATENT_NOISE_STD * INFERENCE_SCALES["noise_scale"])

def error(model, seed):
    torch.manual_seed(seed)
    got = synthesis_segments(model, h, mu, logw, x_mask, None, seg, 4, contextlib.nullcontext())
    return (got - whole(model, seed)).abs().max().item()

deep, shallow = (Voice(hidden=32, enc_layers=2, dp_filter=32, dec_channels=32, dec_layers=n).eval() for n in (8, 2))
assert deep.frames.reach() == 2 * (1 + 2 + 4 + 1 + 2 + 4 + 1 + 2), deep.frames.reach()
for model in (deep, shallow):
    for seed in range(8):  # starts near both ends of the sentences among them
        assert error(model, seed) < 1e-5, f"seed {seed}: {error(model, seed)}"
reach = FrameDecoder.reach
FrameDecoder.reach = lambda self: reach(self) - 1  # a window one frame short must show (the check can fail)
assert error(shallow, 0) > 1e-2, "a window short of the decoder's reach gave the same frames"
PY
"$py" training/train.py --ids "$work/rec_ids.txt" --small --prominence 1 --prominence-ceiling 2 --prominence-pool 4 \
  --prominence-layout predicted --out "$work/ck7" > "$work/last.log" 2>&1 &&
  fail "train.py took --prominence-layout predicted without --freeze-generator"
grep -q -- "it needs --freeze-generator and --prominence-pool N" "$work/last.log" ||
  fail "train.py's refusal of --prominence-layout predicted does not say why"
"$py" training/train.py --ids "$work/rec_ids.txt" --small --real "$work/rec" --real-ids "$work/rec_ids.txt" \
  --freeze-generator --freeze-acoustic --resume "$work/ck5" --out "$work/ck7" > "$work/last.log" 2>&1 &&
  fail "train.py took --freeze-generator with --freeze-acoustic"
grep -q "would train nothing" "$work/last.log" || fail "train.py's refusal of both freezes does not say why"
"$py" training/train.py --ids "$work/rec_ids.txt" --small --prominence-top 16 --out "$work/ck7" \
  > "$work/last.log" 2>&1 &&
  fail "train.py took --prominence-top without --prominence"
grep -q -- "with --prominence W" "$work/last.log" || fail "train.py's refusal of --prominence-top does not say why"
"$py" training/train.py --ids "$work/rec_ids.txt" --small --loss-fmax 12000 --out "$work/ck7" > "$work/last.log" 2>&1 &&
  fail "train.py took --loss-fmax above the Nyquist frequency"
grep -q -- "want 8000 (the features' band) to 11025 Hz" "$work/last.log" || fail "train.py's refusal of --loss-fmax does not say why"

log "the mel loss to 11,025 Hz (--loss-fmax) sees a hiss above 9 kHz that the features' 8 kHz band does not"
(cd training && "$py" - <<'PY') || fail "--loss-fmax's mel loss does not see a hiss above 9 kHz"
import torch
from data import MelSpec
torch.manual_seed(0)
def band(lo, hi):  # white noise between lo and hi Hz
    spec = torch.fft.rfft(torch.randn(4, 22016))
    f = torch.fft.rfftfreq(22016, 1 / 22050)
    return torch.fft.irfft(spec * ((f >= lo) & (f < hi)), 22016)
clean = band(0, 7500)
hissy = clean + 0.1 * band(9000, 11025)
def loss(m):
    return (m(hissy) - m(clean)).abs().mean().item()
narrow, wide = loss(MelSpec()), loss(MelSpec(11025))
assert wide > 20 * narrow, f"0-11025 Hz {wide:.4f} vs 0-8000 Hz {narrow:.4f}"
PY

log "the band level loss sees a band 1.6 dB short at 1-2 kHz, and nothing in the same audio"
(cd training && "$py" - <<'PY') || fail "--band-level's loss does not measure a band's long-term level"
import torch
from train import BandLevelLoss
torch.manual_seed(0)
y = torch.randn(4, 22050)
f = torch.fft.rfftfreq(22050, 1 / 22050)
dip = torch.fft.irfft(torch.fft.rfft(y) * torch.where((f >= 1000) & (f < 2000), 10 ** (-1.6 / 20), 1.0), 22050)
loss = BandLevelLoss()
per_band = (loss.levels(dip) - loss.levels(y)).abs()
assert loss(y, y).item() == 0, "the same audio has a loss"
# three bands of a third of an octave lie within 1-2 kHz: each about 1.6 dB (0.37 in log power) short
assert (per_band > 0.25).sum() == 3 and per_band.max() < 0.45, per_band
PY
"$py" training/train.py --ids "$work/rec_ids.txt" --small --freeze-generator --band-level 1 --out "$work/ck7" \
  > "$work/last.log" 2>&1 && fail "train.py took --band-level with --freeze-generator"
grep -q -- "which --freeze-generator does not train" "$work/last.log" || fail "train.py's refusal of --band-level does not say why"
"$py" training/train.py --ids "$work/rec_ids.txt" --small --skip 1000 --out "$work/ck7" > "$work/last.log" 2>&1 &&
  fail "train.py took --skip past the end of its ids"
grep -q -- "none after the first 1000" "$work/last.log" || fail "train.py's refusal of --skip does not say why"
"$py" training/train.py --ids "$work/rec_ids.txt" --small --freeze-generator --comb 20 --out "$work/ck7" \
  > "$work/last.log" 2>&1 && fail "train.py took --comb with --freeze-generator"
grep -q -- "which --freeze-generator does not train" "$work/last.log" || fail "train.py's refusal of --comb does not say why"

log "the prominence loss's top bins see a steady 3.1 kHz tone that its mean over the band barely does; its ceiling sees the target's own"
(cd training && "$py" - <<'PY') || fail "--prominence-top does not focus the loss on the tone"
import math, torch
from train import ProminenceLoss
torch.manual_seed(0)
clean = torch.randn(4, 22050)
toned = clean + 0.3 * torch.sin(2 * math.pi * 3090 * torch.arange(22050) / 22050)
mean, top = ProminenceLoss()(toned, clean).item(), ProminenceLoss(top=16)(toned, clean).item()
assert ProminenceLoss(top=16)(clean, clean).item() == 0, "a clean signal against itself has a loss"
assert top > 20 * mean, f"top-16 {top:.4f} vs mean {mean:.4f}"
high = clean + 0.3 * torch.sin(2 * math.pi * 6000 * torch.arange(22050) / 22050)
bump = ProminenceLoss(lo=2500, hi=3500, top=16)
assert bump(toned, clean).item() > 0.5 * top and bump(high, clean).item() < 0.05 * top, "the band does not hold"
capped = ProminenceLoss(top=16, ceiling_db=1)
assert ProminenceLoss(top=16)(toned, toned).item() == 0, "a target's own tone has a loss without a ceiling"
assert capped(toned, toned).item() > 0.5 * top, "the ceiling does not reach the target's own tone"
uncapped = ProminenceLoss(top=16)(clean, toned).item()
assert abs(capped(clean, toned).item() - uncapped) < 0.05 * top, "the ceiling pulls on a signal with no tone"
PY
log "pooled over batches, the prominence loss leaves noise alone and still sees the tone, and its gradient is the batch's"
(cd training && "$py" - <<'PY') || fail "--prominence-pool does not average the noise away"
import math, torch
from train import ProminenceLoss
torch.manual_seed(0)
tone = 0.3 * torch.sin(2 * math.pi * 3090 * torch.arange(8192) / 22050)
batches = [torch.randn(2, 8192) for _ in range(16)]  # short batches, whose spectra are noisy
top = ProminenceLoss(top=16)(batches[0] + tone, batches[0]).item()
alone, clean, toned = (ProminenceLoss(top=16, ceiling_db=1, pool=n) for n in (1, 16, 16))
for b in batches:
    a, c, s = alone(b, None).item(), clean(b, None).item(), toned(b + tone, None).item()
assert c < 0.25 * a, f"pooled over 16 batches, noise alone {c:.4f} against one batch's {a:.4f}"
assert s > 0.5 * top, f"pooled, the tone's loss {s:.4f} against one batch's {top:.4f}"
y_hat = (batches[0] + tone).requires_grad_()
toned(y_hat, None).backward()
assert y_hat.grad.abs().sum() > 0, "no gradient reaches the current batch through the running mean"
try:
    ProminenceLoss(pool=8)
    raise AssertionError("a pooled loss without a ceiling was accepted")
except ValueError:
    pass
PY
"$py" training/train.py --ids "$work/rec_ids.txt" --small --prominence-ceiling 2 --out "$work/ck7" \
  > "$work/last.log" 2>&1 && fail "train.py took --prominence-ceiling without --prominence"
grep -q -- "with --prominence W" "$work/last.log" || fail "train.py's refusal of --prominence-ceiling does not say why"
"$py" training/train.py --ids "$work/rec_ids.txt" --small --prominence 1 --prominence-pool 8 --out "$work/ck7" \
  > "$work/last.log" 2>&1 && fail "train.py took --prominence-pool without --prominence-ceiling"
grep -q -- "with --prominence-ceiling DB" "$work/last.log" || fail "train.py's refusal of --prominence-pool does not say why"
for band in 3500,2500 3000 0,3000; do
  "$py" training/train.py --ids "$work/rec_ids.txt" --small --prominence 1 --prominence-band "$band" --out "$work/ck7" \
    > "$work/last.log" 2>&1 && fail "train.py took --prominence-band $band"
  grep -q -- "--prominence-band $band: want LO,HI in Hz" "$work/last.log" || fail "train.py's refusal of $band does not say why"
done
"$py" training/train.py --ids "$work/rec_ids.txt" --small --prominence-band 2500,3500 --out "$work/ck7" \
  > "$work/last.log" 2>&1 && fail "train.py took --prominence-band without --prominence"
grep -q -- "it needs --prominence W" "$work/last.log" || fail "train.py's refusal of --prominence-band alone does not say why"

log "the mel discriminator (--mel-adv), resumed"
train --ids "$work/ids.txt" --n 24 --first 12 --max-steps 3 --mel-adv 1 --resume "$work/ck1" --out "$work/ck4"
[ -f "$work/ck4/mdisc.pt" ] || fail "--mel-adv saved no mdisc.pt"
speak "$work/ck4" "$work/v4.onnx"

log "diagnose.py's spectrum by band: a hiss above 9 kHz shows in the last band, and only there"
(cd training && "$py" - <<'PY') || fail "diagnose.band_differences does not find a hiss above 9 kHz where it is"
import numpy as np
from scipy.signal import butter, sosfilt
from diagnose import BANDS_HZ, band_differences, long_term_spectrum, spectrum_distance
rng = np.random.default_rng(0)
speech = [sosfilt(butter(2, 4000, fs=22050, output="sos"), rng.standard_normal(22050)) for _ in range(3)]
hiss = sosfilt(butter(8, 9500, "highpass", fs=22050, output="sos"), rng.standard_normal(22050))
freq, ref = long_term_spectrum(speech)
_, same = long_term_spectrum(speech)
_, bright = long_term_spectrum([x + 0.05 * hiss for x in speech])
assert spectrum_distance(freq, same, ref) == 0 and max(map(abs, band_differences(freq, same, ref))) == 0
d = band_differences(freq, bright, ref)
assert len(d) == len(BANDS_HZ) - 1 and BANDS_HZ[-2] == 9000, BANDS_HZ
assert d[-1] > 6 and max(abs(v) for v in d[:-2]) < 0.5, d
PY

log "diagnose.py's frame comb: a buzz at the frame rate stands out, noise does not"
(cd training && "$py" - <<'PY') || fail "diagnose.frame_comb does not tell a frame-rate buzz from noise"
import numpy as np
from diagnose import frame_comb
rng = np.random.default_rng(0)
noise = [rng.standard_normal(10 * 22050) for _ in range(3)]
pulses = np.zeros(10 * 22050)
pulses[::256] = 1  # one click a frame, each shaped like the generator's upsampled output
buzz = [x + 0.3 * np.convolve(pulses, rng.standard_normal(64), "same") for x in noise]
clean, buzzed = frame_comb(noise), frame_comb(buzz)
assert abs(clean) < 0.3 and buzzed > 1.0, (clean, buzzed)
assert np.isnan(frame_comb([np.zeros(100)])), "clips shorter than the FFT should leave nothing to measure"
PY

log "prominence_check.py: each form of the prominence loss on a generator's copy synthesis, and a few steps of each"
"$py" training/prominence_check.py --reference "$work/wavs" --count 8 --batches 3 --steer 2 --batch 2 \
  --save "$work/steered" "$work/ck1" > "$work/check.txt" 2>&1 || { cat "$work/check.txt" >&2; fail "prominence_check.py on ck1"; }
grep -Eq "^\| $work/ck1 \| [0-9.]+ \(sd [0-9.]+\) \| [0-9.]+ \| [0-9.]+ \| -?[0-9.]+ dB at [0-9]+ Hz \|$" "$work/check.txt" ||
  { cat "$work/check.txt" >&2; fail "prominence_check.py printed no row of figures for ck1"; }
for form in "mel loss alone" "\+ per batch" "\+ pooled over 24"; do  # regular expressions
  grep -Eq "^\| $form \| -?[0-9.]+ dB at [0-9]+ Hz \| -?[0-9.]+ dB at [0-9]+ Hz \| [0-9.]+ \|$" "$work/check.txt" ||
    { cat "$work/check.txt" >&2; fail "prominence_check.py --steer printed no row for $form"; }
done
changed "$work/ck1" "$work/steered" gen.pt || fail "prominence_check.py --save kept the generator as it was"
! changed "$work/ck1" "$work/steered" ac.pt || fail "prominence_check.py --save changed the acoustic model"
speak "$work/steered" "$work/steered.onnx"
"$py" training/prominence_check.py --reference "$work/wavs" --save "$work/none" "$work/ck1" > "$work/last.log" 2>&1 &&
  fail "prominence_check.py took --save without --steer"
grep -q "it needs --steer STEPS" "$work/last.log" || fail "prominence_check.py's refusal of --save does not say why"
"$py" training/prominence_check.py --reference "$work/wavs" --count 8 --batches 3 --steer 2 --batch 2 --pooled-only \
  --save "$work/steered2" "$work/steered" > "$work/check2.txt" 2>&1 ||
  { cat "$work/check2.txt" >&2; fail "prominence_check.py --pooled-only on the steered generator"; }
grep -Eq "^\| \+ pooled over 24 \| " "$work/check2.txt" && ! grep -Eq "^\| (mel loss alone|\+ per batch) \| " "$work/check2.txt" ||
  { cat "$work/check2.txt" >&2; fail "prominence_check.py --pooled-only did not train the pooled form alone"; }
changed "$work/steered" "$work/steered2" gen.pt || fail "prominence_check.py --pooled-only --save kept the generator as it was"
"$py" training/prominence_check.py --reference "$work/wavs" --pooled-only "$work/ck1" > "$work/last.log" 2>&1 &&
  fail "prominence_check.py took --pooled-only without --steer"
grep -q -- "--pooled-only is about --steer's generator" "$work/last.log" ||
  fail "prominence_check.py's refusal of --pooled-only does not say why"
mkdir -p "$work/nowavs"
"$py" training/prominence_check.py --reference "$work/nowavs" "$work/ck1" > "$work/last.log" 2>&1 &&
  fail "prominence_check.py took a folder without wavs"
grep -q "no wav longer than" "$work/last.log" || fail "prominence_check.py's refusal of an empty folder does not say why"

log "verdict.py: the rule a checkpoint ships by"
printf '14.0 3.80 3.10 4.8\n13.0 3.82 3.12 4.6\n' > "$work/base.m"
printf '13.0 3.83 3.10 4.5\n12.6 3.84 3.11 4.4\n' > "$work/better.m"
printf '12.0 3.90 3.20 4.9\n12.0 3.90 3.20 4.9\n' > "$work/louder.m"
"$py" training/verdict.py --base "$work/base.m" --candidate "$work/better.m" \
  --confirm-base "$work/base.m" --confirm-candidate "$work/better.m" > "$work/last.log" ||
  fail "verdict.py: a candidate better on all three on both sets did not beat the base"
grep -q "beats the base on all three, on both sets" "$work/last.log" ||
  fail "verdict.py does not say the candidate beats the base"
rc=0; "$py" training/verdict.py --base "$work/base.m" --candidate "$work/louder.m" \
  --confirm-base "$work/base.m" --confirm-candidate "$work/better.m" > "$work/last.log" || rc=$?
[ "$rc" = 1 ] || fail "verdict.py: a candidate with a stronger tone got exit status $rc, want 1"
rc=0; "$py" training/verdict.py --base "$work/base.m" --candidate "$work/better.m" \
  --confirm-base "$work/base.m" --confirm-candidate "$work/louder.m" > "$work/last.log" || rc=$?
[ "$rc" = 1 ] && grep -q "on the confirmation sentences" "$work/last.log" ||
  fail "verdict.py: a candidate that loses on the confirmation sentences got status $rc, or no reason"
rc=0; "$py" training/verdict.py --base "$work/base.m" --candidate "$work/better.m" > "$work/last.log" || rc=$?
[ "$rc" = 1 ] && grep -q "without the confirmation sentences it does not ship" "$work/last.log" ||
  fail "verdict.py: a win on the evaluation sentences alone got status $rc, want 1 and why"
rc=0; "$py" training/verdict.py --base "$work/base.m" --candidate "$work/better.m" --confirm-base "$work/base.m" \
  2> "$work/last.log" || rc=$?
[ "$rc" = 2 ] && grep -q "go together" "$work/last.log" || fail "verdict.py: --confirm-base alone gave status $rc"
printf '13.0 3.80 4.6\n' > "$work/short.m"
rc=0; "$py" training/verdict.py --base "$work/short.m" --candidate "$work/better.m" 2> "$work/last.log" || rc=$?
[ "$rc" = 2 ] && grep -q "short.m:1: want 4 numbers" "$work/last.log" ||
  fail "verdict.py: a line of 3 numbers gave status $rc, or no file:line"

log "passed (work in $work)"
