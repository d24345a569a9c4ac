"""What several subcommands share: the launch configuration and GPU flags, the rule that
an output file the user already has is kept, and a report's JSON, table and figure."""

from __future__ import annotations

import argparse
import contextlib
import enum
import functools
import importlib
import json
import math
import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kda_sim.errors import InvalidInput
from kda_sim.importers import caps
from kda_sim.kernels.registry import DEFAULT_KERNEL, get
from kda_sim.kernels.spec import hook
from kda_sim.machine.profile import GpuProfile, bundled_names, load_profile
from kda_sim.parallel import MAX_JOBS, Jobs, idle_jobs


class _LaunchFlags:
    """What the default kernel's ``add_flags`` adds, added to a command's parser (less
    ``skip``) with None as the value of a flag not given (a switch: False), so that
    another kernel can refuse them; :func:`launch_defaults` keeps the real defaults."""

    def __init__(self, p: Any, skip: frozenset[str] = frozenset()) -> None:
        self.p, self.skip, self.defaults = p, skip, {}

    def add_argument(self, *names: str, **kw: Any) -> Any:
        dest = kw.get("dest") or names[0].lstrip("-").replace("-", "_")
        if dest in self.skip:
            return None
        switch = kw.get("action") in ("store_true", "store_false")
        self.defaults[dest] = kw.get("default", kw.get("action") == "store_false")
        if not switch:
            kw["default"] = None
        return self.p.add_argument(*names, **kw)


@functools.cache
def launch_defaults() -> dict[str, Any]:
    """The default kernel's flags (by dest) and their defaults."""
    flags = _LaunchFlags(argparse.ArgumentParser(add_help=False))
    get(DEFAULT_KERNEL).add_flags(flags)
    return flags.defaults


def add_default_kernel_flags(
    p: argparse.ArgumentParser | argparse._ArgumentGroup, skip: tuple[str, ...] = ()
) -> None:
    """The default kernel's own flags (K1's: ``--R``, ``--L``, ``--nb``, ``--kda0`` and
    its variants), those named in ``skip`` left out."""
    get(DEFAULT_KERNEL).add_flags(_LaunchFlags(p, frozenset(skip)))


class _GpuFlag(argparse.Action):
    """``--gpu``: its value stored, its help made only when a help is shown: the help
    lists every bundled profile name, and listing them imports every built-in kernel to
    find its fitted overlays (some 30 ms of every command's start, help or not)."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        setattr(namespace, self.dest, values)

    @property  # type: ignore[override]  # argparse reads an attribute: this computes it
    def help(self) -> str:
        return (
            "a bundled GPU with the kernel's costs: fitted to the build we ship where the "
            "kernel has them, else its stock ones (the report says which); GPU-stock: the "
            "stock ones (the seed's build); GPU-KERNEL: a kernel's fitted ones "
            f"({', '.join(bundled_names())}), or a profile .json"
        )

    @help.setter
    def help(self, _given: str | None) -> None:  # argparse.Action.__init__ sets it
        pass


def add_launch_flags(p: argparse.ArgumentParser, *, shape: bool = True) -> None:
    """``--gpu``, ``--profile``, ``--occupancy``, ``--max-input-mb`` (a profile file's
    cap) and the default kernel's flags (without ``shape``: less its two sweep axes,
    which the command spans)."""
    p.add_argument("--gpu", default="mi355x", action=_GpuFlag)
    p.add_argument(
        "--profile",
        default=None,
        help="a fitted overlay (kda-sim calibrate --out) or a profile .json (overrides --gpu)",
    )
    axes = () if shape else tuple(hook(get(DEFAULT_KERNEL), "sweep_axes") or ())
    add_default_kernel_flags(p, axes)
    p.add_argument(
        "--occupancy",
        type=int,
        default=None,
        help="CTAs a CU/SM (default: from threads, registers and LDS)",
    )
    add_input_caps(p, events=False)  # a --gpu or --profile file is read under the cap


def launch_values(args: argparse.Namespace) -> dict[str, Any]:
    """The default kernel's flags this command has, a flag not given at its default."""
    out: dict[str, Any] = {}
    for dest, default in launch_defaults().items():
        if hasattr(args, dest):
            v = getattr(args, dest)
            out[dest] = default if v is None else v
    return out


def variant_flags(args: argparse.Namespace) -> dict[str, bool]:
    """The default kernel's switches (K1: its variants and schedules), as given."""
    return {
        k: bool(getattr(args, k))
        for k, d in launch_defaults().items()
        if isinstance(d, bool) and hasattr(args, k)
    }


