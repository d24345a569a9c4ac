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
from functools import cached_property
from itertools import chain
from typing import Any

import numpy as np

from kda_sim.kernels.registry import spec_for
from kda_sim.kernels.spec import hook
from kda_sim.memo import memo
from kda_sim.protocol.handoffs import Handoffs, OpRef, derived, handoffs_of, op_index
from kda_sim.protocol.ops import Poll
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
class SiteColumns:
    """What names each site, a list a field: the :class:`SiteInfo` objects are made
    from it when first asked for (:attr:`WaitGraph.info`). A launch that finishes is
    never asked to name a site, and making them cost more than the rest of the graph
    (K1 R=4 L=2: 2,237 sites, about 3 ms)."""

    src: list[OpRef]
    stage: list[str]
    task: list[int]
    label: list[str]
    unput: dict[int, tuple[RegionRef, int]]  # site -> the first of its pairs nobody puts

    def infos(self) -> tuple[SiteInfo, ...]:
        lost = self.unput
        return tuple(
            SiteInfo(src, stage, task, label, lost.get(i))
            for i, (src, stage, task, label) in enumerate(
                zip(self.src, self.stage, self.task, self.label, strict=True)
            )
        )

    def permuted(self, perm: list[int]) -> SiteColumns:
        """The columns of sites ``perm`` (new site -> old site)."""
        where = {old: new for new, old in enumerate(perm)}
        return SiteColumns(
            [self.src[i] for i in perm],
            [self.stage[i] for i in perm],
            [self.task[i] for i in perm],
            [self.label[i] for i in perm],
            {where[i]: v for i, v in self.unput.items() if i in where},
        )


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
    sites: SiteColumns = field(repr=False)  # per site: what names it (``info``)
    poll_ops: tuple[tuple[int, ...], ...] = field(repr=False)  # per CTA of launch: poll ops
    n_role: np.ndarray = field(repr=False)  # per CTA of launch: polls of its role work
    shift: int = 0  # CTAs cfg's task segments sit on from launch.cfg's (task_rotation)

    @property
    def blocks(self) -> int:
        return len(self.site_start) - 1

    def n_polls(self) -> np.ndarray:
        return np.diff(self.site_start)

    @cached_property
    def info(self) -> tuple[SiteInfo, ...]:
        """Per site, what names it (made on first use)."""
        return self.sites.infos()

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


@dataclass(frozen=True)
class _OpsAt:
    """Where a launch's polls and stage begins are: global op numbers (programs'
    ops end to end), each op's program and index in it. From the hand-off table's index
    of the ops (:class:`OpIndex`, each op's class found by its type in C: a Python loop
    over K1's 20k ops was most of the graph's cost), made again where the table has none
    of this launch."""

    ops: list[Any]  # every op of every program, in order
    start: np.ndarray  # [programs + 1]: a program's first global op number
    polls: np.ndarray  # global op numbers of the polls
    poll_prog: np.ndarray  # each poll's program
    begins: np.ndarray  # global op numbers of the Begins

    @classmethod
    def of(cls, launch: Launch, ho: Handoffs) -> _OpsAt:
        index = ho.ops if ho.ops is not None and ho.launch is launch else op_index(launch)
        polls = index.polls()
        poll_prog = np.searchsorted(index.start, polls, side="right") - 1
        return cls(index.ops, index.start, polls, poll_prog, index.begins())


def _role_polls(at: _OpsAt, site_start: np.ndarray) -> np.ndarray:
    """Per CTA, the polls of its role work (before its first task: a Begin with a task)."""
    ops = at.ops
    tasked = at.begins[[ops[i].task >= 0 for i in at.begins.tolist()]]
    n_role = np.diff(site_start)  # a CTA without a task: every poll is its role's
    if tasked.size:
        prog = np.searchsorted(at.start, tasked, side="right") - 1
        firsts = np.ones(prog.size, dtype=bool)
        firsts[1:] = prog[1:] != prog[:-1]  # the first tasked Begin of each program
        prog, tasked = prog[firsts], tasked[firsts]
        n_role[prog] = np.searchsorted(at.polls, tasked) - site_start[prog]
    return n_role


def _stages(at: _OpsAt) -> tuple[list[str], list[int]]:
    """Each poll's stage and task: the last Begin before it in its program's ops
    (``start`` and -1 before the first)."""
    ops = at.ops
    stage = ["start"] * at.polls.size
    task = [-1] * at.polls.size
    if not at.begins.size:
        return stage, task
    j = np.searchsorted(at.begins, at.polls) - 1  # the Begin before each poll
    b = at.begins[np.maximum(j, 0)]
    ok = (j >= 0) & (b >= at.start[at.poll_prog])  # in the poll's own program
    at_op = b.tolist()
    for i in np.flatnonzero(ok).tolist():
        op = ops[at_op[i]]
        stage[i] = op.stage
        task[i] = op.task
    return stage, task


