"""Checks over a host sequence (:mod:`kda_sim.host`): what only several launches show.

- a poll that passes on a pair whose tag an earlier launch or replay wrote (a replay
  froze the epoch argument, so the old tag is this launch's tag too);
- a wait on a counter that passes because an earlier launch left it non-zero (a ``>=``
  wait passes early), or hangs because of it (an ``==`` wait never holds again);
- two grids that together need more slots than the GPU has, deadlocked in the order
  they were placed;
- any other hang of a launch of the sequence, with the wait it is stuck in;
- a ticket loop whose counter an earlier launch left non-zero: its first take returns
  past items that then never run in this launch (the launch "finishes" having skipped
  its work, the silent form of a counter not cleared);
- grids run together (``a & b``) where one clears a word while the other may still wait
  on it or add to it (:mod:`kda_sim.checks.dataflow.resets` over the grids as one launch;
  launches of one stream are ordered by the kernel boundary, so only grids together
  race so).

Each finding names the launch or replay, the CTA, the word or pair, the launch that
wrote what was read, and a fix.
"""

from __future__ import annotations

import re

from kda_sim.checks.dataflow.naming import Namer
from kda_sim.checks.dataflow.resets import RESET_FIX, check_resets
from kda_sim.checks.findings import Category, Finding, Severity
from kda_sim.host.run import LaunchRun, SequenceRun
from kda_sim.protocol.access import accesses
from kda_sim.protocol.tickets import TicketLoop
from kda_sim.timeline.model import StuckWait


def _us(ns: float) -> str:
    return f"{ns / 1e3:.2f} us"


def _where(run: LaunchRun, cell: int) -> str:
    region, index = run.handoffs.launch.space.split(cell)
    return f"{region.name}[{index}]"


def _epoch_fix(region: str) -> str:
    return (
        "give every replay its own tag: update the captured launch's epoch argument before "
        "each replay (`replay update`) or have the kernel read its epoch from a device "
        f"counter it advances; or zero {region} inside the captured graph "
        f"(`launch zero={region}`), or have the kernel reset each pair once its poll has "
        "passed (a pair reset)"
    )


def _counter_fix(region: str) -> str:
    return (
        f"zero {region} before every launch inside the captured graph (`launch zero={region}`,"
        " a memset node), or have the kernel reset it once every waiter has passed"
    )


def stale_polls(run: LaunchRun) -> list[Finding]:
    """Polls that passed on a tag an earlier launch wrote, before (or without) this
    launch's own put of the pair."""
    final = run.result.final
    assert final is not None
    ho = run.handoffs
    out: list[Finding] = []
    seen: dict[str, Finding] = {}  # poll label -> its finding: one a poll of every CTA
    for sp in final.stale_polls:
        sat = sp.rec.satisfied
        if sat is None:
            continue
        early = []
        for cell in sp.cells.tolist():
            put_at = None
            if ho.put_count[cell] > 0:
                done = final.put_done.get((int(ho.put_cta[cell]), int(ho.put_op[cell])))
                put_at = done[0] if done is not None else None
            if put_at is None or sat < put_at:
                early.append((cell, put_at))
        if not early:
            continue
        if sp.label in seen:  # the same poll in another CTA: counted, not repeated
            seen[sp.label].details["ctas"] += 1
            continue
        cell, put_at = early[0]
        where = _where(run, cell)
        own = (
            f"this launch puts it only at {_us(put_at)}"
            if put_at is not None
            else "no CTA of this launch has put it"
        )
        region = where.split("[")[0]
        out.append(
            Finding(
                Category.STALE,
                Severity.FAIL,
                f"{run.label} (epoch {run.epoch}): {run.cta(sp.cta)} polls {sp.label} and "
                f"passes at {_us(sat)} on {where}, whose tag {run.epoch} was written by "
                f"{run.tag_from.get(cell, '?')}; {own} ({len(early)} of its pairs read "
                "before this launch wrote them)",
                _epoch_fix(region),
                {
                    "launch": run.index,
                    "label": run.label,
                    "cta": run.cta(sp.cta),
                    "pair": where,
                    "writer": run.tag_from.get(cell, "?"),
                    "satisfied_ns": sat,
                    "put_ns": put_at,
                    "ctas": 1,
                },
            )
        )
        seen[sp.label] = out[-1]
    for f in out:
        if f.details["ctas"] > 1:
            f.message += f"; the same poll passes early in {f.details['ctas']} CTAs"
    return out


