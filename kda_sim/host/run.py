"""Run a host sequence: each launch (or pair of grids) through the engine from the memory
the previous launches left, in order, until one hangs (later work in the stream would
queue behind it)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from kda_sim.engine.initial import Initial
from kda_sim.engine.simulate import SimResult, simulate
from kda_sim.errors import InvalidInput
from kda_sim.host.memory import Memory, PutCells, keys
from kda_sim.host.steps import HostSequence, LaunchStep, Replay, Together, Zero
from kda_sim.machine.profile import GpuProfile
from kda_sim.protocol.handoffs import Handoffs, derive, handoffs_of, put_ops
from kda_sim.protocol.program import CtaProgram, Launch


@dataclass
class Grid:
    cfg: Any
    first: int  # its CTA 0 in the launch the engine ran
    ctas: int


@dataclass
class LaunchRun:
    """One launch of the sequence (a fresh launch, a replay, or grids run together)."""

    index: int
    label: str  # "launch 0", "replay 2 of launch 0"
    epoch: int  # the tag its puts write and its polls wait for
    grids: list[Grid]
    handoffs: Handoffs
    initial: Initial
    word_from: dict[int, str]  # word cell -> who left its initial value
    tag_from: dict[int, str]  # tagged pair cell -> who wrote that tag
    result: SimResult

    def cta(self, c: int) -> str:
        """CTA ``c`` of the engine's launch, as the user numbers it."""
        if len(self.grids) == 1:
            return f"CTA {c}"
        g = next(i for i, gr in enumerate(self.grids) if gr.first <= c < gr.first + gr.ctas)
        return f"grid {g} CTA {c - self.grids[g].first}"


@dataclass
class SequenceRun:
    sequence: HostSequence
    kernel: Any
    runs: list[LaunchRun] = field(default_factory=list)
    not_run: int = 0  # launches after a hang, never started


def _parse_value(text: str, default: Any, token: str) -> Any:
    try:
        if isinstance(default, bool):
            if text.lower() not in ("0", "1", "true", "false"):
                raise ValueError(text)
            return text.lower() in ("1", "true")
        return type(default)(text)
    except ValueError as e:
        raise InvalidInput(
            f"{token!r}: {text!r} is not a {type(default).__name__}",
            what="sequence",
            where="--sequence",
        ) from e


def config_of(spec: Any, base: Any, step: LaunchStep) -> Any:
    """``base`` with the step's field overrides, validated."""
    if not step.overrides:
        return base
    d = spec.config_to_dict(base)
    for key, value in step.overrides:
        token = f"{key}={value}"
        if key not in d:
            raise InvalidInput(
                f"{token!r}: {spec.name} has no field {key!r} (fields: {', '.join(d)})",
                what="sequence",
                where="--sequence",
            )
        d[key] = _parse_value(value, d[key], token)
    return spec.validate(spec.config_from_dict(d))


def _together(cfgs: list[Any], launches: list[Launch]) -> tuple[Launch, list[Grid]]:
    """One launch of every grid's CTAs, renumbered grid after grid (the engine dispatches
    them in that order, sharing its slots and memory)."""
    space = launches[0].space
    grids, programs = [], []
    for cfg, launch in zip(cfgs, launches, strict=True):
        if launch.space != space:
            raise InvalidInput(
                "grids launched together must lay out the same regions (they share memory): "
                f"{space.names}/{space.sizes} vs {launch.space.names}/{launch.space.sizes}",
                what="sequence",
                where="--sequence",
            )
        first = len(programs)
        grids.append(Grid(cfg, first, len(launch.programs)))
        programs += [CtaProgram(first + p.cta, p.role, p.tasks, p.ops) for p in launch.programs]
    return Launch(cfgs[0], space, tuple(programs)), grids


def _check_regions(names: tuple[str, ...], space_names: tuple[str, ...], kernel: str) -> None:
    for name in names:
        if name not in space_names:
            raise InvalidInput(
                f"'zero={name}': {kernel} has no region {name!r} "
                f"(regions: {', '.join(space_names)})",
                what="sequence",
                where="--sequence",
            )


