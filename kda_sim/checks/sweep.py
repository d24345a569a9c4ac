"""The safety map of one GPU: every shape R x L, whether it finishes, deadlocks or is
invalid, and the predicted time. Each valid shape gets the static verdict (in-order
dispatch) and one nominal engine run (its makespan is the prediction); the two must agree.

The two axes are the kernel's (its ``sweep_axes`` hook: two configuration fields, K1's
R and L); ``Cell.R`` and ``Cell.L`` hold their values. A kernel without the hook has no
map: :func:`sweep` says so.
"""

from __future__ import annotations

import dataclasses
from dataclasses import asdict, dataclass
from functools import partial
from pathlib import Path
from typing import Any

from kda_sim.checks.deadlock_static import check_static, slots_for
from kda_sim.checks.waitgraph import waitgraph_of
from kda_sim.engine import simulate
from kda_sim.errors import InvalidInput
from kda_sim.gcpause import gc_paused
from kda_sim.kernels.registry import DEFAULT_KERNEL, get
from kda_sim.kernels.spec import hook
from kda_sim.machine.profile import GpuProfile
from kda_sim.machine.residency import check_fits, check_occupancy
from kda_sim.memo import transient
from kda_sim.parallel import Jobs, pmap

FINISHES = "finishes"
DEADLOCK = "deadlocks"
INVALID = "invalid"


@dataclass
class Cell:
    R: int  # the first axis's value (K1: requests)
    L: int  # the second's (K1: tokens a request)
    verdict: str  # finishes | deadlocks | invalid
    time_ns: float | None = None
    reason: str = ""  # why invalid, or the first link of the deadlock
    slots: int | None = None
    agree: bool = True  # the static verdict and the engine agree

    def to_dict(self) -> dict:
        return asdict(self)


def sweep_cell(
    prof: GpuProfile,
    r: int,
    lng: int,
    occupancy: int | None = None,
    kernel: str = DEFAULT_KERNEL,
    fields: dict[str, Any] | None = None,
) -> Cell:
    """The cell of ``kernel`` at axis values (r, lng), its other configuration fields
    ``fields`` (the rest: the configuration's defaults)."""
    spec = get(kernel)
    first, second = axes_of(spec)
    try:
        cfg = spec.validate(spec.config_from_dict({**(fields or {}), first: r, second: lng}))
        check_fits(cfg, prof)
        check_occupancy(cfg, prof, occupancy)
    except InvalidInput as e:
        return Cell(r, lng, INVALID, reason=str(e))
    slots = slots_for(cfg, prof, occupancy)
    st = check_static(waitgraph_of(cfg), slots)
    res = simulate(cfg, prof, occupancy=occupancy)
    reason = st.findings[0].message.split(". ", 1)[-1] if st.findings else ""
    return Cell(
        r,
        lng,
        FINISHES if st.finishes else DEADLOCK,
        res.timeline.makespan,
        reason,
        slots.total,
        agree=bool(st.finishes) == (not res.deadlock),
    )


def axes_of(spec: Any) -> tuple[str, str]:
    """The kernel's two sweep axes, or ``InvalidInput`` if it has none."""
    axes = hook(spec, "sweep_axes")
    if axes is None:
        raise InvalidInput(f"{spec.name} defines no sweep axes: no safety map", what="kernel")
    return axes


def sweep(
    prof: GpuProfile,
    *,
    kernel: str = DEFAULT_KERNEL,
    occupancy: int | None = None,
    rs: range = range(1, 9),
    ls: range = range(1, 5),
    jobs: Jobs = None,
    progress: bool | None = None,
    **fields: Any,
) -> list[Cell]:
    """Every shape's cell; ``fields``: the kernel's other configuration fields (K1: nb,
    kda0, the variants), each the same for every cell. The shapes are independent, so
    ``jobs`` processes (default: the cores this process may use), or a cluster's workers,
    share them; each builds its own protocols. ``progress``: a bar on stderr (default:
    when it is a terminal)."""
    spec = get(kernel)
    first, second = axes_of(spec)
    # every field the configuration type has (its dict may leave out fields that are off)
    cfg0 = spec.default_config()
    known = (
        [f.name for f in dataclasses.fields(cfg0)]
        if dataclasses.is_dataclass(cfg0)
        else list(spec.config_to_dict(cfg0))
    )
    unknown = sorted(set(fields) - set(known))
    if unknown:
        raise InvalidInput(
            f"not a configuration field of {spec.name}: {unknown} (known: {known})",
            what="config",
        )
    shapes = [(r, lng) for r in rs for lng in ls]
    cell = partial(_cell, prof, occupancy, kernel, fields)
    # the costliest shapes first, so that the processes end together
    cost = partial(shape_cost, spec, first, second, fields)
    return pmap(cell, shapes, jobs, desc="sweep", progress=progress, cost=cost)