def stale_waits(run: LaunchRun) -> list[Finding]:
    """Waits that passed on a counter value an earlier launch left."""
    final = run.result.final
    assert final is not None
    out = []
    for sw in final.stale_waits:
        where = _where(run, sw.cell)
        left = run.initial.words.get(sw.cell, 0)
        out.append(
            Finding(
                Category.STALE,
                Severity.FAIL,
                f"{run.label}: {run.cta(sw.cta)} waits {sw.label} on {where} and passes at "
                f"{_us(sw.satisfied)} reading {sw.seen}, {left} of which "
                f"{run.word_from.get(sw.cell, '?')} left: the counter was not zeroed for "
                "this launch, so the wait passes before this launch's arrivals",
                _counter_fix(where.split("[")[0]),
                {
                    "launch": run.index,
                    "label": run.label,
                    "cta": run.cta(sw.cta),
                    "word": where,
                    "left": left,
                    "writer": run.word_from.get(sw.cell, "?"),
                },
            )
        )
    return out


def _word_cell(run: LaunchRun, s: StuckWait) -> int | None:
    space = run.handoffs.launch.space
    if not s.region or s.region not in space.names or s.index < 0:
        return None
    return int(space.gid(space.names.index(s.region), s.index))


def _renumbered(run: LaunchRun, reason: str) -> str:
    """The engine's explanation with its CTAs named as the user numbers them (grids run
    together are numbered grid after grid in the engine)."""
    if len(run.grids) == 1:
        return reason
    return re.sub(r"\bCTA (\d+)", lambda m: run.cta(int(m[1])), reason)


def _shared_hang(
    run: LaunchRun,
    sizes: list[int],
    by_grid: list[str],
    first: StuckWait,
    spin: str,
    details: dict,
) -> Finding:
    """Grids of different footprints that share the units by footprint and, placed in this
    order, leave no unit with room for a CTA that the resident ones wait on."""
    unplaced = sum(1 for s in run.result.timeline.stuck if s.stage == "dispatch")
    room = first.reason.removeprefix("never became resident: ").split("; ")[0]
    spin = re.sub(r"; \d+ CTAs never became resident \(.*\)$", "", spin)
    return Finding(
        Category.DEADLOCK,
        Severity.FAIL,
        f"{run.label} hangs: grids of {' + '.join(map(str, sizes))} CTAs placed in this order "
        "do not fit together (they share each unit's threads, registers and LDS): "
        f"{unplaced} CTAs ({', '.join(sorted(set(by_grid)))}) never became resident, first "
        f"{run.cta(first.cta)}: {room}{spin}",
        "size the grids to fit together in either order (grids on separate streams are "
        "placed in no fixed order): fewer CTAs, or the small CTAs packed into fewer blocks "
        "so they take fewer units; or make no resident CTA wait on what a CTA without a "
        "place must do",
        {**details, "cta": run.cta(first.cta), "grids": sizes, "shared": True},
    )


def hang(run: LaunchRun) -> list[Finding]:
    """Why a launch of the sequence hangs: a counter an earlier launch left, two grids
    short of slots, or its own wait (said as the engine explains it)."""
    stuck = run.result.timeline.stuck
    if not run.result.deadlock or not stuck:
        return []
    res = run.result.residency
    details = {"launch": run.index, "label": run.label, "stuck_ctas": len(stuck)}
    for s in stuck:  # a wait on a word the launch found non-zero
        cell = _word_cell(run, s)
        if cell is not None and cell in run.initial.words:
            where = f"{s.region}[{s.index}]"
            left = run.initial.words[cell]
            return [
                Finding(
                    Category.DEADLOCK,
                    Severity.FAIL,
                    f"{run.label} hangs: {run.cta(s.cta)} {_renumbered(run, s.reason)}; "
                    f"{where} held {left} "
                    f"when the launch started, left by {run.word_from.get(cell, '?')} "
                    f"({len(stuck)} CTAs stuck)",
                    _counter_fix(s.region),
                    {
                        **details,
                        "cta": run.cta(s.cta),
                        "word": where,
                        "left": left,
                        "writer": run.word_from.get(cell, "?"),
                    },
                )
            ]
    unplaced = [s for s in stuck if s.stage == "dispatch"]
    if len(run.grids) > 1 and unplaced:
        sizes = [g.ctas for g in run.grids]
        waiting = next((s for s in stuck if s.stage != "dispatch"), None)
        by_grid = [run.cta(s.cta).split(" CTA")[0] for s in unplaced]
        first = unplaced[0]
        spin = (
            f"; resident {run.cta(waiting.cta)} {_renumbered(run, waiting.reason)}"
            if waiting is not None
            else ""
        )
        if res.shared:
            return [_shared_hang(run, sizes, by_grid, first, spin, details)]
        return [
            Finding(
                Category.DEADLOCK,
                Severity.FAIL,
                f"{run.label} hangs: grids of {' + '.join(map(str, sizes))} CTAs placed in "
                f"this order need {sum(sizes)} slots at once, the GPU holds {res.slots} "
                f"({res.per_unit} a unit, limited by {res.limited_by}): "
                f"{len(unplaced)} CTAs ({', '.join(sorted(set(by_grid)))}) never became "
                f"resident, first {run.cta(first.cta)}{spin}",
                f"size the grids to fit together: at most {res.slots} CTAs in all, now "
                f"{sum(sizes)} (fewer CTAs in one grid), or make no resident CTA wait on "
                "what a CTA without a slot must do",
                {**details, "cta": run.cta(first.cta), "slots": res.slots, "grids": sizes},
            )
        ]
    s = stuck[0]
    where = f" on {s.region}[{s.index}]" if s.region else ""
    return [
        Finding(
            Category.DEADLOCK,
            Severity.FAIL,
            f"{run.label} hangs: {run.cta(s.cta)} in {s.stage}{where}: "
            f"{_renumbered(run, s.reason)} "
            f"({len(stuck)} CTAs stuck)",
            "the launch hangs on its own: `kda-sim check` without --sequence explains it",
            {**details, "cta": run.cta(s.cta)},
        )
    ]


