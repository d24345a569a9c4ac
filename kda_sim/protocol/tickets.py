"""A ticket loop: a CTA takes items from a counter until they run out.

Each turn is an atomic add of 1 on the ticket word; the old value is the item, run when
it is below the number of items, else the loop ends. Which CTA runs which item is
decided while the launch runs, but what item ``i`` does is data: ``bodies[i]``, which
the checks enumerate for every ``i``.

A body hands off through counter and flag words (:mod:`kda_sim.protocol.counters`) or
through (value, tag) pairs. A pair's producer is an op known when the launch is built: a
(CTA, op) of a program, or, for a put in a body, the op of an item (:func:`item_ref`):
an item runs exactly once, whichever CTA takes it, so ``(loop, item, op)`` names one put
as ``(CTA, op)`` does, and the hand-off graph (:func:`kda_sim.protocol.handoffs.derive`)
keeps its one-producer-a-pair shape. A body may not publish (a flag after plain stores
names the CTA that drains), nest a loop, nor branch on an atomic's old value.

A loop built with ``takers`` (the CTAs that run it) resets its counter in the CTA that
takes the last ticket, ``n_items + takers - 1`` (every taker ends on one ticket past the
items), as vLLM's Kimi-K3 mono MoE launch clears its ticket counter for the next launch;
``clears`` names further words that CTA zeroes then (that launch's top-k and m-block
counters). The last ticket is taken only once every taker has found the queue empty, so
every item has finished: no item of the launch can still wait on a cleared word.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kda_sim.errors import InvalidInput

if TYPE_CHECKING:
    from kda_sim.protocol.counters import Reset
    from kda_sim.protocol.ops import Op
    from kda_sim.protocol.program import CtaProgram, Launch


@dataclass(frozen=True, slots=True)
class TicketLoop:
    label: str
    region: int  # the ticket counter's region
    cell: int  # the ticket counter's global id
    bodies: tuple[tuple[Op, ...], ...]  # item i -> its ops
    into: str = "ticket"  # the register that holds the item while its body runs
    takers: int = 0  # CTAs that run the loop; > 0: the last ticket's taker resets the counter
    clears: tuple[Reset, ...] = ()  # further words the last ticket's taker zeroes
    # copies of the item code a CTA's first takes run before the loop's own (0: the loop's
    # one copy for every item): a CTA's items 1 .. unrolled each run code the CTA has not
    # run yet, and pay cold_code as a program's second task does
    unrolled: int = 0

    @property
    def n_items(self) -> int:
        return len(self.bodies)

    @property
    def last_ticket(self) -> int:
        """The ticket whose taker resets the counter, -1 where none does."""
        return self.n_items + self.takers - 1 if self.takers > 0 else -1


@dataclass(frozen=True, slots=True)
class TakeAhead:
    """The CTA's next take of the ticket counter ``cell`` issued here, before the ops that
    follow it, without waiting for its return: the CTA's next take of that counter (its
    loop's first turn, or a placed take) waits for this one's return instead of issuing
    its own, and its item starts at the later of that return and the CTA's own time there.
    A kernel that hands its ticket to the CTA only where the index is first used (the
    issuing warp not the one that drains the role's last hand-off) overlaps the round trip
    with the ops between; what is taken and in which order is the loop's as before (one
    take a turn), so the checks read the loop alone. Only in a CTA's program, before a
    take of the same counter (``check_words``)."""

    region: int  # the ticket counter's region
    cell: int  # the ticket counter's global id


# an item's op as a hand-off producer or poller: (ITEM_CTA0 - loop number, item x
# BODY_SPAN + op), a "CTA" no program has, so it never meets a (CTA, op) of a program
ITEM_CTA0 = -2
BODY_SPAN = 1 << 10  # ops a body, at most
MAX_ITEMS = 1 << 14  # items a loop, at most (item x BODY_SPAN stays below handoffs' span)


def item_ref(loop_no: int, item: int, index: int) -> tuple[int, int]:
    """The hand-off reference of op ``index`` of item ``item`` of the launch's loop number
    ``loop_no`` (see :func:`kda_sim.protocol.handoffs.derive`)."""
    return ITEM_CTA0 - loop_no, item * BODY_SPAN + index


def split_ref(ref: tuple[int, int]) -> tuple[int, int, int] | None:
    """(loop number, item, op) of an item's reference, None for a (CTA, op)."""
    if ref[0] > ITEM_CTA0:
        return None
    return ITEM_CTA0 - ref[0], ref[1] // BODY_SPAN, ref[1] % BODY_SPAN


