"""Real traces into the one :class:`~kda_sim.timeline.model.Timeline` type.

=====================  ==========================================  =====================
file                   what it is                                  reader
=====================  ==========================================  =====================
``*.json[.gz]``        our kernel's trace (Chrome JSON)            :mod:`.chrome`
``*.pt`` / ``*.npy``   stamp tensors: the twin's, the FlyDSL K1's  the kernel's ``stamps``
``*.pftrace.gz``       FlyDSL ktrace's Perfetto trace              the kernel's ``ktrace``
=====================  ==========================================  =====================

A stamp tensor or a ktrace file is the kernel's own format: its ``trace_decoders`` hook
(:mod:`kda_sim.kernels.spec`) reads it, over the loaders here (:mod:`.stamps` loads the
tensor, :mod:`.ktrace` decodes the Perfetto packets); a kernel without a reader of the
kind is refused, naming the kernel and what it lacks. These files do not record the
launch's shape: pass it as the kernel's reader takes it (K1's: ``R``, ``L``, and ``nb``,
``kda0``, ``gate_local``, ``nw_first``, ``onw_first``, ``gpu`` where they differ from the
defaults). A file that is
not what its name claims raises :class:`~kda_sim.errors.TraceFormatError` naming the
field and the record.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from kda_sim.errors import InvalidInput, TraceFormatError
from kda_sim.kernels.registry import DEFAULT_KERNEL, get
from kda_sim.kernels.spec import require_hook
from kda_sim.timeline.model import Timeline

__all__ = ["decoder_for", "kind_of", "load_trace", "read_kernel_trace", "trace_files"]

CHROME_SUFFIXES = (".json", ".json.gz")  # our Chrome JSON traces, plain or gzipped


def __getattr__(name: str) -> Any:
    """``read_kernel_trace``, imported when first asked for: the package is imported for
    :mod:`.caps` alone by every command's flags, and the readers (the timeline schema
    compiled on import) are for the commands that read a trace."""
    if name == "read_kernel_trace":
        from kda_sim.importers.chrome import read_kernel_trace

        return read_kernel_trace
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def trace_files(folder: Path) -> list[Path]:
    """The Chrome JSON traces of ``folder`` (``*.json`` and ``*.json.gz``), by name: the
    bundled ones, of any kernel (another kernel's are kept gzipped, the tree small)."""
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir() if p.is_file() and p.name.endswith(CHROME_SUFFIXES))


def kind_of(path: str | Path) -> str:
    from kda_sim.importers.ktrace import SUFFIX as KTRACE_SUFFIX

    name = Path(path).name
    if name.endswith((KTRACE_SUFFIX, ".pftrace")):
        return "ktrace"
    if name.endswith(CHROME_SUFFIXES):
        return "chrome"
    if name.endswith((".pt", ".pth", ".npy")):
        return "stamps"
    raise TraceFormatError(
        "unknown trace kind (expected .json, .pftrace.gz, .pt or .npy)", where=str(path)
    )


def decoder_for(kernel: str, path: str | Path) -> Callable[..., Timeline]:
    """The reader of ``path``'s kind (a stamp tensor or a ktrace file) that the kernel
    ``kernel`` defines, or ``InvalidInput`` naming the kernel and what it lacks."""
    kind = kind_of(path)
    spec = get(kernel)
    decoders = require_hook(spec, "trace_decoders", f"a reader of {kind} files")
    if kind not in decoders:
        raise InvalidInput(
            f"{spec.name} decodes no {kind} files (it reads {', '.join(decoders) or 'none'})",
            what="kernel",
            where=str(path),
        )
    return decoders[kind]


def load_trace(path: str | Path, *, kernel: str = DEFAULT_KERNEL, **cfg: Any) -> Timeline:
    """Any supported trace file -> :class:`Timeline` (see the table above); a stamp tensor
    or ktrace file read as ``kernel``'s (a registered name or a kernel file)."""
    kind = kind_of(path)
    if kind == "chrome":
        if cfg:
            raise InvalidInput(
                f"a kernel trace carries its configuration; {sorted(cfg)} not taken",
                what="config",
            )
        from kda_sim.importers.chrome import read_kernel_trace

        return read_kernel_trace(path)
    return decoder_for(kernel, path)(path, **cfg)
