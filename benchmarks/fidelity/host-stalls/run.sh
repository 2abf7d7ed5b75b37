#!/bin/bash
# The simulator with host-like stalls on its links, against the kernel backend's CUBIC +-16 ms
# reordering cell (docs/fidelity.md item 12). Builds the simulator with host-stalls.patch in a
# temporary worktree (the product is not changed), runs 100 seeds without stalls and with two
# stall settings, and prints each mean goodput with its standard error. Needs cargo.
#
#     bash benchmarks/fidelity/host-stalls/run.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(git -C "$here" rev-parse --show-toplevel)
py="$repo/.venv/bin/python"
tmp=$(mktemp -d)
wt="$tmp/wt"
trap 'git -C "$repo" worktree remove --force "$wt" >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT
git -C "$repo" worktree add -q --detach "$wt" HEAD
git -C "$wt" apply "$here/host-stalls.patch"
cargo build --release -q --manifest-path "$wt/crates/py/Cargo.toml" --target-dir "$tmp/target"
cp "$tmp/target/release/lib_sim.so" "$wt/python/ccbench/_sim.abi3.so"
for stalls in none 20,6 20,10; do
  if [ "$stalls" = none ]; then unset CCBENCH_STALLS; else export CCBENCH_STALLS=$stalls; fi
  PYTHONPATH="$wt/python" "$py" -m ccbench.cli sweep "$here/cubic-reorder16.toml" -j "$(nproc)" \
    --out "$tmp/out-$stalls" -q >/dev/null
  PYTHONPATH="$wt/python" "$py" - "$tmp/out-$stalls" "$stalls" <<'PY'
import sys
import ccbench
g = ccbench.load(sys.argv[1]).runs.aggregate_goodput_bps / 1e6
print(f"stalls {sys.argv[2]:>6} (per s, up to ms): {len(g)} seeds, goodput {g.mean():.2f} +- {g.std() / len(g) ** 0.5:.2f} Mbit/s")
PY
done
