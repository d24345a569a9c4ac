#!/usr/bin/env bash
# The experiment of docs/whatif/ticket_k1.md ("The experiment, built"): why a ticket item's
# k.stage runs about 450 ns slower than the static task on the same instructions, and the
# ticket build's gemv slower on nearly the same code. Four builds on one GPU in one run:
#   static         the static K1
#   static_take    the static K1 with a take on the ticket counter before each task, its
#                  ticket ignored (Build.probe "take"): slower k.stage -> the take
#   tickets        kda_tickets with 3 unrolled copies (ticket_unroll 3)
#   tickets_static the same, each take running the task the static placement gives its
#                  CTA (Build.probe "static_item"): faster k.stage -> the placement
# at 1x1, 1x4, 2x2 and 4x4: 4 warm traced launches of each (one eager step first), the
# untraced per-launch times of the four alternating (bench.kernel_bench --variants,
# CUDA-graph replays), and the probe builds' GPU tests (the reference's outputs over graph
# replays, the counter reset, the placement in a trace). On the device machine, in the
# repository root, with the wheels of .whl/ carried (scripts/device_warm_spread.sh says
# which); everything lands under $OUT, in at most 8 files. Each step is bounded (timeout):
# the 24 builds compiled in parallel (180 s at most), each build's traced launches (40 s),
# the GPU tests (75 s), the untraced times (100 s): 8.8 minutes if every step ran to its
# bound. Read it here with
#   python -m lab.ticket_probe_report --dir s --bench kernel_bench_probe.json
set -u
python3 -m pip install -q --no-index --no-deps --no-build-isolation --no-compile \
    --no-cache-dir --upgrade --target /tmp/site . .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD TRITON_CACHE_DIR=/tmp/tc PYTHONUNBUFFERED=1
S=$OUT/s
BUILDS="static static_take tickets tickets_static"
for b in $BUILDS; do mkdir -p "$S/$b/warm"; done
mkdir -p "$OUT/g"
# every build the steps below launch, compiled in parallel first: the four, traced and
# untraced, at L = 1 (1 token an iteration at S = 1), 2 and 4 (R is a run-time argument:
# 1x4 and 4x4 are one kernel)
# (a file, not stdin: spawned workers re-import the main module by its path)
cat > /tmp/warm_ticket_probe.py <<'PY'
import multiprocessing as mp
import time

from kda_kernel.triton.warm import _one

shapes = ((1, 1), (2, 2), (1, 4))
tk = {"kda_tickets": True, "ticket_unroll": 3}
kws = [{}, {"probe": "take"}, tk, tk | {"probe": "static_item"}]
specs = [(R, L, False, tr, kw) for kw in kws for tr in (True, False) for R, L in shapes]
if __name__ == "__main__":
    t0 = time.perf_counter()
    with mp.get_context("spawn").Pool(16) as pool:
        for line in pool.imap_unordered(_one, specs):
            print(line, flush=True)
    print(f"warm: {time.perf_counter() - t0:.1f} s", flush=True)
PY
timeout 180 python3 /tmp/warm_ticket_probe.py > "$OUT/warm.log" 2>&1
SH=1x1,1x4,2x2,4x4
for b in $BUILDS; do
    case $b in
        static_take) flag="--probe take" ;;
        tickets) flag="--kda-tickets --ticket-unroll 3" ;;
        tickets_static) flag="--kda-tickets --ticket-unroll 3 --probe static_item" ;;
        *) flag="" ;;
    esac
    timeout 40 python3 -m lab.trace_spread record --shapes $SH --launches 4 --warmup 1 \
        --dir "$S/$b/warm" $flag > "$OUT/trace_spread_${b}_warm.log" 2>&1
done
KDA_GPU_OUT=$OUT/g timeout 75 python3 -m pytest -q -m gpu tests/kernel/triton/test_gpu_tickets.py \
    -k probe -p no:cacheprovider -rA --durations=5 > "$OUT/gpu_probe.log" 2>&1
# untraced: the four builds alternate 3 rounds a shape (rows print as they are timed)
TK='"kda_tickets": true, "ticket_unroll": 3'
timeout 100 python3 -m bench.kernel_bench --out "$OUT/kernel_bench_probe.json" --shapes "" \
    --variants "[{}, {\"probe\": \"take\"}, {$TK}, {$TK, \"probe\": \"static_item\"}]" \
    --variant-shapes $SH > "$OUT/kernel_bench_probe.log" 2>&1
tail -n 3 "$OUT"/*.log
# at most 8 files come back from $OUT: the traces of two builds a file, the logs in one
(cd "$OUT" && tar czf traces_static.tgz s/static s/static_take \
    && tar czf traces_tickets.tgz s/tickets s/tickets_static g \
    && tar czf logs.tgz ./*.log && rm -rf s g ./*.log)
ls -la "$OUT"
