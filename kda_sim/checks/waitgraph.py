"""The wait-for structure of a launch, from the protocol data alone.

A CTA blocks only on polls (loads, stores and barriers always complete), so its progress
is one number: how many of its polls it has passed (its *level*). A put op of CTA d has
happened once d is resident and its level is at least the number of polls before the put
in d's program. Every poll is therefore a list of requirements ``(d, level)`` (one per
producer CTA: the highest level it needs of it).

The requirements are kept flat (CSR arrays over every poll site of the launch, CTA by
CTA), so the fixpoint in :mod:`kda_sim.checks.deadlock_static` evaluates all CTAs at
once. A kernel whose placements only move task segments between CTAs says so (its
``task_rotation`` hook; K1's kda0: a launch with kda0 = k runs on CTA c the tasks that
CTA (c - k) mod blocks runs with kda0 = 0): such a launch is a relabelling of the base
structure, not a new protocol build.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from typing import Any

import numpy as np

from kda_sim.kernels.registry import spec_for
from kda_sim.kernels.spec import hook
from kda_sim.protocol.handoffs import Handoffs, derived, handoffs_of
from kda_sim.protocol.ops import Begin, Poll
from kda_sim.protocol.program import Launch
from kda_sim.protocol.space import RegionRef


@dataclass(frozen=True)
class SiteInfo:
    """What names a poll site (its place in ``WaitGraph.launch``)."""

    src: tuple[int, int]  # (CTA, op index) in WaitGraph.launch
    stage: str
    task: int
    label: str
    unput: tuple[RegionRef, int] | None  # a pair nobody in this launch puts (never satisfied)


@dataclass(frozen=True)
class PollSite:
    cta: int
    ordinal: int  # polls before it in the CTA's program
    info: SiteInfo
    need_cta: np.ndarray = field(repr=False)
    need_level: np.ndarray = field(repr=False)

    @property
    def stage(self) -> str:
        return self.info.stage

    @property
    def task(self) -> int:
        return self.info.task

    @property
    def label(self) -> str:
        return self.info.label

    @property
    def unput(self) -> tuple[RegionRef, int] | None:
        return self.info.unput


@dataclass(frozen=True, eq=False)
class WaitGraph:
    cfg: Any  # the kernel's configuration
    launch: Launch  # the programs the sites point into (the base's for a relabelled graph)
    handoffs: Handoffs
    site_start: np.ndarray = field(repr=False)  # [blocks + 1]: CTA c's sites
    req_ptr: np.ndarray = field(repr=False)  # [sites + 1]: a site's requirements
    req_cta: np.ndarray = field(repr=False)
    req_level: np.ndarray = field(repr=False)
    unput: np.ndarray = field(repr=False)  # [sites]: waits on a pair nobody puts
    info: tuple[SiteInfo, ...] = field(repr=False)  # per site
    poll_ops: tuple[tuple[int, ...], ...] = field(repr=False)  # per CTA of launch: poll ops
    n_role: np.ndarray = field(repr=False)  # per CTA of launch: polls of its role work
    shift: int = 0  # CTAs cfg's task segments sit on from launch.cfg's (task_rotation)

    @property
    def blocks(self) -> int:
        return len(self.site_start) - 1

    def n_polls(self) -> np.ndarray:
        return np.diff(self.site_start)

    def site(self, cta: int, j: int) -> PollSite:
        s = int(self.site_start[cta]) + j
        lo, hi = int(self.req_ptr[s]), int(self.req_ptr[s + 1])
        return PollSite(cta, j, self.info[s], self.req_cta[lo:hi], self.req_level[lo:hi])

    @cached_property
    def polls(self) -> tuple[tuple[PollSite, ...], ...]:
        """Every site, per CTA in program order (for inspection; the checks use the arrays)."""
        n = self.n_polls()
        return tuple(tuple(self.site(c, j) for j in range(n[c])) for c in range(self.blocks))

    def missing_pair(self, site: PollSite, done: np.ndarray) -> tuple[RegionRef, int, int]:
        """A pair of ``site`` whose put has not happened, given per-CTA levels reached
        (``done[d]``: the level CTA d reached, -1 if it never became resident):
        (region, index, producer CTA or -1)."""
        ho = self.handoffs
        op = self.launch.programs[site.info.src[0]].ops[site.info.src[1]]
        assert isinstance(op, Poll)
        space = self.launch.space
        for g in op.cells:
            d = int(ho.put_cta[g])
            if d < 0:
                r, i = space.split(int(g))
                return r, i, -1
            lvl = bisect.bisect_left(self.poll_ops[d], int(ho.put_op[g]))
            nd, nl = self._moved(d, lvl)
            if done[nd] < nl:
                r, i = space.split(int(g))
                return r, i, nd
        r, i = space.split(int(op.cells[0]))
        return r, i, self._moved(int(ho.put_cta[op.cells[0]]), 0)[0]

    def _moved(self, d: int, level: int) -> tuple[int, int]:
        """A requirement (CTA, level) of ``launch`` in this graph's CTA numbering."""
        if not self.shift:
            return d, level
        n_role = self.n_role
        if level <= n_role[d]:
            return d, level
        nd = (d + self.shift) % self.blocks
        return nd, level - int(n_role[d]) + int(n_role[nd])


