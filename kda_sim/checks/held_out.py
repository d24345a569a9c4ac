"""Any dispatch order when only a few CTAs cannot be resident at once.

With ``k`` = blocks - slots on a GPU of one XCD, an order can only matter through the
set ``E`` of CTAs it has not dispatched yet (at most ``k``): the others have been
dispatched, so by monotone progress they reach the fixpoint of the launch without ``E``;
a slot is free again when more than ``k - |E|`` of them finish, and the next CTA of ``E``
is dispatched. So every order finishes iff, for every reachable ``E``, more than
``k - |E|`` CTAs finish without it, and the launch finishes with every CTA present.

Progress is a conjunction (a poll passes when every put it needs is done), so a CTA ``c``
finishes without ``E`` (given that the launch finishes with every CTA present) exactly
when ``E`` misses the set ``needs(c)`` of CTAs whose absence alone stops it: one fixpoint
per absent CTA gives every ``needs`` set, and the sets ``E`` are then unions of bitsets,
not fixpoints. CTAs whose absence stops the same CTAs are alike: ``E`` is enumerated over
those classes (one member each, the fewest CTAs for the most harm; 171 classes for K1 at
R = L = 1). ``E`` of size ``k`` is always reachable (the other CTAs fill the slots
first), so a failure there is a witness order; a failure at a smaller ``E`` is replayed
through the in-order fixpoint to confirm it. On several XCDs a dispatch stalled on a full
XCD holds back the blocks of every XCD behind it, so ``E`` is not small there: those
launches are left to the caller's adversary.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from itertools import combinations
from math import comb

import numpy as np

from kda_sim.checks.waitgraph import WaitGraph

MAX_HELD = 3  # held-out sets up to this size are enumerated
MAX_LOOPS = 100_000  # ... over classes of CTAs alike, the last member vectorised


@dataclass(frozen=True)
class HeldOut:
    """The outcome for every order: ``finishes`` True (proved), False (``order`` hangs)
    or None (``why`` says what is out of reach)."""

    finishes: bool | None
    why: str
    order: tuple[int, ...] | None = None
    held: tuple[int, ...] = ()  # the CTAs the hanging order keeps out


def _needs(g: WaitGraph, ctas: list[int], slots: object) -> np.ndarray:
    """``blocks[e, c]``: CTA c cannot finish while CTA e is absent (c == e included)."""
    from kda_sim.checks.deadlock_static import run_fixpoint

    b = g.blocks
    everyone = replace(slots, per_unit=b * slots.xcds, units=slots.xcds)  # type: ignore[type-var]
    blocks = np.zeros((b, b), dtype=bool)
    for e in ctas:
        fp = run_fixpoint(g, everyone, tuple(c for c in range(b) if c != e))
        blocks[e] = ~fp.finished
    return blocks


def decide(g: WaitGraph, slots: object) -> HeldOut:
    """Every dispatch order, for a launch on one XCD with at most :data:`MAX_HELD` CTAs
    more than its slots (``slots``: a ``deadlock_static.Slots``)."""
    from kda_sim.checks.deadlock_static import check_static

    b = g.blocks
    xcds, per_xcd = slots.xcds, slots.per_xcd  # type: ignore[attr-defined]
    if xcds > 1:
        # a dispatch stalled on one full XCD also holds back the blocks of the others
        # queued behind it: the held-out sets are no longer small
        return HeldOut(
            None,
            f"{xcds} XCDs: a dispatch stalled on a full XCD holds back every block behind "
            f"it, of any XCD, so the CTAs an order keeps out are not few",
        )
    k = b - per_xcd
    if k <= 0:
        return HeldOut(True, "every CTA is co-resident")
    if k > MAX_HELD:
        return HeldOut(
            None,
            f"{k} CTAs wait for a slot: the orders are decided exhaustively up to "
            f"{MAX_HELD} CTAs held out (here C({b}, {k}) sets)",
        )
    everyone = replace(slots, per_unit=b * xcds, units=xcds)  # type: ignore[type-var]
    if not check_static(g, everyone).finishes:
        return HeldOut(False, "the launch does not finish even with every CTA resident")
    blocks = _needs(g, list(range(b)), slots)
    # CTAs whose absence stops the same set are alike: one of each class is enough
    _, first = np.unique(blocks, axis=0, return_index=True)
    reps = sorted(int(i) for i in first)
    n_loops = sum(comb(len(reps), m - 1) for m in range(1, k + 1))
    if n_loops > MAX_LOOPS:
        return HeldOut(
            None,
            f"{len(reps)} classes of CTAs block different CTAs when absent: "
            f"{n_loops} unions to try, more than {MAX_LOOPS}",
        )
    rows = blocks[reps]
    for size in range(k, 0, -1):
        need = k - size  # more than this many must finish to free a slot
        # all but the last CTA held out in a loop; the last one for every class at once
        for head in combinations(range(len(reps)), size - 1):
            after = head[-1] + 1 if head else 0
            u = np.logical_or.reduce(rows[list(head)], axis=0) if head else np.zeros(b, bool)
            left = (~(u[None, :] | rows[after:])).sum(axis=1)
            bad = np.flatnonzero(left <= need)
            if not bad.size:
                continue
            held = tuple(reps[i] for i in (*head, after + int(bad[0])))
            order = _hanging_order(g, slots, held, k, blocks)
            what = (
                f"with CTA{'s' if size > 1 else ''} {', '.join(map(str, held))} not yet "
                f"dispatched, {int(left[bad[0]])} CTAs finish, {need + 1} must "
                f"to free a slot"
            )
            if order is not None:
                return HeldOut(False, what, order, held)
            return HeldOut(None, f"{what}, but no order found reaches that state")
    return HeldOut(
        True,
        f"proved for every order: with any {f'{k} or fewer' if k > 1 else 'one'} of the "
        f"{b} CTAs not yet dispatched, enough of the others finish "
        f"to free a slot for it, and the launch finishes with every CTA resident",
    )


def _hanging_order(
    g: WaitGraph,
    slots: object,
    held: tuple[int, ...],
    k: int,
    blocks: np.ndarray,
) -> tuple[int, ...] | None:
    """An order that ends with ``held`` never dispatched: the others first, then (when
    fewer than ``k`` are held) CTAs that finish without ``held``, so their slots let the
    rest in; confirmed by the fixpoint."""
    from kda_sim.checks.deadlock_static import check_static

    b = g.blocks
    rest = [c for c in range(b) if c not in held]
    extra = k - len(held)
    if extra:
        stuck = np.logical_or.reduce(blocks[list(held)], axis=0)
        late = [c for c in range(b) if c not in held and not stuck[c]][:extra]
        rest = [c for c in rest if c not in late] + late
    order = (*rest, *held)
    v = check_static(g, slots, order)  # type: ignore[arg-type]
    if v.finishes:
        return None
    return order
