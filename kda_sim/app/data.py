"""Where the app's runs come from: bundled traces, uploads and simulations, cached.

Nothing here draws; every function works without a Streamlit runtime (the bench and
the tests call them directly). Caches are Streamlit resource caches: a timeline is
large and never mutated by the app, so sharing one object beats pickling a copy on
every rerun. A bundled trace's run is also kept on disk across servers (run_store).
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import streamlit as st

from kda_sim.cache import file_sha256
from kda_sim.errors import InvalidInput, KdaSimError, TraceFormatError
from kda_sim.kernels.registry import DEFAULT_KERNEL, get, spec_for
from kda_sim.machine.costs import files_stamp
from kda_sim.machine.profile import GpuProfile, bundled_for, bundled_names, load_profile
from kda_sim.timeline.model import Timeline

from . import run_store
from .outcome import guarded

if TYPE_CHECKING:
    from kda_sim.checks.floor import Figures

# The engine, the floor ladder, the trace reader and the upload checks are imported
# where they are called: a page whose run comes from the run store (the default view
# after a server's restart) needs none of the engine's or the comparison's modules,
# about 0.2 s of the 0.5 s this package's page modules took to import (-X importtime).

TRACES_ENV = "KDA_SIM_TRACES"  # lets tests and users point the app at another folder
DEFAULT_GPU = "h200"  # K1's bundled real traces are H200 runs; its simulation is also quick
# the bundled trace the page opens on (the README's tour), where the folder has it: the
# listing is by name, and another kernel's traces (gridbarrier_h100_*) sort before K1's
OPENS_ON = "k1_h200_R1_L1.json.gz"
IMPORTER_SUFFIXES = (".pftrace.gz", ".pftrace", ".pt", ".npy")


def traces_dir(root: Path | None = None) -> Path:
    env = os.environ.get(TRACES_ENV)
    if env:
        return Path(env)
    return (root or Path.cwd()) / "traces"


def bundled_traces(root: Path | None = None) -> list[Path]:
    """The traces folder's ``*.json`` and ``*.json.gz``, of any kernel, by name,
    :data:`OPENS_ON` first."""
    from kda_sim.importers import trace_files

    found = trace_files(traces_dir(root))
    return sorted(found, key=lambda p: p.name != OPENS_ON)  # stable: the rest by name


def read_bundled(path: Path) -> Timeline:
    """A bundled trace: K1's are plain JSON, another kernel's kept gzipped (the tree
    stays small)."""
    from kda_sim.importers.caps import read_inflated
    from kda_sim.timeline.chrome import chrome_of_bytes

    return chrome_of_bytes(read_inflated(path), str(path))


def bundled_run(path: Path, name: str) -> tuple[Run, str]:
    """The run of the bundled trace ``path`` (overlaid on its simulation) and the key
    naming it in the page's caches: once a server, and across servers from the run
    store (:mod:`kda_sim.app.run_store`), keyed by the file's content and the identity
    of the profile its simulation runs on, never by its name or time of change."""
    # hashed as a stream: a run found in the store needs neither the trace's bytes in
    # memory nor its parse
    digest = file_sha256(path)
    parsed: list[Timeline] = []

    def timeline() -> Timeline:  # read at most once a call, and only where needed
        if not parsed:
            parsed.append(_read_hashed(path, digest))
        return parsed[0]

    head = run_store.head_of(digest, lambda: _head(timeline()))
    gpu = profile_name(head.gpu, head.build) if head.gpu else None
    ident = profile_id(gpu, head.kernel) if gpu else ""
    key = f"bundled:{digest}|{ident}"
    return _bundled_run(key, name, digest, ident, timeline), key


def _read_hashed(path: Path, digest: str) -> Timeline:
    """The trace at ``path``, refused where its bytes are no longer those hashed (a file
    rewritten meanwhile: its run must not be kept under the old content's key)."""
    from kda_sim.importers.caps import inflated, read_capped
    from kda_sim.timeline.chrome import chrome_of_bytes

    blob = read_capped(path)  # the size cap on what a page reads
    if hashlib.sha256(blob).hexdigest() != digest:
        msg = "the file changed while it was read: reload the page"
        raise TraceFormatError(msg, where=str(path))
    # (another kernel's bundled traces are kept gzipped)
    return chrome_of_bytes(inflated(blob, str(path)), str(path))


def _head(tl: Timeline) -> run_store.Head:
    return run_store.Head(tl.meta.gpu, tl.meta.measured_build(), tl.meta.kernel)


@st.cache_resource(max_entries=16, show_spinner=False)
def _bundled_run(key: str, name: str, digest: str, ident: str, _tl: Any) -> Run:
    del key  # part of the cache key only (it names digest and ident)
    entry = run_store.run_entry(digest, name, "bundled", ident)
    return run_store.stored_run(entry, lambda: run_of_trace(name, "bundled", _tl()))


@dataclass(frozen=True)
class SimOutcome:
    """One simulation as the what-if view needs it: a timeline or why there is none."""

    timeline: Timeline | None
    error: str | None
    residency: str = ""
    seconds: float = 0.0
    stale_reads: int = 0
    hbm_bytes: int = 0
    params: dict[str, float] = field(default_factory=dict)
    profile: str = ""  # the profile's name and the costs it ran (GpuProfile.costs_from)
    costs: str = ""

    @property
    def verdict(self) -> str:
        if self.timeline is None:
            return "invalid"
        return "deadlocks" if self.timeline.deadlock else "finishes"


def whatif_profile(gpu: str, params: dict[str, float], kernel: str = DEFAULT_KERNEL) -> GpuProfile:
    """The bundled profile ``gpu`` with ``kernel``'s costs and the what-if view's
    latencies and bandwidth."""
    prof = load_profile(gpu, kernel=kernel)
    return prof.with_params(**params) if params else prof


def profile_id(gpu: str, kernel: str = DEFAULT_KERNEL) -> str:
    """What the caches key the profile ``gpu`` on besides its name: its identity with
    ``kernel``'s costs (:meth:`GpuProfile.identity`), so a name that comes to mean other
    costs (a costs file rewritten, a new fitted overlay) is never served from before;
    where it does not load, why (the cached call says so again). Loaded again only when
    a file it is read from changed (a page asks for it on every simulation)."""
    try:
        stamp = files_stamp(gpu, kernel)
    except KdaSimError as e:
        return f"error: {e}"
    return _profile_id(gpu, kernel, stamp)


@functools.lru_cache(maxsize=256)
def _profile_id(gpu: str, kernel: str, stamp: tuple[tuple[str, int, int], ...]) -> str:
    def load() -> str:
        try:
            return load_profile(gpu, kernel=kernel).identity()
        except KdaSimError as e:
            return f"error: {e}"

    # kept on disk by the files' stamp: a restarted server need not load the profile
    return run_store.profile_identity(gpu, kernel, stamp, load)


def costs_said(gpu: str, kernel: str = DEFAULT_KERNEL) -> str:
    """``profile gpu: <which costs>``, as a view states the profile it used; where the
    profile does not load, why."""
    try:
        prof = load_profile(gpu, kernel=kernel)
    except KdaSimError as e:
        return f"profile {gpu}: {e}"
    return f"profile {prof.name}: {prof.costs_from or 'the costs the profile file holds'}"


Config = tuple[tuple[str, Any], ...]  # a configuration as a cache key: sorted (field, value)


def config_key(cfg: Any) -> tuple[str, Config]:
    """(kernel, fields) of a configuration: what the caches key on (plain values, not
    the configuration object, whose type a kernel file reloaded anew)."""
    spec = spec_for(cfg)
    return spec.name, tuple(sorted(spec.config_to_dict(cfg).items()))


def config_of(kernel: str, config: Config) -> Any:
    """The validated configuration of ``kernel`` with the fields ``config``."""
    spec = get(kernel)
    try:
        cfg = spec.config_from_dict(dict(config))
    except (TypeError, ValueError) as e:  # a field of the wrong type for its dataclass
        raise InvalidInput(f"{type(e).__name__}: {e}", what="config", where=spec.name) from e
    return spec.validate(cfg)


@st.cache_resource(max_entries=128, show_spinner=False)
def _simulate(
    gpu: str,
    kernel: str,
    config: Config,
    occupancy: int | None,
    params: tuple[tuple[str, float], ...],
    stamp: str = "",
    costs_id: str = "",
) -> SimOutcome:
    # part of the cache key only: a kernel file's name and time of change; the profile's
    # identity (profile_id)
    del stamp, costs_id
    from kda_sim.engine import simulate

    t0 = time.perf_counter()
    try:
        prof = whatif_profile(gpu, dict(params), kernel)
        res = simulate(config_of(kernel, config), prof, occupancy=occupancy)
    except KdaSimError as e:
        return SimOutcome(None, str(e), seconds=time.perf_counter() - t0)
    r = res.residency
    return SimOutcome(
        res.timeline,
        None,
        f"{r.per_unit} a {prof.unit_name} x {prof.units} = {r.slots} slots "
        f"(limited by {r.limited_by})",
        time.perf_counter() - t0,
        len(res.stale_reads),
        res.hbm_bytes,
        dict(params),
        prof.name,
        prof.costs_from,
    )


@st.cache_data(max_entries=32, show_spinner=False)
def _floor(
    gpu: str,
    kernel: str,
    config: Config,
    occupancy: int | None,
    params: tuple[tuple[str, float], ...],
    figures: tuple[float, float, float],
    costs_id: str = "",
) -> dict[str, Any] | str:
    del costs_id  # part of the cache key only: the profile's identity (profile_id)
    from kda_sim.checks.floor import Figures, ladder

    try:
        prof = whatif_profile(gpu, dict(params), kernel)
        return ladder(config_of(kernel, config), prof, Figures(*figures), occupancy)
    except KdaSimError as e:
        return str(e)


def floor_cached(
    gpu: str,
    cfg: Any,
    occupancy: int | None,
    params: dict[str, float],
    figures: Figures,
) -> dict[str, Any] | str:
    """:func:`kda_sim.checks.floor.ladder` for the what-if view (six simulations, once),
    or why it cannot run."""
    fig = (figures.stream_bytes_per_ns, figures.visibility_ns, figures.poll_ns)
    kernel, config = config_key(cfg)
    ident = profile_id(gpu, kernel)
    return _floor(gpu, kernel, config, occupancy, tuple(sorted(params.items())), fig, ident)


def simulate_cached(
    gpu: str,
    cfg: Any,
    occupancy: int | None = None,
    params: dict[str, float] | None = None,
) -> SimOutcome:
    """One simulation of ``cfg`` (any registered kernel's configuration), once."""
    # plain tuples as the cache key: every field of the configuration, every latency, and
    # the profile's identity (its name alone may come to mean other costs)
    kernel, config = config_key(cfg)
    lat = tuple(sorted((params or {}).items()))
    return _simulate(gpu, kernel, config, occupancy, lat, "", profile_id(gpu, kernel))


def simulate_kernel(
    gpu: str,
    kernel: str,
    fields: dict[str, Any],
    occupancy: int | None = None,
    stamp: str = "",
) -> SimOutcome:
    """One simulation of ``kernel`` (a registered name, or a path the registry has
    loaded) with the configuration ``fields``; an invalid one is the outcome's error.
    ``stamp`` names the kernel's version (a file's path and time of change)."""
    config = tuple(sorted(fields.items()))
    return _simulate(gpu, kernel, config, occupancy, (), stamp, profile_id(gpu, kernel))


def profile_name(gpu: str, kernel: str | None = None) -> str | None:
    """The bundled profile a trace's GPU name means ("NVIDIA H200" -> "h200")."""
    return bundled_for(gpu, kernel)


def simulation_of(tl: Timeline) -> SimOutcome:
    """The nominal simulation of the configuration a trace ran."""
    m = tl.meta
    gpu = profile_name(m.gpu, m.measured_build())
    if gpu is None:
        return SimOutcome(
            None, f"no bundled GPU profile matches {m.gpu!r} (known: {', '.join(bundled_names())})"
        )
    occ = m.extra.get("occupancy") if m.source == "simulated" else None
    return simulate_cached(gpu, m.config(), occ)


@dataclass
class Run:
    """What the page shows: a real run with its simulation, or a simulation alone."""

    name: str
    kind: str  # "bundled" | "uploaded" | "simulated"
    real: Timeline | None
    sim: Timeline | None
    note: str = ""
    # the real run with each recorded poll's producer inferred where the trace did not
    # say (our kernel's traces record polls but not puts); what the critical path and
    # the hand-off view walk. ``real`` stays as read: it is what gets exported.
    linked: Timeline | None = None

    @property
    def real_linked(self) -> Timeline | None:
        return self.linked or self.real

    @property
    def profile_said(self) -> str:
        """Which GPU profile and kernel costs the run's simulation used, as its meta
        recorded them (every view shows it under the run's name)."""
        if self.sim is None:
            return "No simulation: no profile or costs used."
        extra = self.sim.meta.extra if isinstance(self.sim.meta.extra, dict) else {}
        costs = extra.get("costs") or "its costs are not recorded in the timeline"
        return f"Simulated on profile {self.sim.meta.gpu}: {costs}."

    @property
    def main(self) -> Timeline:
        tl = self.real or self.sim
        assert tl is not None, "a run has a real or a simulated timeline"
        return tl


def default_run_name() -> str:
    spec = get(DEFAULT_KERNEL)
    return f"simulated {DEFAULT_GPU} {spec.label(spec.default_config())}"


@st.cache_resource(max_entries=16, show_spinner=False)
def _run_of_trace(key: str, name: str, kind: str, _tl: Timeline) -> Run:
    return run_of_trace(name, kind, _tl)


def run_of_trace_cached(key: str, name: str, kind: str, tl: Timeline) -> Run:
    """:func:`run_of_trace` once per ``key`` (which must name the file's content) and per
    identity of the profile its simulation runs on."""
    gpu = profile_name(tl.meta.gpu, tl.meta.measured_build()) if tl.meta.gpu else None
    ident = profile_id(gpu, tl.meta.kernel) if gpu else ""
    return _run_of_trace(f"{key}|{ident}", name, kind, tl)


def run_of_trace(name: str, kind: str, tl: Timeline) -> Run:
    if tl.meta.source != "measured":
        # a simulated timeline someone saved: show it as it is, no second simulation
        return Run(name, kind, None, tl, f"{name} is a saved simulated run ({tl.meta.gpu}).")
    sim = simulation_of(tl)
    linked = with_producers(tl)
    note = (
        f"A real run ({tl.meta.clock}) overlaid on its simulation: each CTA's row has the "
        f"real run thick above and the simulation thin and dark below."
    )
    if sim.timeline is None:
        note = f"A real run ({tl.meta.clock}); no simulation to overlay: {sim.error}"
    if linked is not tl:
        note += " Producers of polls the trace does not attribute are inferred from the model."
    return Run(name, kind, tl, sim.timeline, note, linked)


def with_producers(tl: Timeline) -> Timeline:
    """A copy whose satisfied polls name a producer, inferred from the model's hand-off
    graph and the recorded times (kda_sim.compare) where the trace has none; ``tl``
    itself when nothing is missing or the inference is not available."""
    # only a trace with polls and no put records needs it (a poll with no producer in a
    # trace that records puts found its pairs already there); this also keeps the
    # comparison's imports (scipy.optimize) off the first render of complete traces
    if any(c.puts for c in tl.ctas) or not any(c.polls for c in tl.ctas):
        return tl
    from kda_sim.compare.diff import annotate_producers
    from kda_sim.compare.model import model_view

    mv = guarded(model_view, tl)
    if not mv.ok:
        return tl
    out = guarded(annotate_producers, tl, mv.value)
    return out.value if out.ok and isinstance(out.value, Timeline) else tl


def default_simulation() -> Run:
    out = simulate_cached(DEFAULT_GPU, get(DEFAULT_KERNEL).default_config())
    if out.timeline is None:  # only if the bundled profile itself broke
        raise InvalidInput(f"the default simulation failed: {out.error}")
    return Run(default_run_name(), "simulated", None, out.timeline)


# -- uploads -------------------------------------------------------------------------


def _suffix(name: str) -> str:
    low = name.lower()
    for s in (".pftrace.gz", ".json.gz", *IMPORTER_SUFFIXES, ".json"):
        if low.endswith(s):
            return s
    return Path(low).suffix


def parse_upload(name: str, data: bytes, shape: dict[str, object] | None = None) -> Timeline:
    """A timeline from an uploaded file; every failure is a :class:`TraceFormatError`.

    ``shape`` (R, L, nb, kda0, gate_local, nw_first, onw_first, gpu) is what stamp tensors
    and ktrace files do not record. The bytes are never written over any file: importers that need a
    path get a copy in a fresh private temporary folder, removed afterwards.
    """
    try:
        return _parse_upload(name, data, shape or {})
    except KdaSimError:
        raise
    except Exception as e:  # the page must say what is wrong, never show a traceback
        raise TraceFormatError(f"could not read it: {type(e).__name__}: {e}", where=name) from e


def _parse_upload(name: str, data: bytes, shape: dict[str, object]) -> Timeline:
    from kda_sim.importers.caps import GZIP_MAGIC, check_bytes, inflate_capped
    from kda_sim.jsoncheck import parse_json

    if not data:
        raise TraceFormatError("the file is empty", where=name)
    check_bytes(data, name)
    suffix = _suffix(name)
    if suffix in (".json", ".json.gz"):
        if suffix == ".json.gz" or data[:2] == GZIP_MAGIC:
            data = inflate_capped(data, name)  # chunk by chunk: a bomb stops at the cap
        # strict: NaN, Infinity, over-long integers and deep nesting refused by field
        obj = parse_json(data, name)
        tl = _json_parser()(obj, name)
        _sane(tl, name)
        return tl
    if suffix in IMPORTER_SUFFIXES:
        return _import(name, data, shape)
    raise TraceFormatError(
        f"unknown file type {suffix or '(none)'}: expected a kda-sim .json timeline, "
        f"a FlyDSL ktrace .pftrace.gz, or a stamp tensor .pt / .npy",
        where=name,
    )


def _json_parser():
    """The importers' reader: it checks a measured trace more strictly than from_chrome."""
    from kda_sim.importers.chrome import parse_kernel_trace

    return parse_kernel_trace


def _import(name: str, data: bytes, shape: dict[str, object]) -> Timeline:
    from kda_sim.importers import load_trace

    tmp = Path(tempfile.mkdtemp(prefix="kda-sim-upload-"))
    try:
        safe = re.sub(r"[^A-Za-z0-9._-]", "_", Path(name).name) or "upload"
        path = tmp / safe  # a new folder of our own: nothing of the user's is there
        path.write_bytes(data)
        out = guarded(load_trace, path, **shape)
        if not out.ok:
            raise TraceFormatError(out.message, where=name)
        tl = out.value
        if not isinstance(tl, Timeline):
            raise TraceFormatError(
                f"the importer returned {type(tl).__name__}, not a Timeline", where=name
            )
        _sane(tl, name)
        return tl
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _sane(tl: Timeline, name: str) -> None:
    """What the views rely on beyond what the reader checks."""
    if not tl.ctas:
        raise TraceFormatError("the trace holds no CTA", where=name)
    for c in tl.ctas:
        for p in c.polls:
            if p.producer is not None and not 0 <= p.producer < len(tl.ctas):
                raise TraceFormatError(
                    f"CTA {c.cta}: a poll names producer {p.producer}, no CTA of the trace",
                    where=name,
                )
    for s in tl.stuck:
        if not 0 <= s.cta < len(tl.ctas):
            raise TraceFormatError(f"a stuck record names CTA {s.cta}", where=name)
    from kda_sim.importers.claimed_launch import check_claimed_launch

    check_claimed_launch(tl, name)  # overlaid on the model's launch: it must be that one


def unique_name(name: str, taken: set[str] | list[str]) -> str:
    if name not in taken:
        return name
    i = 2
    while f"{name} ({i})" in taken:
        i += 1
    return f"{name} ({i})"
