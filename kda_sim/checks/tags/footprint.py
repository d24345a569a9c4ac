"""Which scratch pairs each launch of a step writes and polls.

A step is a sequence of launches in slot order sharing one scratch buffer; the pairs a
launch touches follow from its shape (R, L), its nb and the scratch layout. Pairs that
every launch treats alike are grouped into *classes* (the analysis reasons per class, not
per pair): a :class:`StepModel` holds, per step shape and slot, which classes the launch
puts (``writes``) and which it polls (``polls``).

The scratch layout is a reading (the seed does not say how ``c["part"]``, ``c["wgt"]`` ...
are placed in ``scratch``):

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

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum
from functools import lru_cache
from typing import Any

import numpy as np

from kda_sim.errors import InvalidInput
from kda_sim.kernels.k1.config import LaunchConfig
from kda_sim.kernels.k1.constants import BETA_0, NH, NPROJ
from kda_sim.kernels.k1.pollers import poller
from kda_sim.kernels.k1.regions import MAILBOXES, Region, extents
from kda_sim.protocol.handoffs import Handoffs
from kda_sim.protocol.space import CellSpace

Intervals = list[tuple[int, int]]  # [lo, hi) buffer addresses (pair indices)


class Layout(StrEnum):
    FIXED = "fixed"
    PACKED = "packed"


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


def merge(ivs: Intervals) -> Intervals:
    """Sorted, with touching or overlapping intervals joined."""
    out: Intervals = []
    for lo, hi in sorted(ivs):
        if out and lo <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], hi))
        elif hi > lo:
            out.append((lo, hi))
    return out


def footprint_from_handoffs(
    ho: Handoffs, layout: Layout = Layout.FIXED
) -> tuple[Intervals, Intervals]:
    """The same, read from a launch's programs (exact for any launch, mutants included)."""
    cfg = ho.launch.cfg
    space = ho.launch.space
    b = bases(cfg, layout)
    put = np.flatnonzero(ho.put_count > 0)
    polled = ho.polled_cells()

    def addrs(gids: np.ndarray) -> np.ndarray:
        reg = space.region_of(gids)
        keep = reg != Region.X
        gids, reg = gids[keep], reg[keep]
        off = np.asarray(space.offsets)[reg]
        base = np.array([b[Region(int(r))] for r in range(len(Region) - 1)] + [0])[reg]
        return np.sort(gids - off + base)

    return _runs(addrs(put)), _runs(addrs(polled))


def _runs(a: np.ndarray) -> Intervals:
    if a.size == 0:
        return []
    brk = np.flatnonzero(np.diff(a) != 1)
    starts = np.concatenate([[a[0]], a[brk + 1]])
    ends = np.concatenate([a[brk], [a[-1]]]) + 1
    return [(int(s), int(e)) for s, e in zip(starts, ends, strict=True)]


Shape = tuple[int, int]  # (R, L)


@dataclass(frozen=True)
class StepModel:
    """Per step shape and slot, the classes of pairs the launch writes and polls."""

    shapes: tuple[str, ...]
    nb: tuple[int, ...]  # per slot (the K1 reading; an abstract model may leave it 0)
    writes: np.ndarray = field(repr=False)  # bool [shape, slot, class]
    polls: np.ndarray = field(repr=False)  # bool [shape, slot, class]
    sizes: np.ndarray = field(repr=False)  # pairs a class
    rep: np.ndarray = field(repr=False)  # a representative buffer address a class
    layout: Layout | None = None
    shape_dims: tuple[Shape, ...] = ()
    # every launch's configuration but its shape and nb (variants, kda0, blocks): who
    # polls a pair depends on it
    base: LaunchConfig = field(default_factory=lambda: LaunchConfig(1, 1))

    @property
    def slots(self) -> int:
        return self.writes.shape[1]

    @property
    def classes(self) -> int:
        return self.writes.shape[2]

    def pair(self, cls: int, shape: int, slot: int) -> str:
        """The pair a class stands for, named as the launch at (shape, slot) addresses it."""
        if self.layout is None:
            return f"cell {cls}"
        region, index = locate(int(self.rep[cls]), self.config(shape, slot), self.layout)
        return f"{region.name}[{index}]"

    def config(self, shape: int, slot: int) -> LaunchConfig:
        """The K1 launch at (shape, slot) of a step."""
        r, lng = self.shape_dims[shape]
        return replace(self.base, R=r, L=lng, nb=self.nb[slot])


