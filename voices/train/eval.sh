#!/bin/sh
# Word error rate of a trained checkpoint vs Festival on 40 held-out sentences (see eval.py). Usage: eval.sh CKPT_DIR
set -eu
cd "$(dirname "$0")/../.."
[ -f .traindata/ids.txt ] || { mkdir -p .traindata && go run ./voices/train/corpusids -out .traindata/ids.txt; }
ckpt=$1; shift
exec /usr/bin/python3 voices/train/eval.py --ids .traindata/ids.txt --ckpt "$ckpt" "$@"
