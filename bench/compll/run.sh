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
#   bench/compll/run.sh --import usr.json       # an ncdu export (ncdu -o usr.json -x /usr)
#   bench/compll/run.sh --readahead 0           # no read-ahead on the background thread
#   bench/compll/run.sh --trees --reps 9 --json-dir bench/compll/results/trees
#                                               # the generated tree and real trees of this
#                                               # machine, one table (see below)
#   bench/compll/run.sh --load 2                # two spinning processes beside the runs
#   bench/compll/run.sh --trees --loads 0,2     # every tree quiet and with 2 spinning
#                                               # processes, side by side in the table
#
# --trees runs the generated tree and the real trees of this machine, each
# read from an ncdu export made once under $TARGET_DIR/compll-trees (with
# `ncdu -x -o` when ncdu is installed, else with compll-du's own scan;
# --fresh-trees makes them again). The trees: usr=/usr, root=/ (one file
# system), checkout=the main checkout of this repository (the one that
# holds .git; a git worktree has only its files) without its target
# directory,
# home=$HOME/.pyenv (or $HOME); --tree NAME=DIR (repeatable) replaces the
# list. Each tree's report goes to --json-dir (default
# $TARGET_DIR/compll-trees/results) as NAME.json, and the table of all of
# them is printed at the end. --loads L1,L2,.. runs every tree once per
# load (compll-du --load L: L spinning processes beside the runs); the
# reports are NAME.json for load 0 and NAME-loadL.json otherwise, and the
# table gives each tree's rows together. Every report records the
# machine's load average at its start and end.
#
# Times are wall clock (the aims use them), with process CPU time and the
# CPU time of the arena's own thread beside (judge designs by the latter
# on a busy machine), and the codec floors on one core and on two.
# Every other argument is passed to compll-du (bench/compll/du; see
# `compll-du --help`).
set -euo pipefail
cd "$(dirname "$0")/../.."
CARGO=${CARGO:-cargo}
TARGET_DIR=${CARGO_TARGET_DIR:-target}
reps=""
args=()
quick=0
trees=0
fresh=0
json_dir=""
tree_list=()
loads="0"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --reps) reps="$2"; shift 2 ;;
    --quick) quick=1; args+=("$1"); shift ;;
    --trees) trees=1; shift ;;
    --fresh-trees) trees=1; fresh=1; shift ;;
    --tree) trees=1; tree_list+=("$2"); shift 2 ;;
    --json-dir) json_dir="$2"; shift 2 ;;
    --loads) trees=1; loads="$2"; shift 2 ;;
    *) args+=("$1"); shift ;;
  esac
done
if [[ -z "$reps" ]]; then
  if [[ $quick == 1 ]]; then reps=3; else reps=5; fi
fi
$CARGO build --quiet --release -p compll-du
du_bin="$TARGET_DIR/release/compll-du"
if [[ $trees == 0 ]]; then
  exec "$du_bin" --reps "$reps" "${args[@]}"
fi

tree_dir="$TARGET_DIR/compll-trees"
json_dir=${json_dir:-$tree_dir/results}
mkdir -p "$tree_dir" "$json_dir"
if [[ ${#tree_list[@]} == 0 ]]; then
  home_tree=$HOME
  [[ -d $HOME/.pyenv ]] && home_tree=$HOME/.pyenv
  # A worktree's .git is a file: the checkout is the one it belongs to.
  checkout=$(cd "$(git rev-parse --git-common-dir 2>/dev/null || echo .git)/.." && pwd)
  tree_list=(usr=/usr root=/ "checkout=$checkout" "home=$home_tree")
fi

# The ncdu export of one tree, made once.
export_tree() {
  local name=$1 dir=$2 out="$tree_dir/$1.json"
  if [[ $fresh == 1 || ! -s $out ]]; then
    if command -v ncdu >/dev/null; then
      # The build directory of a checkout is left out, as `cargo clean` would.
      ncdu -q -x -o "$out.tmp" --exclude "$(cd "$TARGET_DIR" && pwd)" \
        --exclude "$(cd "$dir" && pwd)/target" "$dir" 2>/dev/null
    else
      "$du_bin" --scan "$dir" --export "$out.tmp" >/dev/null
    fi
    mv "$out.tmp" "$out"
  fi
  echo "$out"
}

reports=()
run_tree() {
  local name=$1 load out
  shift
  for load in ${loads//,/ }; do
    out="$json_dir/$name.json"
    [[ $load != 0 ]] && out="$json_dir/$name-load$load.json"
    echo "== $name (--load $load)"
    "$du_bin" --reps "$reps" --load "$load" "$@" "${args[@]}" --json "$out"
    reports+=("$out")
    echo
  done
}
run_tree generated
for t in "${tree_list[@]}"; do
  name=${t%%=*}
  run_tree "$name" --import "$(export_tree "$name" "${t#*=}")"
done
"$du_bin" --table "${reports[@]}"
