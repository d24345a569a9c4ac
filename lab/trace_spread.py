"""Many traced launches of each shape on the GPU: the input of ``kda-sim spread``.

A model cannot predict a launch closer than the next launch of the same shape lands to it;
``record`` makes N traced launches a shape as the bundled traces were made
(``kda_kernel.triton.run.run`` with a trace path), named as ``kda-sim spread DIR`` reads them
(``k1_R{R}_L{L}_{i}.json``), which compares them on any machine.

Usage (on the GPU):
    python -m lab.trace_spread record --shapes 1x1,1x2,4x4 --launches 8 --dir DIR [--warmup N]
        [--kda-tickets [--ticket-unroll N]] [--probe take|static_item] [--gate-sleep-ns N]
        [--build FIELD=N ...]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from tqdm import tqdm

from kda_sim.compare.spread import trace_name
from kda_sim.errors import InvalidInput
from kda_sim.kernels.k1.config import parse_shapes
from lab.gpu_jobs import before_launches


def record(
    shapes: list[tuple[int, int]],
    launches: int,
    out: Path,
    force: bool = False,
    warmup: int = 0,
    kda_tickets: bool = False,
    ticket_unroll: int = 0,
    probe: str = "",
    gate_sleep_ns: int = 0,
    options: dict[str, int] | None = None,
) -> None:
    """Raises InvalidInput (before any launch, lab.gpu_jobs.before_launches) where a
    trace of this name is there (unless ``force``) or no GPU is here. ``warmup``: eager
    steps before each traced launch (``kda_kernel.triton.run.run``): warm launches, not
    first ones. ``kda_tickets``: the schedule of that name, ``ticket_unroll`` its unrolled
    copies (the trace's meta says both); ``probe``: ``Build.probe``'s experiment (the
    trace's meta.extra["build"] names it), checked against the schedule before any
    launch; ``gate_sleep_ns``: ``Build.gate_sleep_ns``'s (named there too), the gate's
    PART poll backing off between tries; ``options``: other integer ``Build`` fields of a lab
    build (``--build FIELD=N``: ``gate_delay_ns``, ...), each checked by ``Build.validate``
    before any launch."""
    from kda_kernel.triton.defaults import default_config
    from kda_kernel.triton.launch import Build, wait_error

    why = wait_error("gate_sleep_ns", gate_sleep_ns)  # Build's range, named by the flag
    if why:
        raise InvalidInput(f"--gate-sleep-ns {gate_sleep_ns}: {why}", what="gate_sleep_ns")
    build: dict[str, object] = {"probe": probe} if probe else {}
    if gate_sleep_ns:
        build["gate_sleep_ns"] = gate_sleep_ns
    build |= options or {}
    for R, L in shapes:  # a probe on the wrong schedule is named, GPU or not
        cfg = default_config(R, L, 8, kda_tickets=kda_tickets, ticket_unroll=ticket_unroll)
        try:
            Build(cfg, **build).validate()
        except InvalidInput:  # a probe on the wrong schedule (Unsupported) says so itself
            raise
        except ValueError as e:  # a field's range
            raise InvalidInput(f"--build {build}: {e}", what="build") from None
    jobs = [(R, L, out / trace_name(R, L, i)) for R, L in shapes for i in range(launches)]
    before_launches([path for _, _, path in jobs], force)
    from kda_kernel.triton.run import run

    out.mkdir(parents=True, exist_ok=True)
    for R, L, path in tqdm(jobs, desc="traced launches", unit="launch"):
        cfg = default_config(R, L, 8, kda_tickets=kda_tickets, ticket_unroll=ticket_unroll)
        run(cfg, trace_path=path, warmup=warmup, build=build)


def build_options(items: list[str]) -> dict[str, int]:
    """``--build FIELD=N`` items as Build options: FIELD an integer field of ``Build``'s own
    (not the launch configuration's), each named once."""
    from dataclasses import fields

    from kda_kernel.triton.launch import Build

    own = {f.name for f in fields(Build)} - {"cfg"}
    out: dict[str, int] = {}
    for item in items:
        key, eq, value = item.partition("=")
        if not eq or key not in own or key in out:
            why = "named twice" if key in out else "FIELD=N with FIELD a Build field"
            raise InvalidInput(f"--build {item}: {why}", what="build")
        try:
            out[key] = int(value)
        except ValueError:
            raise InvalidInput(f"--build {item}: N an integer", what="build") from None
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("record", help="traced launches on the GPU")
    r.add_argument("--shapes", default="1x1,1x2,4x4")
    r.add_argument("--launches", type=int, default=8)
    r.add_argument("--dir", type=Path, required=True)
    r.add_argument("--force", action="store_true", help="overwrite traces of the same names")
    r.add_argument(
        "--warmup",
        type=int,
        default=0,
        help="eager steps before each traced launch (warm launches)",
    )
    r.add_argument(
        "--kda-tickets",
        action="store_true",
        help="the kda tasks from the ticket counter (LaunchConfig.kda_tickets)",
    )
    r.add_argument(
        "--ticket-unroll",
        type=int,
        default=0,
        help="with --kda-tickets: unrolled copies of the kda task (LaunchConfig.ticket_unroll)",
    )
    r.add_argument(
        "--probe",
        choices=("take", "static_item"),
        default="",
        help="a lab experiment (Build.probe): take, on the static build; static_item, with "
        "--kda-tickets",
    )
    r.add_argument(
        "--gate-sleep-ns",
        type=int,
        default=0,
        help="a lab experiment (Build.gate_sleep_ns): the gate's PART poll backs off this "
        "many ns between tries (0, as shipped: it spins)",
    )
    r.add_argument(
        "--build",
        action="append",
        default=[],
        metavar="FIELD=N",
        help="a lab build: an integer Build field (gate_delay_ns, gate_stagger_ns, ...); "
        "repeatable",
    )
    a = ap.parse_args(argv)
    try:
        shapes = list(parse_shapes(a.shapes))
        options = build_options(a.build)
        record(
            shapes,
            a.launches,
            a.dir,
            a.force,
            a.warmup,
            a.kda_tickets,
            a.ticket_unroll,
            a.probe,
            a.gate_sleep_ns,
            options,
        )
    except InvalidInput as e:
        print(f"trace_spread: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
