"""What the lab's GPU drivers (trace_spread, variant_check, hbm_ceiling, the stamp probes)
share: the checks made before any launch, writing a JSON report, and the stamp probes'
command line.

Before any launch, nothing the user has is overwritten and a GPU is here; both are said as
InvalidInput (exit 2), so a record asked of a machine without a GPU names why, not a
traceback, and writes nothing.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from kda_sim.commands.common import refuse_overwrite
from kda_sim.errors import InvalidInput


def before_launches(paths: Iterable[Path], force: bool) -> None:
    """Raises InvalidInput where a path exists (unless ``force``) or no GPU is here."""
    for path in paths:
        refuse_overwrite(path, force)
    from kda_kernel.triton.run import KernelUnavailable, need_gpu

    try:
        need_gpu()
    except KernelUnavailable as e:
        raise InvalidInput(str(e), where="this machine") from e


def emit(text: str, out: Path | None) -> None:
    """A report to ``out`` (checked beforehand with refuse_overwrite) and to stdout."""
    if out:
        out.write_text(text + "\n")
    print(text)


def report_to(make: Callable[[], Any], out: Path | None, force: bool) -> None:
    """``make()``'s report as JSON to ``out`` and stdout; an existing ``out`` is refused
    (unless ``force``) before the report is made."""
    refuse_overwrite(out, force)
    emit(json.dumps(make(), indent=1), out)


def unwritable(*paths: Path | None) -> str | None:
    """Why one of ``paths`` cannot be written, checked as ``kda-sim`` checks its outputs
    (``refuse_overwrite``: its folder exists, it is not a folder), an existing file never
    overwritten; None where all can."""
    for path in paths:
        try:
            refuse_overwrite(path, force=False)
        except InvalidInput as e:
            return f"{path} exists; not overwriting it" if e.what == "exists" else str(e)
    return None


def report_main(
    name: str,
    make: Callable[[], Any],
    show: Callable[[Any], str],
    out: Path | None,
    *also: Path | None,
) -> int:
    """A lab report's end: ``out`` (its JSON) and ``also`` (the other files ``make``
    writes) checked before any work, ``make()``'s InvalidInput said in a line (exit 2),
    ``show(report)`` printed, then the report written to ``out``."""
    why = unwritable(out, *also)
    if why is None:
        try:
            rep = make()
        except InvalidInput as e:
            why = str(e)
    if why is not None:
        print(f"{name}: {why}", file=sys.stderr)
        return 2
    print(show(rep))
    if out is not None:
        out.write_text(json.dumps(rep, indent=1) + "\n")
    return 0


def probe_main(
    argv: list[str] | None,
    *,
    name: str,
    doc: str,
    run: Callable[[argparse.Namespace], dict[str, Any]],
    report: Callable[[dict[str, Any]], str],
    add_args: Callable[[argparse.ArgumentParser], None] | None = None,
    bad_args: Callable[[argparse.Namespace], str | None] | None = None,
    rounds: bool = True,
) -> int:
    """A stamp probe's command line (``lab.poll_probe``, ``lab.storm_probe``): ``--out FILE``
    runs it on the GPU (``--rounds`` a launch, ``--launches`` an experiment, and what
    ``add_args`` adds) and writes ``run(args)``'s document there (with the environment),
    then prints its tables; ``--report FILE`` prints a written run's tables here. Exit 2,
    naming why, for a file that is not such a run, arguments ``bad_args`` refuses, an
    existing ``--out`` (never overwritten) or no CUDA GPU, each before any launch, and for
    an InvalidInput ``run`` raises (before its launches: what only the GPU tells, as its
    SM count). ``rounds`` False: no ``--rounds`` here (a probe whose rounds are its own
    argument, ``add_args``'s)."""
    ap = argparse.ArgumentParser(description=doc.split("\n")[0])
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--out", type=Path, help="run on the GPU, write the rows here")
    g.add_argument("--report", type=Path, help="print a run's tables (no GPU)")
    if rounds:
        ap.add_argument("--rounds", type=int, default=16, help="rounds a launch (a power of two)")
    ap.add_argument("--launches", type=int, default=4, help="launches an experiment")
    if add_args is not None:
        add_args(ap)
    a = ap.parse_args(argv)
    if a.report is not None:
        try:
            print(report(json.loads(a.report.read_text())))
        except (OSError, ValueError, KeyError, TypeError) as e:
            print(f"{name}: {a.report}: not a {name} run ({e})", file=sys.stderr)
            return 2
        return 0
    why = bad_args(a) if bad_args is not None else None
    if (rounds and a.rounds not in (4, 8, 16, 32, 64)) or a.launches < 1:
        why = "--rounds a power of two, 4 to 64; --launches at least 1"
    why = why or unwritable(a.out)
    if why:
        print(f"{name}: {why}", file=sys.stderr)
        return 2
    import torch

    if not torch.cuda.is_available():
        print(f"{name}: no CUDA GPU here (the probe runs on one)", file=sys.stderr)
        return 2
    from kda_kernel.triton.trace import environment

    try:
        out = {"env": environment(), **run(a)}
    except InvalidInput as e:
        print(f"{name}: {e}", file=sys.stderr)
        return 2
    a.out.write_text(json.dumps(out, indent=1))
    print(report(out))
    return 0
