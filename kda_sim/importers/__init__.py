"""Real traces into the one :class:`~kda_sim.timeline.model.Timeline` type.

=====================  ==========================================  =====================
file                   what it is                                  reader
=====================  ==========================================  =====================
``*.json[.gz]``        our kernel's trace (Chrome JSON)            :mod:`.chrome`
``*.pt`` / ``*.npy``   stamp tensors: the twin's, the FlyDSL K1's  :mod:`.stamps`
``*.pftrace.gz``       FlyDSL ktrace's Perfetto trace              :mod:`.ktrace`
=====================  ==========================================  =====================

The stamp tensor and the ktrace file do not record the launch's shape: pass ``R``,
``L`` (and ``nb``, ``kda0``, ``gate_local``, ``nw_first``, ``onw_first``, ``gpu`` where
they differ from the defaults). A file that is not what its name claims raises
:class:`~kda_sim.errors.TraceFormatError` naming the field and the record.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kda_sim.errors import InvalidInput, TraceFormatError
from kda_sim.importers.chrome import read_kernel_trace
from kda_sim.importers.ktrace import read_ktrace
from kda_sim.importers.stamps import read_stamps
from kda_sim.timeline.model import Timeline

__all__ = ["load_trace", "read_kernel_trace", "read_ktrace", "read_stamps"]


def kind_of(path: str | Path) -> str:
    name = Path(path).name
    if name.endswith(".pftrace.gz") or name.endswith(".pftrace"):
        return "ktrace"
    if name.endswith((".json", ".json.gz")):
        return "chrome"
    if name.endswith((".pt", ".pth", ".npy")):
        return "stamps"
    raise TraceFormatError(
        "unknown trace kind (expected .json, .pftrace.gz, .pt or .npy)", where=str(path)
    )


def load_trace(path: str | Path, **cfg: Any) -> Timeline:
    """Any supported trace file -> :class:`Timeline` (see the table above)."""
    kind = kind_of(path)
    if kind == "chrome":
        if cfg:
            raise InvalidInput(
                f"a kernel trace carries its configuration; {sorted(cfg)} not taken",
                what="config",
            )
        return read_kernel_trace(path)
    missing = [k for k in ("R", "L") if k not in cfg]
    if missing:
        raise InvalidInput(
            f"a {kind} file does not record the launch's shape: give {missing}", what="R/L"
        )
    if kind == "ktrace":
        return read_ktrace(path, **cfg)
    return read_stamps(path, **cfg)