class _Runner:
    def __init__(
        self,
        spec: Any,
        cfg: Any,
        prof: GpuProfile,
        occupancy: int | None,
        seq: HostSequence,
        fold_events: bool,
    ) -> None:
        self.spec, self.cfg, self.prof, self.occupancy = spec, cfg, prof, occupancy
        self.fold_events = fold_events
        self.memory = Memory()
        self.out = SequenceRun(seq, spec)
        self.names = tuple(spec.regions(cfg))
        # each launch's put cells split, made once for a launch the sequence runs again
        # (the launch object itself is kept with them, so its id names no other); the
        # memory is handed the split and keeps none of its own
        self.put_cells: dict[int, tuple[Launch, PutCells]] = {}

    def launch(self, grids: tuple[LaunchStep, ...], epoch: int, label: str) -> bool:
        """Run one launch (or grids together) from memory; False when it hangs."""
        for g in grids:
            self.memory.zero(g.zero)
        cfgs = [config_of(self.spec, self.cfg, g) for g in grids]
        if len(cfgs) == 1:
            ho = handoffs_of(cfgs[0])
            launch, run_launch = ho.launch, None
            parts = [Grid(cfgs[0], 0, len(launch.programs))]
        else:
            launch, parts = _together(cfgs, [self.spec.build(c) for c in cfgs])
            ho, run_launch = derive(launch), launch
        initial = self.memory.initial(launch.space, epoch)
        space, mem = launch.space, self.memory
        word_from = {
            c: mem.word_from.get(k, "?")
            for c, k in zip(initial.words, keys(space, initial.words), strict=True)
        }
        tag_from = dict(zip(initial.tagged, mem.pair_writers(space, initial.tagged), strict=True))
        res = simulate(
            cfgs[0],
            self.prof,
            occupancy=self.occupancy,
            launch=run_launch,
            initial=initial,
            grids=[(g.cfg, g.ctas) for g in parts] if run_launch is not None else None,
            fold_events=self.fold_events,
        )
        run = LaunchRun(
            len(self.out.runs), label, epoch, parts, ho, initial, word_from, tag_from, res
        )
        self.out.runs.append(run)
        assert res.final is not None
        got = self.put_cells.get(id(launch))
        if got is None or got[0] is not launch:
            got = self.put_cells[id(launch)] = (launch, _put_cells(launch))
        self.memory.absorb(
            launch.space, res.final, got[1], epoch, lambda c: f"{label} ({run.cta(c)})"
        )
        return not res.deadlock

    def run(self) -> SequenceRun:
        epoch = 0
        captured: tuple[LaunchStep, ...] | None = None
        captured_epoch, captured_label = 0, ""
        fresh = 0
        pending = list(self.out.sequence.steps)
        while pending:
            step = pending.pop(0)
            if isinstance(step, Zero):
                _check_regions(step.regions, self.names, self.spec.name)
                self.memory.zero(step.regions)
                continue
            if isinstance(step, Replay):
                assert captured is not None  # the parser refuses a replay before a launch
                ok = True
                for r in range(step.times):
                    if step.update:
                        epoch += 1
                    e = epoch if step.update else captured_epoch
                    ok = self.launch(captured, e, f"replay {r + 1} of {captured_label}")
                    if not ok:
                        self.out.not_run = step.times - r - 1 + _count(pending)
                        return self.out
                continue
            grids = step.grids if isinstance(step, Together) else (step,)
            for g in grids:
                _check_regions(g.zero, self.names, self.spec.name)
            epoch += 1
            captured, captured_epoch = grids, epoch
            captured_label = f"launch {fresh}"
            fresh += 1
            if not self.launch(grids, epoch, captured_label):
                self.out.not_run = _count(pending)
                return self.out
        return self.out


def _count(steps: list) -> int:
    return sum(s.times if isinstance(s, Replay) else 0 if isinstance(s, Zero) else 1 for s in steps)


def _put_cells(launch: Launch) -> PutCells:
    cells = {ref: np.asarray(op.cells).ravel() for ref, op in put_ops(launch)}
    return PutCells.split(launch.space, cells)


def run_sequence(
    spec: Any,
    cfg: Any,
    prof: GpuProfile,
    seq: HostSequence,
    *,
    occupancy: int | None = None,
    fold_events: bool = True,
) -> SequenceRun:
    """Simulate ``seq`` of kernel ``spec`` (every launch ``cfg`` unless a step overrides
    a field) on ``prof``; nominal latencies, so a sequence's outcome is reproducible.
    ``fold_events``: as :func:`~kda_sim.engine.simulate`'s, for every launch (off, each
    launch schedules the events an unfolded engine does: what benchmarks count)."""
    return _Runner(spec, cfg, prof, occupancy, seq, fold_events).run()
