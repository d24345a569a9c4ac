"""Two CTAs that compute the same stage on one unit: ``unit_share`` slows that stage."""

from __future__ import annotations

import dataclasses
import statistics
from dataclasses import replace

import pytest

from kda_sim.engine import simulate
from kda_sim.kernels.k1.config import LaunchConfig
from kda_sim.kernels.registry import register
from kda_sim.kernels.spec import Kernel
from kda_sim.machine.profile import GpuProfile, load_profile
from kda_sim.protocol.ops import Compute
from kda_sim.protocol.program import CtaProgram, Launch
from kda_sim.protocol.space import CellSpace
from kda_sim.protocol.tickets import ticket_loop
from kda_sim.timeline.model import Timeline
from kda_sim.timeline.summary import partner_stats


def _shared_gemv(share: float, **fields: float) -> GpuProfile:
    """h200-k1 with the gemv shared by ``share`` (and ``fields``: its other share fields).
    The datasheet's bandwidth keeps the 16-row group compute-bound whatever the bundled
    fit found (at its 3.59 TB/s the stream and the compute nearly tie)."""
    base = load_profile("h200-k1")
    return replace(
        base,
        unit_shared=("gemv",),
        unit_share=share,
        hbm_bytes_per_ns=base.hbm_peak_bytes_per_ns or base.hbm_bytes_per_ns,
        **fields,
    )


def _gemv0(share: float, share_from: float = 0.0) -> dict[str, float]:
    prof = _shared_gemv(share, unit_share_from=share_from)
    tl = simulate(LaunchConfig(1, 1, 8), prof, occupancy=2).timeline
    return {s.partners: s.median_ns for s in partner_stats(tl) if s.stage == "gemv0"}


def test_a_gemv_cta_beside_another_takes_the_shared_factor_longer() -> None:
    plain, shared = _gemv0(0.0), _gemv0(0.25)
    assert plain["gemv"] == pytest.approx(plain["attn"])  # no sharing: one duration
    # the 16-row group is compute-bound here, so its whole time scales
    assert shared["gemv"] == pytest.approx(1.25 * plain["gemv"], rel=0.02)
    assert shared["attn"] == pytest.approx(plain["attn"], rel=0.02)  # an attn CTA computes no gemv


def _gemv0_by_age(
    share: float, skew: float, skew_from: float = 0.0, cfg: LaunchConfig | None = None
) -> dict[str, float]:
    """gemv0's median duration of the gemv CTAs sharing a unit with another, the earlier
    dispatched of each pair ("first") and the later ("later"), and of the rest ("alone")."""
    prof = _shared_gemv(share, unit_share_skew=skew, unit_share_skew_from=skew_from)
    tl = simulate(cfg or LaunchConfig(2, 2, 8), prof, occupancy=2).timeline
    gemv = [c for c in tl.ctas if c.role == "gemv"]
    by_unit: dict[int, list[int]] = {}
    for c in gemv:
        by_unit.setdefault(c.unit, []).append(c.cta)
    out: dict[str, list[float]] = {"first": [], "later": [], "alone": []}
    for c in gemv:
        mates = by_unit[c.unit]
        cls = "alone" if len(mates) == 1 else "first" if c.cta == min(mates) else "later"
        out[cls] += [s.end - s.start for s in c.stages if s.name == "gemv0"]
    return {k: statistics.median(v) for k, v in out.items()}


def test_the_later_of_two_sharing_ctas_takes_the_skewed_factor() -> None:
    plain, alike, skewed = (_gemv0_by_age(*a) for a in ((0.0, 0.0), (0.4, 0.0), (0.4, 0.5)))
    assert alike["first"] == pytest.approx(alike["later"])  # no skew: one factor
    assert alike["first"] == pytest.approx(1.4 * plain["first"], rel=0.02)
    # the first dispatched: 1 + 0.4 * 0.5; the later: 1 + 0.4 * 1.5
    assert skewed["first"] == pytest.approx(1.2 * plain["first"], rel=0.02)
    assert skewed["later"] == pytest.approx(1.6 * plain["later"], rel=0.02)
    assert skewed["alone"] == pytest.approx(plain["alone"], rel=0.02)


