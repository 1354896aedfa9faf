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
#
# --trees runs the generated tree and the real trees of this machine, each
# read from an ncdu export made once under $TARGET_DIR/compll-trees (with
# `ncdu -x -o` when ncdu is installed, else with compll-du's own scan;
# --fresh-trees makes them again). The trees: usr=/usr, root=/ (one file
# system), checkout=this repository without its target directory,
# home=$HOME/.pyenv (or $HOME); --tree NAME=DIR (repeatable) replaces the
# list. Each tree's report goes to --json-dir (default
# $TARGET_DIR/compll-trees/results) as NAME.json, and the table of all of
# them is printed at the end.
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
trees=0
fresh=0
json_dir=""
tree_list=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --reps) reps="$2"; shift 2 ;;
    --quick) quick=1; args+=("$1"); shift ;;
    --trees) trees=1; shift ;;
    --fresh-trees) trees=1; fresh=1; shift ;;
    --tree) trees=1; tree_list+=("$2"); shift 2 ;;
    --json-dir) json_dir="$2"; shift 2 ;;
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
  tree_list=(usr=/usr root=/ "checkout=$PWD" "home=$home_tree")
fi

# The ncdu export of one tree, made once.
export_tree() {
  local name=$1 dir=$2 out="$tree_dir/$1.json"
  if [[ $fresh == 1 || ! -s $out ]]; then
    if command -v ncdu >/dev/null; then
      # The build directory of a checkout is left out, as `cargo clean` would.
      ncdu -q -x -o "$out.tmp" --exclude "$(cd "$TARGET_DIR" && pwd)" "$dir" 2>/dev/null
    else
      "$du_bin" --scan "$dir" --export "$out.tmp" >/dev/null
    fi
    mv "$out.tmp" "$out"
  fi
  echo "$out"
}

reports=()
run_tree() {
  local name=$1
  shift
  echo "== $name"
  "$du_bin" --reps "$reps" "$@" "${args[@]}" --json "$json_dir/$name.json"
  reports+=("$json_dir/$name.json")
  echo
}
run_tree generated
for t in "${tree_list[@]}"; do
  name=${t%%=*}
  run_tree "$name" --import "$(export_tree "$name" "${t#*=}")"
done
"$du_bin" --table "${reports[@]}"
