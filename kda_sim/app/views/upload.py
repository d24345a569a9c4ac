"""Bring a trace: our JSON timeline, a FlyDSL ktrace, or the twin's stamp tensor."""

from __future__ import annotations

import uuid

import streamlit as st

from kda_sim.app.data import parse_upload, unique_name
from kda_sim.app.views.common import Ctx
from kda_sim.errors import KdaSimError
from kda_sim.machine.profile import bundled_names
from kda_sim.timeline.summary import missing_part

UPLOADS = "uploads"  # session key: name -> (token, Timeline), in memory, never written
RUN_CHOICE = "run_choice"  # the sidebar's run selector
LAST = "upload_last"  # (ok, message) of the last upload, shown after the rerun


def on_upload() -> None:
    """Read the file as it arrives; a good one becomes the open run."""
    f = st.session_state.get("upload_file")
    if f is None:
        return
    shape = {
        k: st.session_state[f"up_{k}"]
        for k in ("R", "L", "nb", "kda0", "gate_local", "nw_first", "onw_first", "gpu")
        if f"up_{k}" in st.session_state
    }
    try:
        tl = parse_upload(f.name, f.getvalue(), shape)
    except KdaSimError as e:
        st.session_state[LAST] = (False, f"Could not load {f.name}: {e}")
        return
    uploads = st.session_state.setdefault(UPLOADS, {})
    name = unique_name(f"uploaded {f.name}", set(uploads))
    # the token names this upload in the global figure caches (names repeat across sessions)
    uploads[name] = (uuid.uuid4().hex, tl)
    st.session_state[RUN_CHOICE] = name
    m = tl.meta
    missing = missing_part(tl)
    st.session_state[LAST] = (
        True,
        f"Loaded {f.name}: {m.source} {m.gpu} R={m.R} L={m.L}, {len(tl.ctas)} CTAs"
        + (f", a partial trace: {missing}" if missing else "")
        + f". It is now the open run ('{name}').",
    )


def render(ctx: Ctx) -> None:
    with st.expander("Shape of a stamp tensor / ktrace upload (those files do not record it)"):
        a, b, c, d, e, f, g, h = st.columns(8)
        a.number_input("R", 1, 16, 2, key="up_R")
        b.number_input("L", 1, 8, 2, key="up_L")
        c.number_input("nb", 1, 31, 8, key="up_nb")
        d.number_input("kda0", 0, 255, 0, key="up_kda0")
        e.selectbox("GPU", bundled_names(), index=bundled_names().index("mi355x"), key="up_gpu")
        f.checkbox("gate_local", key="up_gate_local")
        g.checkbox("nw_first", key="up_nw_first")
        h.checkbox("onw_first", key="up_onw_first")
    st.file_uploader(
        "A kda-sim timeline (.json), a FlyDSL ktrace (.pftrace.gz) or a stamp tensor (.pt/.npy)",
        # no type= filter: Streamlit answers a wrong extension with an exception; our own
        # check answers it with a message that says which files are read
        key="upload_file",
        on_change=on_upload,
    )
    last = st.session_state.get(LAST)
    if last is not None:
        ok, msg = last
        (st.success if ok else st.error)(msg)
    st.caption("Uploads stay in this browser session's memory: nothing is kept on disk.")
    uploads = st.session_state.get(UPLOADS, {})
    if uploads:
        st.markdown("**This session's traces** (pick one under *Run* in the sidebar):")
        for name, (_, tl) in uploads.items():
            st.markdown(f"- {name}: {tl.meta.source} {tl.meta.gpu} R={tl.meta.R} L={tl.meta.L}")
