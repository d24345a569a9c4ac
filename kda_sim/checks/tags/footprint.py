"""Which scratch pairs each launch of a step writes and polls, grouped into classes.

A step is a sequence of launches in slot order sharing one scratch buffer. A kernel's
``tag_model`` hook says, for each step shape and each slot parameter (``nb``), which
buffer addresses the launch puts and which it polls (its *footprint*, as address
intervals); :func:`step_model` groups the addresses every launch treats alike into
*classes* (the analysis reasons per class, not per pair): a :class:`StepModel` holds, per
step shape and slot, which classes the launch puts (``writes``) and which it polls
(``polls``). The kernel also names a class's pairs and the CTA that polls one
(:class:`PairNames`); an abstract model (the tests', the exhaustive search's) has none.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Protocol

import numpy as np

from kda_sim.errors import InvalidInput
from kda_sim.kernels.spec import TagModel, require_hook
from kda_sim.protocol.program import Launch
from kda_sim.protocol.tagexpr import TagExpr

Intervals = list[tuple[int, int]]  # [lo, hi) buffer addresses (pair indices)


# what a kernel without the hook lacks, as the refusal says it
TAG_MODEL_NEED = "the tag check: its tag and the pairs each launch of a step writes and polls"


def tag_model(spec: Any) -> TagModel:
    """The kernel's tag check (its ``tag_model`` hook), or ``InvalidInput`` naming the
    kernel and what it lacks."""
    return require_hook(spec, "tag_model", TAG_MODEL_NEED)


class Layout(StrEnum):
    """How the launches of a step place their regions in the one scratch buffer."""

    FIXED = "fixed"  # each region at one address for every shape (sized for the largest)
    PACKED = "packed"  # regions back to back with each launch's own extents


def merge(ivs: Intervals) -> Intervals:
    """Sorted, with touching or overlapping intervals joined."""
    out: Intervals = []
    for lo, hi in sorted(ivs):
        if out and lo <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], hi))
        elif hi > lo:
            out.append((lo, hi))
    return out


def runs(a: np.ndarray) -> Intervals:
    """Sorted addresses as intervals of consecutive ones."""
    if a.size == 0:
        return []
    brk = np.flatnonzero(np.diff(a) != 1)
    starts = np.concatenate([[a[0]], a[brk + 1]])
    ends = np.concatenate([a[brk], [a[-1]]]) + 1
    return [(int(s), int(e)) for s, e in zip(starts, ends, strict=True)]


@dataclass(frozen=True)
class ProgramSteps:
    """The programs behind a step model, where the kernel's ops carry tag expressions
    (:mod:`kda_sim.checks.tags.programs` reads them): ``launch(shape, nb)`` the launch at a
    step shape (its index) with slot parameter ``nb``; ``address(launch)`` each of its
    cells' buffer address (-1: not a pair); ``shipped`` the kernel's own tag, which a
    scheme asked about replaces; ``carries``: the expressions the kernel's own builder
    puts on every launch's ops, where it says so (its tests hold it), so that a step of
    unchanged programs is not built only to read them (None: build and read them)."""

    shipped: TagExpr
    launch: Callable[[int, int], Launch]
    address: Callable[[Launch], np.ndarray]
    carries: frozenset[TagExpr | None] | None = None


class PairNames(Protocol):
    """A kernel's words for the buffer addresses of a step model."""

    def pair(self, addr: int, shape: int, slot: int) -> str:
        """The pair at ``addr`` as the launch at (shape, slot) addresses it: "PART[3]"."""

    def reader(self, addr: int, shape: int, slot: int) -> str:
        """The CTA and stage that poll ``addr`` in that launch, in words ("" unknown)."""


@dataclass(frozen=True)
class StepModel:
    """Per step shape and slot, the classes of pairs the launch writes and polls."""

    shapes: tuple[str, ...]
    nb: tuple[int, ...]  # per slot (the kernel's slot parameter; an abstract model: 0)
    writes: np.ndarray = field(repr=False)  # bool [shape, slot, class]
    polls: np.ndarray = field(repr=False)  # bool [shape, slot, class]
    sizes: np.ndarray = field(repr=False)  # pairs a class
    rep: np.ndarray = field(repr=False)  # a representative buffer address a class
    names: PairNames | None = None  # the kernel's words; None: an abstract model
    programs: ProgramSteps | None = None  # the launches' programs; None: not read

    @property
    def slots(self) -> int:
        return self.writes.shape[1]

    @property
    def classes(self) -> int:
        return self.writes.shape[2]

    def pair(self, cls: int, shape: int, slot: int) -> str:
        """The pair a class stands for, named as the launch at (shape, slot) addresses it."""
        if self.names is None:
            return f"cell {cls}"
        return self.names.pair(int(self.rep[cls]), shape, slot)

    def reader(self, cls: int, shape: int, slot: int) -> str:
        """Who polls the class's pair in the launch at (shape, slot); "" where unknown."""
        if self.names is None:
            return ""
        return self.names.reader(int(self.rep[cls]), shape, slot)


Footprint = Callable[[int, int], tuple[Intervals, Intervals]]  # (shape, nb) -> (puts, polls)


def step_model(
    shapes: Sequence[str],
    nb_per_slot: tuple[int, ...],
    footprint: Footprint,
    names: PairNames | None = None,
    programs: ProgramSteps | None = None,
) -> StepModel:
    """The step model of launches whose (puts, polls) at step shape ``a`` with slot
    parameter ``nb`` are ``footprint(a, nb)`` (asked once each, shape by shape, in
    increasing ``nb``; it raises ``InvalidInput`` for a launch that cannot exist)."""
    if not nb_per_slot:
        raise InvalidInput("at least one launch slot", what="slots")
    combos: dict[tuple[int, int], tuple[Intervals, Intervals]] = {}
    for a in range(len(shapes)):
        for nb in sorted(set(nb_per_slot)):
            combos[(a, nb)] = footprint(a, nb)
    keys = list(combos)
    bp = sorted({x for w, p in combos.values() for lo, hi in w + p for x in (lo, hi)})
    bpa = np.asarray(bp, dtype=np.int64)
    n_el = max(len(bp) - 1, 0)
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
    for a in range(len(shapes)):
        for s, nb in enumerate(nb_per_slot):
            i = index[(a, nb)]
            writes[a, s] = w_cls[i]
            polls[a, s] = p_cls[i]
    return StepModel(tuple(shapes), tuple(nb_per_slot), writes, polls, sizes, rep, names, programs)
