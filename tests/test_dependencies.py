"""Every third-party package that ``kda_sim`` imports at module level outside the app is a
declared dependency of the distribution: a plain ``pip install kda-sim`` (no extras) can
import the simulator. The app's imports need the ``app`` extra, which it names; the Dask
backend's (``kda_sim/cluster.py``, imported only for ``--cluster``) the ``cluster`` extra."""

from __future__ import annotations

import ast
import sys
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[1]
OWN = {"kda_sim", "kda_kernel"}


def _module_level_imports(path: Path) -> set[str]:
    """Top-level names imported at module level (not inside functions)."""
    names: set[str] = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module.split(".")[0])
    return names


def _declared(extra: str | None = None) -> set[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    reqs = project["dependencies"] + (project["optional-dependencies"][extra] if extra else [])
    return {Requirement(r).name.lower().replace("_", "-") for r in reqs}


def _undeclared(files: list[Path], declared: set[str]) -> dict[str, set[str]]:
    dists = packages_distributions()
    missing: dict[str, set[str]] = {}
    for path in files:
        for name in _module_level_imports(path) - OWN - set(sys.stdlib_module_names):
            for dist in dists.get(name, [name]):
                if dist.lower().replace("_", "-") not in declared:
                    missing.setdefault(dist, set()).add(str(path.relative_to(ROOT)))
    return missing


CLUSTER = ROOT / "kda_sim" / "cluster.py"


def test_the_simulator_imports_only_declared_dependencies() -> None:
    files = [p for p in (ROOT / "kda_sim").rglob("*.py") if "app" not in p.parts and p != CLUSTER]
    missing = _undeclared(files, _declared())
    assert not missing, f"imported but not in [project] dependencies: {missing}"


def test_the_app_imports_only_the_app_extra() -> None:
    files = list((ROOT / "kda_sim" / "app").rglob("*.py"))
    missing = _undeclared(files, _declared("app"))
    assert not missing, f"imported by the app but not in its extra: {missing}"


def test_the_cluster_backend_imports_only_the_cluster_extra() -> None:
    missing = _undeclared([CLUSTER], _declared("cluster"))
    assert not missing, f"imported by kda_sim/cluster.py but not in its extra: {missing}"
