"""Where the FlyDSL compile-only toolchain is, and the environment a build needs.

``scripts/flydsl_env.sh`` installs it (flydsl 0.5.0 from PyPI, an ``ld.lld`` that links
code object v6 under ``<root>/llvm/bin``); this module only finds it and says what is
missing, so tests can skip cleanly and the CLI can name the fix.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
from pathlib import Path

ARCHES: tuple[str, ...] = ("gfx942", "gfx950")
MIN_LLD_MAJOR = 16  # the first LLD that knows code object v6
ROCM_INSTALL = "/opt/rocm"  # where ROCm installs itself, its LLVM's ld.lld included
SETUP_HINT = "run `bash scripts/flydsl_env.sh` (pip flydsl==0.5.0, apt lld-19 or PyPI ziglang)"


def default_root() -> Path:
    cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
    return Path(os.environ.get("KDA_FLYDSL_ROOT", cache / "kda-sim" / "rocm"))


def rocm_root() -> Path:
    """The root FlyDSL will link under: ROCM_PATH if it holds a linker, else a ROCm
    install's (``/opt/rocm``: on a ROCm machine nothing need be set or installed), else
    ours."""
    for root in (os.environ.get("ROCM_PATH"), ROCM_INSTALL):
        if root and (Path(root) / "llvm" / "bin" / "ld.lld").exists():
            return Path(root)
    return default_root()


def lld_major(lld: Path) -> int | None:
    try:
        out = subprocess.run([str(lld), "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    for word in out.stdout.replace("(", " ").split():
        head = word.split(".")[0]
        if "." in word and head.isdigit():
            return int(head)
    return None


def missing() -> str | None:
    """Why a FlyDSL build cannot run here, or None when it can."""
    if importlib.util.find_spec("flydsl") is None:
        return f"flydsl is not installed; {SETUP_HINT}"
    lld = rocm_root() / "llvm" / "bin" / "ld.lld"
    if not lld.exists():
        return f"no linker at {lld}; {SETUP_HINT}"
    major = lld_major(lld)
    if major is None or major < MIN_LLD_MAJOR:
        return f"{lld} is LLD {major}, which cannot link code object v6; {SETUP_HINT}"
    return None


def compile_env(arch: str, dump_dir: Path) -> dict[str, str]:
    """The variables of a compile-only build for ``arch`` that dumps its ISA to ``dump_dir``."""
    if arch not in ARCHES:
        raise ValueError(f"arch {arch!r} is not one of {', '.join(ARCHES)}")
    return {
        "ROCM_PATH": str(rocm_root()),
        "COMPILE_ONLY": "1",
        # both: helpers that query the arch otherwise see gfx942 (FLYDSL.md)
        "ARCH": arch,
        "FLYDSL_GPU_ARCH": arch,
        "FLYDSL_COMPILE_BACKEND": "rocm",
        "FLYDSL_RUNTIME_KIND": "rocm",
        "FLYDSL_RUNTIME_ENABLE_CACHE": "0",
        "FLYDSL_DEBUG_DUMP_ASM": "1",
        "FLYDSL_DUMP_DIR": str(dump_dir),
    }
