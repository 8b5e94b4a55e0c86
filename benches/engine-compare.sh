#!/usr/bin/env bash
# Engine speed, old build against new, in one run: builds reclaimlab-bench at git revision OLD
# (default: the last commit before the world-of-machines restructure) in a temporary worktree,
# and at the working tree, then runs each scenario with both, alternating OLD/NEW, ROUNDS times,
# and prints the best Mops/s of each and the ratio NEW/OLD. The machines are shared and noisy:
# the ratio within one run is the figure to quote.
# Usage: bash benches/engine-compare.sh [--old REV] [--rounds N] [SCENARIO.toml...]
#        (default scenarios: scenarios/*.toml and benches/kswapd-highorder-c-v3.0.toml)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
old=84f7ce7
rounds=3
files=()
while [ $# -gt 0 ]; do
    case "$1" in
        --old) old=$2; shift 2 ;;
        --rounds) rounds=$2; shift 2 ;;
        *) files+=("$1"); shift ;;
    esac
done
[ ${#files[@]} -gt 0 ] || files=(scenarios/*.toml benches/kswapd-highorder-c-v3.0.toml)
work=$(mktemp -d)
trap 'git worktree remove --force "$work/old" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
git worktree add -q --detach "$work/old" "$old"
echo "building old ($old) and new reclaimlab-bench (release)..." >&2
CARGO_TARGET_DIR="$work/target-old" cargo build --release -q -p reclaimlab-core --bin reclaimlab-bench \
    --manifest-path "$work/old/Cargo.toml"
cargo build --release -q -p reclaimlab-core --bin reclaimlab-bench
oldbin="$work/target-old/release/reclaimlab-bench"
newbin=./target/release/reclaimlab-bench
# The column of reclaimlab-bench's result line holding Mops/s, and peak MiB.
best() { sort -g | tail -n 1; }
printf '%-28s %10s %10s %8s %12s %12s\n' scenario old_Mops/s new_Mops/s new/old old_peak_MiB new_peak_MiB
for f in "${files[@]}"; do
    o=(); n=(); om=0; nm=0
    for _ in $(seq "$rounds"); do
        lo=$("$oldbin" "$f" | tail -n 1); ln=$("$newbin" "$f" | tail -n 1)
        o+=("$(echo "$lo" | awk '{print $5}')"); n+=("$(echo "$ln" | awk '{print $5}')")
        om=$(echo "$lo" | awk '{print $8}'); nm=$(echo "$ln" | awk '{print $8}')
    done
    bo=$(printf '%s\n' "${o[@]}" | best); bn=$(printf '%s\n' "${n[@]}" | best)
    printf '%-28s %10s %10s %8.3f %12s %12s\n' "$(basename "$f" .toml)" "$bo" "$bn" \
        "$(echo "$bn / $bo" | bc -l)" "$om" "$nm"
done
