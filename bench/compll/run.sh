#!/usr/bin/env bash
# compll benchmark: the ncdu-like workload (scan, open, browse, delete) on
# plain heap nodes and on a compll arena, medians over repetitions.
#
#   bench/compll/run.sh --quick                 # 40,000 entries, seconds
#   bench/compll/run.sh --json compll.json      # 300,000 entries, 5 repetitions
#   bench/compll/run.sh --sweep                 # block size x uncompressed x codec x grouping table
#   bench/compll/run.sh --reps 1 --sweep --sweep-blocks 32768,65536 --sweep-codecs lz4,zstd-1
#                                               # a reduced grid (also --sweep-uncompressed, --sweep-groups)
#   bench/compll/run.sh --scan /usr             # a real directory instead of the generator
#   bench/compll/run.sh --readahead 0           # no read-ahead on the background thread
#   bench/compll/run.sh --codec zstd-1 --background 0 --readahead 0 --cache-growth 0
#                                               # the earlier default: no background thread, fixed cache
#
# Times are wall clock (the aims use them), with process CPU time beside.
# Every other argument is passed to compll-du (bench/compll/du; see
# `compll-du --help`).
set -euo pipefail
cd "$(dirname "$0")/../.."
CARGO=${CARGO:-cargo}
TARGET_DIR=${CARGO_TARGET_DIR:-target}
reps=""
args=()
quick=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --reps) reps="$2"; shift 2 ;;
    --quick) quick=1; args+=("$1"); shift ;;
    *) args+=("$1"); shift ;;
  esac
done
if [[ -z "$reps" ]]; then
  if [[ $quick == 1 ]]; then reps=3; else reps=5; fi
fi
$CARGO build --quiet --release -p compll-du
exec "$TARGET_DIR/release/compll-du" --reps "$reps" "${args[@]}"
