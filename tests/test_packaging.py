"""The installed packages: the folder kernel/ is the package kda_kernel, and every package
of the tree is listed in pyproject.toml (setuptools maps kernel/ by name, so it finds
none by itself)."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _packages_in_tree() -> set[str]:
    out = set()
    for top, name in (("kda_sim", "kda_sim"), ("kernel", "kda_kernel")):
        for init in (ROOT / top).rglob("__init__.py"):
            rel = init.parent.relative_to(ROOT / top)
            out.add(".".join((name, *rel.parts)))
    return out


def test_every_package_is_listed() -> None:
    conf = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert conf["package-dir"] == {"kda_kernel": "kernel"}
    assert set(conf["packages"]) == _packages_in_tree()
    assert not any(p == "kernel" or p.startswith("kernel.") for p in conf["packages"])


def test_the_readme_says_how_to_install_the_app_without_torch() -> None:
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    heavy = ("torch", "triton")
    assert not any(d.startswith(heavy) for d in extras["app"])
    assert any(d.startswith("torch") for d in extras["kernel"])
    readme = (ROOT / "README.md").read_text()
    for cmd in (
        'pip install -e ".[app]"',
        'pip install torch==2.13.0 -e ".[app,kernel]"',
        'pip install torch==2.13.0 -e ".[app,kernel,dev,cluster]" && streamlit run app.py',
        "python -m pytest -n 2",
    ):
        assert cmd in readme, cmd


def test_the_readmes_commands_name_files_a_fresh_clone_has() -> None:
    import re
    import shlex

    readme = (ROOT / "README.md").read_text()
    for cmd in re.findall(r"`(kda-sim [^`]+)`", readme):
        for word in shlex.split(cmd)[2:]:
            if "/" in word and not word.startswith("-") and word.split("/")[0].islower():
                assert (ROOT / word).exists(), f"{cmd}: {word} is not in the repository"
