#!/usr/bin/env bash
# A lab stamp probe on the device machine: bash scripts/device_lab_probe.sh MODULE [ARGS...],
# MODULE lab.poll_probe, lab.storm_probe, lab.sm_pair_probe or lab.gridbarrier_probe
# (docs/calibration.md says what each times); ARGS its own (default: --rounds 16
# --launches 4, the first three's). In the repository root, with the wheels of .whl/
# carried; everything lands under $OUT as MODULE.json and MODULE.log. Bounded: PROBE_S
# (240) s (256 CTAs at two an SM on 132 SMs are all resident, so no poll waits on a CTA
# that cannot run).
# Read it here with  python -m lab.MODULE --report MODULE.json
set -u
probe=${1:?usage: device_lab_probe.sh poll_probe|storm_probe|sm_pair_probe|gridbarrier_probe [ARGS...]}
shift
[ $# -gt 0 ] || set -- --rounds 16 --launches 4
python3 -m pip install -q --no-index --no-deps --no-build-isolation --no-compile \
    --no-cache-dir --upgrade --target /tmp/site . .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD TRITON_CACHE_DIR=/tmp/tc PYTHONUNBUFFERED=1
timeout "${PROBE_S:-240}" python3 -m "lab.$probe" --out "$OUT/$probe.json" "$@" \
    > "$OUT/$probe.log" 2>&1
echo "$probe rc=$?"
tail -n 40 "$OUT/$probe.log"
