"""Follow a hand-off: pick a poll, see the puts it waited on, and the critical path."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from kda_sim.app.figures import Filter, HandoffView, Layer
from kda_sim.app.views.common import Ctx, critical_of, figure_cached, show_chart
from kda_sim.timeline.critical import CriticalPath, poll_sources
from kda_sim.timeline.model import PollRecord, Timeline


def _poll_label(i: int, p: PollRecord) -> str:
    task = f" task {p.task}" if p.task >= 0 else ""
    wait = "never satisfied" if p.wait is None else f"waited {p.wait / 1e3:.3f} us"
    return f"#{i} {p.stage}{task} · poll {p.label} ({p.n_cells} cells) · {wait}"


def default_pick(tl: Timeline, cp: CriticalPath | None) -> tuple[int, int]:
    """The longest hand-off on the critical path, or the longest poll wait."""
    if cp is not None and cp.handoffs():
        h = max(cp.handoffs(), key=lambda s: s.dur)
        polls = tl.ctas[h.cta].polls
        for i, p in enumerate(polls):
            if p.satisfied == h.end and p.producer == h.src:
                return h.cta, i
    best = (0, 0, -1.0)
    for c in tl.ctas:
        for i, p in enumerate(c.polls):
            if p.wait is not None and p.wait > best[2]:
                best = (c.cta, i, p.wait)
    return best[0], best[1]


def render(ctx: Ctx) -> None:
    run = ctx.run
    which = "real" if run.real is not None else "simulated"
    if run.real is not None and run.sim is not None:
        which = st.radio("Run", ("real", "simulated"), horizontal=True, key="ho_which")
    tl = run.real_linked if which == "real" and run.real_linked is not None else run.main
    if which == "simulated" and run.sim is not None:
        tl = run.sim
    key = f"{ctx.run_key}|{which}"
    cp = critical_of(key, tl)
    c0, i0 = default_pick(tl, cp)

    a, b = st.columns([1, 4])
    cta = int(a.number_input("CTA", 0, len(tl.ctas) - 1, value=c0, step=1, key=f"ho_cta_{key}"))
    polls = tl.ctas[cta].polls
    if not polls:
        b.info(f"CTA {cta} ({tl.ctas[cta].role}) polls nothing: pick another CTA.")
        _critical_section(tl, cp, key)
        return
    labels = [_poll_label(i, p) for i, p in enumerate(polls)]
    pick = b.selectbox(
        "Poll",
        range(len(polls)),
        index=i0 if cta == c0 and i0 < len(polls) else 0,
        format_func=lambda i: labels[i],
        key=f"ho_poll_{key}_{cta}",
    )
    poll = polls[int(pick)]
    sources = tuple(poll_sources(tl, cta, int(pick)))
    view = HandoffView(cta, poll, sources)
    if view.inferred:
        st.info(
            f"The trace records no puts: the arrow comes from CTA {poll.producer}, the "
            f"producer the model's hand-off graph and the recorded times make the last one "
            f"(its put at the latest time the trace allows)."
        )
    elif not sources:
        st.info(
            "No put released this poll: every pair it reads was already there when it began "
            "(its wait is the poll's own latency), or the trace does not say who put them."
        )
    fig = figure_cached(
        key,
        (Layer(which, tl, False),),
        Filter(),
        critical=cp,
        handoff=view,
        handoff_key=f"{cta}:{pick}",
        title=f"CTA {cta}: {labels[int(pick)]} — arrows from the puts it waited on",
    )
    show_chart(fig, "handoff_chart")
    if sources:
        st.markdown(
            f"**{len(sources)} put(s)** fed this poll; the bold arrow is the one it saw last "
            f"(the one that released it)."
        )
        st.dataframe(_sources_table(tl, poll, sources), hide_index=True, width="stretch")
    _critical_section(tl, cp, key)


def _sources_table(tl: Timeline, poll: PollRecord, sources) -> pd.DataFrame:
    t0 = tl.origin
    rows = []
    for s in sorted(sources, key=lambda s: -tl.ctas[s.cta].puts[s.put_index].time):
        u = tl.ctas[s.cta].puts[s.put_index]
        rows.append(
            {
                "producer CTA": s.cta,
                "role": tl.ctas[s.cta].role,
                "stage": u.stage,
                "task": u.task,
                "put": f"{u.region}[{u.first}..] ({u.n_cells} cells)",
                "put at us": round((u.time - t0) / 1e3, 3),
                "poll satisfied - put, us": None
                if poll.satisfied is None
                else round((poll.satisfied - u.time) / 1e3, 3),
                "released it": s.last,
            }
        )
    return pd.DataFrame(rows)


def _critical_section(tl: Timeline, cp: CriticalPath | None, key: str) -> None:
    st.subheader("Critical path")
    if cp is None:
        st.warning("No CTA finished, so there is no critical path; see What-if for the chain.")
        return
    st.markdown(
        f"{len(cp.steps)} steps over CTAs {' → '.join(map(str, cp.ctas))}: "
        f"**{cp.length / 1e3:.2f} us** of the {(tl.makespan or 0) / 1e3:.2f} us makespan."
    )
    a, b = st.columns([3, 2])
    t0 = tl.origin
    a.dataframe(
        pd.DataFrame(
            [
                {
                    "kind": s.kind,
                    "CTA": s.cta,
                    "from CTA": s.src,
                    "what": s.label,
                    "start us": round((s.start - t0) / 1e3, 3),
                    "end us": round((s.end - t0) / 1e3, 3),
                    "us": round(s.dur / 1e3, 3),
                }
                for s in cp.steps
            ]
        ),
        hide_index=True,
        width="stretch",
    )
    parts = sorted(cp.by_stage.items(), key=lambda kv: -kv[1])
    fig = go.Figure(
        go.Bar(
            x=[v / 1e3 for _, v in parts],
            y=[k for k, _ in parts],
            orientation="h",
            marker={"color": "#d62728"},
            hovertemplate="%{y}: %{x:.3f} us<extra></extra>",
        )
    )
    fig.update_layout(
        title={"text": "time on the path by stage (us)", "font": {"size": 13}},
        height=60 + 22 * len(parts),
        margin={"l": 10, "r": 10, "t": 30, "b": 20},
    )
    fig.update_yaxes(autorange="reversed")
    with b:
        st.plotly_chart(fig, key=f"crit_stages_{key}", width="stretch")
