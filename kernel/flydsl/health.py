"""The bounded-wait (debug) build's ``health`` buffer: its layout, shared by the kernel
(:mod:`kda_kernel.flydsl.k1_ctx`, which writes it) and the runner (which reads it), and
its decoder. Pure Python (numpy): the runner's tests read a buffer the fake launch
wrote with these constants.

``health`` is int32. Word ``ABORT`` holds the tag of the launch that gave up first: a
CTA of that launch that sees it there stops waiting ("released"). A tag, not a flag, so
the buffer is never cleared: an older launch's give-up never releases a newer launch.
Then one record of ``REC_WORDS`` a CTA from ``REC0``: the first wait that CTA gave up on
(which CTA: the record's position; which stage: the site; which pair: the cell).
``alarm``, the kernel's scalar argument, is the bound: ``s_memrealtime`` ticks (100 MHz
on gfx942 / gfx950) a poll may wait before it gives up.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kda_sim.errors import InvalidInput
from kda_sim.protocol.space import CellSpace

ABORT = 0
REC0 = 4  # first record (words 1..3 unused: records start 16-byte aligned)
REC_WORDS = 8
# fields of a record (int32 words)
F_TAG = 0  # the launch's tag: a record is this launch's only if it matches
F_KIND = 1
F_CELL = 2  # the first stale pair of the poll: its global cell id in scratch
F_SEEN = 3  # the tag that pair held when the poll gave up
F_SITE = 4  # index into SITES
F_TASK = 5  # the kda task (-1: a role stage)
F_TIME_LO = 6  # s_memrealtime at the give-up, low and high words
F_TIME_HI = 7

KIND_TIMEOUT = 1  # the wait ran past the bound
KIND_RELEASED = 2  # another CTA gave up first (ABORT holds this launch's tag)
KIND_NAMES = {KIND_TIMEOUT: "timeout", KIND_RELEASED: "released"}

# every poll site of the FlyDSL K1 (stage, poll label), as Ctx.poll names them;
# ("mix", "PART") is gate_local's
SITES: tuple[tuple[str, str], ...] = (
    ("gate", "PART"),
    ("mix", "WGT"),
    ("mix", "MSQ"),
    ("load_x", "XRDY"),
    ("k.conv", "PROJ"),
    ("k.gates", "PROJ"),
    ("k.gates", "QK"),
    ("k.norm", "ONRM+PROJ"),
    ("mix", "PART"),
)
NO_TASK = -1
TICKS_PER_MS = 100_000  # s_memrealtime: 100 MHz
ALARM_MAX = 2**31 - 1  # alarm is an int32 argument


def site(stage: str, label: str) -> int:
    """The site number of a poll; a poll not in SITES is a kernel bug (raised at trace
    time, so the table cannot fall behind the kernel)."""
    try:
        return SITES.index((stage, label))
    except ValueError:
        raise ValueError(f"poll ({stage!r}, {label!r}) is not in health.SITES") from None


def words(blocks: int) -> int:
    """int32 words of the health buffer of a launch of ``blocks`` CTAs."""
    return REC0 + REC_WORDS * blocks


def alarm_ticks(watchdog_ms: float) -> int:
    """``--watchdog-ms`` as the kernel's ``alarm`` (ticks); refused past int32."""
    ticks = round(watchdog_ms * TICKS_PER_MS)
    if not 0 < ticks <= ALARM_MAX:
        most = ALARM_MAX / TICKS_PER_MS
        raise InvalidInput(
            f"--watchdog-ms {watchdog_ms}: the FlyDSL K1's bound is 1 to {ALARM_MAX} "
            f"s_memrealtime ticks (100 MHz), 0.00001 to {most:.0f} ms",
            what="--watchdog-ms",
        )
    return ticks


@dataclass(frozen=True)
class GiveUp:
    """One CTA's give-up record, decoded."""

    cta: int
    kind: str  # timeout / released
    stage: str
    label: str  # the poll's label (its region or regions)
    region: str  # the stale pair's region, index in it
    index: int
    expected_tag: int
    seen_tag: int
    task: int  # -1: a role stage
    ticks: int  # s_memrealtime at the give-up

    def line(self, t0: int) -> str:
        task = f"task {self.task} " if self.task != NO_TASK else ""
        return (
            f"+{(self.ticks - t0) / (TICKS_PER_MS / 1000):9.3f} us  CTA {self.cta:3d} {task}"
            f"{self.stage} [{self.label}] {self.kind}: {self.region}[{self.index}] expected "
            f"tag {self.expected_tag}, saw {self.seen_tag}"
        )


class KernelStuck(RuntimeError):
    """The bounded-wait build gave up on at least one wait; ``records`` cause first."""

    def __init__(self, records: list[GiveUp]) -> None:
        self.records = records
        t0 = min(r.ticks for r in records) if records else 0
        first = [r for r in records if r.kind != "released"]
        head = (
            f"FlyDSL K1 watchdog: {len(first)} CTA(s) gave up, {len(records) - len(first)} released"
        )
        lines = [r.line(t0) for r in records[:40]]
        more = f"\n  ... {len(records) - 40} more" if len(records) > 40 else ""
        super().__init__(head + "\n  " + "\n  ".join(lines) + more)


def read(health: np.ndarray, space: CellSpace, tag: int) -> list[GiveUp]:
    """The records of the launch tagged ``tag``: a timeout before the waits it released,
    then by time."""
    h = np.asarray(health, dtype=np.int64)
    recs = h[REC0:].reshape(-1, REC_WORDS)
    out: list[GiveUp] = []
    for cta, r in enumerate(recs):
        kind = int(r[F_KIND])
        if int(r[F_TAG]) != tag or kind not in KIND_NAMES:
            continue  # an older launch's record, or none
        n = int(r[F_SITE])
        stage, label = SITES[n] if 0 <= n < len(SITES) else ("?", "?")
        try:
            ref, index = space.split(int(r[F_CELL]))
            region = ref.name
        except (IndexError, ValueError):
            region, index = "?", int(r[F_CELL])
        ticks = (int(r[F_TIME_HI]) << 32) | (int(r[F_TIME_LO]) & 0xFFFFFFFF)
        seen, task = int(r[F_SEEN]), int(r[F_TASK])
        out.append(
            GiveUp(cta, KIND_NAMES[kind], stage, label, region, index, tag, seen, task, ticks)
        )
    out.sort(key=lambda g: (g.kind == "released", g.ticks, g.cta))
    return out


def check(health: np.ndarray, space: CellSpace, tag: int) -> None:
    """Raise :class:`KernelStuck` where the launch tagged ``tag`` gave up a wait."""
    recs = read(health, space, tag)
    if recs:
        raise KernelStuck(recs)
