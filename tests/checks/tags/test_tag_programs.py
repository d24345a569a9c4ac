"""Tags from the programs: a one-CTA tag fault is found from the program, its CTA, stage
and cell named; the unmutated K1 has none, and where both answer, the programs and the
step model of region sizes agree."""

from __future__ import annotations

from functools import partial

import pytest

from kda_sim.checks.findings import Category
from kda_sim.checks.tags.analysis import Kind, Policy, analyse
from kda_sim.checks.tags.faults import Side, TagFault, with_tag_fault
from kda_sim.checks.tags.footprint import Layout
from kda_sim.checks.tags.launch import check_launch_tags, tag_counts
from kda_sim.checks.tags.programs import carried, program_findings
from kda_sim.checks.tags.schemes import FrozenEpoch, SlotOnly, TagScheme, counter64, make_scheme
from kda_sim.errors import InvalidInput
from kda_sim.kernels.k1.config import LaunchConfig
from kda_sim.kernels.k1.constants import TAG_EXPR
from kda_sim.kernels.k1.footprint import k1_step_model
from kda_sim.kernels.k1.mutations import BY_NAME
from kda_sim.kernels.k1.program import build_launch
from kda_sim.kernels.k1.tags import STEP_TAG
from kda_sim.machine.profile import load_profile

CFG = LaunchConfig(2, 2)


def _program_findings(v_findings: list) -> list:
    return [f for f in v_findings if "from the programs" in f.message]


def _mutant(
    fault: TagFault, side: Side, cta: int, scheme: TagScheme = STEP_TAG, nb: tuple = (8,)
) -> list:
    mutate = partial(with_tag_fault, cta=cta, fault=fault, side=side)
    m = k1_step_model(((2, 2),), nb, Layout.FIXED, CFG, mutate=mutate)
    return _program_findings(analyse(m, scheme, Policy.NEVER_ZEROED).findings)


@pytest.mark.parametrize(
    "cfg",
    [
        CFG,
        LaunchConfig(2, 2, gate_local=True),
        LaunchConfig(2, 2, kda_tickets=True, gemv_tickets=True),
        LaunchConfig(3, 1, nb=2, kda0=5, nw_first=True, onw_first=True),
    ],
)
def test_k1_programs_carry_its_tag_on_every_put_poll_and_flag(cfg: LaunchConfig) -> None:
    # what K1's step model says its programs carry without building them
    m = k1_step_model(((cfg.R, cfg.L),), (cfg.nb,), Layout.FIXED, cfg)
    assert m.programs is not None and m.programs.carries == {TAG_EXPR}
    assert carried(build_launch(cfg)) == m.programs.carries


# (CTA, side) -> the stage and region its first finding must name: an attn CTA's PART put
# in slice and its PART poll in gate; a gemv CTA's PROJ put in gemv0 and its XRDY poll
SITES = {
    (3, Side.PUT): ("slice", "PART"),
    (3, Side.POLL): ("gate", "PART"),
    (60, Side.PUT): ("gemv0", "PROJ"),
    (60, Side.POLL): ("load_x", "XRDY"),
}


@pytest.mark.parametrize("fault", [TagFault.STALE_EPOCH, TagFault.NO_PLUS_ONE, TagFault.PARITY])
@pytest.mark.parametrize(("cta", "side"), list(SITES))
def test_a_one_cta_tag_fault_is_found_with_its_cta_stage_and_cell(
    fault: TagFault, cta: int, side: Side
) -> None:
    found = _mutant(fault, side, cta)
    assert found and all(f.fails for f in found)
    stage, region = SITES[(cta, side)]
    for f in found:  # every finding points at the mutated CTA, never at a healthy one
        assert f.details["culprit"] == side.value
        assert f.details["culprit_site"]["cta"] == cta
    first = found[0]
    assert first.category is Category.DEADLOCK and first.details["kind"] == "hang"
    assert first.details["culprit_site"]["stage"] == stage
    assert first.details["cell"]["region"] == region
    assert f"CTA {cta} " in first.fix and first.fix.startswith(f"CTA {cta} ")
    # the witness is real: the put's tag and the awaited one differ there
    assert first.details["tag"] != first.details["awaited"]


