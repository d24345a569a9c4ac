"""A matplotlib Gantt figure of a timeline: a row a CTA, stages coloured, polls visible."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from kda_sim.timeline.colors import color_of, display
from kda_sim.timeline.model import Timeline

if TYPE_CHECKING:
    from matplotlib.figure import Figure


def gantt(tl: Timeline, *, title: str | None = None, polls: bool = True) -> Figure:
    """Stages as bars; poll waits as black ticks; stuck CTAs marked in red."""
    plt, Patch = _pyplot()
    fig, ax = plt.subplots(figsize=(14, 9), dpi=110)
    spec = display(tl.meta.kernel)
    roles, stages = tuple(spec.roles), tuple(spec.stages)
    role_colors, stage_colors = dict(spec.role_colors), dict(spec.stage_colors)
    t0 = tl.origin
    for c in tl.ctas:
        y = c.cta
        ax.barh(y, 0.6, left=-1.2, height=1.0, color=color_of(c.role, role_colors, roles), lw=0)
        by: dict[str, list[tuple[float, float]]] = {}
        for s in c.stages:
            by.setdefault(s.name, []).append(((s.start - t0) / 1e3, max(s.end - s.start, 1) / 1e3))
        for name, spans in by.items():
            ax.broken_barh(spans, (y - 0.45, 0.9), color=color_of(name, stage_colors, stages), lw=0)
        if polls:
            waits = [
                ((p.first_issue - t0) / 1e3, (p.satisfied - p.first_issue) / 1e3)
                for p in c.polls
                if p.satisfied is not None and p.satisfied > p.first_issue
            ]
            if waits:
                ax.broken_barh(waits, (y - 0.12, 0.24), color="black", lw=0)
    for s in tl.stuck:
        c = tl.ctas[s.cta]
        x = ((c.stages[-1].start if c.stages else (c.start or t0)) - t0) / 1e3
        ax.plot([x], [s.cta], marker="x", color="red", ms=4)
    ax.set_ylim(len(tl.ctas), -1)
    ax.set_xlim(left=-1.5)
    ax.set_xlabel("time (us)")
    ax.set_ylabel("CTA")
    m = tl.meta
    span = tl.makespan
    status = f"makespan {span / 1e3:.2f} us" if span is not None else "DOES NOT FINISH"
    if m.params:
        shape = " ".join(f"{k}={v}" for k, v in m.params.items())
    else:
        shape = f"R={m.R} L={m.L} nb={m.nb} kda0={m.kda0}"
    ax.set_title(title or f"{m.source} {m.gpu}  {shape}: {status}")
    names = {sp.name for _, sp in tl.stage_spans()}
    used = [s for s in stages if s in names] + sorted(names - set(stages))
    handles = [Patch(color=color_of(s, stage_colors, stages), label=s) for s in used]
    handles += [Patch(color="black", label="poll wait")]
    present = {c.role for c in tl.ctas}
    shown = [r for r in roles if r in role_colors] + sorted(present - set(roles))
    handles += [Patch(color=color_of(r, role_colors, roles), label=f"{r} CTAs") for r in shown]
    ax.legend(handles=handles, loc="lower right", fontsize=7, ncol=2)
    fig.tight_layout()
    return fig


def save_gantt(tl: Timeline, path: str | Path) -> None:
    fig = gantt(tl)
    fig.savefig(path)
    _pyplot()[0].close(fig)


def _pyplot() -> tuple[Any, Any]:
    """pyplot (on the Agg backend: no display) and ``Patch``, imported when a figure is
    drawn: importing them takes half a second that every ``kda-sim`` command, and every
    worker process it starts, would pay otherwise."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    return plt, Patch
