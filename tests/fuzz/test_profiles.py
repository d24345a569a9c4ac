"""Fuzz: a bundled GPU profile with fields mutated (NaN, infinity, negative, zero, huge,
wrong types, missing) either loads and simulates a tiny launch within seconds, or is
refused with InvalidInput naming a field it mutated; never another exception, never a
hang. Cases it once found are kept in ``REGRESSIONS`` below and run every time."""

from __future__ import annotations

import copy
import json
import math
import os
import signal
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from kda_sim.engine import simulate
from kda_sim.errors import InvalidInput
from kda_sim.kernels.k1.config import LaunchConfig
from kda_sim.machine.profile import bundled_names, load_profile

# CI's budget; KDA_FUZZ_EXAMPLES=10000 runs the issue's
EXAMPLES = int(os.environ.get("KDA_FUZZ_EXAMPLES", "200"))
SECONDS = 10  # a tiny launch on any profile the loader accepts ends within this
OUTCOMES: Counter[str] = Counter()  # what the cases came to (read by a budget run)

BAD = [
    math.nan,
    math.inf,
    -math.inf,
    -1,
    -1e-9,
    0,
    0.0,
    1e-300,
    1e30,
    10**40,
    2**31,
    "false",
    "1",
    "",
    None,
    True,
    False,
    [],
    {},
    [1.0],
    [1.0, 2.0, 3.0],
]


def _k1_priced(name: str) -> bool:
    """Whether K1 has costs on the bundled profile (the bug corpus's GPUs have none)."""
    try:
        load_profile(name)
    except InvalidInput:
        return False
    return True


K1_PROFILES = [n for n in bundled_names() if _k1_priced(n)]


def _bundled(name: str) -> dict[str, Any]:
    """A bundled profile written whole, K1's costs included (a GPU's file holds none)."""
    return json.loads(json.dumps(load_profile(name).to_dict()))


def _paths(d: Any, at: tuple = ()) -> list[tuple]:
    """Every field of a profile, nested ones included."""
    out = [at] if at else []
    if isinstance(d, dict):
        for k, v in d.items():
            out += _paths(v, (*at, k))
    elif isinstance(d, list):
        for i, v in enumerate(d):
            out += _paths(v, (*at, i))
    return out


def _apply(d: dict[str, Any], path: tuple, value: Any, delete: bool) -> None:
    box = d
    for k in path[:-1]:
        box = box[k]
    if delete and isinstance(box, dict):
        del box[path[-1]]
    else:
        box[path[-1]] = value


@st.composite
def mutated(draw: st.DrawFn) -> tuple[dict[str, Any], list[tuple]]:
    d = _bundled(draw(st.sampled_from(K1_PROFILES)))
    done: list[tuple] = []
    for _ in range(draw(st.integers(1, 3))):
        paths = _paths(d)
        path = draw(st.sampled_from(paths))
        value = draw(
            st.one_of(
                st.sampled_from(BAD),
                st.floats(allow_nan=True, allow_infinity=True),
                st.integers(-(10**6), 10**6),
            )
        )
        # a copy: BAD's lists and dicts are never mutated, nor put inside themselves
        _apply(d, path, copy.deepcopy(value), delete=draw(st.booleans()))
        done.append(path)
    return d, done


class _Hang(Exception):
    pass


def _alarm(signum: int, frame: Any) -> None:
    raise _Hang


def check_contract(d: dict[str, Any], mutated_paths: list[tuple]) -> str:
    """What became of one mutated profile: "refused", "launch refused" or "accepted"; a
    broken contract fails."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "p.json"
        path.write_text(json.dumps(d))  # NaN and Infinity written as JSON's extensions
        names = {str(k) for p in mutated_paths for k in p if isinstance(k, str)}
        old = signal.signal(signal.SIGALRM, _alarm)
        signal.alarm(SECONDS)
        try:
            try:
                prof = load_profile(str(path))
            except InvalidInput as e:
                assert str(path) in str(e), str(e)
                assert any(n in str(e) for n in names), f"{e} names none of {sorted(names)}"
                return "refused"
            try:
                res = simulate(LaunchConfig(1, 1), prof)
            except InvalidInput as e:  # a legal profile the launch does not fit
                assert any(n in str(e) for n in names), f"{e} names none of {sorted(names)}"
                return "launch refused"
        except _Hang:
            pytest.fail(f"no answer within {SECONDS} s on {mutated_paths}")
        finally:
            signal.alarm(0)
            signal.signal(signal.SIGALRM, old)
    span = res.timeline.makespan
    assert span is None or (math.isfinite(span) and span >= 0), span
    return "accepted"


# cases the fuzzer found that broke the contract, kept as regressions: (profile, field, value)
REGRESSIONS = [
    ("h200", ("latency_ns", "poll"), 5e-324),  # tries to see a flag overflowed to infinity
    ("h200", ("latency_ns", "poll"), 0.0),  # ZeroDivisionError
    ("h200", ("costs", "gate", 0), math.nan),  # hung in engine/bandwidth.py
    ("h200", ("latency_ns", "retry"), 1e30),  # did not finish
    ("h200", ("units",), 10**9),  # a list a unit: gigabytes
    ("h200", ("in_order_loads",), "false"),  # read as true
    ("h200", ("kernel", "threads"), 0),  # ZeroDivisionError in residency
    ("h200", ("costs",), {}),  # "missing parameters [...]" named no field
    ("mi355x", ("costs", "gate", 0), math.inf),  # refused at parse without the field's name
    ("h200", ("x_lds_budget",), 1),  # the launch refused, naming no field
]


@pytest.mark.parametrize(("name", "path", "value"), REGRESSIONS)
def test_regressions(name: str, path: tuple, value: Any) -> None:
    d = _bundled(name)
    _apply(d, path, value, delete=False)
    check_contract(d, [path])


@settings(max_examples=EXAMPLES)
@given(mutated())
@example(({**_bundled("h200"), "units": 4096}, [("units",)]))
def test_a_mutated_profile_loads_and_simulates_or_is_refused_naming_a_field(case) -> None:
    d, paths = case
    OUTCOMES[check_contract(d, paths)] += 1