def test_a_stale_epoch_on_a_polling_cta_also_passes_on_the_old_pair() -> None:
    found = _mutant(TagFault.STALE_EPOCH, Side.POLL, 3)
    stale = [f for f in found if f.details["kind"] == "stale"]
    assert stale and stale[0].category is Category.STALE
    d = stale[0].details
    # it waits for the tag the step before left: epoch - 1, the same slot
    assert d["writer_epoch"] == d["epoch"] - 1 and d["tag"] == d["awaited"]
    assert d["culprit_site"] == {
        "cta": 3,
        "loop": None,
        "item": None,
        "stage": "gate",
        "task": -1,
        "op": 9,
    }


def test_missing_plus_one_on_a_poll_takes_the_earlier_slots_pair() -> None:
    # slot 1 waits for epoch * 256 + 1: what slot 0 of the same step put there
    found = _mutant(TagFault.NO_PLUS_ONE, Side.POLL, 3, nb=(8, 8))
    stale = [f for f in found if f.details["kind"] == "stale"]
    assert stale, found
    d = stale[0].details
    assert (d["slot"], d["writer_slot"]) == (1, 0) and d["writer_epoch"] == d["epoch"]
    assert d["writer"]["cta"] == 0 and d["culprit_site"]["cta"] == 3


@pytest.mark.parametrize("scheme", ["step_tag", "counter64", "layer+1"])
@pytest.mark.parametrize("fault", list(TagFault))
def test_every_tag_fault_applies_to_every_scheme_or_is_refused_by_name(
    scheme: str, fault: TagFault
) -> None:
    s = make_scheme(scheme, tag_slots=256, epoch_bits=22, bits=32)
    if isinstance(s, SlotOnly) and fault is not TagFault.NO_PLUS_ONE:
        with pytest.raises(InvalidInput, match="layer\\+1 has no epoch"):
            _mutant(fault, Side.PUT, 60, s)
        return
    found = _mutant(fault, Side.PUT, 60, s)
    assert found and found[0].details["culprit_site"]["cta"] == 60


def test_a_frozen_epoch_is_analysed_where_frozen_and_at_every_value() -> None:
    at5 = _mutant(TagFault.STALE_EPOCH, Side.PUT, 60, FrozenEpoch(STEP_TAG, 5))
    assert at5 and at5[0].details["epoch"] == 5
    anyv = _mutant(TagFault.STALE_EPOCH, Side.PUT, 60, FrozenEpoch(STEP_TAG))
    assert anyv and anyv[0].details["kind"] == "hang"
    # a CTA reading the captured epoch is right where the whole graph is frozen
    assert not _mutant(TagFault.CAPTURED_EPOCH, Side.PUT, 60, FrozenEpoch(STEP_TAG, 5))
    live = _mutant(TagFault.CAPTURED_EPOCH, Side.PUT, 60)
    assert live and "captured epoch" in live[0].message


def test_a_cta_without_such_an_op_is_refused() -> None:
    with pytest.raises(InvalidInput, match="CTA 60 has no poll"):
        # gemv CTA 60's only poll is XRDY; under gemv tickets it is an idle CTA
        with_tag_fault(
            build_launch(LaunchConfig(2, 2, gemv_tickets=True)), 60, TagFault.PARITY, Side.POLL
        )


def _shapes() -> list[tuple[int, int]]:
    out = []
    for r in range(1, 9):
        for lng in range(1, 5):
            try:
                LaunchConfig(r, lng).validate()
            except InvalidInput:
                continue
            out.append((r, lng))
    return out


