#!/usr/bin/env bash
# One big machine, N workers: GNU parallel starts `ttsgen batch --shard K/N` for K = 1..N into one folder (each
# with its share of the CPU threads), then the shards' rows are merged, counting against the input the items that no
# shard made: the script exits as the merge does (0 every item ok, 1 some failed or are missing). Killed or failed,
# the same command resumes.
#
#   deploy/parallel/shards.sh prompts.jsonl out/ 4
set -euo pipefail
in=${1:?usage: shards.sh INPUT OUT_DIR [SHARDS]}
out=${2:?usage: shards.sh INPUT OUT_DIR [SHARDS]}
n=${3:-4}
threads=$(( $(nproc) / n ))
# A failed shard does not stop the merge, which says what is missing.
seq 1 "$n" | parallel --halt never --line-buffer \
  ttsgen batch "$in" -o "$out" --shard "{}/$n" --threads "$(( threads > 0 ? threads : 1 ))" -q ||
  echo "shards.sh: GNU parallel exited $? (the number of shards that failed); merging what they made" >&2
ttsgen results merge "$out" --inputs "$in"