def _poll_ops(launch: Launch, cta: int) -> tuple[int, ...]:
    return tuple(k for k, op in enumerate(launch.programs[cta].ops) if isinstance(op, Poll))


def _role_polls(launch: Launch) -> np.ndarray:
    """Per CTA, the polls of its role work (before its first task: a Begin with a task)."""
    counts = []
    for p in launch.programs:
        c = 0
        for op in p.ops:
            if isinstance(op, Begin) and op.task >= 0:
                break
            c += isinstance(op, Poll)
        counts.append(c)
    return np.array(counts, dtype=np.int64)


def build_waitgraph(launch: Launch, handoffs: Handoffs | None = None) -> WaitGraph:
    """The wait-for structure of ``launch`` (any launch: mutants included)."""
    ho = handoffs if handoffs is not None else derived(launch)
    poll_ops = tuple(_poll_ops(launch, c) for c in range(len(launch.programs)))
    space = launch.space
    n_role = _role_polls(launch)
    span = 1 << 24  # op indices of a CTA stay below this
    # every poll op of the launch as one sorted key, so a put's level (polls before it in
    # its CTA) is a searchsorted away for all producers at once
    pkeys = np.concatenate(
        [np.asarray(ops, dtype=np.int64) + c * span for c, ops in enumerate(poll_ops)]
        + [np.zeros(0, dtype=np.int64)]
    )
    first = np.searchsorted(pkeys, np.arange(len(poll_ops), dtype=np.int64) * span)
    starts = [0]
    site_of: list[int] = []
    pd: list[int] = []
    pk: list[int] = []
    unput: list[bool] = []
    info: list[SiteInfo] = []
    for prog in launch.programs:
        stage, task = "start", -1
        for k, op in enumerate(prog.ops):
            if isinstance(op, Begin):
                stage, task = op.stage, op.task
            if not isinstance(op, Poll):
                continue
            prods = ho.producers[(prog.cta, k)]
            site_of += [len(info)] * len(prods)
            pd += [a for a, _ in prods]
            pk += [b for _, b in prods]
            lost = op.cells[ho.put_count[op.cells] == 0]
            unput.append(bool(lost.size))
            info.append(
                SiteInfo(
                    (prog.cta, k),
                    stage,
                    task,
                    op.label,
                    space.split(int(lost[0])) if lost.size else None,
                )
            )
        starts.append(len(info))
    site = np.asarray(site_of, dtype=np.int64)
    d = np.asarray(pd, dtype=np.int64)
    lv = np.searchsorted(pkeys, d * span + np.asarray(pk, dtype=np.int64)) - first[d]
    # one requirement a site, producer CTA and segment (its role work, its tasks): the
    # highest level needed; segments stay apart because a task rotation moves a CTA's
    # tasks to another CTA and leaves its role work
    seg = (lv > n_role[d]).astype(np.int64)
    order = np.lexsort((-lv, seg, d, site))
    site, d, lv, seg = site[order], d[order], lv[order], seg[order]
    keep = np.ones(site.size, dtype=bool)
    keep[1:] = (site[1:] != site[:-1]) | (d[1:] != d[:-1]) | (seg[1:] != seg[:-1])
    site, d, lv = site[keep], d[keep], lv[keep]
    ptr = np.concatenate([[0], np.cumsum(np.bincount(site, minlength=len(info)))])
    return WaitGraph(
        launch.cfg,
        launch,
        ho,
        np.array(starts, dtype=np.int64),
        ptr.astype(np.int64),
        d,
        lv.astype(np.int64),
        np.array(unput, dtype=bool),
        tuple(info),
        poll_ops,
        n_role,
    )


