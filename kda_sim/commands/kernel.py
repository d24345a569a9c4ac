"""``kda-sim kernel run``: a real K1 backend (the Triton K1 on a CUDA GPU by default).

Backends are found through the entry points of the group ``kda_sim.backends`` (the
``kda-sim`` distribution registers ``torch``, ``triton`` and ``flydsl``, in ``kda_kernel``);
this package never imports them by name. A backend's ``default_config(R, L, ...)`` makes
the configuration (the variants the flags say kept, the others as it recommends), its
``run_shape(cfg, **request)`` runs it, its ``exit_code(error)`` classifies what it raised.

Backends run K1 (``--kernel k1``, the default); another kernel is refused (exit 2).

``--trace`` is checked before a backend is loaded (its folder exists and takes a file, an
existing file needs --force) and written through :func:`write_output`: the backend writes
into a temporary file beside it, put in place when the run returns.

Exit codes: 0 ran (and matched with --check), 1 the check failed or the watchdog gave up,
2 no such backend / no GPU / invalid input / a launch the pre-flight refused.
"""

from __future__ import annotations

import argparse
import json
import sys
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

from kda_sim.cli import COMMANDS
from kda_sim.commands.common import (
    add_kernel_flag,
    float_type,
    no_kernel_flags,
    refuse_overwrite,
    write_output,
)
from kda_sim.errors import InvalidInput
from kda_sim.importers.ktrace import SUFFIX as KTRACE_SUFFIX
from kda_sim.kernels.registry import DEFAULT_KERNEL, get
from kda_sim.kernels.spec import RealBackends, hook

GROUP = "kda_sim.backends"


def real_kernel() -> tuple[Any, RealBackends]:
    """The kernel the backends run (the default kernel) and what it offers them."""
    spec = get(DEFAULT_KERNEL)
    offers = hook(spec, "real_backends")
    assert offers is not None, f"{DEFAULT_KERNEL} defines no real_backends"
    return spec, offers


def backend_names() -> list[str]:
    """The registered backends' names (metadata only: nothing is imported)."""
    return sorted({ep.name for ep in entry_points(group=GROUP)})


def load_backend(name: str) -> Any:
    """The backend registered as ``name``; LookupError naming the registered ones."""
    found = [ep for ep in entry_points(group=GROUP) if ep.name == name]
    if not found:
        have = ", ".join(backend_names()) or "none (is kda-sim installed with pip?)"
        raise LookupError(f"no backend {name!r} registered in {GROUP} (registered: {have})")
    return found[0].load()


def add_parser(sub: argparse._SubParsersAction) -> None:
    offers = real_kernel()[1]
    p = sub.add_parser("kernel", help=COMMANDS["kernel"])
    ksub = p.add_subparsers(dest="kernel_command", required=True)
    r = ksub.add_parser("run", help="one launch (or --graph: CUDA-graph steps) of K1")
    add_kernel_flag(r)
    r.add_argument("--R", type=int, default=1, help="requests")
    r.add_argument("--L", type=int, default=1, help="tokens a request")
    r.add_argument("--nb", type=int, default=8, help="AttnRes blocks")
    r.add_argument("--kda0", type=int, default=0, help="CTA of kda task 0")
    r.add_argument("--trace", type=Path, help="write the measured timeline (traces/*.json)")
    r.add_argument(
        "--ktrace",
        type=Path,
        help="with --backend flydsl: run the ktrace build and write the measured step's "
        "FlyDSL ktrace file (.pftrace.gz; read it with compare / load_trace)",
    )
    r.add_argument(
        "--force", action="store_true", help="overwrite an existing --trace / --ktrace file"
    )
    r.add_argument("--check", action="store_true", help="compare with the torch reference")
    r.add_argument("--graph", action="store_true", help="replay a 3-launch step in a CUDA graph")
    r.add_argument(
        "--replays",
        type=int,
        default=None,
        help="graph replays with --graph (the backend's default: 20 for Triton)",
    )
    r.add_argument(
        "--warmup",
        type=int,
        default=0,
        help="eager steps before the one measured and traced (a warm launch; not with --graph)",
    )
    r.add_argument(
        "--watchdog-ms", type=float_type(0.001, 1e7), help="bound every wait (watchdog build)"
    )
    r.add_argument("--inject", choices=offers.faults, help="plant one fault (implies the watchdog)")
    r.add_argument(
        "--prefetch-weights",
        type=int,
        choices=range(5),
        default=0,
        metavar="MODE",
        help="also ask L2 for gemv weights before the XRDY poll: 1 a prefetch "
        "a line; 2, 3, 4 the copy engine's bulk prefetch of the first group, "
        "and the second after the poll, or before it too (the Triton build's "
        "prefetch; 0, the default: every mode measured slower on the "
        "H200)",
    )
    r.add_argument(
        "--nw-first",
        choices=("on", "off"),
        default=None,
        help="ask for in_nw with the slice's loads (on) or after the MSQ poll, the "
        "seed's order (off); default: the backend's recommendation (Triton: on at L = 1, "
        "2; FlyDSL: off)",
    )
    r.add_argument(
        "--onw-first",
        choices=("on", "off"),
        default=None,
        help="ask for on_w with k.stage's loads (on) or after k.norm's poll, the seed's "
        "order (off); default: the backend's recommendation (Triton: on, the only order "
        "it builds; FlyDSL: off)",
    )
    for name, text in offers.schedules.items():  # off unless given: the static placement
        r.add_argument(f"--{name.replace('_', '-')}", action="store_true", help=text)
    r.add_argument("--json", action="store_true", help="print the result as JSON")
    r.add_argument(
        "--backend",
        default="triton",
        help="a registered backend: triton (CUDA; ROCm untested), flydsl (needs a ROCm GPU), "
        "torch (the reference, one untraced step)",
    )
    r.add_argument("--arch", default=None, help="with --backend flydsl: gfx942 or gfx950")
    r.set_defaults(run=run)


