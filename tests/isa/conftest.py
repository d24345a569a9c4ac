"""Fixtures shared by the ISA tests."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).parents[2]


@pytest.fixture
def mailbox_script() -> ModuleType:
    """``scripts/isa_mailbox_fixtures.py`` loaded as a module (its variants and build)."""
    spec = importlib.util.spec_from_file_location(
        "isa_mailbox_fixtures", ROOT / "scripts" / "isa_mailbox_fixtures.py"
    )
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # its dataclasses look their module up
    spec.loader.exec_module(mod)
    return mod
