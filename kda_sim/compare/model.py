"""A real trace read against the model's program: which recorded event is which op,
and the hand-offs (put -> poll) the model says the launch has, with time bounds.

A trace need not record every op: stamps record only stage ends, our kernel's trace
stages and polls but no puts. So every op of a CTA's program gets bounds from the
events that *are* recorded: an op happens no earlier than the last recorded event
before it in program order and no later than the first after it. A poll's
satisfaction and a put are exact where recorded, else bounded that way. The
causality the clock fit and the conformance check use is

    put of the producer (>= its lower bound)  <=  poll satisfied (<= its upper bound)

in true time, for every (poll, producer put) pair of the static hand-off graph.
"""

from __future__ import annotations

import copy
import operator
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np

from kda_sim.errors import InvalidInput
from kda_sim.kernels.registry import get
from kda_sim.kernels.spec import hook
from kda_sim.protocol.branches import OnOld
from kda_sim.protocol.handoffs import Handoffs, handoffs_of
from kda_sim.protocol.ops import Begin, End
from kda_sim.protocol.records import recorded
from kda_sim.protocol.space import CellSpace
from kda_sim.protocol.tickets import TicketLoop, takes_of
from kda_sim.timeline.model import (
    CellRange,
    CtaTrack,
    LoadSpan,
    PollRecord,
    PutRecord,
    StageSpan,
    Timeline,
)


def config_of(tl: Timeline) -> Any:
    """The trace's launch configuration; a ticket launch whose trace kept its takes
    (``meta.extra['ticket_takes']``) with its items placed on the CTAs that took them (the
    kernel's ``place_takes`` hook), so the model's programs are the run's."""
    m = tl.meta
    spec = get(m.kernel)
    try:
        cfg = spec.validate(m.config())
        records = m.extra.get("ticket_takes") if isinstance(m.extra, dict) else None
        place = hook(spec, "place_takes")
        if records and place is not None and not getattr(cfg, "placed", ()):
            blocks = len(spec.build(cfg).programs)
            cfg = place(cfg, takes_of(records, blocks, "meta.extra.ticket_takes"))
            spec.build(cfg)  # the takes are a run of the loop, or InvalidInput says why not
        return cfg
    except InvalidInput as e:
        raise InvalidInput(f"the trace's configuration: {e}", what=e.what) from e


@dataclass
class Mismatch:
    """A recorded event the model's program has no place for (or in another order)."""

    cta: int
    kind: str  # "stage" | "poll" | "put"
    what: str
    detail: str


@dataclass
class CtaView:
    """One CTA's program with the trace's times laid on it."""

    cta: int
    lb: np.ndarray  # [n ops] earliest time each op can have happened (trace clock)
    ub: np.ndarray  # latest time (inf: nothing recorded after it)
    poll_rec: dict[int, int] = field(default_factory=dict)  # op index -> trace poll index
    put_rec: dict[int, int] = field(default_factory=dict)  # op index -> trace put index
    stage_order: list[tuple[str, int]] = field(default_factory=list)  # the model's


@dataclass
class Edges:
    """Every (producer put, consumer poll) pair of the launch, as arrays."""

    prod: np.ndarray  # producer CTA
    prod_op: np.ndarray
    cons: np.ndarray  # consumer CTA
    cons_op: np.ndarray
    put_lb: np.ndarray  # trace clock of the producer
    sat_ub: np.ndarray  # trace clock of the consumer
    exact: np.ndarray  # bool: both ends were recorded (not bounds)

    def __len__(self) -> int:
        return int(self.prod.size)


@dataclass
class ModelView:
    cfg: Any  # the kernel's configuration
    handoffs: Handoffs
    views: list[CtaView]
    edges: Edges
    mismatches: list[Mismatch]


def _match(
    model: list[tuple[int, tuple[str, int, str]]], trace: list[tuple[int, tuple[str, int, str]]]
) -> tuple[dict[int, int], list[int]]:
    """Model op -> trace record, by (stage, task, label) and occurrence; unmatched records."""
    by_key: dict[tuple[str, int, str], list[int]] = defaultdict(list)
    for k, key in model:
        by_key[key].append(k)
    used: dict[tuple[str, int, str], int] = defaultdict(int)
    out: dict[int, int] = {}
    extra: list[int] = []
    for i, key in trace:
        n = used[key]
        ks = by_key.get(key, [])
        if n < len(ks):
            out[ks[n]] = i
            used[key] += 1
        else:
            extra.append(i)
    return out, extra