def ticket_loop(
    label: str,
    region: int,
    cell: int,
    n_items: int,
    body: Callable[[int], Sequence[Op]],
    takers: int = 0,
    clears: Sequence[Reset] = (),
    unrolled: int = 0,
) -> TicketLoop:
    """The loop over ``n_items`` items, ``body(i)`` the ops of item ``i``; with ``takers``
    (the CTAs that run it) the last ticket's taker resets the counter and the words of
    ``clears``. A body that publishes a flag or nests a loop is refused, as are sizes past
    the references', and ``clears`` without takers (nobody would know it took the last)."""
    from kda_sim.protocol.branches import OnOld
    from kda_sim.protocol.ops import Publish

    if not 0 <= n_items <= MAX_ITEMS:
        raise InvalidInput(f"{label}: {n_items} items, at most {MAX_ITEMS}", what="ticket loop")
    if takers < 0:
        raise InvalidInput(f"{label}: takers = {takers}, at least 0", what="ticket loop")
    if clears and takers == 0:
        raise InvalidInput(
            f"{label}: clears words but takers = 0: the last ticket is n_items + takers - 1",
            what="ticket loop",
        )
    bodies = tuple(tuple(body(i)) for i in range(n_items))
    for i, ops in enumerate(bodies):
        if len(ops) > BODY_SPAN:
            raise InvalidInput(
                f"{label}: item {i} has {len(ops)} ops, at most {BODY_SPAN}", what="ticket loop"
            )
        for k, op in enumerate(ops):
            if isinstance(op, Publish | TicketLoop | OnOld | TakeAhead):
                raise InvalidInput(
                    f"{label}: item {i}, op {k} is a {type(op).__name__}: an item hands off "
                    "through puts, polls and counter or flag words; a flag after plain "
                    "stores, a nested loop, a branch or a take ahead is not modelled in a "
                    "body",
                    what="ticket loop",
                )
    if unrolled < 0:
        raise InvalidInput(f"{label}: unrolled = {unrolled}, at least 0", what="ticket loop")
    return TicketLoop(
        label, region, cell, bodies, takers=takers, clears=tuple(clears), unrolled=unrolled
    )


@dataclass(frozen=True, slots=True)
class Site:
    """Where an op is: a CTA's program (item -1) or item ``item``'s body of the loop at
    op ``loop`` of CTA ``cta``; ``index`` is its place in that sequence."""

    cta: int
    item: int
    index: int
    loop: int = -1
    branch: int = 0  # in a branch on an atomic's old value (branches.THEN, ORELSE), 0 not
    cond: str = ""  # the branch's condition, as the site is named

    def text(self) -> str:
        where = f"op {self.index}, {self.cond}" if self.cond else f"op {self.index}"
        return f"item {self.item} ({where})" if self.item >= 0 else f"CTA {self.cta} ({where})"


def walk(prog: CtaProgram, walked: set[int] | None = None) -> Iterator[tuple[Site, Op]]:
    """Every op of ``prog``, the bodies of its ticket loops (each item once) included.
    ``walked``: the counters of the loops whose bodies were walked already (every CTA of
    a queue runs the same loop; its items are each one, whoever runs them), added to."""
    from kda_sim.protocol.branches import OnOld

    for k, op in enumerate(prog.ops):
        yield Site(prog.cta, -1, k), op
        if isinstance(op, OnOld):  # either branch may run: both, at the branch's place
            for b, sub in op.branches():
                yield Site(prog.cta, -1, k, branch=b, cond=op.cond(b)), sub
        if isinstance(op, TicketLoop) and (walked is None or op.cell not in walked):
            if walked is not None:
                walked.add(op.cell)
            for i, ops in enumerate(op.bodies):
                for j, sub in enumerate(ops):
                    yield Site(prog.cta, i, j, k), sub


