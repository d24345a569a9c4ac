"""The ticket what-if mended, on simulated launches (no GPU): a kda_tickets "build" whose
kda stages are 1.4x the static fit's; fitted on one shape, the other shape's ticket
launch is predicted slower than on the static costs, and the table says how the
difference compares with the measured one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kda_sim.engine import simulate
from kda_sim.kernels.k1.config import LaunchConfig
from kda_sim.machine.profile import load_profile
from kda_sim.timeline.chrome import write_chrome
from lab.ticket_k1_fit import KDA_KEYS, main, predict_us, run, table, within


def test_within_is_one_us_or_a_quarter() -> None:
    assert within(2.0, 2.9) and within(10.0, 12.5) and within(-0.5, 0.4)
    assert not within(2.0, 3.1) and not within(10.0, 13.5)


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> tuple[Path, Path]:
    base = load_profile("h200-k1")
    slow = base.with_params(
        **{f"cost_{k}": tuple(1.4 * x for x in base.costs[k]) for k in KDA_KEYS}
    )
    root = tmp_path_factory.mktemp("run")
    rows = []
    for sched, prof in (("static", base), ("kda_tickets", slow)):
        d = root / "s" / sched / "warm"
        d.mkdir(parents=True)
        for R in (1, 2):
            cfg = LaunchConfig(R, 1, kda_tickets=sched == "kda_tickets")
            tl = simulate(cfg, prof).timeline
            write_chrome(tl, d / f"k1_R{R}_L1_0.json")
            variant = {"kda_tickets": True} if cfg.kda_tickets else {}
            rows.append({"R": R, "L": 1, "variant": variant, "us": tl.makespan / 1e3})
    bench = root / "bench.json"
    bench.write_text(json.dumps({"variants": rows}))
    return root / "s", bench


def test_held_out_shapes_are_predicted_on_the_other_shapes_costs(folder) -> None:
    s, bench = folder
    rep = run(s, bench, 1, "warm", "h200-k1", log=lambda _m: None)
    assert [(r["R"], r["L"]) for r in rep["rows"]] == [(1, 1), (2, 1)]
    base = load_profile("h200-k1")
    for r in rep["rows"]:
        # the fold's costs are slower than the static fit's: so is its prediction
        # (at L = 1, the form below the L switch: base + one unit)
        assert sum(r["fold_costs"]["k.recur"]) > sum(base.costs["k.recur"])
        assert r["pred_tickets_us"] > predict_static_on_base(r["R"])
        assert r["meas_diff_us"] == pytest.approx(r["meas_tickets_us"] - r["meas_static_us"])
    text = table(rep)
    assert text.count("\n") == 3 and "| 1 x 1 |" in text and "| 2 x 1 |" in text


def predict_static_on_base(R: int) -> float:
    """The ticket launch on the static costs, to set the fold's prediction against."""
    from kda_sim.compare.calibrate import prepare

    tl = simulate(LaunchConfig(R, 1, kda_tickets=True), load_profile("h200-k1")).timeline
    return predict_us(prepare(tl, "base"), load_profile("h200-k1"))


def test_bad_launch_count_is_refused(folder, capsys) -> None:
    s, bench = folder
    assert main(["--dir", str(s), "--bench", str(bench), "--launches", "0"]) == 2
    assert "--launches 0: at least 1" in capsys.readouterr().err


def test_the_prologue_is_measured_from_the_takes() -> None:
    """A launch whose items pay 500 ns from the take's return to their first stage: the
    prologues read back from its takes are that, and --prologue's latency is their median."""
    from lab.ticket_k1_fit import prologues_ns, with_prologue

    prof = load_profile("h200-k1").with_params(ticket_item=500.0)
    tl = simulate(LaunchConfig(1, 1, kda_tickets=True), prof).timeline
    xs = prologues_ns(tl)
    assert len(xs) == 96 and min(xs) == pytest.approx(500.0)

    class _Tr:
        raw = tl

    got = with_prologue(load_profile("h200-k1"), [_Tr()])  # type: ignore[list-item]
    assert got.latency_ns["ticket_item"] == pytest.approx(sorted(xs)[48], rel=0.01)


def test_the_take_is_timed_from_the_takes() -> None:
    """A launch whose takes take 900 ns: the round trips read back from its takes are
    that (a take's is an atomic's), and --take's ``atomic`` is their median."""
    from dataclasses import replace

    from lab.ticket_k1_fit import takes_ns, with_take

    base = load_profile("h200-k1")
    prof = replace(base, latency_ns={**base.latency_ns, "atomic": 900.0})
    tl = simulate(LaunchConfig(1, 1, kda_tickets=True), prof).timeline
    xs = takes_ns(tl)
    assert len(xs) == 96 + 256 and min(xs) == pytest.approx(900.0)

    class _Tr:
        raw = tl

    got = with_take(base, [_Tr()])  # type: ignore[list-item]
    assert got.latency_ns["atomic"] == pytest.approx(sorted(xs)[len(xs) // 2], rel=0.01)
    assert "atomic" not in base.latency_ns  # the base is left as it was


def test_a_ready_take_is_timed_from_the_roles_end() -> None:
    """``ready_takes_ns``: a take issued once its CTA's role is done is its stamped round
    trip; one stamped before the role's end (a take issued ahead, as the traces' first
    takes read) is timed from that end: its return less the CTA's last stage's end."""
    from dataclasses import replace

    from lab.ticket_k1_report import ready_takes_ns

    base = load_profile("h200-k1")
    prof = replace(base, latency_ns={**base.latency_ns, "atomic": 900.0})
    cfg = LaunchConfig(1, 1, kda_tickets=True, ticket_unroll=3)
    after = simulate(cfg, prof).timeline
    assert ready_takes_ns(after) == pytest.approx([900.0] * (96 + 256))
    ahead = simulate(replace(cfg, take_ahead=True), prof).timeline
    ends = {c.cta: max(s.end for s in c.stages if s.task < 0) for c in ahead.ctas[:253]}
    got = ready_takes_ns(ahead)
    early = 0
    for (cta, issue, ret, _t), rt in zip(ahead.meta.extra["ticket_takes"], got, strict=True):
        if cta in ends and issue < ends[cta] < ret:  # a role CTA's first take
            early += 1
            assert rt == pytest.approx(ret - ends[cta]) and rt < 900.0
        else:
            assert rt == pytest.approx(ret - issue)
    assert early == 253  # every attn and gemv CTA's
