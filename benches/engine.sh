#!/usr/bin/env bash
# Engine speed and memory on the example scenarios, in a release build:
# page operations per second, simulated/wall time, allocations per event, peak RSS.
# Each scenario runs in its own process so peak RSS is per scenario, three times: the fastest
# run is reported (the machines are shared and noisy).
# Usage: bash benches/engine.sh [SCENARIO.toml...]   (default: scenarios/*.toml)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
cargo build --release -q -p reclaimlab-core --bin reclaimlab-bench
files=("$@")
[ ${#files[@]} -gt 0 ] || files=(scenarios/*.toml)
first=1
for f in "${files[@]}"; do
    if [ $first = 1 ]; then
        ./target/release/reclaimlab-bench --repeat 3 "$f"
        first=0
    else
        ./target/release/reclaimlab-bench --repeat 3 "$f" | tail -n 1
    fi
done
