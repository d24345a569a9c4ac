#!/usr/bin/env bash
# Issue 38's poll probe (docs/calibration.md, "What a poll's time is made of"): one try
# at 1 to 8 pairs a thread, a retry's cost with and without the back-off, a try right
# after the CTA's own stores or loads, and PART's fan-in put-to-seen with 1, 8 and 56
# producers (lab/poll_probe.py). On the device machine, in the repository root, with the
# wheels of .whl/ carried; everything lands under $OUT. Bounded: PROBE_S (240) s (it hangs only if
# a releaser never runs, which 256 CTAs at two an SM on 132 SMs rule out). Read it here
# with  python -m lab.poll_probe --report poll_probe.json
set -u
python3 -m pip install -q --no-index --no-deps --no-build-isolation --no-compile \
    --no-cache-dir --upgrade --target /tmp/site . .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD TRITON_CACHE_DIR=/tmp/tc PYTHONUNBUFFERED=1
timeout ${PROBE_S:-240} python3 -m lab.poll_probe --out "$OUT/poll_probe.json" --rounds 16 --launches 4 \
    > "$OUT/poll_probe.log" 2>&1
echo "poll_probe rc=$?"
tail -n 40 "$OUT/poll_probe.log"
