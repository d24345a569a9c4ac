"""The Triton spin kernels compiled now (AMD backend, compile-only, both archs): what
this Triton emits gets the findings the committed fixtures' expected.json says."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

from kda_sim.isa import analyze_text

pytest.importorskip("triton.backends.amd", reason="needs triton with its AMD backend")

ROOT = Path(__file__).parents[2]
EXPECTED = json.loads((ROOT / "tests/isa/fixtures/triton/expected.json").read_text())


def _script():
    path = ROOT / "scripts" / "isa_triton_fixtures.py"
    spec = importlib.util.spec_from_file_location("isa_triton_fixtures", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("arch", ["gfx942", "gfx950"])
def test_triton_spins_compiled_now_get_their_findings(
    arch: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path))  # compile, not a cached build
    mod = _script()
    for name, kernel in mod.kernels().items():
        r = analyze_text(mod.build(kernel, arch), name)
        got = sorted([str(f.kind), f.line] for f in r.findings)
        assert got == sorted(EXPECTED["findings"][f"{arch}/{name}"]), name
