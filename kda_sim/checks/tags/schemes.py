"""Tag schemes: how a launch computes its tag from the step's epoch and its slot, exactly as
the device does it, with an analytic collision solver over every epoch.

The questions every scheme answers (``gap`` = steps between two launches' epochs; the
epoch is a ``bits``-wide device counter bumped once a step, wrapping):

- ``same_step(s1, s2)``: can two slots of one step have equal tags?
- ``across(s1, s2, at_least)``: the shortest gap >= ``at_least`` (>= 1) at which the tag
  of slot s1 equals a later step's tag of slot s2, with witness epochs;
- ``cleared(slot)``: an epoch whose tag equals the cleared value 0;
- ``overflow(slot)``: an epoch where the formula's integer leaves the device integer;
- ``fraction(s1, s2, gap)``: the share of epochs at which the collision at ``gap`` occurs.

No answer walks the epochs one by one: ``StepTag`` solves the linear congruences that
equal tags impose (see ``StepTag.across``), which is what lets the analysis cover every
int32 epoch in microseconds.

A scheme's widths (its integer, the epoch bits it keeps, the launch slots a step) are
the kernel's: its ``tag_model`` hook holds the shipped tag's (K1's:
``kda_sim/kernels/k1/tags.py``).
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from dataclasses import dataclass

from kda_sim.checks.tags.device import in_range, remsi, wrap
from kda_sim.errors import InvalidInput
from kda_sim.protocol.tagexpr import TagExpr

CLEARED = 0  # the value a zeroed scratch word holds


@dataclass(frozen=True)
class Collision:
    gap: int  # steps from the writer's launch to the reader's (0: the same step)
    writer_epoch: int
    reader_epoch: int
    tag: int


class TagScheme(ABC):
    """A tag scheme. ``bits`` is the width of the epoch counter and of the tag."""

    name: str
    bits: int
    # the launch slots a step the tag is built for: the launcher takes slots
    # 0 .. tag_slots - 1 only (None: no such limit)
    tag_slots: int | None = None

    @abstractmethod
    def tag(self, epoch: int, slot: int) -> int:
        """The tag the device computes (wrapped)."""

    @abstractmethod
    def intended(self, epoch: int, slot: int) -> int:
        """The integer the formula means (no wraparound)."""

    @abstractmethod
    def formula(self) -> str: ...

    @property
    @abstractmethod
    def expr(self) -> TagExpr:
        """The scheme's tag as a program's expression (what every CTA computes; a frozen
        epoch is the host sequence's, not the expression's)."""

    def next_epoch(self, epoch: int) -> int:
        return wrap(epoch + 1, self.bits)

    def epochs(self) -> range:
        """Every epoch value the counter takes (for exhaustive searches on small schemes)."""
        return range(-(1 << (self.bits - 1)), 1 << (self.bits - 1))

    def start_epochs(self, epoch0: int) -> range:
        """The epochs a run can start at when its counter starts at ``epoch0`` (a frozen
        epoch may say: every value it can be frozen at)."""
        return range(epoch0, epoch0 + 1)

    def coverage(self) -> str:
        """Which epochs the analysis covers, in words (a report's header)."""
        return f"every epoch the counter takes (2^{self.bits} values)"

    @property
    def period(self) -> int:
        """Steps after which the epoch sequence repeats."""
        return 1 << self.bits

    def steps_to(self, epoch0: int, epoch: int) -> int:
        """Steps a run started at ``epoch0`` takes to reach ``epoch`` (the horizon's measure)."""
        return (epoch - epoch0) % self.period if self.period > 1 else 0

    def first_cleared(self, slot: int, epoch0: int) -> int | None:
        """An epoch at which the first step of a run started at ``epoch0`` gives ``slot``
        the cleared value as its tag (a never-written pair then passes its poll)."""
        return epoch0 if self.tag(epoch0, slot) == CLEARED else None

    def same_step(self, s1: int, s2: int) -> Collision | None:
        # every scheme here adds the slot after the epoch term, so the difference of two
        # slots' tags in one step does not depend on the epoch: epoch 0 decides
        t1, t2 = self.tag(0, s1), self.tag(0, s2)
        return Collision(0, 0, 0, t1) if t1 == t2 else None

    @abstractmethod
    def across(self, s1: int, s2: int, at_least: int = 1) -> Collision | None: ...

    @abstractmethod
    def cleared(self, slot: int) -> int | None: ...

    @abstractmethod
    def overflow(self, slot: int) -> int | None: ...

    @abstractmethod
    def fraction(self, s1: int, s2: int, gap: int) -> float: ...


def _solve(a: int, b: int, mod: int) -> tuple[int, int] | None:
    """All x with a x = b (mod ``mod``): (x0, period), or None."""
    g = math.gcd(a, mod)
    if b % g:
        return None
    p = mod // g
    if p == 1:
        return 0, 1
    return ((b // g) * pow(a // g, -1, p)) % p, p


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


@dataclass(frozen=True)
class StepTag(TagScheme):
    """``(epoch % 2**epoch_bits) * tag_slots + slot + 1`` in ``bits``-bit integers, ``%`` the
    device's remsi. ``epoch_bits=None`` drops the ``%`` (a plain counter, e.g. 64-bit);
    ``slot_term=False`` is the fault "tags that drop the slot" (``+ 1`` only)."""

    bits: int
    epoch_bits: int | None
    tag_slots: int
    slot_term: bool = True
    name: str = "step_tag"

    def __post_init__(self) -> None:
        if self.epoch_bits is not None and not 1 <= self.epoch_bits <= self.bits - 1:
            raise ValueError(f"epoch_bits must be in 1..{self.bits - 1}")
        if self.tag_slots < 1:
            raise ValueError("tag_slots must be >= 1")

    # -- the device arithmetic --------------------------------------------------------------
    def key(self, epoch: int) -> int:
        if self.epoch_bits is None:
            return epoch
        return remsi(epoch, 1 << self.epoch_bits)

    def _c(self, slot: int) -> int:
        return slot + 1 if self.slot_term else 1

    def tag(self, epoch: int, slot: int) -> int:
        return wrap(self.tag_slots * self.key(epoch) + self._c(slot), self.bits)

    def intended(self, epoch: int, slot: int) -> int:
        return self.tag_slots * self.key(epoch) + self._c(slot)

    @property
    def expr(self) -> TagExpr:
        return TagExpr(self.bits, self.tag_slots, self.epoch_bits, slot=self.slot_term)

    def formula(self) -> str:
        e = "epoch" if self.epoch_bits is None else f"(epoch % 2^{self.epoch_bits})"
        s = " + slot + 1" if self.slot_term else " + 1"
        return f"{e} * {self.tag_slots}{s} in int{self.bits}"

    # -- the analytic solver ----------------------------------------------------------------
    # An epoch e is (block u, residue rho) with e = u M + rho as a bits-wide unsigned
    # position, M = 2**epoch_bits, Q = 2**bits / M blocks. remsi gives key rho on blocks of
    # non-negative epochs (u < Q/2) and rho - M on the others unless rho = 0. A gap moves
    # the position by gap (mod 2**bits). Equal tags need tag_slots (r1 - r2) = c2 - c1
    # (mod 2**bits): a few differences d = r1 - r2, each splitting by the keys' signs into
    # block differences; the shortest gap is then a minimum over intervals of blocks.
    def across(self, s1: int, s2: int, at_least: int = 1) -> Collision | None:
        at_least = max(1, at_least)
        mod = 1 << self.bits
        dc = self._c(s2) - self._c(s1)
        if self.epoch_bits is None:
            sol = _solve(self.tag_slots, -dc, mod)
            if sol is None:
                return None
            g0, p = sol
            gap = g0 + p * max(0, _ceil_div(at_least - g0, p))
            if gap == 0:
                gap = p
            return self._witness_plain(s1, s2, gap)
        sol = _solve(self.tag_slots, dc, mod)
        if sol is None:
            return None
        d0, p = sol
        m = 1 << self.epoch_bits
        q = mod // m
        lo, hi = -(2 * m - 2), 2 * m - 2
        first = d0 + p * _ceil_div(lo - d0, p)
        best: tuple[int, int, int, int, int] | None = None  # gap, d, r1, u1, u2
        # non-negative keys first: among equally short gaps the witness then starts at a
        # small positive epoch, the one a reader can picture
        classes = {"pos": (1, m - 1), "zero": (0, 0), "neg": (-(m - 1), -1)}
        half = q // 2
        blocks = {"neg": (half, q - 1), "zero": (0, q - 1), "pos": (0, half - 1)}
        n_cand = 0
        for d in range(first, hi + 1, p):
            n_cand += 1
            if n_cand > 1 << 16:
                break  # a scheme that overflows this badly collides long before: enough
            for c1, (a1, b1) in classes.items():
                for c2, (a2, b2) in classes.items():
                    rlo, rhi = max(a1, a2 + d), min(b1, b2 + d)
                    if rlo > rhi:
                        continue
                    sh = (c2 == "neg") - (c1 == "neg")
                    for nlo, nhi in _diff_intervals(blocks[c1], blocks[c2], q):
                        got = _min_gap(nlo + sh, nhi + sh, m, d, mod, at_least)
                        if got is None:
                            continue
                        gap, mm = got
                        if best is None or gap < best[0]:
                            u1, u2 = _blocks_for((mm - sh) % q, blocks[c1], blocks[c2], q)
                            best = (gap, d, min(max(rlo, 1), rhi), u1, u2)
        if best is None:
            return None
        gap, d, r1, u1, _u2 = best
        rho1 = r1 % m
        e1 = wrap(u1 * m + rho1, self.bits)
        e2 = wrap(e1 + gap, self.bits)
        t1, t2 = self.tag(e1, s1), self.tag(e2, s2)
        if t1 != t2 or self.key(e1) != r1 or self.key(e2) != r1 - d:
            raise AssertionError(f"step_tag solver: witness {e1} -> {e2} does not collide")
        return Collision(gap, e1, e2, t1)

    def _witness_plain(self, s1: int, s2: int, gap: int) -> Collision:
        e1 = 0
        e2 = wrap(e1 + gap, self.bits)
        t1, t2 = self.tag(e1, s1), self.tag(e2, s2)
        if t1 != t2:
            raise AssertionError("counter solver: witness does not collide")
        return Collision(gap, e1, e2, t1)

    def cleared(self, slot: int) -> int | None:
        mod = 1 << self.bits
        sol = _solve(self.tag_slots, -self._c(slot), mod)
        if sol is None:
            return None
        k0, p = sol
        if self.epoch_bits is None:
            return wrap(k0, self.bits)
        m = 1 << self.epoch_bits
        # the keys nearest zero in k0's class; an epoch equal to a key in -(M - 1) .. M - 1
        # has that key (remsi of |e| < M is e)
        for k in (k0 % p, k0 % p - p):
            if -(m - 1) <= k <= m - 1:
                if self.tag(k, slot) != CLEARED:
                    raise AssertionError("step_tag solver: cleared witness is not 0")
                return k
        return None

    def overflow(self, slot: int) -> int | None:
        if self.epoch_bits is None:
            e = _ceil_div((1 << (self.bits - 1)) - self._c(slot), self.tag_slots)
            return e if e < 1 << (self.bits - 1) else None
        m = 1 << self.epoch_bits
        for e in (m - 1, -(m - 1)):
            if not in_range(self.intended(e, slot), self.bits):
                return e
        return None

    def fraction(self, s1: int, s2: int, gap: int) -> float:
        mod = 1 << self.bits
        dc = self._c(s2) - self._c(s1)
        if self.epoch_bits is None:
            return 1.0 if (self.tag_slots * gap + dc) % mod == 0 else 0.0
        m = 1 << self.epoch_bits
        q = mod // m
        k, delta = divmod(gap % mod if gap % mod else (mod if gap else 0), m)
        pieces: list[tuple[int, int, int, int]] = []  # rho1, rho2, count, block shift
        pieces.append((0, delta, 1, k))  # rho2 = delta: rho1 = 0
        if m - delta - 1 > 0:
            pieces.append((1, delta + 1, m - delta - 1, k))
        if delta >= 1:
            pieces.append((m - delta, 0, 1, k + 1))  # rho2 = 0, borrowed
            if delta - 1 > 0:
                pieces.append((m - delta + 1, 1, delta - 1, k + 1))
        total = 0
        for rho1, rho2, count, shift in pieces:
            for neg1 in (0, 1):
                for neg2 in (0, 1):
                    r1 = rho1 - m * (neg1 and rho1 != 0)
                    r2 = rho2 - m * (neg2 and rho2 != 0)
                    if (self.tag_slots * (r1 - r2) + self._c(s1) - self._c(s2)) % mod:
                        continue
                    total += count * _count_shift(q, shift, neg1, neg2)
        return total / mod


def _diff_intervals(u1: tuple[int, int], u2: tuple[int, int], q: int) -> list[tuple[int, int]]:
    """{(b - a) mod q : a in u1, b in u2} as integer intervals (inclusive)."""
    lo, hi = u2[0] - u1[1], u2[1] - u1[0]
    span = hi - lo
    if span + 1 >= q:
        return [(0, q - 1)]
    lo %= q
    hi = lo + span
    if hi < q:
        return [(lo, hi)]
    return [(lo, q - 1), (0, hi - q)]


def _min_gap(mlo: int, mhi: int, m: int, d: int, mod: int, at_least: int) -> tuple[int, int] | None:
    """Smallest gap = (mm M - d) mod 2**bits (0 read as a whole cycle) >= at_least over
    block shifts mm in mlo..mhi: the gap is linear in mm between wrap points, so the
    minimum is at an end or just past a wrap or threshold point."""
    cands = {mlo, mhi}
    for w in (-1, 0, 1, 2):
        for extra in (0, at_least):
            cands.add(_ceil_div(d + extra + w * mod, m))
    best: tuple[int, int] | None = None
    for mm in cands:
        if not mlo <= mm <= mhi:
            continue
        gap = (mm * m - d) % mod or mod
        if gap < at_least:  # the same positions a whole number of cycles later
            gap += mod * _ceil_div(at_least - gap, mod)
        if best is None or gap < best[0]:
            best = (gap, mm)
    return best


def _blocks_for(n: int, b1: tuple[int, int], b2: tuple[int, int], q: int) -> tuple[int, int]:
    for u1 in (b1[0], b1[1], b2[0] - n, b2[1] - n):
        u1 %= q
        u2 = (u1 + n) % q
        if b1[0] <= u1 <= b1[1] and b2[0] <= u2 <= b2[1]:
            return u1, u2
    raise AssertionError("no blocks realise the block difference")


def _count_shift(q: int, shift: int, neg1: int, neg2: int) -> int:
    """#{u2 in 0..q-1 : sign class of u2 is neg2 and of (u2 - shift) mod q is neg1}."""
    half = q // 2
    a = (half, q) if neg2 else (0, half)
    b = (half, q) if neg1 else (0, half)
    total = 0
    lo = (b[0] + shift) % q
    length = b[1] - b[0]
    segs = [(lo, min(q, lo + length))]
    if lo + length > q:
        segs.append((0, lo + length - q))
    for s0, s1 in segs:
        total += max(0, min(a[1], s1) - max(a[0], s0))
    return total


@dataclass(frozen=True)
class FrozenEpoch(TagScheme):
    """The fault "epoch not bumped on graph replay": every step runs with the epoch
    captured when the graph was recorded.

    ``captured=None`` is the fault at every value the epoch can be captured at (every
    epoch ``base``'s counter takes): each answer is then "at some captured epoch", with
    that epoch as its witness, and ``tag(e, slot)`` is the tag of a run frozen at ``e``."""

    base: TagScheme
    captured: int | None = None
    name: str = "frozen-epoch"

    @property
    def bits(self) -> int:  # type: ignore[override]
        return self.base.bits

    @property
    def tag_slots(self) -> int | None:  # type: ignore[override]
        return self.base.tag_slots

    def _at(self, epoch: int) -> int:
        return epoch if self.captured is None else self.captured

    def tag(self, epoch: int, slot: int) -> int:
        return self.base.tag(self._at(epoch), slot)

    def intended(self, epoch: int, slot: int) -> int:
        return self.base.intended(self._at(epoch), slot)

    @property
    def expr(self) -> TagExpr:
        return self.base.expr

    def formula(self) -> str:
        at = "any value" if self.captured is None else str(self.captured)
        return f"{self.base.formula()} with epoch frozen at {at}"

    def next_epoch(self, epoch: int) -> int:
        return epoch

    def epochs(self) -> range:
        if self.captured is None:
            return self.base.epochs()
        return range(self.captured, self.captured + 1)

    def start_epochs(self, epoch0: int) -> range:
        return self.epochs()

    def coverage(self) -> str:
        if self.captured is None:
            return (
                f"every epoch it can be frozen at: every epoch the counter takes "
                f"(2^{self.bits} values)"
            )
        return f"epoch {self.captured} only, where the frozen counter stays"

    @property
    def period(self) -> int:
        return 1

    def steps_to(self, epoch0: int, epoch: int) -> int:
        # frozen at a given epoch: the run is there from its first step; at any: the live
        # counter had to reach it from epoch0 before the graph was captured
        return 0 if self.captured is not None else self.base.steps_to(epoch0, epoch)

    def same_step(self, s1: int, s2: int) -> Collision | None:
        if self.captured is None:
            return self.base.same_step(s1, s2)
        c = self.captured
        t1, t2 = self.tag(c, s1), self.tag(c, s2)
        return Collision(0, c, c, t1) if t1 == t2 else None

    def across(self, s1: int, s2: int, at_least: int = 1) -> Collision | None:
        # every step has the same epoch: two steps' tags are one step's, any gap apart
        col = self.same_step(s1, s2)
        if col is None:
            return None
        return Collision(max(1, at_least), col.writer_epoch, col.reader_epoch, col.tag)

    def cleared(self, slot: int) -> int | None:
        if self.captured is None:
            return self.base.cleared(slot)
        return self.captured if self.tag(self.captured, slot) == CLEARED else None

    def first_cleared(self, slot: int, epoch0: int) -> int | None:
        # the run never leaves the captured epoch: its first step is every step
        return self.cleared(slot)

    def overflow(self, slot: int) -> int | None:
        if self.captured is None:
            return self.base.overflow(slot)
        c = self.captured
        return None if in_range(self.intended(c, slot), self.bits) else c

    def fraction(self, s1: int, s2: int, gap: int) -> float:
        """The share of captured epochs at which the tags collide (any gap: the epoch
        does not move)."""
        if self.captured is None:
            return self.base.fraction(s1, s2, 0)
        c = self.captured
        return 1.0 if self.tag(c, s1) == self.tag(c, s2) else 0.0


@dataclass(frozen=True)
class SlotOnly(TagScheme):
    """``layer + 1``: the slot alone, the same every step (safe only with per-step zeroing).
    ``slot_term=False`` is the fault "tags that drop the slot" (``1`` for every slot);
    ``launch_slots`` is the launcher's limit (slot < TAG_SLOTS; None: none), not part of
    the tag."""

    bits: int
    name: str = "layer+1"
    slot_term: bool = True
    launch_slots: int | None = None

    @property
    def tag_slots(self) -> int | None:  # type: ignore[override]
        return self.launch_slots

    def _c(self, slot: int) -> int:
        return slot + 1 if self.slot_term else 1

    def tag(self, epoch: int, slot: int) -> int:
        return wrap(self._c(slot), self.bits)

    def intended(self, epoch: int, slot: int) -> int:
        return self._c(slot)

    @property
    def expr(self) -> TagExpr:
        return TagExpr(self.bits, 0, None, slot=self.slot_term)

    def formula(self) -> str:
        return f"{'slot + 1' if self.slot_term else '1'} in int{self.bits}"

    def across(self, s1: int, s2: int, at_least: int = 1) -> Collision | None:
        t = self.tag(0, s1)
        if t != self.tag(0, s2):
            return None
        gap = max(1, at_least)
        return Collision(gap, 0, wrap(gap, self.bits), t)

    def cleared(self, slot: int) -> int | None:
        return 0 if self.tag(0, slot) == CLEARED else None

    def overflow(self, slot: int) -> int | None:
        return None if in_range(self._c(slot), self.bits) else 0

    def fraction(self, s1: int, s2: int, gap: int) -> float:
        return 1.0 if self.tag(0, s1) == self.tag(0, s2) else 0.0


def counter64(tag_slots: int, *, slot_term: bool = True) -> StepTag:
    """A 64-bit step counter times the slots plus the slot: no modulo, no wrap for 2^55
    steps."""
    return StepTag(
        bits=64, epoch_bits=None, tag_slots=tag_slots, slot_term=slot_term, name="counter64"
    )


SCHEMES = ("step_tag", "layer+1", "counter64")
FAULTS = ("frozen-epoch", "drop-slot")
# the faults a scheme cannot have, and why: asked for, they are refused by name (a fault
# silently left out would report the healthy scheme as the faulty one)
NOT_APPLICABLE: dict[tuple[str, str], str] = {
    ("frozen-epoch", "layer+1"): "its tag has no epoch to freeze",
}


def make_scheme(
    name: str = "step_tag",
    *,
    tag_slots: int,
    epoch_bits: int,
    bits: int,
    drop_slot: bool = False,
    frozen: bool = False,
    captured: int | None = None,
) -> TagScheme:
    """A scheme by name with faults applied: ``drop_slot`` (no slot term), ``frozen`` (the
    epoch never advances; frozen at ``captured``, or None: at every value it can take)."""
    if name not in SCHEMES:
        raise ValueError(f"unknown tag scheme {name!r}; known: {', '.join(SCHEMES)}")
    for fault, on in (("drop-slot", drop_slot), ("frozen-epoch", frozen)):
        why = NOT_APPLICABLE.get((fault, name))
        if on and why is not None:
            raise InvalidInput(
                f"--fault {fault} does not apply to --scheme {name}: {why}", what="fault"
            )
    base: TagScheme
    if name == "step_tag":
        base = StepTag(bits, epoch_bits, tag_slots, slot_term=not drop_slot)
    elif name == "layer+1":
        base = SlotOnly(bits, slot_term=not drop_slot, launch_slots=tag_slots)
    else:
        base = counter64(tag_slots, slot_term=not drop_slot)
    return FrozenEpoch(base, captured) if frozen else base


def check_slot_count(slots: int, scheme: TagScheme, *, given: str) -> None:
    """A step of more launches than the tag has slots cannot run: the launcher refuses a
    slot >= TAG_SLOTS (``kernel/flydsl/host.py``), so the check refuses it too rather than
    analyse a step that cannot exist. ``given`` names the option and its value."""
    limit = scheme.tag_slots
    if limit is not None and slots > limit:
        raise InvalidInput(
            f"{given}: {slots} launch slots a step, above TAG_SLOTS = {limit} (the launcher "
            f"takes slots 0..{limit - 1} only)",
            what="slots",
        )
