"""The page: a sidebar that picks the run and the view, then the view itself.

Views are chosen with a radio rather than tabs: Streamlit runs every tab's code on
each rerun, and only the open view should compute.
"""

from __future__ import annotations

import importlib
import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import streamlit as st

from kda_sim.app import data, picker
from kda_sim.app.views import upload
from kda_sim.app.views.common import Ctx
from kda_sim.errors import KdaSimError
from kda_sim.kernels.registry import get
from kda_sim.timeline.model import Meta
from kda_sim.timeline.summary import missing_part

log = logging.getLogger(__name__)


def _view(module: str) -> Callable[..., None]:
    """``kda_sim.app.views.<module>.render``, imported when the view is first drawn: a
    page pays only its open view's imports (the bug corpus's alone pull in the checks
    and the command line: about 1 s of the first render)."""

    def render(*args: object) -> None:
        importlib.import_module(f"kda_sim.app.views.{module}").render(*args)

    return render


VIEWS = {
    "Timeline": _view("timeline"),
    "Follow a hand-off": _view("handoffs"),
    "Compare": _view("compare"),
    "What-if": _view("whatif"),
    "Safety map": _view("safety"),
    "Tags": _view("tags"),
    "Bring a trace": upload.render,
    "Take it away": _view("export"),
}
# views of their own data, not of the sidebar's run: no run is loaded or simulated for them
RUNLESS = {
    "Bug corpus": _view("bugs"),
}


def _choices(root: Path) -> dict[str, tuple[str, object]]:
    """Run name -> (kind, what loads it), bundled traces first: the page opens on them."""
    out: dict[str, tuple[str, object]] = {}
    for p in data.bundled_traces(root):
        out[f"trace {p.name}"] = ("bundled", p)
    for name, (token, tl) in st.session_state.get(upload.UPLOADS, {}).items():
        out[name] = ("uploaded", (token, tl))
    out[data.default_run_name()] = ("simulated", None)
    out.update(picker.choices())
    return out


def _load(name: str, kind: str, what: object) -> tuple[data.Run, str]:
    if kind == "bundled":
        assert isinstance(what, Path)
        return data.bundled_run(what, name)
    if kind == "uploaded":
        token, tl = what  # type: ignore[misc]
        key = f"upload:{token}"
        return data.run_of_trace_cached(key, name, "uploaded", tl), key
    return data.default_simulation(), f"sim:{name}"


@dataclass
class Picked:
    """What the sidebar picked: the run's name, the view, the run's source; for a kernel
    run its setup, or why there is none."""

    name: str
    view: str
    kind: str
    what: object
    kernel: picker.KernelPick | None = None
    problem: str = ""


def _sidebar(root: Path) -> Picked:
    sb = st.sidebar
    sb.title("kda-sim")
    sb.caption(
        "Hand-offs of persistent kernels (K1 `kda_pre`, ticket queues, grid barriers, "
        "your own): simulated and measured launches."
    )
    choices = _choices(root)
    names = list(choices)
    if st.session_state.get(upload.RUN_CHOICE) not in names:
        st.session_state[upload.RUN_CHOICE] = names[0]
    name = sb.selectbox("Run", names, key=upload.RUN_CHOICE)
    kind, what = choices[name]
    pick, problem = None, ""
    if kind in (picker.KERNEL, picker.KERNEL_FILE):
        try:  # the kernel's controls sit under the run they set up
            pick = picker.sidebar(kind, what)
        except Exception as e:  # a kernel file that does not load: its file and line
            problem = picker.load_error(e)
    view = sb.radio("View", [*VIEWS, *RUNLESS], key="view")
    return Picked(name, view, kind, what, pick, problem)


def _kernel_run(p: Picked) -> tuple[data.Run, str] | None:
    """The kernel run the sidebar set up, or None with the reason on the page."""
    if p.problem:
        st.error(f"Could not load {p.name}: {p.problem}")
        return None
    if p.kernel is None:  # nothing named yet: the sidebar said what to do
        return None
    try:
        with st.spinner(f"Simulating {p.name}…"):
            return picker.simulated(p.kernel), p.kernel.key
    except Exception as e:  # an invalid configuration: the kernel's own message
        log.info("kernel run %r failed: %s", p.name, e)
        st.error(f"Could not simulate {p.name}: {picker.load_error(e)}")
        return None


def main(root: Path) -> None:
    st.set_page_config(page_title="kda-sim", page_icon="🧵", layout="wide")
    p = _sidebar(root)
    name, view, kind, what = p.name, p.view, p.kind, p.what
    if view in RUNLESS:
        _show(view, "the corpus", RUNLESS[view])
        return
    if kind in (picker.KERNEL, picker.KERNEL_FILE):
        got = _kernel_run(p)
        if got is None:
            return
        run, key = got
    else:
        try:
            with st.spinner(f"Loading {name}…"):
                run, key = _load(name, kind, what)
        except Exception as e:  # a file the readers reject, or one they let through broken
            msg = str(e) if isinstance(e, KdaSimError) else f"{type(e).__name__}: {e}"
            st.error(f"Could not open {name}: {msg}. Showing the default simulation instead.")
            run, key = data.default_simulation(), "sim:fallback"
    _banner(run, root)
    _show(view, name, lambda: VIEWS[view](Ctx(root, run, key)))


def _show(view: str, name: str, draw: Callable[[], None]) -> None:
    try:
        draw()
    except Exception as e:  # the page says what broke; the console keeps the traceback
        log.exception("view %r failed on run %r", view, name)
        st.error(
            f"The {view} view could not show {name}: {type(e).__name__}: {e}. "
            f"The other views may still work; the server log has the details."
        )


def _label(m: Meta) -> str:
    """The run's kernel and configuration as its kernel labels them."""
    try:
        spec = get(m.kernel)
        label = spec.label(m.config())
        return label if label.startswith(spec.name) else f"{spec.name} {label}"
    except Exception as e:  # a trace naming a kernel or field this install lacks
        log.info("no label for %s: %s", m.kernel, e)
        return m.kernel


def _banner(run: data.Run, root: Path) -> None:
    m = run.main.meta
    st.markdown(
        f"#### {run.name} <span style='color:#888;font-size:0.8em'>· {m.gpu} · {_label(m)}</span>",
        unsafe_allow_html=True,
    )
    st.caption(run.profile_said)
    missing = missing_part(run.real) if run.real is not None else ""
    if missing:  # on every view: what it shows of the real run is only the part recorded
        st.warning(f"A partial trace: {missing}. What this page shows of it is the part recorded.")
    if run.kind == "simulated" and run.note:
        st.caption(run.note)
    elif run.kind == "simulated":
        where = data.traces_dir(root)
        shown = where.relative_to(root) if where.is_relative_to(root) else where
        n = len(data.bundled_traces(root))
        st.caption(
            f"A simulated run. The bundled real traces ({n} in {shown}/) are under *Run* "
            f"in the sidebar; bring your own in 'Bring a trace'."
            if n
            else f"A simulated run: {shown}/ holds no real trace (the page opens on the "
            f"first one when it does). Bring one in 'Bring a trace'."
        )
    elif run.note:
        st.caption(run.note)