def _record_keys(
    k: int,
    op: Any,
    at: tuple[str, int],
    space: CellSpace,
    polls: list[tuple[int, tuple[str, int, str]]],
    puts: list[tuple[int, tuple[str, int, str]]],
) -> None:
    """Op ``k``'s records as the engine makes them (:func:`recorded`), keyed (stage,
    task, label or region)."""
    rec = recorded(op)
    if rec is None:
        return
    kind, n = rec
    if kind == "poll":
        polls += [(k, (*at, op.label))] * n
    else:
        puts += [(k, (*at, space.name(op.region)))] * n


def cta_view(prog_ops: tuple, track: CtaTrack, mism: list[Mismatch], space: CellSpace) -> CtaView:
    n = len(prog_ops)
    lo = np.full(n, np.nan)  # recorded time just before / at the op
    hi = np.full(n, np.nan)  # recorded time just after / at the op
    stage, task = "", -1
    model_polls: list[tuple[int, tuple[str, int, str]]] = []
    model_puts: list[tuple[int, tuple[str, int, str]]] = []
    begins: dict[tuple[str, int], int] = {}
    ends: dict[tuple[str, int], int] = {}
    order: list[tuple[str, int]] = []
    for k, op in enumerate(prog_ops):
        if isinstance(op, Begin):
            stage, task = op.stage, op.task
            begins[(stage, task)] = k
            order.append((stage, task))
        elif isinstance(op, End):
            ends[(op.stage, op.task)] = k
        else:
            # a branch on an atomic's old value: either branch's ops may be recorded
            for sub in op.then + op.orelse if isinstance(op, OnOld) else (op,):
                _record_keys(k, sub, (stage, task), space, model_polls, model_puts)
    spans = {(s.name, s.task): s for s in track.stages}
    for key, s in spans.items():
        if key not in begins:
            mism.append(
                Mismatch(
                    track.cta,
                    "stage",
                    f"{key[0]} (task {key[1]})",
                    "not in the model's program for this CTA",
                )
            )
            continue
        lo[begins[key]] = hi[begins[key]] = s.start
        lo[ends[key]] = hi[ends[key]] = s.end
    pmap, pextra = _match(
        model_polls, [(i, (p.stage, p.task, p.label)) for i, p in enumerate(track.polls)]
    )
    for i in pextra:
        p = track.polls[i]
        mism.append(
            Mismatch(
                track.cta,
                "poll",
                f"poll {p.label} in {p.stage} (task {p.task})",
                "a poll the model's program does not have",
            )
        )
    for k, i in pmap.items():
        p = track.polls[i]
        hi[k] = np.nan if p.satisfied is None else p.satisfied  # the poll's end
        lo[k] = p.first_issue
    umap, uextra = _match(
        model_puts, [(i, (u.stage, u.task, u.region)) for i, u in enumerate(track.puts)]
    )
    for i in uextra:
        u = track.puts[i]
        mism.append(
            Mismatch(
                track.cta,
                "put",
                f"put {u.region} in {u.stage} (task {u.task})",
                "a put the model's program does not have",
            )
        )
    for k, i in umap.items():
        lo[k] = hi[k] = track.puts[i].time
    # bounds from the neighbours in program order: the CTA's start / end close the ends
    start = -np.inf if track.start is None else track.start
    end = np.inf if track.end is None else track.end
    before = np.fmax.accumulate(np.concatenate([[start], np.where(np.isnan(hi), -np.inf, hi)]))[:-1]
    lb = np.where(np.isnan(lo), before, lo)
    # a recorded poll's satisfaction is its hi; an unrecorded op is before the next record
    ub = np.where(np.isnan(hi), _next_after(lo, end), hi)
    return CtaView(track.cta, lb, ub, dict(pmap), dict(umap), order)


def _next_after(lo: np.ndarray, end: float) -> np.ndarray:
    """For each op, the earliest recorded time of a later op (or the CTA's end)."""
    src = np.where(np.isnan(lo), np.inf, lo)
    out = np.empty_like(src)
    m = end
    for k in range(src.size - 1, -1, -1):
        out[k] = m
        m = min(m, src[k])
    return out


