#!/usr/bin/env bash
# Issue 39: what a spilled register costs the K1 (docs/whatif/ticket_k1.md, "What a spill
# costs"). The static K1 at its 128-register cap and capped lower (112, 96: the same code
# and placement, spilling), beside the unrolled ticket build (128: it spills 28 to 72),
# untraced, the four alternating 3 rounds a shape (bench.kernel_bench --variants, CUDA-graph
# replays; each row records the build's registers and spills) at the nine shapes. The
# builds are compiled in parallel first (kda_kernel.triton.warm: R is a run-time argument,
# so 4 compiles a variant).
# On the device machine, in the repository root, with .whl/ carried; under $OUT.
# Bounded: compile WARM_S (200) s, bench BENCH_S (300) s. PHASE=warm or PHASE=bench runs
# one of the two (a warm machine keeps the compiled builds in /tmp/tc between two calls).
set -u
python3 -m pip install -q --no-index --no-deps --no-build-isolation --no-compile \
    --no-cache-dir --upgrade --target /tmp/site . .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD TRITON_CACHE_DIR=/tmp/tc PYTHONUNBUFFERED=1
TK='"kda_tickets": true, "ticket_unroll": 3'
VARIANTS="[{}, {\"maxnreg\": 112}, {\"maxnreg\": 96}, {$TK}]"
PHASE=${PHASE:-all}
if [ "$PHASE" != bench ]; then
KDA_WARM_ONLY=variants KDA_WARM_LS=1,2,4 timeout ${WARM_S:-200} python3 -m kda_kernel.triton.warm \
    "$VARIANTS" > "$OUT/warm_spill.log" 2>&1
echo "warm rc=$?"; tail -n 20 "$OUT/warm_spill.log"
fi
[ "$PHASE" = warm ] && exit 0
timeout ${BENCH_S:-300} python3 -m bench.kernel_bench --out "$OUT/kernel_bench_spill.json" --shapes "" \
    --variants "$VARIANTS" \
    --variant-shapes 1x1,1x2,1x4,2x1,2x2,2x4,4x1,4x2,4x4 > "$OUT/kernel_bench_spill.log" 2>&1
echo "bench rc=$?"; tail -n 5 "$OUT/kernel_bench_spill.log"
