"""The Triton K1's device code on the CPU: each role under Triton's interpreter (a thread a
program, so the roles' spin-waits on one another really run) against the reference."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("triton")

ROOT = Path(__file__).resolve().parents[3]


def _run(what: str) -> dict:
    """The group's core configurations (``interp_check GROUP``; ``--full`` runs them all)."""
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    env = os.environ | {"TRITON_INTERPRET": "1", "PYTHONPATH": path}
    out = subprocess.run(
        [sys.executable, "-m", "kda_kernel.triton.interp_check", what],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=540,  # under the suite's 600 s a test: a hang fails here with its output
        check=False,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_attn_role_all_to_all() -> None:
    for name, r in _run("attn").items():
        assert r["prefix_exact"], name
        assert r["x_rel"] < 1e-3, (name, r)  # bf16 x: at most a rare one-ulp flip
        assert r["xrdy_all"], name


def test_attn_role_gate_local_gives_the_default_builds_x() -> None:
    # every attn CTA computes every token's weights from PART (no gate stage, no WGT): the
    # same arithmetic as the gate stage, so the same x rows and MSQ pairs, bit for bit
    for name, r in _run("attn_gate_local").items():
        assert r["prefix_exact"] and r["xrdy_all"], name
        assert r["x_rel"] < 1e-3, (name, r)
        assert r["same_x"] and r["same_msq"], (name, r)
        assert not r["wgt_put"], name


def test_gemv_role_both_forms() -> None:
    for name, r in _run("gemv").items():
        assert r["tags_all"], name
        assert r["proj_max_abs"] <= 2**-6, (name, r)  # one bf16 ulp at |x| < 4


def test_kda_tasks_exchange_qk_and_norms() -> None:
    for name, r in _run("kda").items():
        assert r["core_finite"], name
        assert r["core_rel"] < 1e-3 and r["conv_rel"] < 1e-6 and r["rstate_rel"] < 1e-5, (name, r)


def test_kda_tickets_loop_runs_every_task_once_and_resets_the_counter() -> None:
    """kda_tickets' loop over 16 programs (1x1: 96 tasks, about 6 a program; 2x1 over 32
    with ``--full``), two launches on one workspace: the reference's outputs, each task and
    each ticket once, the counter 0."""
    for name, launches in _run("kda_tickets").items():
        for launch, r in launches.items():
            where = (name, launch, r)
            assert r["core_finite"], where
            assert r["core_rel"] < 1e-3 and r["conv_rel"] < 1e-6, where
            assert r["rstate_rel"] < 1e-5, where
            assert r["tasks_each_once"] and r["tickets_each_once"], where
            assert r["counter_after"] == 0, where


def test_an_unknown_group_is_refused_by_name() -> None:
    env = os.environ | {"TRITON_INTERPRET": "1"}
    cmd = [sys.executable, "-m", "kda_kernel.triton.interp_check", "atn"]
    out = subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True, check=False)
    assert out.returncode == 2 and "unknown group 'atn'" in out.stderr


def test_probe_builds_run_every_task_where_the_static_placement_puts_it() -> None:
    """``Build.probe``'s experiments, two launches each on one workspace (the counter never
    cleared by the host), at 1x1 over 16 programs and 2x2 over 32, the placement from
    kda0 = 3: "take" (the static placement, a take before each task) and "static_item"
    (the unrolled ticket loop, each take running the static placement's task). Each
    launch: the reference's outputs, every program's tasks the placement's, each ticket
    once, the counter back to 0."""
    got = _run("probe")
    assert len(got) == 4, sorted(got)
    for name, launches in got.items():
        for launch, r in launches.items():
            where = (name, launch, r)
            assert r["core_finite"], where
            assert r["core_rel"] < 1e-3 and r["conv_rel"] < 1e-6, where
            assert r["rstate_rel"] < 1e-5, where
            assert r["placed_static"] and r["tickets_each_once"], where
            assert r["counter_after"] == 0, where
        if name.startswith("static"):  # one take a task, none past them
            assert all(n == 6 for n in launches["launch 0"]["takes_by_program"]), name
