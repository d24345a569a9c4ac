#!/usr/bin/env bash
# The GPU tests and two CLI launches on the device machine's H200, from the repository
# root, with the wheels of .whl/ carried (scripts/device_warm_spread.sh says which);
# everything lands under $OUT. About 6 minutes: compile 140 s, the tests 1 min.
set -o pipefail
python3 -m pip install -q --no-index --no-deps --no-build-isolation --no-compile \
    --no-cache-dir --upgrade --target /tmp/site . .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site TRITON_CACHE_DIR=/tmp/tc PYTHONUNBUFFERED=1
timeout 240 python3 -m kda_kernel.triton.warm > "$OUT/warm.log" 2>&1
tail -n 1 "$OUT/warm.log"
mkdir -p "$OUT/g"
KDA_GPU_OUT=$OUT/g KDA_TRACE_DIR=$OUT/g/traces timeout 240 python3 -m pytest -q -m gpu \
    tests/kernel -p no:cacheprovider -rA --durations=5 2>&1 | tee "$OUT/gpu_tests.log" | tail -n 8
python3 -m kda_sim.cli kernel run --R 2 --L 2 --check --trace "$OUT/t22.json" 2>&1 | tail -n 3
python3 -m kda_sim.cli kernel run --R 1 --L 1 --backend triton --check --json 2>&1 | tail -n 2
(cd "$OUT" && tar czf g.tgz g && rm -rf g)