def skipped_items(run: LaunchRun) -> list[Finding]:
    """Ticket loops whose counter started non-zero: the items below the value left were
    taken by no CTA of this launch (each ticket is taken once), so they never ran."""
    out: list[Finding] = []
    seen: set[int] = set()
    for prog in run.handoffs.launch.programs:
        for op in prog.ops:
            if not isinstance(op, TicketLoop) or op.cell in seen:
                continue
            seen.add(op.cell)
            left = run.initial.words.get(op.cell, 0)
            if left <= 0:
                continue
            where = _where(run, op.cell)
            skipped = min(left, op.n_items)
            out.append(
                Finding(
                    Category.STALE,
                    Severity.FAIL,
                    f"{run.label}: the ticket counter {where} of loop {op.label} held {left} "
                    f"when the launch started, left by {run.word_from.get(op.cell, '?')}: "
                    f"the first take returns {left}, so items 0..{skipped - 1} of "
                    f"{op.n_items} never run in this launch (it finishes without their "
                    "work, and what they write keeps the earlier launch's data)",
                    _counter_fix(where.split("[")[0])
                    + "; or clear it in the kernel by the CTA that takes the last ticket",
                    {
                        "launch": run.index,
                        "label": run.label,
                        "word": where,
                        "left": left,
                        "items": op.n_items,
                        "skipped": skipped,
                        "writer": run.word_from.get(op.cell, "?"),
                    },
                )
            )
    return out


def grid_races(run: LaunchRun) -> list[Finding]:
    """Grids run together: a clear in one grid that a wait or an add of another grid is
    not ordered with (a clear at the end of one launch racing the next launch's first
    arrivals, where the host does not order the two)."""
    if len(run.grids) < 2:
        return []

    def grid(cta: int | None) -> int | None:
        if cta is None:
            return None
        return next(i for i, g in enumerate(run.grids) if g.first <= cta < g.first + g.ctas)

    launch = run.handoffs.launch
    acc = accesses(launch)
    out = []
    for f in check_resets(acc, Namer(acc, launch.cfg)):
        clearer = f.details.get("clearer")
        if not clearer:
            continue  # a last-ticket clear: its grid is whichever takes the last ticket
        others = {grid(s["cta"]) for s in f.details["waiters"] + f.details["adds"]}
        if not others - {grid(clearer["cta"]), None}:
            continue  # within one grid: the launch's own check says it
        out.append(
            Finding(
                Category.RESET_RACE,
                Severity.FAIL,
                f"{run.label}: {_renumbered(run, f.message)}",
                "order the grids (one stream, or the second waiting on an event the first "
                f"records) or give each grid its own word; within a grid: {RESET_FIX}",
                {**f.details, "launch": run.index, "label": run.label},
            )
        )
    return out


def check_sequence(seq: SequenceRun) -> list[Finding]:
    """Every finding of every launch of the sequence, in launch order."""
    out: list[Finding] = []
    for run in seq.runs:
        out += skipped_items(run) + stale_polls(run) + stale_waits(run) + hang(run)
        out += grid_races(run)
    return out
