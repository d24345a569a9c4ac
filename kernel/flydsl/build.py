"""Compile a FlyDSL launcher compile-only for one target and return its final ISA."""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from kda_kernel.flydsl.toolchain import compile_env


@dataclass(frozen=True)
class Built:
    arch: str
    isa: Path  # the dumped NN_final_isa.s
    seconds: float  # trace + compile + link


@contextlib.contextmanager
def _env(values: dict[str, str]) -> Iterator[None]:
    saved = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def compile_isa(launch: Callable[[], None], arch: str, dump_dir: Path) -> Built:
    """Run ``launch`` (which calls a ``@flyc.jit`` launcher with placeholder pointers)
    under a compile-only environment; the dump folder must be the build's own, since
    FlyDSL names its subfolder after the kernel only."""
    dump_dir.mkdir(parents=True, exist_ok=True)
    # a dump left by an earlier build must not pass for this one's
    for old in dump_dir.glob("*/*_final_isa.s"):
        old.unlink()
    t0 = time.perf_counter()
    with _env(compile_env(arch, dump_dir)):
        launch()
    seconds = time.perf_counter() - t0
    found = sorted(dump_dir.glob("*/*_final_isa.s"))
    if not found:
        # FlyDSL prints LLVM's error (e.g. LDS over the target's limit) and returns
        raise RuntimeError(f"FlyDSL wrote no *_final_isa.s under {dump_dir}: the build failed")
    return Built(arch, found[-1], seconds)
