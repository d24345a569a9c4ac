"""The sidebar's kernel runs: a registered kernel or a kernel file, its configuration
flags as widgets (from its default configuration: a field's type is its default's),
a GPU profile and an occupancy, simulated.

A kernel given by file is imported by the registry, which says a broken one (an
exception at import, in ``build`` or in ``validate``) as an ``InvalidInput`` naming the
file and line: the sidebar shows that message, never a traceback.
"""

from __future__ import annotations

import hashlib
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import streamlit as st

from kda_sim.app.data import DEFAULT_GPU, Run, SimOutcome, simulate_kernel
from kda_sim.errors import InvalidInput, KdaSimError
from kda_sim.kernels import examples
from kda_sim.kernels.registry import get, names
from kda_sim.machine.profile import bundled_names

KERNEL = "kernel"  # a choice's kind: a registered kernel, by name
KERNEL_FILE = "kernel file"  # a choice's kind: a kernel given by path or upload
FILE_CHOICE = "a kernel file (.py)"
EXAMPLES_DIR = Path(examples.__file__).parent
NAMES_TTL_S = 60  # how long the list of kernels is kept before the registry is asked again
UPLOADS = "kf_uploaded"  # session key: upload digest -> where its copy lies


@st.cache_resource(ttl=NAMES_TTL_S, show_spinner=False)
def _kernel_names() -> tuple[str, ...]:
    # the registry reads installed packages' entry points (~20 ms): not on every rerun
    return tuple(names())


def choices() -> dict[str, tuple[str, object]]:
    """Run name -> (kind, what): every kernel the registry knows, then a kernel file."""
    out: dict[str, tuple[str, object]] = {f"kernel {n}": (KERNEL, n) for n in _kernel_names()}
    out[FILE_CHOICE] = (KERNEL_FILE, None)
    return out


def example_files() -> list[Path]:
    """The example kernels shipped as files (each also a built-in kernel)."""
    return sorted(p for p in EXAMPLES_DIR.glob("*.py") if not p.name.startswith("_"))


@dataclass(frozen=True)
class KernelPick:
    """A kernel run as the sidebar set it up."""

    kernel: str  # what the registry finds it by: a name or a file's path
    stamp: str  # the kernel's version in cache keys ("" for a registered one)
    gpu: str
    occupancy: int | None
    fields: dict[str, Any]

    @property
    def key(self) -> str:
        return (
            f"kernel:{self.kernel}:{self.stamp}:{self.gpu}:{self.occupancy}:"
            f"{sorted(self.fields.items())}"
        )


def _saved_upload(name: str, data: bytes) -> Path:
    """A private copy of an uploaded kernel file, kept under its own name (the messages
    of a broken one name it), one folder per content."""
    digest = hashlib.sha1(data).hexdigest()[:16]
    saved: dict[str, str] = st.session_state.setdefault(UPLOADS, {})
    if digest in saved and Path(saved[digest]).is_file():
        return Path(saved[digest])
    folder = Path(tempfile.mkdtemp(prefix="kda-sim-kernel-"))
    path = folder / (re.sub(r"[^A-Za-z0-9._-]", "_", Path(name).name) or "kernel.py")
    path.write_bytes(data)
    saved[digest] = str(path)
    return path


def _kernel_file() -> str | None:
    """The path of the kernel file the sidebar names: an upload's copy, else a typed
    path, else an example file picked."""
    sb = st.sidebar
    up = sb.file_uploader("Upload a kernel file", type=["py"], key="kf_upload")
    typed = sb.text_input(
        "or its path",
        key="kf_path",
        placeholder="my_kernel.py",
        help="a .py file that defines KERNEL (docs/adding-a-kernel.md)",
    )
    files = {p.name: p for p in example_files()}
    example = sb.selectbox(
        "or an example kernel file",
        ["(none)", *files],
        key="kf_example",
        help=f"the files in {EXAMPLES_DIR}, loaded by path as your own file would be",
    )
    if up is not None:
        return str(_saved_upload(up.name, up.getvalue()))
    if typed.strip():
        return typed.strip()
    return str(files[example]) if example in files else None


def _field_widget(kernel: str, name: str, default: Any) -> Any:
    """One configuration field's widget, by its default's type; a field of another type
    keeps its default (said beside it)."""
    sb = st.sidebar
    key = f"kc|{kernel}|{name}"
    if isinstance(default, bool):
        return sb.checkbox(name, value=default, key=key)
    if isinstance(default, int):
        return int(sb.number_input(name, value=default, step=1, key=key))
    if isinstance(default, float):
        return float(sb.number_input(name, value=default, key=key))
    if isinstance(default, str):
        return sb.text_input(name, value=default, key=key)
    sb.caption(f"{name} = {default!r} (kept: no widget for {type(default).__name__})")
    return default


def sidebar(kind: str, what: object) -> KernelPick | None:
    """The kernel run's controls; None (with the reason shown) when there is nothing to
    simulate yet; ``InvalidInput`` when the kernel cannot be loaded."""
    sb = st.sidebar
    if kind == KERNEL_FILE:
        path = _kernel_file()
        if path is None:
            st.info(
                "Name a kernel file in the sidebar (upload it, type its path or pick an "
                "example) to simulate it."
            )
            return None
        p = Path(path).expanduser()
        stamp = f"{p}:{p.stat().st_mtime_ns}" if p.is_file() else str(p)
        kernel = path
    else:
        kernel, stamp = str(what), ""
    spec = get(kernel)
    sb.caption(f"**{spec.name}**: {getattr(spec, 'description', '') or 'no description'}")
    gpus = bundled_names()
    gpu = sb.selectbox(
        "GPU profile",
        gpus,
        index=gpus.index(DEFAULT_GPU) if DEFAULT_GPU in gpus else 0,
        key="kc_gpu",
    )
    occ = int(
        sb.number_input("Occupancy (CTAs a unit; 0 = from resources)", 0, 64, 0, 1, key="kc_occ")
    )
    defaults = spec.config_to_dict(spec.default_config())
    with sb.expander(f"{spec.name}'s configuration", expanded=True):
        fields = {k: _field_widget(spec.name, k, v) for k, v in defaults.items()}
    return KernelPick(kernel, stamp, gpu, occ or None, fields)


def simulated(pick: KernelPick) -> Run:
    """The run of ``pick``; ``InvalidInput`` with the kernel's own message when its
    configuration is invalid or its code fails."""
    out: SimOutcome = simulate_kernel(
        pick.gpu, pick.kernel, pick.fields, pick.occupancy, pick.stamp
    )
    if out.timeline is None:
        raise InvalidInput(out.error or "the simulation failed", what="kernel")
    tl = out.timeline
    spec = get(tl.meta.kernel)  # registered by now, by its name
    note = f"A simulation of {spec.name} on {pick.gpu}: {out.residency}."
    return Run(f"simulated {spec.name} on {pick.gpu}", "simulated", None, tl, note)


def load_error(e: Exception) -> str:
    """What the page says for a kernel that could not be loaded or simulated."""
    return str(e) if isinstance(e, KdaSimError) else f"{type(e).__name__}: {e}"
