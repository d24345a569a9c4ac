"""Can a poll pass on a pair its own launch did not write? Analytic over every epoch.

A poll sees whatever its pair held when its launch started (a producer of the same launch
may be late), so a stale pass needs a pair whose content before the launch carries the
launch's own tag. The content's last writer is found structurally from the step model:

- *same step*: an earlier slot of this step wrote the pair last (gap 0);
- *across steps* (never zeroed): the last slot of an earlier step that wrote it, and no
  slot of this step before the reader; one step apart needs nothing more, a longer gap
  needs every step between to be of a shape that leaves the pair alone;
- *cleared*: the pair holds the cleared value 0 (zeroed this step, or never written).

Where the model has the launches' programs (``StepModel.programs``), the tag each CTA's
ops compute is read from them (:mod:`kda_sim.checks.tags.programs`): a put or poll whose
expression differs from the scheme's is evaluated hand-off by hand-off (a hang, a stale
pass), naming the CTA. Where every CTA computes the scheme's tag, the classes answer.

Whether the tags can then be equal is the scheme's question (``TagScheme.across`` and
friends), answered by congruences over every epoch, not by walking them. The shortest
scenario is reported with its witness epochs, the shapes and slots involved, and how
likely it is per step.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from enum import StrEnum

import numpy as np

from kda_sim.checks.findings import Category, Finding, Severity
from kda_sim.checks.tags.footprint import StepModel
from kda_sim.checks.tags.programs import program_findings
from kda_sim.checks.tags.schemes import CLEARED, FrozenEpoch, SlotOnly, StepTag, TagScheme
from kda_sim.text import probability

HORIZON = 1 << 48


class Policy(StrEnum):
    NEVER_ZEROED = "never-zeroed"
    ZEROED = "zeroed-per-step"


class Kind(StrEnum):
    SAME_STEP = "same step"
    ACROSS = "across steps"
    CLEARED = "cleared pair"


@dataclass
class Scenario:
    kind: Kind
    cls: int
    pair: str  # REGION[index], as the reader addresses it
    reader_shape: str
    reader_slot: int
    reader_epoch: int
    tag: int
    gap: int  # steps from the write to the read (0: the same step)
    writer_shape: str | None = None
    writer_slot: int | None = None
    writer_epoch: int | None = None
    between_shape: str | None = None  # the shape of every step in between (gap >= 2)
    epoch_fraction: float = 0.0  # share of epochs at which the tags collide
    log10_per_step: float = 0.0  # log10 of the chance a step is the reader of this
    reader: str = ""  # the polling CTA and stage, where known

    def text(self, nb: tuple[int, ...], bits: int = 32) -> str:
        """In words; ``bits`` is the epoch counter's width (a negative epoch is where the
        counter wrapped, and the text says how far away that is)."""
        rd = (
            f"slot {self.reader_slot} (nb {nb[self.reader_slot]}) of a {self.reader_shape} "
            f"step at {_epoch(self.reader_epoch, bits)}"
        )
        who = f" ({self.reader})" if self.reader else ""
        if self.kind is Kind.CLEARED:
            head = (
                f"{self.pair} holds the cleared value 0 when {rd}{who} polls it, and that "
                f"launch's tag is {self.tag}"
            )
        else:
            wr = (
                f"slot {self.writer_slot} (nb {nb[self.writer_slot or 0]}) of a "
                f"{self.writer_shape} step at {_epoch(self.writer_epoch, bits)}"
            )
            between = ""
            if self.gap >= 2:
                between = (
                    f", after {self.gap - 1} steps of shape {self.between_shape} that leave it "
                    f"({_duration(self.gap - 1)})"
                )
            elif self.gap == 1:
                between = ", in the next step"
            head = (
                f"{self.pair} was last written by {wr} with tag {self.tag}; {rd}{who} polls "
                f"it{between} and its own tag is {self.tag}: the poll passes on the old pair"
            )
        return (
            f"{head}. Tags collide at {self.epoch_fraction:.3g} of epochs; with every step's "
            f"shape drawn uniformly, a step reads this way with probability "
            f"{probability(self.log10_per_step)}"
        )


def _epoch(epoch: int | None, bits: int) -> str:
    """``epoch 5``; a negative one with how many steps from epoch 0 the counter takes to
    wrap there, and how long that is."""
    if epoch is None or epoch >= 0:
        return f"epoch {epoch}"
    steps = (1 << bits) + epoch
    return (
        f"epoch {epoch} (where the {bits}-bit counter wraps to: {steps:,} steps from epoch 0, "
        f"{_duration(steps)})"
    )


def _duration(steps: int) -> str:
    """How long a run of steps lasts at two plausible step times (a step is every layer's
    launch: tens of microseconds each)."""

    def human(sec: float) -> str:
        for unit, n in (("years", 3.15e7), ("days", 86400), ("hours", 3600), ("min", 60)):
            if sec >= n:
                return f"{sec / n:.3g} {unit}"
        return f"{sec:.3g} s"

    return f"{human(steps * 1e-4)} at 100 us a step, {human(steps * 1e-3)} at 1 ms"


@dataclass
class TagVerdict:
    safe: bool
    scheme: str
    policy: Policy
    shapes: tuple[str, ...]
    nb: tuple[int, ...]
    epochs: str = ""  # which epochs were analysed, in words (TagScheme.coverage)
    scenarios: list[Scenario] = field(default_factory=list)  # shortest first
    findings: list[Finding] = field(default_factory=list)

    @property
    def shortest(self) -> Scenario | None:
        return self.scenarios[0] if self.scenarios else None


def _fix(kind: Kind, scheme: TagScheme, policy: Policy) -> str:
    if isinstance(scheme, FrozenEpoch):
        return (
            "bump the epoch inside the graph (a device counter read at run time), not a "
            "value captured at graph capture; or zero the scratch before each step"
        )
    if kind is Kind.SAME_STEP:
        return "put the slot in the tag (slot + 1, every slot below TAG_SLOTS)"
    if kind is Kind.CLEARED:
        return (
            "never let a tag be 0: keep slots below TAG_SLOTS - 1, or take a non-negative "
            "epoch key (epoch & (2^B - 1), not remsi)"
        )
    wider = ""
    if isinstance(scheme, StepTag) and scheme.epoch_bits is not None:
        wider = (
            f"; or a wider tag: the gap is 2^{scheme.epoch_bits} steps (a 64-bit counter "
            f"makes it 2^{64 - max(1, math.ceil(math.log2(scheme.tag_slots)))})"
        )
    if isinstance(scheme, SlotOnly):
        wider = "; or a tag with an epoch bumped each step"
    if policy is Policy.NEVER_ZEROED:
        return f"zero the scratch before each step (--policy zeroed-per-step){wider}"
    return wider.lstrip("; ")


def _prefix_last(w: np.ndarray) -> np.ndarray:
    """[slot, class]: the last slot before s that writes the class (-1: none)."""
    n = w.shape[0]
    idx = np.where(w, np.arange(n)[:, None], -1)
    run = np.maximum.accumulate(idx, axis=0)
    out = np.full_like(run, -1)
    out[1:] = run[:-1]
    return out


def _last(w: np.ndarray) -> np.ndarray:
    n = w.shape[0]
    any_ = w.any(0)
    return np.where(any_, n - 1 - np.argmax(w[::-1], axis=0), -1)


def analyse(
    model: StepModel,
    scheme: TagScheme,
    policy: Policy,
    *,
    epoch0: int = 0,
    name_readers: bool = True,
    horizon: int = HORIZON,
) -> TagVerdict:
    """Every way a poll of a step can pass on a pair its launch did not write.

    Scenarios that need more than ``horizon`` steps (default 2^48, about 9 years at one
    step a microsecond) are reported as notes, not failures."""
    k = len(model.shapes)
    n = model.slots
    found: list[Scenario] = []
    lastw = np.stack([_last(model.writes[a]) for a in range(k)])  # [shape, class]
    skip = lastw == -1  # shapes whose steps leave a class alone
    cache_same: dict[tuple[int, int], object] = {}
    cache_x: dict[tuple[int, int, int], object] = {}

    def log_shape(c: int, between: int) -> float:
        lk = -math.log10(k)
        ns = int(skip[:, c].sum())
        return lk * 2 + (between * math.log10(ns / k) if between and ns else 0.0)

    for a in range(k):
        w, p = model.writes[a], model.polls[a]
        before = _prefix_last(w)
        # same step: the last earlier slot that wrote what slot s polls
        ss, cc = np.nonzero(p & (before >= 0))
        if ss.size:
            pairs, first = np.unique(np.stack([before[ss, cc], ss], 1), axis=0, return_index=True)
            for (s1, s2), i in zip(pairs.tolist(), first.tolist(), strict=True):
                key = (s1, s2)
                if key not in cache_same:
                    cache_same[key] = scheme.same_step(s1, s2)
                col = cache_same[key]
                if col is None:
                    continue
                c = int(cc[i])
                found.append(
                    Scenario(
                        Kind.SAME_STEP,
                        c,
                        model.pair(c, a, s2),
                        model.shapes[a],
                        s2,
                        col.reader_epoch,
                        col.tag,
                        0,
                        model.shapes[a],
                        s1,
                        col.writer_epoch,
                        epoch_fraction=scheme.fraction(s1, s2, 0),
                        log10_per_step=-math.log10(k),
                    )
                )
        # readers that see the content from before the step
        rs, rc = np.nonzero(p & (before < 0))
        if not rs.size:
            continue
        if policy is Policy.ZEROED:
            for s2 in np.unique(rs).tolist():
                e = scheme.cleared(s2)
                if e is None:
                    continue
                c = int(rc[np.flatnonzero(rs == s2)[0]])
                found.append(_cleared(model, scheme, a, s2, c, e, -math.log10(k), 0))
            continue
        # never zeroed: the pair's last writer in an earlier step of shape b
        for b in range(k):
            ws = lastw[b, rc]
            ok = ws >= 0
            if not ok.any():
                continue
            trip = np.stack([ws[ok], rs[ok], skip[:, rc[ok]].any(0).astype(np.int64)], 1)
            uniq, first = np.unique(trip, axis=0, return_index=True)
            for (s1, s2, can_skip), i in zip(uniq.tolist(), first.tolist(), strict=True):
                c = int(rc[np.flatnonzero(ok)[i]])
                for at_least in (1, 2) if can_skip else (1,):
                    key3 = (s1, s2, at_least)
                    if key3 not in cache_x:
                        cache_x[key3] = scheme.across(s1, s2, at_least)
                    col = cache_x[key3]
                    if col is None or (at_least == 1 and col.gap != 1):
                        continue
                    z = int(np.flatnonzero(skip[:, c])[0]) if col.gap >= 2 else None
                    found.append(
                        Scenario(
                            Kind.ACROSS,
                            c,
                            model.pair(c, a, s2),
                            model.shapes[a],
                            s2,
                            col.reader_epoch,
                            col.tag,
                            col.gap,
                            model.shapes[b],
                            s1,
                            col.writer_epoch,
                            between_shape=None if z is None else model.shapes[z],
                            epoch_fraction=scheme.fraction(s1, s2, col.gap),
                            log10_per_step=log_shape(c, col.gap - 1),
                        )
                    )
                    break
        # never written since the buffer was allocated (zeroed once): the cleared value
        for s2 in np.unique(rs).tolist():
            e = scheme.cleared(s2)
            if e is None:
                continue
            cls = rc[rs == s2]
            first = scheme.first_cleared(s2, epoch0)
            never = cls[skip[:, cls].any(0)]
            if first is not None:
                steps = scheme.steps_to(epoch0, first)  # 0 but for an epoch frozen at any
                c = int(cls[0])
                found.append(_cleared(model, scheme, a, s2, c, first, -math.log10(k), steps))
            elif never.size:
                steps = scheme.steps_to(epoch0, e)
                c = int(never[0])
                found.append(_cleared(model, scheme, a, s2, c, e, log_shape(c, steps) / 2, steps))
    found.sort(key=lambda s: (s.gap, list(Kind).index(s.kind), -s.log10_per_step))
    if name_readers:
        for sc in found[:1]:
            sc.reader = _reader(model, sc)
    v = TagVerdict(
        not found, scheme.formula(), policy, model.shapes, model.nb, scheme.coverage(), found
    )
    if found:
        sc = found[0]
        late = sc.gap > horizon
        v.findings.append(
            Finding(
                Category.STALE,
                Severity.NOTE if late else Severity.FAIL,
                f"stale pass ({sc.kind.value}, {scheme.formula()}, {policy.value}): "
                f"{sc.text(model.nb, scheme.bits)}. {len(found)} "
                f"scenario{'s' if len(found) > 1 else ''} in all."
                + (f" It needs {sc.gap} steps, past the horizon of {horizon}." if late else ""),
                _fix(sc.kind, scheme, policy),
                {
                    "kind": sc.kind.value,
                    "pair": sc.pair,
                    "tag": sc.tag,
                    "gap": sc.gap,
                    "reader": sc.reader,
                    "reader_slot": sc.reader_slot,
                    "reader_shape": sc.reader_shape,
                    "reader_epoch": sc.reader_epoch,
                    "writer_slot": sc.writer_slot,
                    "writer_shape": sc.writer_shape,
                    "writer_epoch": sc.writer_epoch,
                    "between_shape": sc.between_shape,
                    "epoch_fraction": sc.epoch_fraction,
                    "log10_per_step": sc.log10_per_step,
                    "scenarios": len(found),
                },
            )
        )
    if model.programs is not None:
        # the tags each CTA's ops compute, where they differ from the scheme's
        v.findings += program_findings(
            model.programs,
            scheme,
            model.shapes,
            model.nb,
            zeroed=policy is Policy.ZEROED,
            epoch0=epoch0,
        )
    for f in overflow_findings(scheme, n, epoch0, horizon):
        if f.category is Category.OVERFLOW:
            f.message += _example_poll(model, int(f.details["slot"]), int(f.details["tag"]))
        v.findings.append(f)
    v.safe = not any(f.fails for f in v.findings)
    return v


def _cleared(
    model: StepModel, scheme: TagScheme, a: int, s2: int, c: int, e: int, logp: float, steps: int
) -> Scenario:
    frac = _cleared_fraction(scheme, s2)
    return Scenario(
        Kind.CLEARED,
        c,
        model.pair(c, a, s2),
        model.shapes[a],
        s2,
        e,
        CLEARED,
        steps,
        epoch_fraction=frac,
        log10_per_step=logp + math.log10(max(frac, 1e-300)),
    )


def _cleared_fraction(scheme: TagScheme, slot: int) -> float:
    if isinstance(scheme, FrozenEpoch) and scheme.captured is None:
        return _cleared_fraction(scheme.base, slot)  # the share of epochs to freeze at
    if isinstance(scheme, StepTag) and scheme.epoch_bits is not None:
        mod = 1 << scheme.bits
        m = 1 << scheme.epoch_bits
        q = mod // m
        g = math.gcd(scheme.tag_slots, mod)
        p = mod // g
        e = scheme.cleared(slot)
        if e is None:
            return 0.0
        k0 = scheme.key(e) % p
        pos = _count_in(1, m - 1, k0, p)  # positive keys: blocks of epochs >= 0
        neg = _count_in(1, m - 1, (-k0) % p, p)  # |key| of negative keys
        zero = 1 if k0 == 0 else 0
        return ((pos + neg) * (q // 2) + zero * q) / mod
    if isinstance(scheme, StepTag):
        return 1.0 / (1 << scheme.bits)
    return 1.0 if scheme.cleared(slot) is not None else 0.0


def _example_poll(model: StepModel, slot: int, tag: int) -> str:
    """A poll that waits for the wrapped tag, named (the first pair the launch polls)."""
    polled = np.flatnonzero(model.polls[0, slot])
    if not polled.size:
        return ""
    c = int(polled[0])
    pair = model.pair(c, 0, slot)
    sc = Scenario(Kind.SAME_STEP, c, pair, model.shapes[0], slot, 0, tag, 0)
    who = _reader(model, sc)
    return f"; e.g. {who + ' polling ' if who else 'the poll of '}{pair} waits for tag {tag}"


def _count_in(lo: int, hi: int, residue: int, p: int) -> int:
    """How many x in lo..hi have x = residue (mod p)."""
    first = lo + (residue - lo) % p
    return 0 if first > hi else (hi - first) // p + 1


def _reader(model: StepModel, sc: Scenario) -> str:
    """The CTA and stage that poll the scenario's pair, in words (the step model's
    kernel names them; "" where it cannot)."""
    a = model.shapes.index(sc.reader_shape)
    return model.reader(sc.cls, a, sc.reader_slot)


def overflow_findings(
    scheme: TagScheme, slots: int, epoch0: int = 0, horizon: int = HORIZON
) -> list[Finding]:
    out: list[Finding] = []
    for s in range(slots):
        e = scheme.overflow(s)
        if e is None:
            continue
        steps = scheme.steps_to(epoch0, e)
        late = steps > horizon
        out.append(
            Finding(
                Category.OVERFLOW,
                Severity.NOTE if late else Severity.FAIL,
                f"tag beyond int{scheme.bits}: slot {s} at epoch {e}: {scheme.formula()} is "
                f"{scheme.intended(e, s)}, the device computes {scheme.tag(e, s)}"
                + (f" ({steps} steps from epoch {epoch0}, past the horizon)" if late else ""),
                _overflow_fix(scheme),
                {"slot": s, "epoch": e, "intended": scheme.intended(e, s), "tag": scheme.tag(e, s)},
            )
        )
        break
    if isinstance(scheme, StepTag) and slots > scheme.tag_slots:
        out.append(
            Finding(
                Category.STALE,
                Severity.NOTE,
                f"slots {scheme.tag_slots}..{slots - 1} are >= TAG_SLOTS = {scheme.tag_slots}: "
                f"their tags are the next epoch's of slots 0..; the launcher requires "
                f"slot < TAG_SLOTS",
                f"TAG_SLOTS >= {slots}",
            )
        )
    return out


def _overflow_fix(scheme: TagScheme) -> str:
    if isinstance(scheme, StepTag) and scheme.epoch_bits is not None:
        room = scheme.bits - 1 - scheme.epoch_bits
        return (
            f"keep 2^epoch_bits x TAG_SLOTS within int{scheme.bits}: TAG_SLOTS <= 2^{room} "
            f"with {scheme.epoch_bits} epoch bits, or fewer epoch bits"
        )
    return "a wider tag"
