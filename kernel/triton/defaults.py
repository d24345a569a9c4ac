"""The Triton K1's recommended launch configuration: what it runs where a user leaves a
protocol variant unsaid (``kda-sim kernel run`` without ``--nw-first``, warm and bench
variant lists without ``nw_first``).

A ``LaunchConfig`` says every variant; the kernel runs exactly what it says
(``launch.Build``). This module only chooses values for the variants nobody chose.
Importing it imports neither torch nor Triton.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from kda_sim.kernels.k1.config import LaunchConfig
from kda_sim.kernels.k1.constants import BLOCKS

# the attn slice one source an iteration from S = SRC_MIN_S on (``Build.src_min_s``)
SRC_MIN_S = 4


def recommended_nw_first(L: int, src_min_s: int = SRC_MIN_S) -> bool:
    """in_nw asked with the slice's loads where some S a build serves (L, 2 L, ...) runs
    the slice by token (L < src_min_s: L = 1 and 2 by default): after the MSQ poll its
    round trip stood between the all-to-all and XRDY (a 1x1 trace: MSQ satisfied to XRDY
    published 0.93 -> 0.67 us, median over the attn CTAs). Measured on the H200 (us a
    launch, one workspace a shape): 1x1 42.75 -> 42.53, 1x2 51.79 -> 51.38, 2x1
    50.25 -> 50.02, 2x2 55.13 -> 54.16, 4x1 59.70 -> 59.31, 4x2 64.26 -> 63.01; at L = 4
    1x4 -0.26, 2x4 -0.71 but 4x4 76.36 -> 77.97, so the L = 4 builds keep the seed's
    order."""
    return src_min_s > L


def default_config(
    R: int,
    L: int,
    nb: int = 8,
    kda0: int = 0,
    *,
    options: Mapping[str, Any] | None = None,
    gate_local: bool = False,
    blocks: int = BLOCKS,
    nw_first: bool | None = None,
    onw_first: bool | None = None,
    kda_tickets: bool = False,
    gemv_tickets: bool = False,
    ticket_unroll: int = 0,
) -> LaunchConfig:
    """The configuration the Triton K1 recommends at (R, L, nb, kda0): a variant given
    (not None) is kept as given; ``nw_first`` left None is ``recommended_nw_first`` (for the
    build's ``src_min_s`` in ``options``), ``onw_first`` left None is on (the kernel asks
    for on_w with k.stage's loads; it has no other order). ``gate_local`` is off unless
    asked (slower from S = 2, ``Build.gate_local`` in ``launch.py``); so are the schedules
    (``kda_tickets``, ``gemv_tickets``, ``ticket_unroll``)."""
    src_min_s = int((options or {}).get("src_min_s", SRC_MIN_S))
    return LaunchConfig(
        R,
        L,
        nb,
        kda0,
        gate_local,
        blocks,
        nw_first=recommended_nw_first(L, src_min_s) if nw_first is None else nw_first,
        onw_first=True if onw_first is None else onw_first,
        kda_tickets=kda_tickets,
        gemv_tickets=gemv_tickets,
        ticket_unroll=ticket_unroll,
    )


def recommended(cfg: LaunchConfig, options: Mapping[str, Any] | None = None) -> LaunchConfig:
    """``cfg`` with the variants a plain ``LaunchConfig`` leaves at the seed's order set
    to the recommended ones (nw_first, onw_first); shape, kda0 and gate_local kept. For a
    caller that never chose a variant (a ``LaunchConfig(R, L)`` written for the reference)."""
    d = default_config(cfg.R, cfg.L, options=options)
    return replace(cfg, nw_first=d.nw_first, onw_first=d.onw_first)
