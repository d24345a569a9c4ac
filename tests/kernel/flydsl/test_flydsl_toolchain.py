"""Where a FlyDSL build links: ROCM_PATH, a ROCm install, or the compile-only root that
``scripts/flydsl_env.sh`` makes (on an MI355X's machine, ROCm's own linker serves)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kda_kernel.flydsl import toolchain


def rocm_like(root: Path) -> Path:
    lld = root / "llvm" / "bin" / "ld.lld"
    lld.parent.mkdir(parents=True)
    lld.write_text("")
    return root


def test_rocm_path_then_the_rocm_install_then_ours(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ours = tmp_path / "ours"
    monkeypatch.setenv("KDA_FLYDSL_ROOT", str(ours))
    monkeypatch.setattr(toolchain, "ROCM_INSTALL", str(tmp_path / "no_rocm"))
    monkeypatch.delenv("ROCM_PATH", raising=False)
    assert toolchain.rocm_root() == ours
    install = rocm_like(tmp_path / "opt_rocm")
    monkeypatch.setattr(toolchain, "ROCM_INSTALL", str(install))
    assert toolchain.rocm_root() == install  # nothing exported on a ROCm machine
    monkeypatch.setenv("ROCM_PATH", str(tmp_path / "empty"))  # no linker there: skipped
    assert toolchain.rocm_root() == install
    given = rocm_like(tmp_path / "given")
    monkeypatch.setenv("ROCM_PATH", str(given))
    assert toolchain.rocm_root() == given
    assert toolchain.compile_env("gfx950", tmp_path)["ROCM_PATH"] == str(given)
