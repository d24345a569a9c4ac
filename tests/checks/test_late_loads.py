"""Staging loads issued after a poll they do not need: found, moved, priced, advised."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from pingpong_variants import VariantConfig

from kda_sim.checks.findings import Category, Severity
from kda_sim.checks.late_loads import check_late_loads, issued_early, late_loads
from kda_sim.cli import main
from kda_sim.kernels.k1.config import LaunchConfig
from kda_sim.kernels.k1.program import build_launch
from kda_sim.machine import load_profile
from kda_sim.protocol.ops import Begin, Load, Poll, Publish, Put, Use

MI355X = load_profile("mi355x")


def test_the_seeds_two_late_loads_are_found_and_nw_first_leaves_one() -> None:
    seed = late_loads(build_launch(LaunchConfig(1, 1)))
    assert seed == {"mix.in_nw": ("mix", "MSQ", 56), "k.on_w": ("k.norm", "ONRM+PROJ", 96)}
    assert set(late_loads(build_launch(LaunchConfig(1, 1, nw_first=True)))) == {"k.on_w"}
    assert set(late_loads(build_launch(LaunchConfig(1, 1, onw_first=True)))) == {"mix.in_nw"}
    assert not late_loads(build_launch(LaunchConfig(1, 1, nw_first=True, onw_first=True)))


def _hand_offs(ops: tuple) -> list[tuple[str, list[int]]]:
    keep = [op for op in ops if isinstance(op, Put | Poll | Publish)]
    return [(repr(op), np.asarray(op.cells).ravel().tolist()) for op in keep]


@settings(max_examples=6, deadline=None)
@given(
    L=st.integers(1, 2),
    R=st.integers(1, 2),
    name=st.sampled_from(["mix.in_nw", "k.on_w"]),
)
def test_moving_a_late_load_puts_it_before_the_stages_first_poll_and_nothing_else(
    R: int, L: int, name: str
) -> None:
    base = build_launch(LaunchConfig(R, L))
    early = issued_early(base, name)
    assert name not in late_loads(early)
    for p, q in zip(base.programs, early.programs, strict=True):
        # a program without the load late is kept as it was (the engine's caches find it)
        assert (q is p) == (name not in late_loads(replace(base, programs=(p,))))
        assert _hand_offs(p.ops) == _hand_offs(q.ops)
        assert sorted(map(repr, p.ops)) == sorted(map(repr, q.ops))  # the same ops, reordered
        for k, op in enumerate(q.ops):
            if isinstance(op, Load) and op.name == name:
                stage_start = max(j for j in range(k) if isinstance(q.ops[j], Begin))
                assert not any(isinstance(x, Poll) for x in q.ops[stage_start:k])
                use = next(j for j, x in enumerate(q.ops) if isinstance(x, Use) and name in x.names)
                assert use > k


def test_each_late_load_is_priced_as_advice_not_a_failure() -> None:
    late, findings = check_late_loads(LaunchConfig(1, 1), MI355X)
    saved = {x.name: x.saved_ns for x in late}
    assert saved["mix.in_nw"] > 0 and saved["k.on_w"] > 0
    assert all(f.category is Category.LATE_LOAD and f.severity is Severity.ADVICE for f in findings)
    assert not any(f.fails for f in findings)
    text = next(f.text() for f in findings if "in_nw" in f.message)
    assert "[late_load, advice]" in text and "nw_first" in text


def test_check_reports_them_and_still_passes(capsys) -> None:
    assert main(["check", "--gpu", "mi355x", "--R", "1", "--L", "1", "--seeds", "0", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["ok"] and {x["name"] for x in d["late_loads"]} == {"mix.in_nw", "k.on_w"}


def test_a_pingpong_staging_load_after_its_poll_is_priced(mi355x) -> None:
    late, notes = check_late_loads(VariantConfig(late_staging=True), mi355x)
    (ll,) = late
    assert (ll.name, ll.stage, ll.after, ll.ctas) == ("norm0", "consume", "VAL", 1)
    assert ll.saved_ns is not None and ll.saved_ns > 0  # its round trip leaves the chain
    assert notes[0].severity is Severity.ADVICE and "the variant" not in notes[0].fix
    assert check_late_loads(VariantConfig(), mi355x) == ([], [])
