#!/bin/bash
# Step 6zd's GPU call (training/README.md): the real speaker (speaker 1, the LJSpeech recordings) trained from the
# shipped voice, step 119,605, in one call on the device machine. Phase A trains both speakers together (Festival's
# speech of .traindata/fest5k.txt.gz as speaker 0, half of each batch from the recordings); phase B trains the
# generator alone on the recordings' teacher-forced mels under phase A's acoustic model. Each phase's saves come back
# under $OUT in float16 tars, each under the 16 MiB a returned file may have: a-end.tar, a-mid.tar (ac.pt, gen.pt),
# b.tar (gen.pt of each save, the end's disc.pt), with the logs log-a and log-b.
# usage, on the device machine, from the repository root, with .traindata/{kit,lj,lj_ids.txt.gz,fest5k.txt.gz,debs}
# carried (the README's step 6zd says how each is made):  bash training/real_speaker.sh
# A, B (each phase's budget in seconds), MIDA, MIDB (its mid-saves), W (Festival's workers), FIRST, N (Festival's
# sentences before training and in all) and BATCH scale it down for a trial on a CPU:
#   PATH=/usr/bin:$PATH OUT=/tmp/o A=100 B=60 MIDA=60 MIDB=20,40 W=2 FIRST=16 N=64 BATCH=4 bash training/real_speaker.sh
source .traindata/kit/prelude.sh >/dev/null 2>&1
set -o pipefail
mkdir -p /tmp/flac; for d in .traindata/debs/*.deb; do dpkg -x $d /tmp/flac; done
export PATH=/tmp/flac/usr/bin:$PATH LD_LIBRARY_PATH=/tmp/flac/usr/lib/x86_64-linux-gnu:$LD_LIBRARY_PATH
flac --version || exit 3
if command -v nvidia-smi >/dev/null; then nvidia-smi --query-gpu=name,memory.total --format=csv,noheader; fi
rm -rf /tmp/r /tmp/a /tmp/a16 /tmp/b /tmp/b16
A=${A:-270} B=${B:-235} MIDA=${MIDA:-135} MIDB=${MIDB:-80,160} W=${W:-16} FIRST=${FIRST:-600} N=${N:-5000}
mkdir -p /tmp/r && cp training/checkpoints/predlayout-119605/ac.pt training/checkpoints/pooled-115771/gen.pt training/checkpoints/fixedcritic-109558/disc.pt /tmp/r/
COMMON="--batch ${BATCH:-64} --vbatch ${BATCH:-64} --seg 32 --comb 20 --prominence 10 --prominence-top 16 --prominence-ceiling 2.5 --prominence-pool 24 --workers $W --real .traindata/lj --real-ids .traindata/lj_ids.txt.gz --voc-real-only"
half() {  # float16 copies of every .pt under $1 in $2, for the trip back
python3 - "$1" "$2" <<'PY'
import os, sys, torch
src, dst = sys.argv[1:3]
for root, _, files in os.walk(src):
    for f in (f for f in files if f.endswith(".pt")):
        d = torch.load(os.path.join(root, f), map_location="cpu", weights_only=False)
        d["model"] = {k: v.half() if v.is_floating_point() else v for k, v in d["model"].items()}
        o = os.path.join(dst, os.path.relpath(root, src))
        os.makedirs(o, exist_ok=True)
        torch.save(d, os.path.join(o, f))
PY
}
echo "start $(date +%s)" | tee $OUT/log-a
PYTHONUNBUFFERED=1 python3 training/train.py --ids .traindata/fest5k.txt.gz --n $N --skip 0 --first $FIRST $COMMON \
  --real-share 0.5 --dur-loss linear --budget $A --warmup 100 --lr-start 0.3 --lr-end 0.1 --enc-lr 0.3 \
  --mid-save $MIDA --resume /tmp/r --seed 90 --out /tmp/a 2>&1 | tee -a $OUT/log-a | tail -4
echo "phase A ended $(date +%s)" | tee -a $OUT/log-a
half /tmp/a /tmp/a16 && (cd /tmp/a16 && tar cf $OUT/a-end.tar ac.pt gen.pt && tar cf $OUT/a-mid.tar mid-*)
PYTHONUNBUFFERED=1 python3 training/train.py --ids .traindata/lj_ids.txt.gz $COMMON --freeze-acoustic \
  --budget $B --warmup 50 --lr-start 0.6 --lr-end 0.2 --mid-save $MIDB --resume /tmp/a --seed 91 --out /tmp/b 2>&1 | tee $OUT/log-b | tail -4
echo "phase B ended $(date +%s)" | tee -a $OUT/log-b
half /tmp/b /tmp/b16 && (cd /tmp/b16 && rm -f ac.pt mid-*/ac.pt && tar cf $OUT/b.tar .)
ls -la $OUT
