"""The role rule: the gemv CTAs' XRDY poll behind rg0's weights is reported, not failed;
any other poll behind weights fails; NVIDIA is out of scope."""

from __future__ import annotations

from pingpong_variants import AcceptingConfig, VariantConfig

from kda_sim.checks.findings import Category, Severity
from kda_sim.checks.role_rule import check_role_rule
from kda_sim.engine import simulate
from kda_sim.kernels.k1.config import LaunchConfig
from kda_sim.kernels.k1.mutations import rg1_weights_before_poll, weights_in_kda_task


def test_gemv_xrdy_poll_behind_rg0_is_accepted_and_costed(mi355x) -> None:
    res = simulate(LaunchConfig(2, 2), mi355x)
    v = check_role_rule(res, mi355x)
    assert v.applies and v.ok
    assert len(v.blocked) == 197 and all(b.accepted for b in v.blocked)
    assert all(b.stage == "load_x" and b.poll == "XRDY" for b in v.blocked)
    assert all(b.delay_ns > 0 for b in v.blocked)  # rg0's weights land after a poll RTT
    (note,) = v.findings
    assert note.severity is Severity.NOTE and "197 gemv CTAs" in note.message


def test_out_of_order_loads_make_the_rule_moot(h200) -> None:
    v = check_role_rule(simulate(LaunchConfig(2, 2), h200), h200)
    assert not v.applies and v.ok and not v.findings
    assert all(b.delay_ns == 0 for b in v.blocked)


def test_rg1_weights_before_the_poll_fail(mi355x) -> None:
    case = rg1_weights_before_poll(LaunchConfig(1, 1), mi355x)
    v = check_role_rule(simulate(case.cfg, case.prof, launch=case.launch), case.prof)
    assert not v.ok
    f = next(f for f in v.findings if f.fails)
    assert f.category is Category.ROLE and f.details["stage"] == "load_x"
    assert f.details["pair"].startswith("XRDY[") and "weights after the poll" in f.fix


def test_weights_in_a_kda_task_fail_and_their_cost_shows(mi355x) -> None:
    case = weights_in_kda_task(LaunchConfig(1, 1), mi355x)
    v = check_role_rule(simulate(case.cfg, case.prof, launch=case.launch), case.prof)
    bad = [b for b in v.blocked if not b.accepted]
    assert bad and all(b.stage == "k.conv" for b in bad)
    assert not v.ok and any(b.exposed for b in bad)


# -- any kernel: the pingpong example with weight loads ------------------------------------
def test_a_pingpong_poll_behind_weights_fails_without_an_accepted_case(mi355x, h200) -> None:
    assert not check_role_rule(simulate(VariantConfig(), mi355x), mi355x).blocked
    v = check_role_rule(simulate(VariantConfig(weights_first=True), mi355x), mi355x)
    assert not v.ok
    (b,) = v.blocked
    assert (b.cta, b.role, b.first, b.accepted) == (1, "consumer", "VAL[0]", False)
    assert b.delay_ns > 0 and "CTA 1 (consumer) polls VAL[0]" in v.findings[0].message
    assert check_role_rule(simulate(VariantConfig(weights_first=True), h200), h200).ok


def test_a_kernels_accepted_waits_hook_turns_the_failure_into_a_note(mi355x) -> None:
    v = check_role_rule(simulate(AcceptingConfig(weights_first=True), mi355x), mi355x)
    assert v.ok and v.blocked[0].accepted
    (note,) = v.findings
    assert note.severity is Severity.NOTE
    assert "1 consumers poll VAL with their weights in flight (by design)" in note.message
    assert "not the producer, set" in note.message
