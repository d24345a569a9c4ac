#!/usr/bin/env bash
# Issue 38's storm probe (docs/calibration.md, "Pollers beside a hand-off, and a put behind
# stores"): PART's fan-in beside the K1's other pollers (WGT, XRDY's flags) at S = 1, 4, 16,
# a put right after 0, 8 or 32 KiB of the producer's own stores by 1, 64 or 192
# producers, and a poll right after the CTA's own stores and put, in a ring of 64 or 192
# (lab/storm_probe.py). On the device machine, in the repository root, with the
# wheels of .whl/ carried; everything lands under $OUT. Bounded: PROBE_S (300) s (256 CTAs
# at two an SM on 132 SMs are all resident, so no poll waits on a CTA that cannot run).
# Read it here with  python -m lab.storm_probe --report storm_probe.json
set -u
python3 -m pip install -q --no-index --no-deps --no-build-isolation --no-compile \
    --no-cache-dir --upgrade --target /tmp/site . .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD TRITON_CACHE_DIR=/tmp/tc PYTHONUNBUFFERED=1
timeout ${PROBE_S:-300} python3 -m lab.storm_probe --out "$OUT/storm_probe.json" --rounds 16 --launches 4 \
    > "$OUT/storm_probe.log" 2>&1
echo "storm_probe rc=$?"
tail -n 40 "$OUT/storm_probe.log"
