#!/usr/bin/env bash
# Issue 38's storm probe (docs/calibration.md, "Pollers beside a hand-off, a put behind
# stores, and a crowd of polls"): PART's fan-in beside the K1's other pollers (WGT,
# XRDY's flags) at S = 1, 4, 16, a put right after 0, 8 or 32 KiB of the producer's own
# stores by 1, 64 or 192 producers, and a poll right after the CTA's own stores and put,
# in a ring of 64 or 192 (lab/storm_probe.py). Read it here with
#   python -m lab.storm_probe --report storm_probe.json
exec bash "$(dirname "$0")/device_lab_probe.sh" storm_probe
