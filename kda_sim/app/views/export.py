"""Take it away: the Gantt figure as PNG (matplotlib) and the timeline as Perfetto JSON."""

from __future__ import annotations

import io
import json
import re

import streamlit as st

from kda_sim.app.views.common import Ctx
from kda_sim.timeline.chrome import to_chrome
from kda_sim.timeline.model import Timeline


def png_bytes(tl: Timeline) -> bytes:
    import matplotlib.pyplot as plt

    from kda_sim.timeline.gantt import gantt

    fig = gantt(tl)
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    plt.close(fig)
    return buf.getvalue()


def perfetto_bytes(tl: Timeline, flows_from: Timeline | None = None) -> bytes:
    return json.dumps(to_chrome(tl, flows_from), separators=(",", ":")).encode()


def slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", name).strip("-").lower() or "run"


def render(ctx: Ctx) -> None:
    run = ctx.run
    st.markdown(
        "The PNG is the matplotlib Gantt chart (a row a CTA, poll waits in black). The JSON "
        "is a Chrome trace with hand-offs as flows: open it at ui.perfetto.dev; "
        "`kda-sim` reads it back without loss. A real trace that records no puts gets its "
        "arrows from the put times the model attributes, named *handoff (put time from the "
        "model)*; its own records stay as they were."
    )
    base = slug(run.name)
    for label, tl, flows in (("real", run.real, run.linked), ("simulated", run.sim, None)):
        if tl is None:
            continue
        a, b = st.columns(2)
        # callables: the bytes are made only when the button is pressed
        a.download_button(
            f"PNG of the {label} run",
            data=lambda tl=tl: png_bytes(tl),
            file_name=f"{base}-{label}.png",
            mime="image/png",
            key=f"dl_png_{label}",
            icon=":material/image:",
        )
        b.download_button(
            f"Perfetto JSON of the {label} run",
            data=lambda tl=tl, f=flows: perfetto_bytes(tl, f),
            file_name=f"{base}-{label}.json",
            mime="application/json",
            key=f"dl_json_{label}",
            icon=":material/download:",
        )