def shape_cost(
    spec: Any, first: str, second: str, fields: dict[str, Any], shape: tuple[int, int]
) -> float:
    """What a shape's cell costs, a priori: its launch's ops where the kernel's
    ``launch_size`` hook says them (K1's sweep: each cell's CPU follows its ops with a
    correlation of 0.97, R * L's 0.72: R = 8 L = 1 costs as much as R = 4 L = 4), else
    the product of the axes; 0 where the configuration is refused (its cell is only
    that refusal)."""
    size = hook(spec, "launch_size")
    if size is None:
        return float(shape[0] * shape[1])
    try:
        cfg = spec.validate(spec.config_from_dict({**fields, first: shape[0], second: shape[1]}))
        return float(size(cfg)[0])
    except InvalidInput:
        return 0.0
    except Exception:  # a kernel file's hook in error: its cell says so, this only orders
        return float(shape[0] * shape[1])


@gc_paused  # over the whole shape: its steps' own pauses left the wait graph's unpaused
def _cell(
    prof: GpuProfile,
    occupancy: int | None,
    kernel: str,
    fields: dict[str, Any],
    shape: tuple[int, int],
) -> Cell:
    """:func:`sweep_cell` of one shape: what a worker runs. The shape's protocol, hand-off
    table and wait graph are dropped after it (``transient``): no other cell asks for
    them, and kept they were scanned by the collector and held the process's memory."""
    with transient():
        return sweep_cell(prof, shape[0], shape[1], occupancy, kernel, fields)


def format_table(cells: list[Cell], gpu: str, axes: tuple[str, str] = ("R", "L")) -> str:
    """The map as text, its rows the first axis, its columns the second (``axes``: their
    names)."""
    a, b = axes
    rs = sorted({c.R for c in cells})
    ls = sorted({c.L for c in cells})
    at = {(c.R, c.L): c for c in cells}
    head = f"{gpu}: {a} \\ {b} " + "".join(f"{f'{b}={lng}':>12}" for lng in ls)
    lines = [head]
    for r in rs:
        row = f"{f'{a}={r}':>{len(gpu) + len(a) + len(b) + 6}}"
        for lng in ls:
            c = at[(r, lng)]
            if c.verdict == FINISHES:
                txt = f"{c.time_ns / 1e3:.1f} us" if c.time_ns is not None else "finishes"
            elif c.verdict == DEADLOCK:
                txt = "DEADLOCK"
            else:
                txt = "invalid"
            if not c.agree:
                txt += "!"
            row += f"{txt:>12}"
        lines.append(row)
    n = {v: sum(c.verdict == v for c in cells) for v in (FINISHES, DEADLOCK, INVALID)}
    lines.append(
        f"{n[FINISHES]} finish, {n[DEADLOCK]} deadlock, {n[INVALID]} invalid"
        + ("" if all(c.agree for c in cells) else "; ! = static and engine disagree")
    )
    lines += ["", "slots (CTAs resident at once; fewer than the launch's CTAs can deadlock):"]
    for r in rs:
        row = f"{f'{a}={r}':>{len(gpu) + len(a) + len(b) + 6}}"
        for lng in ls:
            c = at[(r, lng)]
            row += f"{'-' if c.slots is None else c.slots:>12}"
        lines.append(row)
    why: dict[str, list[str]] = {}
    for c in cells:
        if c.verdict == INVALID:
            why.setdefault(c.reason, []).append(f"{c.R}x{c.L}")
    if why:
        lines += ["", "invalid:"]
        lines += [f"  {', '.join(shapes)}: {reason}" for reason, shapes in why.items()]
    return "\n".join(lines)


def save_png(cells: list[Cell], gpu: str, path: Path, axes: tuple[str, str] = ("R", "L")) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.colors import ListedColormap

    rs = sorted({c.R for c in cells})
    ls = sorted({c.L for c in cells})
    code = {FINISHES: 0, DEADLOCK: 1, INVALID: 2}
    at = {(c.R, c.L): c for c in cells}
    grid = [[code[at[(r, lng)].verdict] for lng in ls] for r in rs]
    fig, ax = plt.subplots(figsize=(1.6 * len(ls) + 2, 0.6 * len(rs) + 1.5))
    ax.imshow(
        grid, cmap=ListedColormap(["#7fc97f", "#f0027f", "#d9d9d9"]), vmin=0, vmax=2, aspect="auto"
    )
    for i, r in enumerate(rs):
        for j, lng in enumerate(ls):
            c = at[(r, lng)]
            if c.verdict == FINISHES and c.time_ns is not None:
                txt = f"{c.time_ns / 1e3:.1f} us"
            else:
                txt = c.verdict
            ax.text(j, i, txt, ha="center", va="center", fontsize=8)
    ax.set_xticks(range(len(ls)), [f"{axes[1]}={x}" for x in ls])
    ax.set_yticks(range(len(rs)), [f"{axes[0]}={x}" for x in rs])
    ax.set_title(f"{gpu}: finishes (time) / deadlocks / invalid")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
