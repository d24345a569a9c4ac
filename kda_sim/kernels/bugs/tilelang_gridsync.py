"""TileLang's CuTeDSL ``sync_grid()``: one counter that goes 0 -> blocks -> 0 every round
loses wake-ups across repeated syncs.

Thread: https://github.com/tile-ai/tilelang/pull/2319 (review thread on
``tilelang/contrib/cutedsl/grid_sync.py``). The grid barrier counted arrivals in a single
global counter that the last arriving CTA reset to 0 before the next round, so a CTA can
miss the short-lived full count, or take a later round's count for its own, and wait
forever. The fix adds a generation word (``__grid_sync_gen``), the phase of an mbarrier:
the last arriver bumps it and the others wait for it to change.

The protocol as modelled, on the example ``gridbarrier`` kernel's machinery: each CTA adds
1 and waits for the full count; with the reset, the last arriver (the CTA whose add
returns ``ctas - 1``) stores 0 instead of waiting, each round. The fix is modelled as a
count that only grows over the rounds, which, like the generation word, a later round
never brings back.
"""

from __future__ import annotations

from dataclasses import dataclass

from kda_sim.kernels.bugs.case import BugCase
from kda_sim.kernels.bugs.on_example import on_example
from kda_sim.kernels.examples import gridbarrier
from kda_sim.kernels.spec import require_at_least


@dataclass(frozen=True)
class TileLangSyncConfig:
    ctas: int = 16
    rounds: int = 3  # sync_grid() calls in a row (multi-round)
    fix: bool = False  # a value that only grows instead of the reset

    def validate(self) -> TileLangSyncConfig:
        require_at_least(self, "ctas", "rounds")
        return self


def _inner(cfg: TileLangSyncConfig) -> gridbarrier.GridBarrierConfig:
    return gridbarrier.GridBarrierConfig(cfg.ctas, cfg.rounds, last_resets=not cfg.fix)


KERNEL = on_example(
    gridbarrier.KERNEL,
    name="tilelang_gridsync",
    description="tilelang#2319: a grid sync counter reset to 0 by the last arriver each round",
    config_type=TileLangSyncConfig,
    inner=_inner,
    fields={"ctas": "ctas", "rounds": "rounds"},
)

CASE = BugCase(
    kernel="tilelang_gridsync",
    project="tile-ai/tilelang",
    threads=("https://github.com/tile-ai/tilelang/pull/2319",),
    gpu="h200",
    category="reset-race",
    culprit="ARRIVE[0]",
    fix_args=("--fix", "true"),
)