@pytest.mark.parametrize("scheme", ["step_tag", "counter64", "layer+1"])
def test_no_program_finding_on_unmutated_k1(scheme: str) -> None:
    s = make_scheme(scheme, tag_slots=256, epoch_bits=22, bits=32)
    for shape in _shapes():
        m = k1_step_model((shape,), (8, 8))
        assert m.programs is not None
        assert carried(m.programs.launch(0, 8)) == m.programs.carries == {TAG_EXPR}
        found = program_findings(m.programs, s, m.shapes, m.nb, zeroed=False, every=True)
        # every CTA computes the scheme's tag: no hang anywhere, whatever the scheme
        assert not [f for f in found if f.details.get("kind") == "hang"], (shape, found)


@pytest.mark.parametrize("policy", list(Policy))
@pytest.mark.parametrize(
    "scheme",
    [
        STEP_TAG,
        SlotOnly(32),
        counter64(256),
        FrozenEpoch(STEP_TAG),
        make_scheme("step_tag", tag_slots=256, epoch_bits=22, bits=32, drop_slot=True),
    ],
)
@pytest.mark.parametrize("nb", [(8,), (1, 8)])
@pytest.mark.parametrize("shape", [(2, 2), (8, 1)])
def test_programs_and_region_sizes_agree_on_unmutated_k1(
    shape: tuple[int, int], nb: tuple[int, ...], scheme: TagScheme, policy: Policy
) -> None:
    # the question both answer: a poll passing on what the launch before left (the same
    # step's earlier slot, the step before's last, or the zeroed value)
    m = k1_step_model((shape,), nb)
    v = analyse(m, scheme, policy)
    near = [
        sc
        for sc in v.scenarios
        if sc.kind is Kind.SAME_STEP
        or (sc.kind is Kind.ACROSS and sc.gap == 1)
        or (sc.kind is Kind.CLEARED and policy is Policy.ZEROED)
    ]
    found = program_findings(
        m.programs, scheme, m.shapes, m.nb, zeroed=policy is Policy.ZEROED, every=True
    )
    assert bool(found) == bool(near), (found, near)
    # and the scheme alone reads nothing from the programs: the report is the model's
    assert not _program_findings(v.findings)


@pytest.mark.parametrize(
    ("name", "cta", "stage", "region"),
    [
        ("tag-stale-epoch", 56, "gemv0", "PROJ"),
        ("tag-no-plus-one", 3, "gate", "PART"),
        ("tag-parity", 0, "slice", "PART"),
    ],
)
@pytest.mark.parametrize("shape", [(1, 1, 1), (2, 2, 8), (4, 1, 4)])
def test_the_catalogues_tag_faults_are_found_in_the_launch_report(
    name: str, cta: int, stage: str, region: str, shape: tuple[int, int, int]
) -> None:
    cfg = LaunchConfig(*shape)
    case = BY_NAME[name].apply(cfg, load_profile("h200"))
    assert case.launch is not None
    got = check_launch_tags(case.launch)
    assert got is not None and got.reference == TAG_EXPR and got.others > 0
    first = got.findings[0]
    assert first.category is Category.DEADLOCK and first.fails
    if name == "tag-no-plus-one" and cta >= cfg.S:
        stage, region = "mix", "WGT"  # attn CTA a gates token a only where a < S
    assert first.details["culprit_site"]["cta"] == cta
    assert first.details["culprit_site"]["stage"] == stage
    assert first.details["cell"]["region"] == region
    named = [f for f in got.findings if "more" not in f.details]
    assert all(f.details["culprit_site"]["cta"] == cta for f in named)
    assert "tags, from the programs" in got.line()


def test_the_launch_report_has_no_tags_line_where_every_op_carries_one_tag() -> None:
    assert check_launch_tags(build_launch(CFG)) is None
    assert tag_counts(build_launch(CFG)) == {TAG_EXPR: sum(tag_counts(build_launch(CFG)).values())}
