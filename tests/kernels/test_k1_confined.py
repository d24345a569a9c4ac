"""No module outside ``kda_sim/kernels/k1/`` imports from it, except the registry: K1 is
one kernel behind the seam, and what the generic layers need of it they take from its
``KernelSpec`` and hooks, found through the registry."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

import kda_sim
from kda_sim.kernels import registry

ROOT = Path(kda_sim.__file__).parent
K1 = "kda_sim.kernels.k1"
ALLOWED = frozenset({"kda_sim.kernels.registry"})


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path) -> set[str]:
    """Every module ``path`` imports, at any depth of its code (absolute names)."""
    out: set[str] = set()
    package = module_name(path).rsplit(".", 0 if path.name == "__init__.py" else 1)[0]
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*up, base] if base else up)
            out.add(base)
            out.update(f"{base}.{a.name}" for a in node.names)
    return out


def k1_importers() -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for path in sorted(ROOT.rglob("*.py")):
        name = module_name(path)
        if name == K1 or name.startswith(K1 + "."):
            continue
        hits = {m for m in imports(path) if m == K1 or m.startswith(K1 + ".")}
        if hits:
            found[name] = hits
    return found


def k1_by_name() -> set[str]:
    """Modules outside K1 that name one of its modules in a string (``import_module``,
    ``resources.files``): an import the walk of import statements would not see."""
    out = set()
    for path in sorted(ROOT.rglob("*.py")):
        name = module_name(path)
        if name == K1 or name.startswith(K1 + "."):
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            text = node.value if isinstance(node, ast.Constant) else None
            if isinstance(text, str) and (text == K1 or text.startswith((K1 + ".", K1 + ":"))):
                out.add(name)
    return out


def test_only_the_registry_imports_k1() -> None:
    found = k1_importers()
    outside = sorted(set(found) - ALLOWED)
    assert not outside, {n: sorted(found[n]) for n in outside}
    # by name too: the registry's entry for K1 is the only one
    assert k1_by_name() == ALLOWED
    assert registry.BUILTIN["k1"].startswith("kda_sim.kernels.k1.")


def test_the_walk_sees_an_import_of_k1_at_any_depth(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The walk would catch a module that imports K1 inside a function, relatively."""
    pkg = tmp_path / "kda_sim" / "checks"
    pkg.mkdir(parents=True)
    (pkg / "late.py").write_text("def f():\n    from ..kernels.k1.config import LaunchConfig\n")
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path / "kda_sim")
    assert set(k1_importers()) == {"kda_sim.checks.late"}


def test_the_generic_layers_are_neutral() -> None:
    """The op vocabulary, the engine, the timeline and the machine model import no kernel."""
    found = k1_importers()
    for layer in ("protocol", "engine", "timeline", "machine", "kernels.spec"):
        prefix = f"kda_sim.{layer}"
        assert not [n for n in found if n == prefix or n.startswith(prefix + ".")], layer