def test_the_skew_splits_only_computes_of_skew_from_units_or_more() -> None:
    """``unit_share_skew_from``: below it the two CTAs sharing a unit take the one factor,
    from it on the skewed pair (S = 2 here: from 2 the split, from 4 none)."""
    cfg = LaunchConfig(1, 2, 8)
    plain = _gemv0_by_age(0.0, 0.0, cfg=cfg)
    split, even = (_gemv0_by_age(0.4, 0.5, f, cfg) for f in (2.0, 4.0))
    assert split["first"] == pytest.approx(1.2 * plain["first"], rel=0.02)
    assert split["later"] == pytest.approx(1.6 * plain["later"], rel=0.02)
    assert even["first"] == pytest.approx(even["later"])
    assert even["first"] == pytest.approx(1.4 * plain["first"], rel=0.02)


def _first_task_run(first_task: dict[str, float], skew_from: float) -> Timeline:
    prof = _shared_gemv(
        0.4,
        unit_share_skew=0.5,
        unit_share_skew_from=skew_from,
        unit_share_first_task=first_task,  # type: ignore[arg-type]
    )
    return simulate(LaunchConfig(4, 1, 8), prof, occupancy=2).timeline


def _classes(tl: Timeline) -> dict[int, str]:
    """Each CTA's class: the earlier ("first") or later ("later") gemv CTA of a pair on a
    unit, a gemv CTA alone ("alone"), an attn CTA ("attn")."""
    by_unit: dict[int, list[int]] = {}
    for c in tl.ctas:
        if c.role == "gemv":
            by_unit.setdefault(c.unit, []).append(c.cta)
    out = {}
    for c in tl.ctas:
        mates = by_unit.get(c.unit, [])
        out[c.cta] = (
            "attn"
            if c.role != "gemv"
            else "alone"
            if len(mates) == 1
            else "first"
            if c.cta == min(mates)
            else "later"
        )
    return out


def _first_kstage(first_task: dict[str, float], skew_from: float) -> dict[str, float]:
    """k.stage's median duration by whose and which task: the first task's by the CTA's
    class (``_classes``), and every later task's ("rest")."""
    tl = _first_task_run(first_task, skew_from)
    cls = _classes(tl)
    out: dict[str, list[float]] = {"first": [], "later": [], "alone": [], "attn": [], "rest": []}
    for c in tl.ctas:
        spans = [s for s in c.stages if s.name == "k.stage"]
        if not spans:
            continue
        out[cls[c.cta]].append(spans[0].end - spans[0].start)
        out["rest"] += [s.end - s.start for s in spans[1:]]
    return {k: statistics.median(v) for k, v in out.items() if v}


def test_the_earlier_sharers_first_task_takes_its_factor() -> None:
    """``unit_share_first_task``: the earlier of two gemv CTAs on a unit takes the factor
    on its first task's k.stage (the later still runs its gemv then); the later, a gemv CTA
    alone, the attn CTAs and every later task take the one cost, and below
    ``unit_share_skew_from`` (where the pair ends together) nobody does."""
    plain = _first_kstage({}, 4.0)
    on = _first_kstage({"k.stage": 1.3}, 4.0)
    assert set(plain) == {"first", "later", "alone", "attn", "rest"}
    assert on["first"] == pytest.approx(1.3 * plain["first"], rel=0.02)
    for k in ("later", "alone", "attn", "rest"):
        assert on[k] == pytest.approx(plain[k])
    assert _first_kstage({"k.stage": 1.3}, 16.0) == plain  # S = 4: no skew, no factor
    # with the skew at every S, still only the earlier gemv CTA's (not an attn CTA's)
    every = _first_kstage({"k.stage": 1.3}, 0.0)
    assert every["first"] == pytest.approx(on["first"], rel=0.02)
    assert every["attn"] == pytest.approx(plain["attn"])