@lru_cache(maxsize=96)
def _base(cfg0: Any) -> WaitGraph:
    return build_waitgraph(handoffs_of(cfg0).launch, handoffs_of(cfg0))


def waitgraph_of(cfg: Any) -> WaitGraph:
    """The wait-for structure of the launch the kernel builds for ``cfg`` (cached; a
    configuration the kernel's ``task_rotation`` maps to a base is a relabelling of the
    base's structure, see the module doc)."""
    spec = spec_for(cfg)
    spec.validate(cfg)
    rotation = hook(spec, "task_rotation")
    moved = rotation(cfg) if rotation is not None else None
    if moved is None:
        return _base(cfg)
    cfg0, shift = moved
    return relabel_tasks(_base(cfg0), cfg, shift)


def _ranges(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """The concatenation of lo[i] .. hi[i] - 1."""
    lens = hi - lo
    if not lens.sum():
        return np.zeros(0, dtype=np.int64)
    starts = np.repeat(lo - np.concatenate([[0], np.cumsum(lens)[:-1]]), lens)
    return starts + np.arange(lens.sum())


def relabel_tasks(g0: WaitGraph, cfg: Any, shift: int) -> WaitGraph:
    """Move g0's task segments ``shift`` CTAs on: the structure of ``cfg``, whose launch
    is g0's with its tasks so moved (K1: kda0 = shift, g0 built with kda0 = 0).

    A put at a level above its CTA's role polls is a task's (a kernel with a task rotation
    has every task poll before it puts: K1's k.conv polls PROJ first), so levels say which
    segment a put is in."""
    b, k = g0.blocks, shift
    n_role = g0.n_role
    if not (n_role <= g0.n_polls()).all():
        raise AssertionError("role polls past a CTA's polls")
    new_of = (np.arange(b) + k) % b
    src = (np.arange(b) - k) % b
    start0 = g0.site_start
    # CTA c: its own role sites, then the task sites of CTA c - k in g0
    role_lo, role_hi = start0[:-1], start0[:-1] + n_role
    task_lo, task_hi = start0[:-1][src] + n_role[src], start0[1:][src]
    both_lo = np.stack([role_lo, task_lo], 1).ravel()
    both_hi = np.stack([role_hi, task_hi], 1).ravel()
    perm = _ranges(both_lo, both_hi)  # new site -> old site
    counts = (role_hi - role_lo) + (task_hi - task_lo)
    site_start = np.concatenate([[0], np.cumsum(counts)])
    rlo, rhi = g0.req_ptr[perm], g0.req_ptr[perm + 1]
    ridx = _ranges(rlo, rhi)
    d, lv = g0.req_cta[ridx], g0.req_level[ridx]
    is_task = lv > n_role[d]
    req_cta = np.where(is_task, new_of[d], d)
    req_level = np.where(is_task, lv - n_role[d] + n_role[new_of[d]], lv)
    req_ptr = np.concatenate([[0], np.cumsum(rhi - rlo)])
    return WaitGraph(
        cfg,
        g0.launch,
        g0.handoffs,
        site_start,
        req_ptr,
        req_cta,
        req_level,
        g0.unput[perm],
        tuple(g0.info[i] for i in perm.tolist()),
        g0.poll_ops,
        g0.n_role,
        shift=k,
    )
