"""Real traces against the model.

==============================  ==========================================================
module                          what it does
==============================  ==========================================================
:mod:`.model`                   a trace laid on the model's programs: op time bounds, the
                                hand-offs (put -> poll) with their times
:mod:`.clocks`                  per-SM / per-XCD clock offsets from causality (two LPs)
:mod:`.conformance`             events that break the model's happens-before order,
                                classified (skew / stage order / hand-off)
:mod:`.diff`                    real vs simulated: makespan, per-(CTA, stage) errors,
                                critical paths and where they part
:mod:`.calibrate`               fit a GPU profile to traces, evaluate on held-out shapes
==============================  ==========================================================
"""

from __future__ import annotations

from kda_sim.compare.clocks import ClockFit, clock_offsets, fit_clocks
from kda_sim.compare.conformance import Conformance, check_conformance, conformance
from kda_sim.compare.diff import Comparison, compare, compare_timelines

__all__ = [
    "ClockFit",
    "Comparison",
    "Conformance",
    "check_conformance",
    "clock_offsets",
    "compare",
    "compare_timelines",
    "conformance",
    "fit_clocks",
]
