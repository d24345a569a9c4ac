"""Deadlock freedom without time: the wait-for structure with residency.

Progress is monotone (a put, once done, stays done; a resident CTA keeps its slot until
it ends) and the dispatcher is deterministic, so whether a launch finishes does not depend
on latencies: the fixpoint below (advance every resident CTA past every poll whose puts
have happened, retire finished CTAs, dispatch in order while the block's XCD has a free
slot) reaches the one final state every timing reaches. The engine models the same rules
with time; the two are the two independent methods the checks compare.

Residency follows the engine's dispatcher: block b goes to XCD b mod xcds, an XCD holds
``per_unit x units / xcds`` CTAs, and in-order dispatch stalls at the first block whose
XCD is full.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from kda_sim.checks.findings import Category, Finding, Severity
from kda_sim.checks.waitgraph import PollSite, WaitGraph, _ranges, waitgraph_of
from kda_sim.kernels.registry import spec_for
from kda_sim.kernels.spec import hook
from kda_sim.machine.profile import GpuProfile
from kda_sim.machine.residency import Residency, residency
from kda_sim.text import ordinal

IN_ORDER = "in-order block dispatch"
ANY_ORDER = "any dispatch order"


@dataclass(frozen=True)
class Slots:
    """How many CTAs each XCD holds at once, and why."""

    per_unit: int
    units: int
    xcds: int
    unit_name: str
    limited_by: str

    @property
    def per_xcd(self) -> int:
        return self.per_unit * (self.units // self.xcds)

    @property
    def total(self) -> int:
        return self.per_unit * self.units

    @classmethod
    def of(cls, prof: GpuProfile, res: Residency) -> Slots:
        return cls(res.per_unit, prof.units, prof.xcds, prof.unit_name, res.limited_by)

    def describe(self) -> str:
        return (
            f"{self.total} slots ({self.per_unit} a {self.unit_name} x {self.units}"
            f"{f' on {self.xcds} XCDs' if self.xcds > 1 else ''}, limited by {self.limited_by})"
        )


@dataclass
class Fixpoint:
    level: np.ndarray  # polls passed, per CTA
    resident: np.ndarray  # became resident
    finished: np.ndarray
    order: tuple[int, ...]
    dispatched: int  # blocks of ``order`` that got a slot

    @property
    def finishes(self) -> bool:
        return bool(self.finished.all())

    def done(self) -> np.ndarray:
        """Per CTA, the level its puts have reached (-1: never resident)."""
        return np.where(self.resident, self.level, -1)


def run_fixpoint(g: WaitGraph, slots: Slots, order: tuple[int, ...]) -> Fixpoint:
    """Rounds over every active CTA at once: a CTA passes its current poll when every
    requirement holds (the producer is resident and has reached the level of its put);
    finished CTAs free their slot and the dispatcher goes on in order."""
    b = g.blocks
    n_polls = g.n_polls()
    level = np.zeros(b, dtype=np.int64)
    resident = np.zeros(b, dtype=bool)
    finished = np.zeros(b, dtype=bool)
    free = np.full(slots.xcds, slots.per_xcd, dtype=np.int64)
    nxt = 0
    while True:
        moved = False
        while nxt < len(order):
            c = order[nxt]
            x = c % slots.xcds
            if free[x] == 0:
                break
            free[x] -= 1
            resident[c] = True
            nxt += 1
            moved = True
        active = resident & ~finished
        done = np.flatnonzero(active & (level == n_polls))
        if done.size:
            finished[done] = True
            np.add.at(free, done % slots.xcds, 1)
            moved = True
        act = np.flatnonzero(active & (level < n_polls))
        if act.size:
            sid = g.site_start[act] + level[act]
            lo, hi = g.req_ptr[sid], g.req_ptr[sid + 1]
            idx = _ranges(lo, hi)
            d = g.req_cta[idx]
            unmet = ~(resident[d] & (level[d] >= g.req_level[idx]))
            owner = np.repeat(np.arange(act.size), hi - lo)
            blocked = np.bincount(owner, weights=unmet, minlength=act.size) > 0
            adv = act[~blocked & ~g.unput[sid]]
            if adv.size:
                level[adv] += 1
                moved = True
        if not moved:
            break
    return Fixpoint(level, resident, finished, tuple(order), nxt)


@dataclass
class StaticVerdict:
    finishes: bool | None  # None: not decided (any order, no witness found, not proved)
    assumption: str
    findings: list[Finding] = field(default_factory=list)
    stuck: tuple[int, ...] = ()  # CTAs that never finish
    order: tuple[int, ...] | None = None  # the dispatch order the verdict is for
    note: str = ""


def _where(site: PollSite) -> str:
    task = f" (task {site.task})" if site.task >= 0 else ""
    return f"{site.stage}{task}"


def explain(g: WaitGraph, fp: Fixpoint, slots: Slots, start: int) -> tuple[str, dict]:
    """The wait-for chain from CTA ``start``: who waits on whom, down to a CTA that is not
    resident, a pair no CTA puts, or a cycle."""
    done = fp.done()
    links: list[dict] = []
    seen: list[int] = []
    c = start
    end = ""
    while True:
        seen.append(c)
        site = g.site(c, int(fp.level[c]))
        if site.unput is not None:
            r, i = site.unput
            links.append(_link(c, site, r.name, i, None))
            end = (
                f"no CTA of this launch puts {r.name}[{i}] (the put is missing or writes "
                f"another index)"
            )
            break
        r, i, d = g.missing_pair(site, done)
        links.append(_link(c, site, r.name, i, d))
        if d == c:
            end = f"CTA {d} puts it later in its own program (it waits on itself)"
            break
        if not fp.resident[d]:
            x = d % slots.xcds
            holders = [h for h in fp.order[: fp.dispatched] if h % slots.xcds == x]
            holders = [h for h in holders if not fp.finished[h]]
            pos = fp.order.index(d) - fp.dispatched + 1
            held = (
                f"the {slots.per_xcd} slots of its XCD {x} ({slots.describe()})"
                if slots.xcds > 1
                else f"all {slots.describe()}"
            )
            end = (
                f"CTA {d} is not resident: {held} are held by CTAs that wait "
                f"({_ids(holders)}); it is {ordinal(pos)} in the dispatch queue"
            )
            break
        if d in seen:
            end = f"CTA {d} waits on this chain already (a cycle)"
            break
        c = d
    parts = []
    for n, lk in enumerate(links):
        who = f"CTA {lk['cta']} waits" if n == 0 else "waits"
        by = "" if lk["producer"] is None else f", put by CTA {lk['producer']}"
        parts.append(
            f"{who} in {lk['where']} on {lk['region']}[{lk['index']}] for this launch's tag{by}"
        )
    text = ", which ".join(parts)
    return f"{text}; {end}", {"chain": links, "end": end}


def _link(c: int, site: PollSite, region: str, index: int, d: int | None) -> dict:
    return {
        "cta": c,
        "stage": site.stage,
        "task": site.task,
        "where": _where(site),
        "poll": site.label,
        "region": region,
        "index": index,
        "producer": d,
    }


def _ids(ctas: list[int]) -> str:
    if not ctas:
        return "none"
    runs: list[str] = []
    lo = prev = ctas[0]
    for c in [*ctas[1:], None]:
        if c is not None and c == prev + 1:
            prev = c
            continue
        runs.append(f"{lo}" if lo == prev else f"{lo}..{prev}")
        if c is not None:
            lo = prev = c
    return ", ".join(runs[:6]) + (", ..." if len(runs) > 6 else "")


def slots_for(cfg: Any, prof: GpuProfile, occupancy: int | None) -> Slots:
    return Slots.of(prof, residency(cfg, prof, occupancy))


def check_static(
    g: WaitGraph,
    slots: Slots,
    order: tuple[int, ...] | None = None,
    *,
    assumption: str = IN_ORDER,
) -> StaticVerdict:
    order = tuple(range(g.blocks)) if order is None else tuple(order)
    fp = run_fixpoint(g, slots, order)
    if fp.finishes:
        return StaticVerdict(True, assumption, order=order)
    stuck = tuple(int(c) for c in np.flatnonzero(~fp.finished))
    first = next((c for c in order if fp.resident[c] and not fp.finished[c]), None)
    if first is None:  # nothing resident is stuck: an empty XCD (no slots at all)
        msg = f"no CTA can become resident: {slots.describe()}"
        f = Finding(Category.DEADLOCK, Severity.FAIL, msg, "more occupancy", {"stuck": len(stuck)})
        return StaticVerdict(False, assumption, [f], stuck, order)
    chain, details = explain(g, fp, slots, first)
    details.update(
        stuck=len(stuck),
        resident=int(fp.resident.sum()),
        slots=slots.total,
        assumption=assumption,
    )
    waiting = sum(1 for c in stuck if fp.resident[c])
    msg = (
        f"deadlock under {assumption}: {len(stuck)} CTAs never finish ({waiting} resident "
        f"and waiting, {len(stuck) - waiting} never dispatched: no slot frees for them). "
        f"{chain}"
    )
    f = Finding(Category.DEADLOCK, Severity.FAIL, msg, "", details)
    return StaticVerdict(False, assumption, [f], stuck, order)


def suggest_fix(cfg: Any, prof: GpuProfile, slots: Slots, verdict: StaticVerdict) -> str:
    """Options that make the launch the kernel builds for ``cfg`` finish: more occupancy
    (with what it would take), or another placement of the kernel's (its
    ``placement_fixes`` hook, tried in its order)."""
    spec = spec_for(cfg)
    opts: list[str] = []
    g0 = waitgraph_of(cfg)
    need = -(-g0.blocks // slots.units)
    for occ in range(slots.per_unit + 1, need + 1):
        s2 = replace(slots, per_unit=occ, limited_by="--occupancy")
        if check_static(g0, s2, verdict.order).finishes:
            need_lds = ""
            if slots.limited_by == "LDS":
                need_lds = (
                    f": at most {prof.lds_per_unit // occ} B of LDS a CTA, now "
                    f"{spec.resources(cfg, prof).lds_bytes} B"
                )
            # --occupancy past what the build's resources allow is refused: a resource
            # limit is lifted by a build that takes less, a chosen occupancy by the flag
            how = (
                f"--occupancy {occ}"
                if slots.limited_by.startswith("--occupancy")
                else f"a build whose {slots.limited_by} allow it"
            )
            opts.append(
                f"more occupancy: {occ} CTAs a {slots.unit_name} ({occ * slots.units} slots; "
                f"now {slots.per_unit}, limited by {slots.limited_by}{need_lds}: {how})"
            )
            break
    placements = hook(spec, "placement_fixes")
    for other, knob, setting in placements(cfg, slots.total) if placements is not None else ():
        if check_static(waitgraph_of(other), slots, verdict.order).finishes:
            opts.append(f"another {knob}: {setting} finishes with {slots.total} slots")
            break
    return "; or ".join(opts)


def any_order(g: WaitGraph, slots: Slots, in_order: StaticVerdict | None = None) -> StaticVerdict:
    """Deadlock freedom for every dispatch order.

    If every XCD holds all of its blocks, order cannot matter (proved). Otherwise an
    adversary fills one XCD with CTAs that need a block of that XCD it has not dispatched;
    the candidates tried are the producers the most polls wait on. A witness found is a
    deadlock (the order is given). None found, a launch with at most a few CTAs more than
    its slots is decided over every set of CTAs an order can hold out
    (:mod:`kda_sim.checks.held_out`); beyond that the verdict stays open, said so and why.
    ``in_order``: the in-order verdict, reused where order cannot matter."""
    b = g.blocks
    per_xcd = np.bincount(np.arange(b) % slots.xcds, minlength=slots.xcds)
    if (per_xcd <= slots.per_xcd).all():
        if in_order is not None and in_order.order == tuple(range(b)):
            v = replace(
                in_order,
                assumption=ANY_ORDER,
                findings=[
                    replace(f, message=f.message.replace(IN_ORDER, ANY_ORDER))
                    for f in in_order.findings
                ],
            )
        else:
            v = check_static(g, slots, assumption=ANY_ORDER)
        v.note = "every CTA is co-resident: no dispatch order can change the outcome"
        return v
    # the producers the most poll sites wait on
    weight = np.bincount(g.req_cta, minlength=b)
    for x in np.flatnonzero(per_xcd > slots.per_xcd):
        on_x = [c for c in range(b) if c % slots.xcds == x]
        for victim in sorted(on_x, key=lambda c: -weight[c])[:3]:
            rest = [c for c in on_x if c != victim]
            others = [c for c in range(b) if c % slots.xcds != x]
            order = (*rest, victim, *others)
            v = check_static(g, slots, order, assumption=ANY_ORDER)
            if not v.finishes:
                where = f" of XCD {x}" if slots.xcds > 1 else ""
                v.note = f"witness order: the other blocks{where} first, then CTA {victim}"
                return v
    # a few CTAs more than slots: every set the orders can hold out is tried
    from kda_sim.checks.held_out import decide

    ho = decide(g, slots)
    if ho.finishes:
        return StaticVerdict(True, ANY_ORDER, order=tuple(range(b)), note=ho.why)
    if ho.order is not None:
        v = check_static(g, slots, ho.order, assumption=ANY_ORDER)
        v.note = f"witness order: {ho.why}"
        return v
    return StaticVerdict(
        None,
        ANY_ORDER,
        note="not every CTA is co-resident and no adversarial order was found: not "
        f"proved ({ho.why})",
    )
