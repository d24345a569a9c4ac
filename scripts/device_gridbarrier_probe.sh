#!/usr/bin/env bash
# Issue 38's grid barrier probe (docs/calibration.md, "A second kernel: the grid
# barrier"): the example kernel gridbarrier as a Triton kernel, ctas 8, 66, 132 x rounds
# 2, 4, LAUNCHES (4) launches each after the first (lab/gridbarrier_probe.py); then its
# launches as traces, $OUT/gridbarrier_traces.tgz (lab/gridbarrier_trace.py), and one of
# them through kda-sim compare, so a trace that compare cannot read shows here. In the
# repository root, with the wheels of .whl/ carried. Read it here with
#   python -m lab.gridbarrier_probe --report gridbarrier_probe.json
#   python -m lab.gridbarrier_trace gridbarrier_probe.json --dir DIR   (or untar the .tgz)
set -u
PROBE_S=${PROBE_S:-200} bash "$(dirname "$0")/device_lab_probe.sh" gridbarrier_probe \
    --launches "${LAUNCHES:-4}" || exit 1
[ -f "$OUT/gridbarrier_probe.json" ] || exit 1
export PYTHONPATH=/tmp/site:$PWD
tr=$(mktemp -d)
mkdir -p "$tr/gridbarrier_traces"
python3 -m lab.gridbarrier_trace "$OUT/gridbarrier_probe.json" --dir "$tr/gridbarrier_traces" \
    --skip-bad 2>&1 | tail -n 20
tar -czf "$OUT/gridbarrier_traces.tgz" -C "$tr" gridbarrier_traces
one=$(ls "$tr"/gridbarrier_traces/gridbarrier_ctas132_rounds4_*.json 2>/dev/null | head -n 1)
[ -n "$one" ] && python3 -c 'import sys; from kda_sim.cli import main; sys.exit(main())' \
    compare "$one" --kernel gridbarrier 2>&1 | head -n 30
exit 0
