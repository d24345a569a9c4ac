"""Which scratch pairs each K1 launch of a step writes and polls (its tag check's footprint).

The pairs a launch touches follow from its shape (R, L), its nb and the scratch layout.
The layout is a reading (the seed does not say how ``c["part"]``, ``c["wgt"]`` ... are
placed in ``scratch``):

- ``fixed`` (default): one buffer sized for the largest launch the build accepts, each
  region at a fixed offset (regions in :class:`Region` order); a launch addresses a region
  with its own index arithmetic (strides of its S and NS), so index ranges, not meanings,
  alias across shapes;
- ``packed``: regions back to back with this launch's extents (the simulator's
  :class:`CellSpace`), so a region's pairs of one shape can be another region's in the next.

The pairs a launch puts / polls are read from the protocol's extents: every mailbox pair
of the launch's extent is put; every one is polled except the 4 zero pad rows of PROJ
(but the last of a request's last token: kda_gates clamps its f_a index to it); WGT is
neither with ``gate_local``. ``footprint_from_handoffs`` derives the same from the
programs (the tests hold the two equal; mutants use it).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any

import numpy as np

from kda_sim.checks.tags.footprint import (
    Intervals,
    Layout,
    ProgramSteps,
    StepModel,
    merge,
    runs,
    step_model,
)
from kda_sim.errors import InvalidInput
from kda_sim.kernels.k1.config import LaunchConfig
from kda_sim.kernels.k1.constants import BETA_0, NH, NPROJ, TAG_EXPR
from kda_sim.kernels.k1.pollers import poller
from kda_sim.kernels.k1.program import build_launch
from kda_sim.kernels.k1.regions import MAILBOXES, Region, extents
from kda_sim.protocol.handoffs import Handoffs
from kda_sim.protocol.program import Launch
from kda_sim.protocol.space import CellSpace

Shape = tuple[int, int]  # (R, L)


@lru_cache(maxsize=1)
def max_extents() -> dict[Region, int]:
    """Per region, the largest extent over every launch ``LaunchConfig.validate`` accepts."""
    best = dict.fromkeys(MAILBOXES, 0)
    for s in range(1, 17):
        for nb in range(1, 32):
            cfg = LaunchConfig(s, 1, nb)
            try:
                cfg.validate()
            except InvalidInput:
                continue
            for r, n in extents(cfg).items():
                if r in best:
                    best[r] = max(best[r], n)
    return best


def bases(cfg: LaunchConfig, layout: Layout) -> dict[Region, int]:
    if layout is Layout.PACKED:
        space = CellSpace.of(cfg)
        return {r: space.offsets[r] for r in MAILBOXES}
    out: dict[Region, int] = {}
    at = 0
    for r in MAILBOXES:
        out[r] = at
        at += max_extents()[r]
    return out


def locate(addr: int, cfg: LaunchConfig, layout: Layout) -> tuple[Region, int]:
    """The (region, index) a buffer address is for a launch of ``cfg``."""
    b = bases(cfg, layout)
    ext = extents(cfg)
    for r in MAILBOXES:
        if b[r] <= addr < b[r] + (max_extents()[r] if layout is Layout.FIXED else ext[r]):
            return r, addr - b[r]
    raise ValueError(f"address {addr} is outside the scratch regions")


def footprint(cfg: LaunchConfig, layout: Layout = Layout.FIXED) -> tuple[Intervals, Intervals]:
    """(puts, polls) of the standard protocol for ``cfg`` as buffer address intervals."""
    b = bases(cfg, layout)
    ext = extents(cfg)
    puts: Intervals = []
    polls: Intervals = []
    for r in MAILBOXES:
        if r is Region.WGT and cfg.gate_local:
            continue
        lo = b[r]
        puts.append((lo, lo + ext[r]))
        if r is Region.PROJ:
            polls += [(lo + t * NPROJ, lo + t * NPROJ + BETA_0 + NH) for t in range(cfg.S)]
            # kda_gates clamps its f_a index to the request's last PROJ pair (a pad row)
            polls += [(lo + t * NPROJ - 1, lo + t * NPROJ) for t in range(cfg.L, cfg.S + 1, cfg.L)]
        else:
            polls.append((lo, lo + ext[r]))
    return merge(puts), merge(polls)


def addresses(launch: Launch, layout: Layout = Layout.FIXED) -> np.ndarray:
    """Each of a launch's cells (global id) as its scratch buffer address under
    ``layout``; -1 for the flagged data X (no (value, tag) pair)."""
    space = launch.space
    b = bases(launch.cfg, layout)
    gids = np.arange(space.total, dtype=np.int64)
    reg = space.region_of(gids)
    off = np.asarray(space.offsets)[reg]
    base = np.array([b[Region(int(r))] for r in range(len(Region) - 1)] + [0])[reg]
    return np.where(reg == Region.X, -1, gids - off + base)


def footprint_from_handoffs(
    ho: Handoffs, layout: Layout = Layout.FIXED
) -> tuple[Intervals, Intervals]:
    """The same, read from a launch's programs (exact for any launch, mutants included)."""
    addr = addresses(ho.launch, layout)

    def addrs(gids: np.ndarray) -> np.ndarray:
        a = addr[gids]
        return np.sort(a[a >= 0])

    return runs(addrs(np.flatnonzero(ho.put_count > 0))), runs(addrs(ho.polled_cells()))