def check_words(launch: Launch) -> None:
    """Every word a counter op names (a ticket loop's bodies and clears included), and
    every pair a pair reset names, is a cell of its region, and every take issued ahead
    (:class:`TakeAhead`) has a take of its counter after it in its program (a loop or a
    placed take) before another take ahead of it, or ``InvalidInput`` naming the CTA or
    item and op. Checked once a launch, where its hand-offs are derived
    (:func:`kda_sim.protocol.handoffs.derive`), before anything runs it."""
    from kda_sim.protocol.counters import Atomic, AtomicKind, Reset, Wait, check_word
    from kda_sim.protocol.pair_resets import ResetPairs

    walked: set[int] = set()
    for prog in launch.programs:
        ahead: dict[int, Site] = {}  # counter -> the take issued ahead not yet waited for
        for site, op in walk(prog, walked):
            if isinstance(op, Atomic | Wait | Reset | TicketLoop | ResetPairs | TakeAhead):
                for cell in op.cells if isinstance(op, Reset | ResetPairs) else (op.cell,):
                    check_word(launch.space, op.region, cell, site.text())
            if isinstance(op, TicketLoop):
                for clear in op.clears:
                    for cell in clear.cells:
                        check_word(launch.space, clear.region, cell, f"{site.text()} (clears)")
            if site.item >= 0 or site.branch:
                continue
            if isinstance(op, TakeAhead):
                if op.cell in ahead:
                    raise InvalidInput(
                        f"{site.text()}: a take ahead of counter {op.cell} while "
                        f"{ahead[op.cell].text()}'s is not yet waited for",
                        what="take ahead",
                    )
                ahead[op.cell] = site
            elif isinstance(op, TicketLoop) or (
                isinstance(op, Atomic) and op.kind is AtomicKind.ADD and op.cell in ahead
            ):
                ahead.pop(op.cell, None)
        if ahead:
            first = min(ahead.values(), key=lambda s: s.index)
            raise InvalidInput(
                f"{first.text()}: a take ahead with no take of its counter after it (a "
                "ticket loop or a placed take) to wait for it",
                what="take ahead",
            )


# -- a run's takes, placed ---------------------------------------------------------------
TAKE_ITEM = "ticket_item"  # the latency from a take's return to its item's first op
Takes = tuple[tuple[int, ...], ...]  # CTA -> the tickets it took, in order


def takes_of(records: Sequence[Sequence[float]], blocks: int, where: str = "") -> Takes:
    """Each CTA's tickets in the order it took them, from a run's take records ``[cta,
    issue, return, ticket]`` (what a traced ticket launch keeps in ``meta.extra
    ['ticket_takes']``): a CTA's takes are ordered by their issue time."""
    per: list[list[tuple[float, int]]] = [[] for _ in range(blocks)]
    for rec in records:
        if len(rec) != 4:
            raise InvalidInput(
                f"a take record {list(rec)}: [cta, issue, return, ticket]",
                what="ticket_takes",
                where=where,
            )
        cta, issue, ticket = int(rec[0]), float(rec[1]), int(rec[3])
        if not 0 <= cta < blocks:
            raise InvalidInput(
                f"a take by CTA {cta}: the launch has CTAs 0..{blocks - 1}",
                what="ticket_takes",
                where=where,
            )
        per[cta].append((issue, ticket))
    return tuple(tuple(t for _, t in sorted(p)) for p in per)