def _requirements(ho: Handoffs, refs: list[OpRef]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each poll's producers (``ho.producers`` of ``refs``, the launch's program polls in
    order) as flat arrays: site, producer CTA, producer op. The producers are the same
    for polls of one cell set (``ho.poll_set``), so they are read once a set."""
    n = len(refs)
    of = np.asarray(ho.poll_set[:n], dtype=np.int64)
    if [r for r, _ in ho.polls[:n]] != refs:  # not derived from these programs' polls
        raise AssertionError("hand-off table of another launch")
    n_sets = len(ho.cell_sets)
    rep = np.full(n_sets, -1, dtype=np.int64)
    rep[of] = np.arange(n)  # a poll of each set (any: they have the same producers)
    per_set = [ho.producers[refs[i]] if i >= 0 else () for i in rep.tolist()]
    lens = np.fromiter(map(len, per_set), dtype=np.int64, count=n_sets)
    ptr = np.zeros(n_sets + 1, dtype=np.int64)
    np.cumsum(lens, out=ptr[1:])
    flat = list(chain.from_iterable(per_set))
    set_d = np.fromiter((a for a, _ in flat), dtype=np.int64, count=len(flat))
    set_k = np.fromiter((b for _, b in flat), dtype=np.int64, count=len(flat))
    idx = _ranges(ptr[of], ptr[of + 1])
    site = np.repeat(np.arange(n, dtype=np.int64), lens[of])
    return site, set_d[idx], set_k[idx]


def build_waitgraph(launch: Launch, handoffs: Handoffs | None = None) -> WaitGraph:
    """The wait-for structure of ``launch`` (any launch: mutants included)."""
    ho = handoffs if handoffs is not None else derived(launch)
    at = _OpsAt.of(launch, ho)
    space = launch.space
    span = 1 << 24  # op indices of a CTA stay below this
    blocks = len(launch.programs)
    counts = np.bincount(at.poll_prog, minlength=blocks)
    site_start = np.zeros(blocks + 1, dtype=np.int64)
    np.cumsum(counts, out=site_start[1:])
    poll_k = at.polls - at.start[at.poll_prog]  # each poll's index in its program
    ks = poll_k.tolist()
    bounds = site_start.tolist()
    poll_ops = tuple(tuple(ks[bounds[c] : bounds[c + 1]]) for c in range(blocks))
    ctas = [p.cta for p in launch.programs]
    refs = [(ctas[c], k) for c, k in zip(at.poll_prog.tolist(), ks, strict=True)]
    n_role = _role_polls(at, site_start)
    # every poll op of the launch as one sorted key, so a put's level (polls before it in
    # its CTA) is a searchsorted away for all producers at once
    pkeys = poll_k + at.poll_prog * span
    first = site_start[:-1]
    site, d, pk = _requirements(ho, refs)
    stage, task = _stages(at)
    ops = at.ops
    polls = [ops[g] for g in at.polls.tolist()]
    unput: list[bool] = [ho.unput[r] for r in refs]
    lost: dict[int, tuple[RegionRef, int]] = {}
    for i in [i for i, u in enumerate(unput) if u]:
        cells = polls[i].cells
        lost[i] = space.split(int(cells[ho.put_count[cells] == 0][0]))
    sites = SiteColumns(refs, stage, task, [op.label for op in polls], lost)
    lv = np.searchsorted(pkeys, d * span + pk) - first[d]
    # one requirement a site, producer CTA and segment (its role work, its tasks): the
    # highest level needed; segments stay apart because a task rotation moves a CTA's
    # tasks to another CTA and leaves its role work
    seg = (lv > n_role[d]).astype(np.int64)
    order = np.lexsort((-lv, seg, d, site))
    site, d, lv, seg = site[order], d[order], lv[order], seg[order]
    keep = np.ones(site.size, dtype=bool)
    keep[1:] = (site[1:] != site[:-1]) | (d[1:] != d[:-1]) | (seg[1:] != seg[:-1])
    site, d, lv = site[keep], d[keep], lv[keep]
    ptr = np.concatenate([[0], np.cumsum(np.bincount(site, minlength=len(refs)))])
    return WaitGraph(
        launch.cfg,
        launch,
        ho,
        site_start,
        ptr.astype(np.int64),
        d,
        lv.astype(np.int64),
        np.array(unput, dtype=bool),
        sites,
        poll_ops,
        n_role,
    )


@memo(96)
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
        g0.sites.permuted(perm.tolist()),
        g0.poll_ops,
        g0.n_role,
        shift=k,
    )
