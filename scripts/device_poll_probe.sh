#!/usr/bin/env bash
# Issue 38's poll probe (docs/calibration.md, "What a poll's time is made of"): one try
# at 1 to 8 pairs a thread, a retry's cost with and without the back-off, a try right
# after the CTA's own stores or loads, and PART's fan-in put-to-seen with 1, 8 and 56
# producers (lab/poll_probe.py). Read it here with
#   python -m lab.poll_probe --report poll_probe.json
exec bash "$(dirname "$0")/device_lab_probe.sh" poll_probe