def model_view(tl: Timeline) -> ModelView:
    cfg = config_of(tl)
    ho = handoffs_of(cfg)
    progs = ho.launch.programs
    if len(progs) != len(tl.ctas):
        raise InvalidInput(
            f"{len(tl.ctas)} CTA tracks, the configuration has {len(progs)}", what="blocks"
        )
    if any(isinstance(op, TicketLoop) for p in progs for op in p.ops):
        # the model's ops are (CTA, op) of static programs; which CTA ran which item of a
        # ticket loop is known only from the run: config_of places them where the trace
        # recorded its takes, and this trace recorded none
        raise InvalidInput(
            f"{tl.meta.kernel}: a launch whose work is taken from a ticket counter is "
            "compared with the model only where its trace records which CTA took which "
            "ticket (meta.extra['ticket_takes']) and the kernel can place them (its "
            "place_takes hook); this one does not; simulate it, check it, or view it in "
            "the app",
            what="ticket loop",
        )
    mism: list[Mismatch] = []
    views = [cta_view(progs[b].ops, tl.ctas[b], mism, ho.launch.space) for b in range(len(progs))]
    rows: list[tuple[int, int, int, int]] = []
    for (c, k), prods in ho.producers.items():
        for p, kp in prods:
            rows.append((p, kp, c, k))
    arr = np.array(rows, dtype=np.int64).reshape(-1, 4)
    put_lb = np.array([views[p].lb[kp] for p, kp, _, _ in rows], dtype=float)
    sat_ub = np.array([views[c].ub[k] for _, _, c, k in rows], dtype=float)
    exact = np.array(
        [kp in views[p].put_rec and k in views[c].poll_rec for p, kp, c, k in rows], dtype=bool
    )
    edges = Edges(arr[:, 0], arr[:, 1], arr[:, 2], arr[:, 3], put_lb, sat_ub, exact)
    return ModelView(cfg, ho, views, edges, mism)


def _copier(cls: type) -> Callable[[Any], Any]:
    """A shallow copy of a record of ``cls`` (a dataclass of slots): its constructor given
    every field, a seventh of ``copy.copy``'s time and a thirtieth of ``deepcopy``'s, which
    took half the preparing of a trace for a fit (bench/README.md, issue 40)."""
    get = operator.attrgetter(*(f.name for f in fields(cls)))
    return lambda r: cls(*get(r))


_STAGE, _POLL, _PUT, _LOAD, _CELL, _TRACK, _TIMELINE = map(
    _copier, (StageSpan, PollRecord, PutRecord, LoadSpan, CellRange, CtaTrack, Timeline)
)


def _shifted_track(c: CtaTrack, d: float) -> CtaTrack:
    """A copy of ``c``, every record new, its times less ``d`` (none moved where it is 0)."""
    out = _TRACK(c)
    out.stages = [_STAGE(s) for s in c.stages]
    out.polls = [_POLL(p) for p in c.polls]
    for p in out.polls:
        p.cells = [_CELL(x) for x in p.cells]
    out.puts = [_PUT(u) for u in c.puts]
    out.loads = [_LOAD(ld) for ld in c.loads]
    if d == 0.0:
        return out
    if out.start is not None:
        out.start -= d
    if out.end is not None:
        out.end -= d
    for s in out.stages:
        s.start -= d
        s.end -= d
    for p in out.polls:
        p.first_issue -= d
        if p.satisfied is not None:
            p.satisfied -= d
    for u in out.puts:
        u.time -= d
    for ld in out.loads:
        ld.issue -= d
        if ld.done is not None:
            ld.done -= d
    return out


def shifted(tl: Timeline, offset_of_cta: np.ndarray) -> Timeline:
    """A copy with every time of CTA b moved by ``-offset_of_cta[b]`` (true = observed - offset).
    Every record is new (the copy shares no mutable object with ``tl``)."""
    offs = [float(v) for v in offset_of_cta]
    out = _TIMELINE(tl)
    out.meta, out.stuck = copy.deepcopy(tl.meta), copy.deepcopy(tl.stuck)
    out.ctas = [_shifted_track(c, offs[c.cta]) for c in tl.ctas]
    # a poll's put_time is on its producer's clock
    for c in out.ctas:
        for p in c.polls:
            if p.put_time is not None and p.producer is not None:
                p.put_time -= offs[p.producer]
    return out


def op_stage(prog_ops: tuple, k: int) -> tuple[str, int]:
    """The (stage, task) op ``k`` runs in ("", -1) before the first stage)."""
    stage, task = "", -1
    for op in prog_ops[: k + 1]:
        if isinstance(op, Begin):
            stage, task = op.stage, op.task
    return stage, task
