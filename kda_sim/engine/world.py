"""What every CTA process of one simulated launch shares."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import simpy
from simpy.events import PENDING, Event

from kda_sim.engine.bandwidth import SharedBandwidth
from kda_sim.engine.initial import StalePoll
from kda_sim.engine.sampler import Sampler
from kda_sim.engine.words import Words
from kda_sim.machine.profile import GpuProfile
from kda_sim.protocol.handoffs import Handoffs, OpRef
from kda_sim.protocol.ops import Compute
from kda_sim.protocol.tickets import TicketLoop
from kda_sim.timeline.model import CtaTrack, PollRecord


@dataclass(slots=True)
class PutDone:
    time: float
    xcd: int
    put_index: int  # index into the producer's track.puts
    cta: int  # the CTA that put it (an item's put: the CTA that ran the item)
    # ns its pairs wait behind the CTA's own stores still leaving the SM ahead of them
    # (``CtaRun._put``; 0 unless the profile sets ``put_stores`` or ``put_store_kib``)
    behind: float = 0.0
    # when its pairs are visible to a poller on its XCD and on another, at the nominal
    # latencies (``time + behind`` and each; ``latest_visible`` reads them a producer)
    seen_same: float = 0.0
    seen_cross: float = 0.0


@dataclass
class StaleRead:
    """Flagged data read before it was visible: a visibility violation."""

    cta: int
    stage: str
    read_at: float
    producer: int  # the CTA whose store was not yet visible (-1: not known yet)
    visible_at: float
    cell: int = -1  # the flagged cell (global id in the launch's CellSpace)


@dataclass
class World:
    env: simpy.Environment
    prof: GpuProfile
    sampler: Sampler
    hbm: SharedBandwidth
    handoffs: Handoffs
    tracks: list[CtaTrack]
    put_events: dict[OpRef, simpy.Event] = field(default_factory=dict)
    put_done: dict[OpRef, PutDone] = field(default_factory=dict)
    data_visible: dict[int, float] = field(default_factory=dict)  # X cell -> visible at
    data_writer: dict[int, int] = field(default_factory=dict)  # X cell -> CTA
    stale_reads: list[StaleRead] = field(default_factory=list)
    # CTA -> op index running, where a launch stops short (filled then: cta.running_ops)
    current_op: dict[int, int] = field(default_factory=dict)
    # CTA -> (loop op index, item, body op index) of a ticket loop's body running
    current_item: dict[int, tuple[int, int, int]] = field(default_factory=dict)
    # every ticket take, [cta, issue, return, ticket] (ns), as a traced ticket launch
    # records them (meta.extra['ticket_takes']): a simulated one is compared the same way
    ticket_takes: list[list[float]] = field(default_factory=list)
    resident: dict[int, list] = field(default_factory=dict)  # unit -> its CtaRuns now
    never: simpy.Event | None = None
    # fold events that only order ties at one instant (``simulate``'s ``fold_events``; a
    # jittered run never folds: its latencies are drawn in the order its events run)
    fold: bool = False
    # polls a folded CTA ran past ahead of the clock, with the loads outstanding at their
    # first issue: their records' behind_loads are filled in after the run (cta.py)
    behind_later: list[tuple[PollRecord, list]] = field(default_factory=list)
    words: Words | None = None  # counter and flag words (made with the world)
    # pairs that hold this launch's tag before it starts (a host sequence's earlier launch
    # wrote it); empty for a single launch, so its polls never look
    tagged: frozenset[int] = frozenset()
    pair_resets: dict[int, tuple[float, int]] = field(default_factory=dict)  # cell -> (t, CTA)
    stale_polls: list[StalePoll] = field(default_factory=list)
    # what every CtaRun reads of the launch, made by the first (cta.py, _launch_consts)
    cta_consts: tuple | None = None
    # each CTA's factor on its computes by stage (Sampler.cta_factors), by CTA number;
    # None: no spread between CTAs (a nominal run, or a profile without cta_spread)
    cta_factors: list[dict[str, float]] | None = None

    # keyed by a poll plan's producer-set number (untagged polls) or by the producer tuple
    # itself (a host sequence's fresh set): hashing a tuple of 56 pairs at every poll cost
    joins: dict[object, simpy.Event] = field(default_factory=dict)
    # the polls that waited on a put not made yet, by the put: (the CTA's time at the
    # wait, the number of its cell set, PollPlan.cell_set), kept only where the profile
    # prices put_crowd (CtaRun._poll)
    landing: dict[OpRef, list[tuple[float, int]]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.words is None:
            self.words = Words(self.env, self.sampler)
        self._all_put = self.env.event()  # the joins' entry for a set all put at a look
        self._all_put._value = None

    def join(self, producers: tuple[OpRef, ...], key: object) -> simpy.Event | None:
        """One event for "every one of these put ops has happened", shared by every poll
        that waits on the same set (197 gemv CTAs wait on the same 56 XRDY flags); None
        when all have happened already. ``key`` names the set (see ``joins``)."""
        ev = self.joins.get(key)
        if ev is not None:
            return ev if ev._value is PENDING else None  # triggered: all have happened
        put_done, events, env = self.put_done, self.put_events, self.env
        waiting = []  # each put not done yet: its event (put_event, inlined)
        for p in producers:
            if p not in put_done:
                put_ev = events.get(p)
                if put_ev is None:
                    put_ev = events[p] = Event(env)
                waiting.append(put_ev)
        if not waiting:  # a put stays done: later polls of the set need not look again
            self.joins[key] = self._all_put
            return None
        ev = self.joins[key] = self.env.event()
        left = [len(waiting)]

        def one_more(_ev: object) -> None:
            left[0] -= 1
            if left[0] == 0:
                ev.succeed()

        for w in waiting:
            w.callbacks.append(one_more)
        return ev

    # XCD -> producer set (``join``'s key) -> when its last put is visible there, and that
    # put's PutDone and op
    latest: dict[int, dict[object, tuple[float, PutDone, OpRef]]] = field(default_factory=dict)

    def latest_on(self, xcd: int) -> dict[object, tuple[float, PutDone, OpRef]]:
        hit = self.latest.get(xcd)
        if hit is None:
            hit = self.latest[xcd] = {}
        return hit

    def latest_visible(
        self, producers: tuple[OpRef, ...], key: object, xcd: int
    ) -> tuple[float, PutDone, OpRef]:
        """When the last of ``producers``' puts (all done) is visible on XCD ``xcd``, and
        that put's ``PutDone`` and op (the later one in ``producers`` on a tie); nominal
        latencies only. Shared by every poll that waits on the same set (``key``, as
        ``join``'s) from the same XCD."""
        latest = self.latest_on(xcd)
        hit = latest.get(key)
        if hit is None:
            put_done = self.put_done
            # Sampler.visibility's nominal values, added once a put (``CtaRun._put``), not
            # once a set and XCD that waits on it
            best, last, ref = float("-inf"), put_done[producers[0]], producers[0]
            for p in producers:
                done = put_done[p]
                t = done.seen_same if done.xcd == xcd else done.seen_cross
                if t >= best:
                    best, last, ref = t, done, p
            hit = latest[key] = (best, last, ref)
        return hit

    def fresh(
        self, cta: int, ref: OpRef, label: str, cells: np.ndarray, rec: PollRecord
    ) -> tuple[tuple[OpRef, ...], bool]:
        """A poll's put ops and whether it waits on a pair nobody puts, leaving out the
        pairs that already hold the launch's tag (it passes those on their first read)."""
        ho = self.handoffs
        old = np.fromiter((int(c) in self.tagged for c in cells), bool, len(cells))
        if not old.any():
            return ho.producers[ref], ho.unput[ref]
        self.stale_polls.append(StalePoll(cta, ref, label, cells[old], rec))
        new = cells[~old]
        known = new[ho.put_count[new] > 0]
        refs = zip(ho.put_cta[known].tolist(), ho.put_op[known].tolist(), strict=True)
        return tuple(sorted(set(refs))), bool(known.size < new.size)

    # ticket loop (its counter's cell) -> the stage costs its items compute
    loop_stages: dict[int, frozenset[str]] = field(default_factory=dict)

    def loop_computes(self, loop: TicketLoop) -> frozenset[str]:
        """The stage costs the items of ``loop`` compute (every item's), once a launch."""
        hit = self.loop_stages.get(loop.cell)
        if hit is None:
            hit = self.loop_stages[loop.cell] = frozenset(
                op.cost for body in loop.bodies for op in body if isinstance(op, Compute)
            )
        return hit

    def put_event(self, ref: OpRef) -> simpy.Event:
        ev = self.put_events.get(ref)
        if ev is None:
            ev = self.put_events[ref] = self.env.event()
        return ev