def other_kernel(args: argparse.Namespace) -> Any:
    """The kernel ``--kernel`` names when it is not the default (None when it is; then
    no flag was left for it)."""
    spec = get(args.kernel)
    if spec is get(DEFAULT_KERNEL):
        rest = getattr(args, "kernel_args", [])
        if rest:
            raise InvalidInput(f"unrecognized arguments: {' '.join(rest)}")
        return None
    return spec


def add_kernel_flag(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--kernel",
        default=DEFAULT_KERNEL,
        help="the kernel: a registered name (k1, pingpong, installed ones) or a .py file "
        "defining KERNEL; its own flags follow (default k1)",
    )


def add_trace_kernel_flag(p: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    """``--kernel`` of a command that reads traces: the kernel they must be launches of
    (default: the one each trace's header names)."""
    p.add_argument(
        "--kernel",
        default=None,
        help="the kernel the traces ran: a registered name or a .py file defining KERNEL "
        "(default: the one each trace names; a trace of another kernel is refused)",
    )


def k1_flags_given(args: argparse.Namespace) -> list[str]:
    """The default kernel's flags the user gave (``None`` marks one not given; a switch,
    False)."""
    given = []
    for dest, default in launch_defaults().items():
        v = getattr(args, dest, None)
        if v is not None and not (isinstance(default, bool) and v == default):
            given.append(f"--{dest.replace('_', '-')}")
    return given


def kernel_and_config(
    args: argparse.Namespace, defaults: dict[str, int] | None = None
) -> tuple[Any, Any]:
    """The kernel ``--kernel`` names and its configuration: the default kernel's from
    the launch flags (those not given: ``defaults``, else the kernel's), another's from
    its own flags after ``--kernel`` (the launch flags refused)."""
    spec = other_kernel(args)
    if spec is None:
        for k, v in (defaults or {}).items():
            if hasattr(args, k) and getattr(args, k) is None:
                setattr(args, k, v)
        return get(DEFAULT_KERNEL), launch_config(args)
    given = k1_flags_given(args)
    if given:
        raise InvalidInput(f"{', '.join(given)}: K1's, not {spec.name}'s flags", what="kernel")
    return spec, kernel_config(spec, getattr(args, "kernel_args", []))


def no_kernel_flags(args: argparse.Namespace) -> None:
    """A command that takes no kernel's flags: anything argparse left over is refused."""
    rest = getattr(args, "kernel_args", [])
    if rest:
        raise InvalidInput(f"unrecognized arguments: {' '.join(rest)}")


class _KernelFlags(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # the kernel's flags are the user's input
        raise InvalidInput(f"{self.prog}: {message}", what="kernel flags")


def kernel_config(spec: Any, argv: list[str]) -> Any:
    """A configuration of ``spec`` from its own flags (``argv``), validated."""
    p = _KernelFlags(prog=f"--kernel {spec.name}", add_help=False)
    spec.add_flags(p)
    return spec.validate(spec.config_from_args(p.parse_args(argv)))


def launch_config(args: argparse.Namespace) -> Any:
    """The default kernel's configuration from its flags (a flag not given: its
    default), validated."""
    spec = get(DEFAULT_KERNEL)
    return spec.validate(spec.config_from_args(argparse.Namespace(**launch_values(args))))


def gpu_profile(args: argparse.Namespace) -> GpuProfile:
    """``--profile`` or ``--gpu`` with the costs of the ``--kernel`` (K1 without one)."""
    return load_profile(args.profile or args.gpu, kernel=getattr(args, "kernel", DEFAULT_KERNEL))


def _number(text: str, kind: type, lo: float | None, hi: float | None, hi_open: bool) -> Any:
    try:
        v = kind(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not {'an integer' if kind is int else 'a number'}"
        ) from None
    if kind is float and not math.isfinite(v):
        raise argparse.ArgumentTypeError(f"{text!r}: a finite number")
    if lo is not None and v < lo:
        raise argparse.ArgumentTypeError(f"{text}: must be >= {lo:g}")
    if hi is not None and (v >= hi if hi_open else v > hi):
        raise argparse.ArgumentTypeError(f"{text}: must be {'<' if hi_open else '<='} {hi:g}")
    return v


def int_type(lo: int | None = 0, hi: int | None = None) -> Callable[[str], int]:
    """An argparse ``type``: an integer in [lo, hi] (a seed, a count); else exit 2 naming
    the flag."""

    def parse(text: str) -> int:
        return _number(text, int, lo, hi, False)

    parse.__name__ = "integer"
    return parse


def float_type(
    lo: float | None = 0.0, hi: float | None = None, *, hi_open: bool = False
) -> Callable[[str], float]:
    """An argparse ``type``: a finite number in [lo, hi] (or [lo, hi) with ``hi_open``);
    NaN and infinity refused."""

    def parse(text: str) -> float:
        return _number(text, float, lo, hi, hi_open)

    parse.__name__ = "number"
    return parse


def add_input_caps(p: argparse.ArgumentParser, *, events: bool = True) -> None:
    """``--max-input-mb`` and (with ``events``) ``--max-events``: the caps every trace
    reader applies (:mod:`kda_sim.importers.caps`); :func:`kda_sim.cli.main` sets them
    before the run."""
    g = p.add_argument_group("caps on the input read")
    g.add_argument(
        caps.FLAG,
        dest="max_input_mb",
        type=float_type(1e-6, float(1 << 30), hi_open=True),
        default=None,
        help=f"refuse an input file (or a trace's gzip contents) over this many MB "
        f"(default {caps.DEFAULT_MAX_INPUT_MB})",
    )
    if not events:
        return
    g.add_argument(
        caps.EVENTS_FLAG,
        dest="max_events",
        type=int_type(1),
        default=None,
        help=f"refuse a trace of more events or CTAs than this "
        f"(default {caps.DEFAULT_MAX_EVENTS:,})",
    )


def apply_input_caps(args: argparse.Namespace) -> None:
    """The caps this run reads under: the flags', else the defaults (never a value an
    earlier run in the same process set)."""
    mb = getattr(args, "max_input_mb", None)
    events = getattr(args, "max_events", None)
    caps.set_caps(
        caps.DEFAULT_MAX_INPUT_MB if mb is None else mb,
        caps.DEFAULT_MAX_EVENTS if events is None else events,
    )


JITTER = float_type(0.0, 1.0, hi_open=True)  # relative jitter of the latencies: [0, 1)
SEED = int_type(0, 2**32 - 1)  # numpy's seeds


class JobsDefault(enum.Enum):
    """``--jobs``'s default where it is read at the start, not a number (not a string,
    which argparse would pass through the flag's type)."""

    IDLE = "the cores idle over the last minute, at least 1"  # parallel.idle_jobs


IDLE_CORES = JobsDefault.IDLE


def add_jobs_flag(
    p: argparse.ArgumentParser, shared: str, default: int | JobsDefault | None = None
) -> None:
    """``--jobs N``: the processes ``shared`` (the independent runs) are shared among;
    ``default`` None is :func:`kda_sim.parallel.default_jobs`, the cores, and
    :data:`IDLE_CORES` :func:`kda_sim.parallel.idle_jobs`, the cores idle over the last
    minute; 0 is refused (exit 2). Or ``--cluster WHERE`` (not both): a Dask cluster's
    workers (:mod:`kda_sim.cluster`); :func:`jobs_of` reads the two."""
    said = (
        "the cores this process may use"
        if default is None
        else default.value
        if isinstance(default, JobsDefault)
        else str(default)
    )
    where = p.add_mutually_exclusive_group()
    where.add_argument(
        "--jobs",
        type=int_type(1, MAX_JOBS),
        default=default,
        metavar="N",
        help=f"processes to share {shared} among (default: {said}; 1: this process "
        "alone); the result does not depend on it",
    )
    where.add_argument(
        "--cluster",
        default=None,
        metavar="ADDRESS",
        help=f"share {shared} among the workers of a Dask cluster instead: its scheduler's "
        "address (tcp://HOST:PORT), or local[:N] to start N local workers (default: the "
        "cores); needs the 'cluster' extra (pip install 'kda-sim[cluster]'); the result "
        "does not depend on it",
    )


def jobs_of(args: argparse.Namespace) -> Jobs:
    """Where the flags say the runs go: ``--jobs``, or the cluster ``--cluster`` names,
    connected now (exit 2 at once if it is not there, or the extra is missing)."""
    where = getattr(args, "cluster", None)
    if where is None:
        return idle_jobs() if args.jobs is IDLE_CORES else args.jobs
    try:
        cluster = importlib.import_module("kda_sim.cluster")
    except ImportError as e:
        raise InvalidInput(
            f"--cluster needs Dask's distributed: pip install 'kda-sim[cluster]' ({e})",
            what="cluster",
        ) from None
    return cluster.connect(where)


# the suffixes matplotlib writes a figure as
FIGURE_SUFFIXES = (
    ".png",
    ".pdf",
    ".svg",
    ".svgz",
    ".jpg",
    ".jpeg",
    ".eps",
    ".ps",
    ".tif",
    ".tiff",
    ".webp",
)


def refuse_overwrite(
    path: Path | None, force: bool, flag: str = "", *, figure: bool = False
) -> None:
    """Checked before any work: the file can be written (its folder exists, it is not a
    folder, a figure's suffix is one we write), and nothing the user gave us is
    overwritten unless --force."""
    if path is None:
        return
    where = f"{flag} {path}" if flag else str(path)
    if figure and path.suffix.lower() not in FIGURE_SUFFIXES:
        raise InvalidInput(
            f"unknown figure suffix {path.suffix!r}; one of {', '.join(FIGURE_SUFFIXES)}",
            what="suffix",
            where=where,
        )
    parent = path.parent
    if not parent.is_dir():
        raise InvalidInput(f"no such directory {str(parent)!r}", what="directory", where=where)
    try:
        os.stat(path)
    except FileNotFoundError:  # not there yet, or a dangling link (replaced, not followed)
        pass
    except OSError as e:  # a symlink loop, a name too long
        raise InvalidInput(
            f"cannot write there: {e.strerror or e}", what="path", where=where
        ) from e
    try:
        is_dir = path.is_dir()
        exists = os.path.lexists(path)
    except OSError as e:  # a symlink loop, a name too long
        raise InvalidInput(
            f"cannot write there: {e.strerror or e}", what="path", where=where
        ) from e
    if is_dir:
        raise InvalidInput("is a directory, not a file", what="path", where=where)
    if exists and not force:
        raise InvalidInput("exists; pass --force to overwrite it", what="exists", where=where)
    # the temporary file write_output makes beside it (a read-only file system says so too)
    if not os.access(parent, os.W_OK | os.X_OK):
        raise InvalidInput(
            f"cannot write in {str(parent)!r}: permission denied", what="path", where=where
        )


def check_outputs(force: bool, **outputs: Path | None) -> None:
    """Every output flag (``out=Path``, ``png=Path``) checked before the work, and no two
    on one path."""
    seen: dict[Path, str] = {}
    for name, path in outputs.items():
        if path is None:
            continue
        flag = f"--{name.replace('_', '-')}"
        refuse_overwrite(path, force, flag, figure=name == "png")
        key = Path(os.path.abspath(path))
        if key in seen:
            raise InvalidInput(
                f"{seen[key]} and {flag} name one file", what="outputs", where=str(path)
            )
        seen[key] = flag


def write_output(path: Path, write: Callable[[Path], None], force: bool, flag: str = "") -> None:
    """``write(tmp)`` into a temporary file beside ``path``, then put it in place at once:
    no half-written file, a symlink replaced rather than written through, and a file that
    appeared while we worked kept unless --force."""
    where = f"{flag} {path}" if flag else str(path)
    appeared = InvalidInput(
        "appeared while we worked; pass --force to overwrite it", what="exists", where=where
    )
    try:
        fd, tmp_name = tempfile.mkstemp(
            dir=path.parent, prefix=f".{path.name}.", suffix=path.suffix
        )
    except OSError as e:
        raise InvalidInput(f"cannot write there: {e.strerror or e}", where=where) from e
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        write(tmp)
        if force:
            os.replace(tmp, path)
        else:
            try:
                os.link(tmp, path)  # fails, atomically, when path exists
            except FileExistsError:
                raise appeared from None
            except OSError:  # a file system without hard links
                if os.path.lexists(path):
                    raise appeared from None
                os.replace(tmp, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()


def finite_json(report: dict[str, Any], indent: int | None = 1) -> str:
    """``report`` as strict JSON: a NaN or infinity (a ratio over an empty set, a
    measured time missing) is written as null, and ``non_finite`` maps the field's
    path to what it held, so a reader can tell "no value" from a value of null."""
    why: dict[str, str] = {}

    def clean(v: Any, at: str) -> Any:
        if isinstance(v, float) and not math.isfinite(v):
            why[at] = f"{v} (not a finite number) written as null"
            return None
        if isinstance(v, dict):
            return {k: clean(x, f"{at}.{k}" if at else str(k)) for k, x in v.items()}
        if isinstance(v, list | tuple):
            return [clean(x, f"{at}[{i}]") for i, x in enumerate(v)]
        return v

    out = clean(report, "")
    if why:
        out["non_finite"] = why
    return json.dumps(out, indent=indent, default=str, allow_nan=False)


def write_report(
    make: Callable[[], dict[str, Any]],
    table: Callable[[dict[str, Any]], str],
    plot: Callable[[dict[str, Any], Path], None] | None,
    out: Path | None,
    png: Path | None,
    force: bool,
) -> dict[str, Any]:
    """A report as JSON on stdout (and to ``out``), its table on stderr and its figure to
    ``png``; both files are checked before ``make()`` runs, so an existing one (without
    ``force``) costs no work and is kept."""
    check_outputs(force, out=out, png=png)
    report = make()
    text = finite_json(report)
    if out is not None:
        write_output(out, lambda tmp: tmp.write_text(text + "\n"), force, "--out")
    print(text)
    print(table(report), file=sys.stderr)
    if png is not None and plot is not None:
        write_output(png, lambda tmp: plot(report, tmp), force, "--png")
    return report
