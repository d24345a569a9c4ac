"""kda_sim never imports the kernels by name: backends come through entry points."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
KERNEL_PACKAGES = ("kda_kernel", "kernel")


def _imported(tree: ast.AST) -> list[str]:
    out: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            out.append(node.module)
        elif (
            isinstance(node, ast.Call)
            and getattr(node.func, "attr", getattr(node.func, "id", "")) == "import_module"
            and node.args
            and isinstance(node.args[0], ast.Constant)
        ):
            out.append(str(node.args[0].value))
    return out


def test_no_module_of_kda_sim_imports_a_kernel_package() -> None:
    bad = []
    for path in sorted((ROOT / "kda_sim").rglob("*.py")):
        for name in _imported(ast.parse(path.read_text())):
            if name.split(".")[0] in KERNEL_PACKAGES:
                bad.append(f"{path.relative_to(ROOT)}: {name}")
    assert not bad, "kda_sim imports a kernel package:\n" + "\n".join(bad)


def test_the_check_sees_every_import_form() -> None:
    src = "import kda_kernel\nfrom kernel.x import y\nimportlib.import_module('kda_kernel.t')"
    assert _imported(ast.parse(src)) == ["kda_kernel", "kernel.x", "kda_kernel.t"]