def k1_step_model(
    shapes: tuple[Shape, ...],
    nb_per_slot: tuple[int, ...],
    layout: Layout = Layout.FIXED,
    base: LaunchConfig | Mapping[str, Any] | None = None,
) -> StepModel:
    """The K1 step model: every launch of a step has the step's shape, slot s has nb[s],
    and the rest of its configuration (variants, kda0) from ``base``: a launch (its R, L
    and nb replaced), a mapping of those fields (for callers that do not import K1), or
    None for K1's defaults."""
    if not nb_per_slot:
        raise InvalidInput("at least one launch slot", what="slots")
    if not isinstance(base, LaunchConfig):
        base = LaunchConfig(1, 1, **(base or {}))
    combos: dict[tuple[Shape, int], tuple[Intervals, Intervals]] = {}
    for shp in shapes:
        for nb in sorted(set(nb_per_slot)):
            cfg = replace(base, R=shp[0], L=shp[1], nb=nb)
            try:
                cfg.validate()
            except InvalidInput as e:
                msg = f"shape {shp[0]}x{shp[1]} with nb = {nb}: {e}"
                raise InvalidInput(msg, what="shapes") from e
            combos[(shp, nb)] = footprint(cfg, layout)
    keys = list(combos)
    bp = sorted({x for w, p in combos.values() for lo, hi in w + p for x in (lo, hi)})
    bpa = np.asarray(bp, dtype=np.int64)
    n_el = len(bp) - 1
    mem_w = np.zeros((len(keys), n_el), dtype=bool)
    mem_p = np.zeros((len(keys), n_el), dtype=bool)
    for i, k in enumerate(keys):
        w, p = combos[k]
        for mem, ivs in ((mem_w, w), (mem_p, p)):
            for lo, hi in ivs:
                mem[i, np.searchsorted(bpa, lo) : np.searchsorted(bpa, hi)] = True
    used = mem_w.any(0) | mem_p.any(0)
    sig = np.concatenate([mem_w, mem_p])[:, used]
    size_el = np.diff(bpa)[used]
    start_el = bpa[:-1][used]
    # pairs with the same membership everywhere behave alike: one class
    _, first, inv = np.unique(sig.T, axis=0, return_index=True, return_inverse=True)
    inv = inv.reshape(-1)
    n_cls = len(first)
    sizes = np.bincount(inv, weights=size_el, minlength=n_cls).astype(np.int64)
    rep = start_el[first]
    w_cls = mem_w[:, used][:, first]
    p_cls = mem_p[:, used][:, first]
    index = {k: i for i, k in enumerate(keys)}
    n_slots = len(nb_per_slot)
    writes = np.zeros((len(shapes), n_slots, n_cls), dtype=bool)
    polls = np.zeros_like(writes)
    for a, shp in enumerate(shapes):
        for s, nb in enumerate(nb_per_slot):
            i = index[(shp, nb)]
            writes[a, s] = w_cls[i]
            polls[a, s] = p_cls[i]
    names = tuple(f"{r}x{lng}" for r, lng in shapes)
    return StepModel(
        names, tuple(nb_per_slot), writes, polls, sizes, rep, layout, tuple(shapes), base
    )


def reader_of(model: StepModel, shape: int, slot: int, addr: int) -> str:
    """The CTA and stage (and kda task) that poll buffer address ``addr`` in the launch of
    step shape ``shape`` at ``slot``, in words; "" without a layout or a poller."""
    if model.layout is None:
        return ""
    cfg = model.config(shape, slot)
    region, index = locate(addr, cfg, model.layout)
    got = poller(cfg, region, index)
    if got is None:
        return ""
    cta, stage, task = got
    who = "whichever CTA takes its ticket" if cta is None else f"CTA {cta}"
    return f"{who} in {stage}" + (f", task {task}" if task >= 0 else "")