def _first_kconv(first_task: dict[str, float]) -> dict[str, float]:
    """The first task's k.conv after its PROJ poll is met (its end less the poll's
    satisfied time), median by the CTA's class (``_classes``)."""
    tl = _first_task_run(first_task, 4.0)
    cls = _classes(tl)
    out: dict[str, list[float]] = {}
    for c in tl.ctas:
        task = min((s.task for s in c.stages if s.task >= 0), default=None)
        if task is None:
            continue
        (conv,) = [s for s in c.stages if s.name == "k.conv" and s.task == task]
        met = next(p.satisfied for p in c.polls if p.stage == "k.conv" and p.task == task)
        assert met is not None
        out.setdefault(cls[c.cta], []).append(conv.end - met)
    return {k: statistics.median(v) for k, v in out.items()}


def test_a_first_task_factor_reaches_a_compute_behind_its_use() -> None:
    """k.conv's compute follows a Use (its staged rows): with a ``unit_share_first_task``
    factor on it, the nominal run keeps the two apart, so the earlier gemv CTA's first
    k.conv after its poll takes the factor on its compute, as a seeded run's does; the
    others' do not."""
    prof = _shared_gemv(0.4)
    cost = prof.cost("k.conv", 1)
    plain, on = _first_kconv({}), _first_kconv({"k.conv": 2.0})
    assert on["first"] == pytest.approx(plain["first"] + cost, rel=0.02)
    for k in ("later", "alone", "attn"):
        assert on[k] == pytest.approx(plain[k])


def test_a_compute_of_fewer_units_than_share_from_is_not_slowed() -> None:
    # 1x1: the gemv computes one token; slowed from one token on, not from two
    plain, at_one, from_two = _gemv0(0.0), _gemv0(0.25, 1.0), _gemv0(0.25, 2.0)
    assert at_one["gemv"] == pytest.approx(1.25 * plain["gemv"], rel=0.02)
    assert from_two["gemv"] == pytest.approx(plain["gemv"])


def test_sharing_is_off_for_stages_not_named() -> None:
    prof = replace(load_profile("h200-k1"), unit_shared=("mix",), unit_share=1.0)
    a = simulate(LaunchConfig(1, 1, 8), prof, occupancy=2).timeline
    b = simulate(LaunchConfig(1, 1, 8), load_profile("h200-k1"), occupancy=2).timeline
    assert a.makespan == b.makespan  # no two attn CTAs share a unit at 256 CTAs on 132 SMs


@dataclasses.dataclass(frozen=True)
class _TwoTakers:
    items: int = 4


def _taker_regions(cfg: _TwoTakers) -> dict[str, int]:
    return {"T": 1}


def _taker_build(cfg: _TwoTakers) -> Launch:
    """Two CTAs take items from one counter; an item is one compute of cost "c"."""
    space = CellSpace.from_sizes(_taker_regions(cfg))
    loop = ticket_loop("items", 0, int(space.gid(0, 0)), cfg.items, lambda i: [Compute("c")])
    return Launch(cfg, space, tuple(CtaProgram(c, "w", (), (loop,)) for c in range(2)))


_TAKERS = Kernel(
    "two-takers-test", _TwoTakers, _taker_build, _taker_regions, ("w",), ("s",),
    default_costs={"c": (1000.0, 0.0)},
)  # fmt: skip


def _takers_makespan(share: float, units: int) -> float:
    register(_TAKERS, "test")
    prof = replace(load_profile("h200"), units=units, unit_shared=("c",), unit_share=share)
    tl = simulate(_TwoTakers(), prof, occupancy=2).timeline
    assert tl.makespan is not None and not tl.deadlock
    return tl.makespan


def test_items_taken_by_two_ctas_on_one_unit_share_it() -> None:
    """A ticket loop's items are in no program: a CTA shares its unit with another while
    both run an item that computes the stage (docs/whatif/ticket_k1.md)."""
    plain = _takers_makespan(0.0, units=1)
    assert _takers_makespan(0.5, units=2) == pytest.approx(plain)  # on units of their own
    # side by side, each of a CTA's two items computes 1.5 times as long
    assert _takers_makespan(0.5, units=1) == pytest.approx(plain + 2 * 500.0)
