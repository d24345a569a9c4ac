#!/usr/bin/env bash
# Issue 38's in-situ test of a spinning poll (docs/calibration.md, "gate's PART poll: its
# retries, and a back-off tried in the K1"): eight traced K1 launches each of 1 x 1, 2 x 2 and 4 x 4 (gate's PART polled by
# S = 1, 4 and 16 CTAs) as shipped (the PART poll spins) and with Build.gate_sleep_ns =
# 128 (it backs off as the long polls do). On the device machine, in the repository root,
# with the wheels of .whl/ carried; the traces come back as $OUT/gate_sleep_traces.tgz
# (spin/ and sleep/: one file, as the device brings back a few dozen files at most). About
# 3 compiles a build (L = 1, 2, 4) and 24 launches each: 5 to 6 minutes on an H100.
# Read them here (tar xzf gate_sleep_traces.tgz) with
#   python -m lab.poll_covariates OUT/spin/*.json     # and OUT/sleep/*.json: the gate
#   PART row's "a retry", against the slice ends, and each launch's makespan
set -u
python3 -m pip install -q --no-index --no-deps --no-build-isolation --no-compile \
    --no-cache-dir --upgrade --target /tmp/site . .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD TRITON_CACHE_DIR=/tmp/tc PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
for v in spin:0 sleep:128; do
    d=${v%%:*} ns=${v##*:}
    mkdir -p "$OUT/$d"
    timeout 270 python3 -m lab.trace_spread record --shapes 1x1,2x2,4x4 --launches 8 \
        --gate-sleep-ns "$ns" --dir "$OUT/$d" > "$OUT/$d.log" 2>&1
    echo "$d rc=$? $(ls "$OUT/$d" | wc -l) traces"
done
tar czf "$OUT/gate_sleep_traces.tgz" -C "$OUT" spin sleep && rm -rf "$OUT/spin" "$OUT/sleep"