def build_options(args: argparse.Namespace) -> dict[str, object]:
    """The build options the flags set (the Triton backend's); the rest: defaults."""
    out: dict[str, object] = {}
    if args.prefetch_weights:
        out["prefetch"] = args.prefetch_weights
    return out


def given_variants(args: argparse.Namespace) -> dict[str, bool]:
    """The protocol variants the flags say; a variant left unsaid is absent."""
    flags = {"nw_first": args.nw_first, "onw_first": args.onw_first}
    given = {k: v == "on" for k, v in flags.items() if v is not None}
    schedules = real_kernel()[1].schedules
    return given | {k: True for k in schedules if getattr(args, k, False)}


def launch_config(backend: Any, args: argparse.Namespace) -> Any:
    """The configuration the run runs: the variants the flags say, the others as the
    backend recommends (its ``default_config``; the seed's order where it has none)."""
    given = given_variants(args)
    config_type = real_kernel()[0].config_type
    make = getattr(backend, "default_config", None)
    if make is None:
        return config_type(args.R, args.L, args.nb, args.kda0, **given)
    cfg = make(args.R, args.L, args.nb, args.kda0, **given)
    assert isinstance(cfg, config_type), f"{backend.name}.default_config: not a {config_type}"
    return cfg


def run_backend(
    backend: Any, cfg: Any, request: dict[str, Any], trace: Path | None, force: bool
) -> dict[str, Any]:
    """``backend.run_shape(cfg, **request)``; with ``trace``, the backend writes its trace
    into the temporary file :func:`write_output` keeps beside it, put in place when the
    run returns (never half-written, and a file that appeared during the run is kept
    unless --force), and the result names ``trace``."""
    if trace is None:
        return backend.run_shape(cfg, **request)
    out: dict[str, Any] = {}
    write_output(
        trace,
        lambda tmp: out.update(backend.run_shape(cfg, trace_path=tmp, **request)),
        force,
        "--trace",
    )
    return out | {"trace": str(trace)}


def run(args: argparse.Namespace) -> int:
    spec = get(args.kernel)
    if spec.name != DEFAULT_KERNEL:  # the backends' contract: a LaunchConfig in, K1 run
        raise InvalidInput(
            f"{spec.name} has no real backends (the {GROUP} entry points run {DEFAULT_KERNEL})",
            what="kernel",
        )
    no_kernel_flags(args)
    refuse_overwrite(args.trace, args.force, "--trace")  # before any GPU work
    refuse_overwrite(args.ktrace, args.force, "--ktrace")
    if args.ktrace is not None and not args.ktrace.name.endswith(KTRACE_SUFFIX):
        raise InvalidInput(
            f"{args.ktrace}: a ktrace file ends in {KTRACE_SUFFIX} (how compare and "
            "load_trace know its kind)",
            what="--ktrace",
        )
    if args.replays is not None and not args.graph:  # never silently unused
        raise InvalidInput("--replays counts --graph's replays: give --graph too", what="--replays")
    sched = {k: True for k in real_kernel()[1].schedules if getattr(args, k, False)}
    spec.config_type(args.R, args.L, args.nb, args.kda0, **sched).validate()  # InvalidInput: exit 2
    try:
        backend = load_backend(args.backend)
    except LookupError as e:
        print(f"kda-sim kernel run: {e}", file=sys.stderr)
        return 2
    except ImportError as e:  # the backend's module or what it needs is not installed
        print(f"kda-sim kernel run: backend {args.backend}: {e}", file=sys.stderr)
        return 2
    cfg = launch_config(backend, args).validate()
    if args.inject is not None and args.inject not in backend.faults:
        print(
            f"kda-sim kernel run: --inject is not served by the {backend.name} backend: it "
            "plants no faults",
            file=sys.stderr,
        )
        return 2
    request: dict[str, Any] = {
        "check": args.check,
        "graph": args.graph,
        "watchdog_ms": args.watchdog_ms,
        "inject": args.inject,
        "warmup": args.warmup,
        "build": build_options(args) or None,
    }
    if args.replays is not None:  # else the backend's own default
        request["replays"] = args.replays
    if args.arch is not None:
        request["arch"] = args.arch
    if args.ktrace is not None:
        if not getattr(backend, "ktrace", False):  # a backend that builds ktrace says so
            print(
                f"kda-sim kernel run: --ktrace is not served by the {backend.name} backend "
                "(FlyDSL's ktrace: --backend flydsl)",
                file=sys.stderr,
            )
            return 2
        request["ktrace_path"] = args.ktrace
    try:
        res = run_backend(backend, cfg, request, args.trace, args.force)
    except InvalidInput:
        raise
    except Exception as e:
        code = backend.exit_code(e)
        if code is None:
            raise
        print(f"kda-sim kernel run: {e}", file=sys.stderr)
        return code
    if args.json:
        print(json.dumps(res, indent=1, default=str))
    else:
        for k, v in res.items():
            print(f"{k}: {v}")
    return 0
