"""Host side of the watchdog: read the alarm buffer after a launch and raise with the
stuck waits, earliest first (the first one is the cause; the rest were released)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kda_kernel.triton import alarm_layout as A
from kda_kernel.triton.launch import Build
from kda_sim.timeline.model import StuckWait

UNKNOWN_CELL = "the stale copy was in another warp's replica of the poll"


@dataclass(frozen=True)
class StuckRecord:
    cta: int
    kind: str
    region: str
    index: int
    expected_tag: int
    seen_tag: int
    time_ns: int
    stage: str
    what: str
    task: int
    slot: int

    def line(self, t0: int) -> str:
        where = f"task {self.task} " if self.task >= 0 else ""
        if self.index < 0:
            cell, saw = f"{self.region} (cell not identified: {UNKNOWN_CELL})", ""
        else:
            cell, saw = f"{self.region}[{self.index}]", f", saw {self.seen_tag}"
        return (
            f"+{(self.time_ns - t0) / 1000:9.3f} us  CTA {self.cta:3d} {where}{self.stage} "
            f"[{self.what}] {self.kind}: {cell} expected tag {self.expected_tag}{saw} "
            f"(launch slot {self.slot})"
        )

    def as_stuck_wait(self) -> StuckWait:
        return StuckWait(
            cta=self.cta,
            stage=self.stage,
            task=self.task,
            region=self.region,
            index=self.index,
            producer=None,
            reason=f"watchdog: {self.kind}",
            expected_tag=self.expected_tag,
            seen_tag=self.seen_tag,
            time=float(self.time_ns),
        )


class KernelStuck(RuntimeError):
    """The watchdog gave up on at least one wait; ``records`` earliest first."""

    def __init__(self, records: list[StuckRecord]) -> None:
        self.records = records
        t0 = records[0].time_ns if records else 0
        first = [r for r in records if r.kind != "released"]
        head = f"K1 watchdog: {len(first)} CTA(s) gave up, {len(records) - len(first)} released"
        lines = [r.line(t0) for r in records[:40]]
        more = f"\n  ... {len(records) - 40} more" if len(records) > 40 else ""
        super().__init__(head + "\n  " + "\n  ".join(lines) + more)


def read_alarm(alarm: np.ndarray, launches: list[tuple[Build, int, int]]) -> list[StuckRecord]:
    """Records of the given launches, ``(build, slot, tag)`` each, earliest first."""
    alarm = np.asarray(alarm, dtype=np.int64)
    recs = alarm[A.REC0 :].reshape(-1, A.REC_WORDS)
    by_tag = {tag: (b, slot) for b, slot, tag in launches}
    out: list[StuckRecord] = []
    for cta, r in enumerate(recs):
        tag = int(r[A.F_TAG])
        kind = int(r[A.F_KIND])
        if tag not in by_tag or kind not in A.KIND_NAMES:
            continue  # an older launch's record, or none
        b, slot = by_tag[tag]
        space = b.space
        gidx = int(r[A.F_GIDX])
        stage, what = (
            A.SITES[int(r[A.F_SITE])] if 0 <= int(r[A.F_SITE]) < len(A.SITES) else ("?", "?")
        )
        if gidx == A.NO_CELL:
            rname, index = what, -1
        else:
            try:
                region, index = space.split(gidx)
                rname = region.name
            except (IndexError, ValueError):
                rname, index = "?", gidx
        out.append(
            StuckRecord(
                cta=cta,
                kind=A.KIND_NAMES[kind],
                region=rname,
                index=index,
                expected_tag=int(r[A.F_EXPECT]),
                seen_tag=int(r[A.F_SEEN]),
                time_ns=int(r[A.F_TIME]),
                stage=stage,
                what=what,
                task=int(r[A.F_TASK]),
                slot=slot,
            )
        )
    # the cause first: a timeout / reuse before the waits it released, then by time
    out.sort(key=lambda r: (r.kind == "released", r.time_ns, r.cta))
    return out


def check(alarm: np.ndarray, launches: list[tuple[Build, int, int]]) -> None:
    recs = read_alarm(alarm, launches)
    if recs:
        raise KernelStuck(recs)
