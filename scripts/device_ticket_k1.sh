#!/usr/bin/env bash
# The measurement of issue 39 (docs/whatif/ticket_k1.md): the static K1 and kda_tickets on
# the H200 at the build's natural occupancy (2 CTAs an SM), the nine shapes R, L in
# {1, 2, 4}: 4 cold and 4 warm (one eager step first) traced launches of each, the untraced
# per-launch times of both (bench.kernel_bench --variants, CUDA-graph replays), and the
# kda_tickets GPU tests, and the atomic probe (lab/atomic_probe.py, 45 s at most). On the device machine, in the repository root, with the wheels of
# .whl/ carried (scripts/device_warm_spread.sh says which); everything lands under $OUT.
# Each step is bounded (timeout) so the whole fits in one 10-minute call: the 16 builds
# compiled in parallel (200 s at most), each record of traced launches (40 and 50 s), the
# GPU tests (60 s), the untraced times (80 s), the atomic probe (45 s): 9.6 minutes if
# every step ran to its bound.
# UNROLL=N (default 0): the ticket build with N unrolled task copies (LaunchConfig.
# ticket_unroll; docs/whatif/ticket_k1.md, "The unrolled build"); its run skips the probe.
# LOOP=1 with UNROLL=N: the loop build too, traced and timed beside the other two, so all
# three builds are measured on one card in one run (its traces: kda_tickets_loop).
set -u
UNROLL=${UNROLL:-0}
LOOP=${LOOP:-0}
SCHEDS="static kda_tickets"
VARIANTS="[{}, {\"kda_tickets\": true, \"ticket_unroll\": $UNROLL}]"
if [ "$UNROLL" != 0 ] && [ "$LOOP" = 1 ]; then
    SCHEDS="static kda_tickets kda_tickets_loop"
    VARIANTS="[{}, {\"kda_tickets\": true, \"ticket_unroll\": $UNROLL}, {\"kda_tickets\": true}]"
fi
python3 -m pip install -q --no-index --no-deps --no-build-isolation --no-compile \
    --no-cache-dir --upgrade --target /tmp/site . .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD TRITON_CACHE_DIR=/tmp/tc PYTHONUNBUFFERED=1
S=$OUT/s
for sched in $SCHEDS; do mkdir -p "$S/$sched/cold" "$S/$sched/warm"; done
mkdir -p "$OUT/g"
# every build the steps below launch, compiled in parallel first: both schedules, traced
# and untraced, at L = 1 (1 token an iteration at S = 1, 2 above), 2 and 4 (the GPU tests
# run these builds too: no watchdog build, which would compile in a second wave)
# (a file, not stdin: spawned workers re-import the main module by its path)
cat > /tmp/warm_ticket_k1.py <<'PY'
import multiprocessing as mp
import os
import time

from kda_kernel.triton.warm import _one

shapes = ((1, 1), (2, 1), (1, 2), (1, 4))
unroll = int(os.environ.get("UNROLL", "0"))
tk_kw = {"kda_tickets": True, "ticket_unroll": unroll} if unroll else {"kda_tickets": True}
# the GPU tests run the loop build too (with unrolled copies: both)
kws = [{}, tk_kw] + ([{"kda_tickets": True}] if unroll else [])
specs = [(R, L, False, tr, kw) for kw in kws for tr in (True, False) for R, L in shapes]
if __name__ == "__main__":
    t0 = time.perf_counter()
    with mp.get_context("spawn").Pool(16) as pool:
        for line in pool.imap_unordered(_one, specs):
            print(line, flush=True)
    print(f"warm: {time.perf_counter() - t0:.1f} s", flush=True)
PY
UNROLL=$UNROLL timeout 200 python3 /tmp/warm_ticket_k1.py > "$OUT/warm.log" 2>&1
SH=1x1,1x2,1x4,2x1,2x2,2x4,4x1,4x2,4x4
for sched in $SCHEDS; do
    case $sched in
        kda_tickets) flag="--kda-tickets --ticket-unroll $UNROLL" ;;
        kda_tickets_loop) flag="--kda-tickets" ;;
        *) flag="" ;;
    esac
    timeout 40 python3 -m lab.trace_spread record --shapes $SH --launches 4 \
        --dir "$S/$sched/cold" $flag > "$OUT/trace_spread_${sched}_cold.log" 2>&1
    timeout 50 python3 -m lab.trace_spread record --shapes $SH --launches 4 --warmup 1 \
        --dir "$S/$sched/warm" $flag > "$OUT/trace_spread_${sched}_warm.log" 2>&1
done
KDA_GPU_OUT=$OUT/g timeout 90 python3 -m pytest -q -m gpu tests/kernel/triton/test_gpu_tickets.py \
    -p no:cacheprovider -rA --durations=5 > "$OUT/gpu_tickets.log" 2>&1
# untraced: the two builds alternate 3 rounds a shape (rows print as they are timed)
timeout $([ "$LOOP" = 1 ] && echo 120 || echo 80) python3 -m bench.kernel_bench --out "$OUT/kernel_bench_tickets.json" --shapes "" \
    --variants "$VARIANTS" --variant-shapes $SH \
    > "$OUT/kernel_bench_tickets.log" 2>&1
# what a take costs: the atomic round trip and a shared word's service time (lab/atomic_probe)
[ "$UNROLL" = 0 ] && timeout 45 python3 -m lab.atomic_probe --out "$OUT/atomic_probe.json" --k 256 --launches 5 \
    > "$OUT/atomic_probe.log" 2>&1
tail -n 3 "$OUT"/*.log
# at most 8 files come back from $OUT: the traces a schedule a file, the logs in one
(cd "$OUT" && tar czf traces_static.tgz s/static && tar czf traces_kda_tickets.tgz s/kda_tickets g \
    && { [ ! -d s/kda_tickets_loop ] || tar czf traces_kda_tickets_loop.tgz s/kda_tickets_loop; } \
    && tar czf logs.tgz ./*.log && rm -rf s g ./*.log)
ls -la "$OUT"
