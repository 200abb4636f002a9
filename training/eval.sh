#!/bin/sh
# Word error rate of a trained checkpoint vs Festival on 40 held-out sentences (see eval.py). Usage: eval.sh CKPT_DIR
set -eu
cd "$(dirname "$0")/.."
[ -f .traindata/ids.txt ] || { mkdir -p .traindata && go run ./training/corpusids -metadata "${LJSPEECH_METADATA:?set LJSPEECH_METADATA to LJSpeech 1.1's metadata.csv}" -out .traindata/ids.txt; }
ckpt=$1; shift
exec /usr/bin/python3 training/eval.py --ids .traindata/ids.txt --ckpt "$ckpt" "$@"