@dataclass(frozen=True)
class K1Pairs:
    """K1's words for a step model's addresses: the launch at (shape, slot) is ``base``
    with that shape and the slot's nb, addressing the scratch as ``layout`` says."""

    layout: Layout
    shapes: tuple[Shape, ...]
    nb: tuple[int, ...]  # per slot
    # every launch's configuration but its shape and nb (variants, kda0, blocks): who
    # polls a pair depends on it
    base: LaunchConfig

    def config(self, shape: int, slot: int) -> LaunchConfig:
        """The K1 launch at (shape, slot) of a step."""
        r, lng = self.shapes[shape]
        return replace(self.base, R=r, L=lng, nb=self.nb[slot])

    def pair(self, addr: int, shape: int, slot: int) -> str:
        region, index = locate(addr, self.config(shape, slot), self.layout)
        return f"{region.name}[{index}]"

    def reader(self, addr: int, shape: int, slot: int) -> str:
        """The CTA and stage (and kda task) that poll ``addr``, in words; "" without a
        poller."""
        cfg = self.config(shape, slot)
        region, index = locate(addr, cfg, self.layout)
        got = poller(cfg, region, index)
        if got is None:
            return ""
        cta, stage, task = got
        who = "whichever CTA takes its ticket" if cta is None else f"CTA {cta}"
        return f"{who} in {stage}" + (f", task {task}" if task >= 0 else "")


def k1_step_model(
    shapes: tuple[Shape, ...],
    nb_per_slot: tuple[int, ...],
    layout: Layout = Layout.FIXED,
    base: LaunchConfig | Mapping[str, Any] | None = None,
    *,
    mutate: Callable[[Launch], Launch] | None = None,
) -> StepModel:
    """The K1 step model: every launch of a step has the step's shape, slot s has nb[s],
    and the rest of its configuration (variants, kda0) from ``base``: a launch (its R, L
    and nb replaced), a mapping of those fields, or None for K1's defaults. The model
    keeps each launch's programs (``mutate``: a fault applied to every one of them), whose
    tag expressions the analysis reads."""
    if not isinstance(base, LaunchConfig):
        base = LaunchConfig(1, 1, **(base or {}))
    cfg0 = base

    def program(a: int, nb: int) -> Launch:
        r, lng = shapes[a]
        la = build_launch(replace(cfg0, R=r, L=lng, nb=nb))
        return la if mutate is None else mutate(la)

    def launch(a: int, nb: int) -> tuple[Intervals, Intervals]:
        shp = shapes[a]
        cfg = replace(base, R=shp[0], L=shp[1], nb=nb)
        try:
            cfg.validate()
        except InvalidInput as e:
            msg = f"shape {shp[0]}x{shp[1]} with nb = {nb}: {e}"
            raise InvalidInput(msg, what="shapes") from e
        return footprint(cfg, layout)

    names = tuple(f"{r}x{lng}" for r, lng in shapes)
    pairs = K1Pairs(layout, tuple(shapes), tuple(nb_per_slot), base)
    # K1's builder puts TAG_EXPR on every put, flag and poll (tests/checks/tags hold it
    # over its shapes and variants): unchanged programs need not be built to be read
    carries = frozenset({TAG_EXPR}) if mutate is None else None
    programs = ProgramSteps(TAG_EXPR, program, lambda la: addresses(la, layout), carries)
    return step_model(names, tuple(nb_per_slot), launch, pairs, programs)
