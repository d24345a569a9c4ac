"""The one timeline type: a launch as it ran, simulated or measured.

Times are nanoseconds from the launch's earliest CTA start (or any origin the
source had; ``meta.clock`` says which clock). Nothing here knows whether the run
was simulated or measured: fields a source cannot know are ``None``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# the configuration fields Meta has as its own (K1's, which older files carry at the top
# level); any other kernel's configuration is kept in ``params``
_TOP_CONFIG = ("R", "L", "nb", "kda0", "gate_local", "blocks", "nw_first", "onw_first")


@dataclass(slots=True)
class Meta:
    source: str  # "simulated" | "measured"
    gpu: str
    R: int
    L: int
    nb: int = 8
    kda0: int = 0
    gate_local: bool = False
    blocks: int = 256
    clock: str = "simulated ns"
    extra: dict[str, Any] = field(default_factory=dict)
    nw_first: bool = False  # LaunchConfig.nw_first (after extra: older files lack it)
    onw_first: bool = False  # LaunchConfig.onw_first (likewise)
    kernel: str = "k1"  # the kernel's registered name (older files: K1's)
    params: dict[str, Any] = field(default_factory=dict)  # configuration fields not above

    @classmethod
    def for_launch(
        cls,
        cfg: Any,
        *,
        kernel: str | None = None,
        source: str,
        gpu: str,
        clock: str,
        extra: dict[str, Any] | None = None,
        blocks: int | None = None,
    ) -> Meta:
        """The metadata of a run of ``cfg`` (``blocks`` where a source recorded another
        CTA count than the configuration's), ``cfg`` of the kernel ``kernel`` (default:
        the registered kernel of its type)."""
        from kda_sim.kernels.registry import spec_for

        spec = spec_for(cfg)
        d = spec.config_to_dict(cfg)
        top = {k: d[k] for k in _TOP_CONFIG if k in d}
        if blocks is not None:
            top["blocks"] = blocks
        params = {k: v for k, v in d.items() if k not in _TOP_CONFIG}
        top.setdefault("R", 0)
        top.setdefault("L", 0)
        return cls(
            source=source,
            gpu=gpu,
            clock=clock,
            extra=dict(extra or {}),
            kernel=kernel or spec.name,
            params=params,
            **top,
        )

    def config(self) -> Any:
        """The launch configuration this run had, of its kernel's type (not validated: a
        trace may name an impossible one, and its reader says so)."""
        from kda_sim.kernels.registry import get

        d = {k: getattr(self, k) for k in _TOP_CONFIG}
        return get(self.kernel).config_from_dict({**d, **self.params})

    def measured_build(self) -> str | None:
        """Which of our kernels measured the run ("k1": the Triton K1 records its Triton
        version), so that a profile fitted to it can be preferred."""
        extra = self.extra if isinstance(self.extra, dict) else {}
        return "k1" if self.source == "measured" and "triton" in extra else None


@dataclass(slots=True)
class StageSpan:
    name: str
    task: int  # kda task index; -1 for role stages
    start: float
    end: float

    @property
    def dur(self) -> float:
        return self.end - self.start


@dataclass(slots=True)
class CellRange:
    region: str
    first: int
    last: int
    count: int


@dataclass(slots=True)
class PollRecord:
    stage: str
    task: int
    label: str  # the regions polled, e.g. "ONRM+PROJ"
    n_cells: int
    n_batches: int
    first_issue: float
    satisfied: float | None  # None: never satisfied (stuck)
    retries: int | None
    producer: int | None = None  # the CTA whose put was seen last
    put_time: float | None = None
    put_ref: int | None = None  # index into the producer's puts
    cells: list[CellRange] = field(default_factory=list)
    behind_loads: int | None = None  # loads of the CTA outstanding at first issue
    behind_weight_bytes: int | None = None  # weight bytes among them
    tag: int | None = None

    @property
    def wait(self) -> float | None:
        return None if self.satisfied is None else self.satisfied - self.first_issue


@dataclass(slots=True)
class PutRecord:
    stage: str
    task: int
    region: str
    n_cells: int
    first: int
    time: float


@dataclass(slots=True)
class LoadSpan:
    name: str
    kind: str  # weight | staging | flagged
    nbytes: int
    issue: float
    done: float | None
    stage: str = ""
    task: int = -1


@dataclass(slots=True)
class CtaTrack:
    cta: int
    role: str
    unit: int | None = None  # SM / CU it ran on
    xcd: int | None = None
    start: float | None = None  # None: never became resident
    end: float | None = None  # None: never finished
    stages: list[StageSpan] = field(default_factory=list)
    polls: list[PollRecord] = field(default_factory=list)
    puts: list[PutRecord] = field(default_factory=list)
    loads: list[LoadSpan] = field(default_factory=list)

    @property
    def finished(self) -> bool:
        return self.end is not None


@dataclass(slots=True)
class StuckWait:
    """A CTA that cannot go on: what it waits for and who would have to act."""

    cta: int
    stage: str
    task: int
    region: str  # "" for a CTA waiting for a slot
    index: int  # -1 where no single pair is meant
    producer: int | None  # the CTA that would put it (None: no CTA of the launch does)
    reason: str
    expected_tag: int | None = None
    seen_tag: int | None = None
    time: float | None = None


@dataclass(slots=True)
class Timeline:
    meta: Meta
    ctas: list[CtaTrack]
    stuck: list[StuckWait] = field(default_factory=list)

    @property
    def deadlock(self) -> bool:
        return bool(self.stuck) or any(not c.finished for c in self.ctas)

    @property
    def origin(self) -> float:
        starts = [c.start for c in self.ctas if c.start is not None]
        return min(starts) if starts else 0.0

    @property
    def makespan(self) -> float | None:
        """First start to last end; None when the launch did not finish."""
        if self.deadlock or not self.ctas:
            return None
        return max(c.end for c in self.ctas if c.end is not None) - self.origin

    def cta(self, i: int) -> CtaTrack:
        return self.ctas[i]

    def stage_spans(self):
        """(cta, span) for every stage of every CTA."""
        for c in self.ctas:
            for s in c.stages:
                yield c, s
