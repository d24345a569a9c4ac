"""No module outside ``kda_sim/kernels/k1/`` imports from it, except the registry and the
modules not yet kernel-neutral listed below (each should leave the list, none join it)."""

from __future__ import annotations

import ast
from pathlib import Path

import kda_sim

ROOT = Path(kda_sim.__file__).parent
K1 = "kda_sim.kernels.k1"
ALLOWED = {"kda_sim.kernels.registry"}
# not yet kernel-neutral: they still read K1's configuration, constants or programs
NOT_YET_NEUTRAL = frozenset(
    {
        "kda_sim.checks.tags.footprint",
        "kda_sim.checks.tags.schemes",
        "kda_sim.commands.check",
    }
)


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


def test_only_the_registry_and_the_listed_modules_import_k1() -> None:
    found = k1_importers()
    outside = sorted(set(found) - ALLOWED - NOT_YET_NEUTRAL)
    print(f"\n{len(NOT_YET_NEUTRAL)} modules not yet kernel-neutral:")
    for name in sorted(NOT_YET_NEUTRAL):
        print(f"  {name}")
    assert not outside, {n: sorted(found[n]) for n in outside}


def test_the_list_only_shrinks() -> None:
    """A module that no longer imports K1 leaves the list (so the list says the truth)."""
    stale = sorted(NOT_YET_NEUTRAL - set(k1_importers()))
    assert not stale, f"neutral now, take them off NOT_YET_NEUTRAL: {stale}"
    assert len(NOT_YET_NEUTRAL) < 50


def test_the_generic_layers_are_neutral() -> None:
    """The op vocabulary, the engine, the timeline and the machine model import no kernel."""
    found = k1_importers()
    for layer in ("protocol", "engine", "timeline", "machine", "kernels.spec"):
        prefix = f"kda_sim.{layer}"
        assert not [n for n in found if n == prefix or n.startswith(prefix + ".")], layer
