"""Static and dynamic deadlock verdicts agree, whatever the GPU, occupancy, kda0 and
dispatch order; the standard protocol then also passes visibility and the role rule."""

from __future__ import annotations

from dataclasses import replace

from checks_scale import examples
from hypothesis import event, given, settings
from hypothesis import strategies as st

from kda_sim.checks.deadlock_dynamic import check_dynamic
from kda_sim.checks.deadlock_static import check_static, slots_for
from kda_sim.checks.role_rule import check_role_rule
from kda_sim.checks.waitgraph import waitgraph_of
from kda_sim.errors import InvalidInput
from kda_sim.kernels.k1.config import LaunchConfig
from kda_sim.machine.profile import load_profile
from kda_sim.machine.residency import check_fits

GPUS = {n: load_profile(n) for n in ("mi355x", "h200", "h200-stock", "mi300x")}
# GPUs with fewer units than blocks, so that residency decides more of the verdicts
GPUS["h200-96"] = replace(GPUS["h200-stock"], units=96, name="h200-96")
GPUS["mi355x-128"] = replace(GPUS["mi355x"], units=128, name="mi355x-128")
SHAPES = [(1, 1), (2, 1), (1, 2), (3, 1), (2, 2), (4, 1), (1, 4), (6, 1), (3, 2), (8, 1)]


@settings(max_examples=examples(30))
@given(
    st.sampled_from(sorted(GPUS)),
    st.sampled_from(SHAPES),
    st.sampled_from([1, 8]),
    st.integers(0, 255),
    st.booleans(),
    st.sampled_from([None, None, 1, 2]),
    st.one_of(st.none(), st.permutations(range(256))),
    st.integers(1, 10_000),
)
def test_static_and_dynamic_verdicts_agree(
    gpu: str,
    shape: tuple[int, int],
    nb: int,
    kda0: int,
    gate_local: bool,
    occ: int | None,
    order: list[int] | None,
    seed: int,
) -> None:
    prof = GPUS[gpu]
    cfg = LaunchConfig(shape[0], shape[1], nb, kda0, gate_local)
    try:
        check_fits(cfg, prof)
    except InvalidInput:
        cfg = replace(cfg, R=1, L=1)
    slots = slots_for(cfg, prof, occ)
    st_v = check_static(waitgraph_of(cfg), slots, None if order is None else tuple(order))
    dyn = check_dynamic(cfg, prof, occupancy=occ, order=order, seeds=(seed,), extreme=False)
    assert st_v.finishes == dyn.finishes, (cfg, gpu, occ, order is not None)
    event(f"finishes={dyn.finishes}")
    if dyn.finishes:
        role = check_role_rule(dyn.nominal, prof)
        assert role.ok
        assert not any(r.summary.stale_reads for r in dyn.runs)


def test_extreme_timings_do_not_change_the_verdict() -> None:
    prof = GPUS["h200-stock"]  # the seed's build: one CTA an SM at 4x2
    for cfg, fin in ((LaunchConfig(2, 2), True), (LaunchConfig(4, 2), False)):
        d = check_dynamic(cfg, prof, seeds=(1, 2), extreme=True)
        assert d.finishes is fin and len(d.runs) == 6
        assert check_static(waitgraph_of(cfg), slots_for(cfg, prof, None)).finishes is fin
        if not fin:
            assert "CTA 0 waits in k.conv" in d.findings[0].message
