"""What the lab's GPU drivers (trace_spread, variant_check, hbm_ceiling) share: the checks
made before any launch, and writing a JSON report.

Before any launch, nothing the user has is overwritten and a GPU is here; both are said as
InvalidInput (exit 2), so a record asked of a machine without a GPU names why, not a
traceback, and writes nothing.
"""

from __future__ import annotations

import json
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