def _check_takes(loop: TicketLoop, takes: Takes, takers: Sequence[int]) -> None:
    """Every item taken once; every taker ends on one ticket past the items, and only
    there (as a run of the loop leaves them); CTAs that do not run the loop take none."""
    seen: dict[int, int] = {}
    for cta, ts in enumerate(takes):
        if cta not in takers:
            if ts:
                raise InvalidInput(
                    f"{loop.label}: CTA {cta} took tickets {list(ts[:3])} but runs no loop",
                    what="ticket_takes",
                )
            continue
        if not ts or ts[-1] < loop.n_items or any(t >= loop.n_items for t in ts[:-1]):
            raise InvalidInput(
                f"{loop.label}: CTA {cta} took {list(ts)}: a taker takes items "
                f"(< {loop.n_items}) and ends on one ticket past them",
                what="ticket_takes",
            )
        for t in ts:
            if t in seen:
                raise InvalidInput(
                    f"{loop.label}: ticket {t} taken by CTA {seen[t]} and CTA {cta}",
                    what="ticket_takes",
                )
            seen[t] = cta
    missing = [i for i in range(loop.n_items) if i not in seen]
    if missing:
        raise InvalidInput(
            f"{loop.label}: items {missing[:5]} were taken by no CTA ({len(missing)} in all)",
            what="ticket_takes",
        )


def placed(launch: Launch, takes: Takes) -> Launch:
    """``launch`` with its ticket loop's items placed as a run took them: each CTA's loop
    becomes, for every ticket it took in order, the take (the counter's atomic add, as the
    loop issues it) and the item's body; after its last take (the one past the items) the
    CTA that took the loop's last ticket resets the counter and its clears, as the loop
    does. The programs are then static (every op a (CTA, op)), so a run's trace can be
    laid on them and compared; their tasks run from one copy of their code
    (``looped_tasks``), unless the loop unrolls copies of it. What differs from the loop:
    which CTA runs an item is the run's, not decided again. One loop a launch (K1's);
    ``takes`` must be a run of it."""
    from dataclasses import replace

    from kda_sim.protocol.counters import Atomic, AtomicKind, Reset
    from kda_sim.protocol.ops import Begin
    from kda_sim.protocol.program import Launch

    loops = {op.cell: op for p in launch.programs for op in p.ops if isinstance(op, TicketLoop)}
    if len(loops) != 1:
        raise InvalidInput(
            f"placing takes needs one ticket loop in the launch, it has {len(loops)}",
            what="ticket_takes",
        )
    (loop,) = loops.values()
    if len(takes) != len(launch.programs):
        raise InvalidInput(
            f"takes for {len(takes)} CTAs, the launch has {len(launch.programs)}",
            what="ticket_takes",
        )
    takers = [p.cta for p in launch.programs if any(op is loop for op in p.ops)]
    _check_takes(loop, takes, takers)
    take = Atomic(loop.region, loop.cell, AtomicKind.ADD, 1, into=loop.into)
    # a take that returns an item pays the item's prologue, as the loop's does
    take_item = Atomic(loop.region, loop.cell, AtomicKind.ADD, 1, into=loop.into, then=TAKE_ITEM)
    programs = []
    for prog in launch.programs:
        if prog.cta not in takers:
            programs.append(prog)
            continue
        ops: list[Op] = []
        for op in prog.ops:
            if op is not loop:
                ops.append(op)
                continue
            for t in takes[prog.cta]:
                ops.append(take_item if t < loop.n_items else take)
                if t < loop.n_items:
                    ops += loop.bodies[t]
                elif t == loop.last_ticket:
                    ops.append(Reset(loop.region, (loop.cell,)))
                    ops += loop.clears
        # the tasks it now runs: its own, then those its items begin
        tasks = dict.fromkeys(prog.tasks)
        for op in ops:
            if isinstance(op, Begin) and op.task >= 0:
                tasks[op.task] = None
        # with unrolled copies a CTA's later items run new code, as its tasks would (the
        # items past the copies, in the loop, are taken as copies too: none were measured)
        looped = loop.unrolled == 0
        programs.append(replace(prog, tasks=tuple(tasks), ops=tuple(ops), looped_tasks=looped))
    return Launch(launch.cfg, launch.space, tuple(programs))
