"""Every built-in kernel's ``launch_size`` hook: the ops its build makes, known before it
builds (kda_sim.kernels.spec.check_launch_size), so that a configuration past
MAX_LAUNCH_OPS is refused at once, naming the flag to shrink."""

from __future__ import annotations

import dataclasses
import time
from typing import Any

import pytest

from kda_sim.cli import main
from kda_sim.kernels.registry import BUG_KERNELS, BUILTIN, get
from kda_sim.kernels.spec import MAX_LAUNCH_OPS, hook
from kda_sim.protocol.program import Launch
from kda_sim.protocol.tickets import walk

# K1's exactness has its own test (tests/kernels/test_k1_launch_size.py: its builds are slow)
KERNELS = [name for name in BUILTIN if name != "k1"]
STRINGS = {"grid": ("worker", "scheduler"), "wait": ("eq", "ge")}  # the str fields' values


def counted(launch: Launch) -> int:
    """The ops a launch holds: every program's, a shared ticket loop's bodies once."""
    walked: set[int] = set()
    return sum(1 for prog in launch.programs for _ in walk(prog, walked))


def configs(spec: Any) -> list[Any]:
    """The default, then each field moved on its own (ints to 2, 3 and default + 3; the
    switches on; each value of a str field), then every switch on at once."""
    base = spec.default_config()
    out = [base]
    switches = {}
    for f in dataclasses.fields(base):
        v = getattr(base, f.name)
        if isinstance(v, bool):
            out.append(dataclasses.replace(base, **{f.name: not v}))
            switches[f.name] = not v
        elif isinstance(v, int):
            out += [dataclasses.replace(base, **{f.name: n}) for n in (2, 3, v + 3)]
        elif f.name in STRINGS:
            out += [dataclasses.replace(base, **{f.name: s}) for s in STRINGS[f.name]]
    if switches:
        out.append(dataclasses.replace(base, **switches))
    return out


def test_every_builtin_kernel_has_a_size_hook() -> None:
    assert [n for n in BUILTIN if hook(get(n), "launch_size") is None] == []


@pytest.mark.parametrize("name", KERNELS)
def test_the_size_is_the_count_the_build_makes(name: str) -> None:
    spec = get(name)
    size = hook(spec, "launch_size")
    checked = 0
    for cfg in configs(spec):
        try:
            launch = spec.build(cfg)
        except Exception:  # a combination its validate refuses (monomoe's top_k > experts)
            continue
        ops, fields = size(cfg)
        assert ops == counted(launch), (name, cfg)
        assert fields and all(hasattr(cfg, f) for f in fields), (name, fields)  # its flags
        checked += 1
    assert checked >= 3, name


# one configuration past the bound a kernel family, as the command line gives it, and the
# flag its refusal names
PAST_THE_BOUND = [
    ("pingpong", ["--rounds", "10000000"], "rounds = 10000000"),
    ("gridbarrier", ["--ctas", "100000000"], "ctas = 100000000"),
    ("ticketqueue", ["--ctas", "100000000"], "ctas = 100000000"),
    ("splitk", ["--tiles", "100000", "--splits", "1000"], "tiles = 100000, splits = 1000"),
    ("schedworker", ["--workers", "100000000"], "workers = 100000000"),
    ("monomoe", ["--tokens", "4096", "--top-k", "1000", "--experts", "1000"], "top_k = 1000"),
    ("cuml_gridsync", ["--blocks", "100000000"], "blocks = 100000000"),
    ("cub_gridbarrier", ["--blocks", "1000000"], "blocks = 1000000, iterations = 8"),
    (
        "mirage_b200",
        ["--grid", "scheduler", "--schedulers", "10000000"],
        "schedulers = 10000000, workers = 128",
    ),
    ("punica_gridsync", ["--long-steps", "10000000"], "long_steps = 10000000"),
    ("flashmoe_h20", ["--blocks", "100000000"], "blocks = 100000000"),
    ("deepgemm_gridid", ["--ranks", "100000000"], "ranks = 100000000"),
    ("aiter_splitk", ["--tiles", "100000000"], "tiles = 100000000"),
    ("aiter_flydsl_splitk", ["--tiles", "100000000"], "tiles = 100000000"),
    # an example's protocol under a bug's names: the bug's flags are named
    ("fuser_gridsync", ["--blocks", "100000000"], "blocks = 100000000, syncs = 2"),
    ("tilelang_gridsync", ["--rounds", "100000000"], "ctas = 16, rounds = 100000000"),
]


def test_every_kernel_has_a_case_past_the_bound() -> None:
    assert sorted(name for name, _, _ in PAST_THE_BOUND) == sorted(KERNELS)
    assert {*BUG_KERNELS} <= {name for name, _, _ in PAST_THE_BOUND}


@pytest.mark.parametrize(("name", "flags", "said"), PAST_THE_BOUND, ids=lambda v: str(v))
def test_a_launch_past_the_bound_is_exit_2_before_it_is_built(
    name: str, flags: list[str], said: str, capsys
) -> None:
    spec = get(name)
    start = time.perf_counter()
    assert main(["check", "--kernel", name, "--gpu", "h200", *flags]) == 2
    assert time.perf_counter() - start < 10  # refused, not built (10^7 ops take minutes)
    err = capsys.readouterr().err
    assert said in err and f"past the bound of {MAX_LAUNCH_OPS:,}" in err, err
    assert spec.validate(spec.default_config()) == spec.default_config()  # normal: unaffected
