"""Deadlock freedom of a ticket queue, at every residency.

Tickets are taken in increasing order and a CTA holds one item at a time, so the items
in progress are always the smallest ones not finished. When every wait of item i is
satisfied by the writes of items j < i (or by item i's own earlier ops), the smallest
item in progress never waits on an item still to run: it finishes, and by induction
every item does, however few CTAs are resident (one is enough). A wait that needs an
item j >= i breaks the argument: the check walks the queue at each residency from one
CTA up (items progress monotonically, so the outcome does not depend on timing) and
reports the residencies where it hangs, with the wait-for chain.

A body may also poll (value, tag) pairs. A pair an item puts is a write as a word's is
(the poll needs every producer item past its put). A pair a CTA's own program puts (a
static producer, known when the launch is built) is not a ticket: the argument holds
only while that CTA is resident, and CTAs are dispatched in block order, so a loop whose
polls name static CTAs 0..P is covered at residencies of at least P + 1. The walk counts
a later dispatch too: once the tickets run out, a CTA that finishes its item retires and
the CTAs queued behind it are dispatched (their static part is assumed to finish, which
is the static and engine checks' question, not this one).

Only the loop is reasoned about: waits outside it, and waits whose target adds a
register, are left to the engine (said so).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from kda_sim.checks.findings import Category, Finding, Severity
from kda_sim.checks.words import WordUse, word_uses
from kda_sim.engine import SimResult, simulate
from kda_sim.machine.profile import GpuProfile
from kda_sim.protocol.counters import Atomic, Reset, Wait
from kda_sim.protocol.handoffs import Handoffs, derived
from kda_sim.protocol.ops import Poll
from kda_sim.protocol.program import Launch
from kda_sim.protocol.tickets import TicketLoop, item_ref, split_ref


@dataclass
class TicketVerdict:
    loop: str
    items: int
    ctas: int  # CTAs that run the loop
    finishes: bool | None  # None: not decided (see note)
    why: str
    hangs_at: tuple[int, ...] = ()  # residencies (CTAs resident) where it hangs
    findings: list[Finding] = field(default_factory=list)
    # the smallest residency the argument covers: 1, or 1 + the largest static CTA polled
    needs_resident: int = 1
    chains: dict[int, str] = field(default_factory=dict)  # residency -> its wait-for chain


@dataclass(frozen=True)
class _Need:
    item: int
    index: int
    op: Wait | Poll
    writers: tuple[int, ...]  # items whose writes can satisfy it (sorted)
    backward: bool  # satisfied by smaller items and the item's own earlier ops
    puts: tuple[tuple[int, int], ...] = ()  # a poll's producer (item, op) pairs
    static: tuple[int, ...] = ()  # a poll's producer CTAs (their programs put)
    unput: bool = False  # a poll of a pair nobody puts


def _what(op: Wait | Poll) -> str:
    return f"{op.label} {op.pred.value} {op.value}" if isinstance(op, Wait) else f"{op.label}"


def _poll_need(
    loop: TicketLoop, loop_no: int, ho: Handoffs, i: int, k: int, op: Poll
) -> _Need | str:
    """A body's poll as a need, or why it is left open (a static producer that puts only
    after its own loop: its put waits on the loop)."""
    ref = item_ref(loop_no, i, k)
    puts, static = [], set()
    for p in ho.producers[ref]:
        split = split_ref(p)
        if split is None:
            prog = ho.launch.programs[p[0]]
            at = next((n for n, o in enumerate(prog.ops) if o is loop), len(prog.ops))
            if p[1] > at:
                return f"item {i} polls {op.label}, put by CTA {p[0]} after its loop"
            static.add(p[0])
        else:
            puts.append((split[1], split[2]))
    back = all(j < i or (j == i and idx < k) for j, idx in puts) and not ho.unput[ref]
    writers = tuple(sorted({j for j, _ in puts}))
    return _Need(i, k, op, writers, back, tuple(puts), tuple(sorted(static)), ho.unput[ref])


def _needs(
    loop: TicketLoop, uses: dict[int, WordUse], ho: Handoffs | None = None
) -> tuple[list[_Need], list[str]]:
    needs, open_ = [], []
    loop_no = ho.loops.get(loop.cell, -1) if ho is not None else -1
    for i, body in enumerate(loop.bodies):
        for k, op in enumerate(body):
            if isinstance(op, Poll) and ho is not None:
                need = _poll_need(loop, loop_no, ho, i, k, op)
                if isinstance(need, str):
                    open_.append(need)
                else:
                    needs.append(need)
                continue
            if not isinstance(op, Wait):
                continue
            use = uses[op.cell]
            # a last-ticket clear is after every item: no item's wait can read it
            if op.plus or any(w.site.item < 0 and w.kind != "clear" for w in use.writes):
                open_.append(
                    f"item {i} waits on {op.label}, written outside the loop or "
                    "against a register: left to the engine"
                )
                continue
            before = [
                w for w in use.writes if w.site.item < i or (w.site.item == i and w.site.index < k)
            ]
            if use.adds_only:  # a count: the adds before it reach the target
                ok = sum(w.value for w in before) >= op.value
                writers = sorted({w.site.item for w in use.writes})
            else:  # a flag: an exchange before it writes a value that satisfies it
                sets = [
                    w
                    for w in use.writes
                    if w.kind in ("exch", "cas") and op.pred.holds(w.value, op.value)
                ]
                ok = any(w in before for w in sets)
                writers = sorted({w.site.item for w in sets})
            needs.append(_Need(i, k, op, tuple(writers), ok))
    return needs, open_


def _run(
    loop: TicketLoop, slots: int, polls: dict[tuple[int, int], _Need] | None = None
) -> tuple[bool, dict[int, int], dict[int, int]]:
    """The queue with ``slots`` CTAs resident, without time: every held item runs until a
    wait its word does not satisfy (or a poll whose producers have not put); a finished
    item's CTA takes the next ticket. A static producer is resident when its block id is
    below ``slots``, or once the tickets have run out and a CTA has retired (the queue
    behind it is then dispatched). Returns (finished, item -> op index it waits at,
    item -> holder)."""
    polls = polls or {}
    n = loop.n_items
    value: dict[int, int] = {}
    pos = dict.fromkeys(range(min(slots, n)), 0)
    holder = {i: i for i in pos}
    nxt = len(pos)
    done: set[int] = set()
    retired = slots > n  # a CTA found no ticket at once: the dispatch queue moves

    def passed(j: int, idx: int) -> bool:
        return j in done or (j in pos and pos[j] > idx)

    def ready(need: _Need) -> bool:
        if need.unput:
            return False
        if any(b >= slots for b in need.static) and not retired:
            return False
        return all(passed(j, idx) for j, idx in need.puts)

    moved = True
    while moved:
        moved = False
        for i in sorted(pos):
            body = loop.bodies[i]
            k = pos[i]
            while k < len(body):
                op = body[k]
                if isinstance(op, Wait):
                    if not op.pred.holds(value.get(op.cell, 0), op.value):
                        break
                elif isinstance(op, Poll):
                    need = polls.get((i, k))
                    if need is not None and not ready(need):
                        break
                elif isinstance(op, Atomic):
                    new = op.new(value.get(op.cell, 0))
                    if new is not None:
                        value[op.cell] = new
                elif isinstance(op, Reset):
                    for c in op.cells:
                        value[c] = 0
                k += 1
                moved = True
            pos[i] = k
            if k == len(body):
                del pos[i]
                done.add(i)
                if nxt < n:
                    pos[nxt] = 0
                    holder[nxt] = holder[i]
                    nxt += 1
                else:
                    retired = True
                moved = True
    return len(done) == n, pos, holder


def _chain(
    loop: TicketLoop,
    stuck: dict[int, int],
    holder: dict[int, int],
    needs: dict[tuple[int, int], _Need],
    slots: int,
) -> str:
    """From the smallest stuck item: item i waits on what item j writes, ... down to an
    item nobody has taken, or a cycle."""
    i = min(stuck)
    parts, seen = [], []
    while True:
        seen.append(i)
        op = loop.bodies[i][stuck[i]]
        need = needs.get((i, stuck[i]))
        top = max(stuck)
        # writers whose write has not happened: held items, or items not taken yet
        later = [j for j in (need.writers if need else ()) if j in stuck or j > top]
        verb = "waits on" if isinstance(op, Wait) else "polls"
        head = f"item {i} (held by resident CTA {holder[i] + 1} of {slots}) {verb} {_what(op)}"
        if need is not None and isinstance(op, Poll):
            later = sorted(
                {j for j, idx in need.puts if (j in stuck and stuck[j] <= idx) or j > top}
            )
            away = [b for b in need.static if b >= slots]
            if not later and away:
                parts.append(
                    f"{head}, put by CTA {away[-1]}, not resident: CTAs 0..{slots - 1} are, "
                    "and none retires while the tickets last"
                )
                break
        if not later:
            parts.append(f"{head}, which no item still to run writes")
            break
        j = later[0]
        rel = (
            "a larger ticket"
            if j > i
            else "its own ticket, later"
            if j == i
            else "a smaller ticket"
        )
        parts.append(f"{head}, written by item {j} ({rel})")
        if j == i:
            break
        if j not in stuck:
            taken = sorted(stuck)
            parts.append(
                f"item {j} is not taken: the {slots} resident CTA(s) hold items that wait "
                f"({', '.join(map(str, taken))}), and a CTA takes a ticket only when its item "
                "finishes"
            )
            break
        if j in seen:
            parts.append(f"item {j} waits on this chain already (a cycle)")
            break
        i = j
    return "; ".join(parts)


def check_tickets(launch: Launch) -> list[TicketVerdict]:
    """One verdict a ticket loop (its counter's word), [] for a launch without one."""
    loops: dict[int, tuple[TicketLoop, int]] = {}
    for p in launch.programs:
        for op in p.ops:
            if isinstance(op, TicketLoop):
                lp, n = loops.get(op.cell, (op, 0))
                loops[op.cell] = (lp, n + 1)
    uses = word_uses(launch) if loops else {}
    polled = any(isinstance(o, Poll) for lp, _ in loops.values() for b in lp.bodies for o in b)
    ho = derived(launch) if polled else None  # the producers of the bodies' polls
    out = []
    for loop, ctas in loops.values():
        out.append(_verdict(launch, loop, ctas, uses, ho))
    return out


def _verdict(
    launch: Launch,
    loop: TicketLoop,
    ctas: int,
    uses: dict[int, WordUse],
    ho: Handoffs | None = None,
) -> TicketVerdict:
    space = launch.space
    region, index = space.split(loop.cell)
    name = f"ticket loop {loop.label} on {region.name}[{index}]"
    needs, open_ = _needs(loop, uses, ho)
    forward = [nd for nd in needs if not nd.backward]
    by_site = {(nd.item, nd.index): nd for nd in needs}
    polls = {k: nd for k, nd in by_site.items() if isinstance(nd.op, Poll)}
    # static CTAs the bodies poll: the argument covers residencies that hold them all
    static = max((b for nd in needs for b in nd.static), default=-1)
    bound = static + 1 if static >= 0 else 1
    if not forward and not open_ and bound > 1:
        why = (
            f"{name}: every wait of its {loop.n_items} items names a smaller ticket (or the "
            "item's own earlier write), and its polls of CTAs' own puts name CTAs 0.."
            f"{static}, dispatched first: deadlock-free at any residency of at least "
            f"{bound} CTAs"
        )
        hangs = [r for r in range(1, bound) if not _run(loop, r, polls)[0]]
        return TicketVerdict(
            loop.label, loop.n_items, ctas, True, why, tuple(hangs), needs_resident=bound
        )
    if not forward and not open_:
        why = (
            f"{name}: every wait of its {loop.n_items} items names a smaller ticket (or the "
            "item's own earlier write); tickets are taken in increasing order, so the "
            "smallest item in progress never waits on an item not yet taken: it finishes, "
            "and by induction every item does, at any residency of at least 1 CTA"
        )
        return TicketVerdict(loop.label, loop.n_items, ctas, True, why)
    hangs: list[int] = []
    chain = ""
    chains: dict[int, str] = {}
    for r in range(1, max(ctas, 1) + 1):
        ok, stuck, holder = _run(loop, r, polls)
        if not ok:
            hangs.append(r)
            chains[r] = _chain(loop, stuck, holder, by_site, r)
            chain = chain or chains[r]
    if forward:
        f0 = forward[0]
        # the first writer of a larger ticket, else the item itself (a later op of it)
        bigger = [j for j in f0.writers if j > f0.item] or [j for j in f0.writers if j == f0.item]
        names = (f"item {bigger[0]}" if bigger else "no item") + (
            " (a larger ticket)" if bigger and bigger[0] > f0.item else ""
        )
        verb = "waits on" if isinstance(f0.op, Wait) else "polls"
        msg = (
            f"{name}: {len(forward)} waits name an item of a larger or equal ticket (item "
            f"{f0.item} {verb} {_what(f0.op)}, written by {names}), so deadlock freedom "
            "does not hold at every residency"
        )
        if bound > 1:
            msg += f"; its polls of CTAs' own puts name CTAs 0..{static}"
        if hangs:
            msg += (
                f"; it hangs with {_span(hangs)} CTA(s) resident. Wait-for chain at "
                f"residency {hangs[0]}: {chain}"
            )
            if hangs == list(range(1, hangs[-1] + 1)) and hangs[-1] < ctas:
                msg += f". It finishes with {hangs[-1] + 1} to {ctas} CTAs resident"
        f = Finding(
            Category.DEADLOCK,
            Severity.FAIL,
            msg,
            "make every wait of item i name only items j < i",
            {"loop": loop.label, "hangs_at": hangs, "item": f0.item, "writers": list(f0.writers)},
        )
        return TicketVerdict(
            loop.label, loop.n_items, ctas, False, msg, tuple(hangs), [f], bound, chains
        )
    why = f"{name}: not decided by the ticket argument ({'; '.join(open_[:3])})"
    return TicketVerdict(
        loop.label, loop.n_items, ctas, None, why, tuple(hangs), needs_resident=bound, chains=chains
    )


def _span(rs: list[int]) -> str:
    return (
        str(rs[0])
        if len(rs) == 1
        else f"{rs[0]} to {rs[-1]}"
        if rs == list(range(rs[0], rs[-1] + 1))
        else ", ".join(map(str, rs))
    )


def engine_at_residency(cfg: Any, prof: GpuProfile, slots: int) -> SimResult:
    """The engine with exactly ``slots`` CTAs resident: ``slots`` units of one XCD, one
    CTA each (where the ticket walk says the queue hangs)."""
    one = replace(prof, units=slots, xcds=1)
    return simulate(cfg, one, occupancy=1)
