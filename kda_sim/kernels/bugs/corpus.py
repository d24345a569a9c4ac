"""The corpus: every bug's ``CASE``, in the order of docs/bugs.md."""

from __future__ import annotations

import importlib

from kda_sim.kernels.bugs.case import BugCase
from kda_sim.kernels.registry import BUG_KERNELS


def cases() -> list[BugCase]:
    """Each bug module's case (the module is named for its kernel)."""
    return [importlib.import_module(f"kda_sim.kernels.bugs.{n}").CASE for n in BUG_KERNELS]
