#!/usr/bin/env bash
# The warm-launch record (docs/calibration.md, "Warm launches"): 8 cold and 8 warm traced
# launches of the nine shapes, warm launches of the seed's in_nw order, the warm-trace GPU
# test. On the device machine, in the repository root, with the wheels of .whl/ carried
# (the device tool's `carry`); everything lands under $OUT. Nothing is installed there:
# the repository (as kda_sim and kda_kernel, with its entry points) and the wheels go to
# /tmp/site. The wheels the device image lacks (Python 3.12, x86-64), made here with
# `pip download --no-deps --only-binary=:all: --python-version 3.12 --platform
# manylinux2014_x86_64 -d .whl simpy jsonschema jsonschema-specifications referencing
# rpds-py`. About 8 minutes: compile 150 s, cold launches 1 min, warm ones 3 min, the
# seed's in_nw order 1 min, the GPU test 1 min.
set -u
python3 -m pip install -q --no-index --no-deps --no-build-isolation --no-compile \
    --no-cache-dir --upgrade --target /tmp/site . .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD TRITON_CACHE_DIR=/tmp/tc PYTHONUNBUFFERED=1
S=$OUT/s
mkdir -p "$S"
KDA_WARM_ONLY=variants KDA_WARM_LS=1,2,4 timeout 260 python3 -m kda_kernel.triton.warm \
    '[{"trace": true}, {"trace": true, "nw_first": false}]' \
    > "$OUT/warm.log" 2>&1
SH=1x1,1x2,1x4,2x1,2x2,2x4,4x1,4x2,4x4
timeout 120 python3 -m lab.trace_spread record --shapes $SH --launches 8 --dir "$S/cold" \
    > "$OUT/trace_spread_cold.log" 2>&1
timeout 200 python3 -m lab.trace_spread record --shapes $SH --launches 8 --warmup 3 \
    --dir "$S/warm" > "$OUT/trace_spread_warm.log" 2>&1
# the seed's in_nw order (nw_first off), warm, where the builds differ (L = 1 and 2)
timeout 120 python3 - "$S/seed_order" > "$OUT/seed_order.log" 2>&1 <<'PY'
import sys
from pathlib import Path

from kda_kernel.triton.defaults import default_config
from kda_kernel.triton.run import run

d = Path(sys.argv[1])
d.mkdir(parents=True, exist_ok=True)
for R, L in ((1, 1), (1, 2), (2, 1), (2, 2), (4, 1), (4, 2)):
    for i in range(4):
        r = run(default_config(R, L, 8, nw_first=False),
                trace_path=d / f"k1_R{R}_L{L}_{i}.json", warmup=3)
        print(R, L, i, r["makespan_us"], flush=True)
PY
mkdir -p "$OUT/g"
KDA_GPU_OUT=$OUT/g timeout 100 python3 -m pytest -q -m gpu tests/kernel/triton/test_gpu_k1.py \
    -k warm -p no:cacheprovider -rA > "$OUT/gpu_warm.log" 2>&1
(cd "$OUT" && tar czf traces.tgz s g && rm -rf s g)
ls -la "$OUT"
tail -n 3 "$OUT"/*.log
