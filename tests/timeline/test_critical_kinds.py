"""The critical path read as stage kinds and hand-offs, without CTA numbers."""

from __future__ import annotations

from kda_sim.timeline.critical import critical_path, kind_sequence, stage_kinds
from kda_sim.timeline.model import CtaTrack, Meta, PollRecord, StageSpan, Timeline


def _launch(b_cta: int) -> Timeline:
    """CTA 0 runs slice then gate; the CTA ``b_cta`` polls gate's put from its load_x,
    whose span ends at the poll's satisfaction (as a measured load_x does), then runs
    gemv0. Only the CTA numbers differ between two calls."""
    n = max(2, b_cta + 1)
    ctas = [CtaTrack(i, "idle", unit=i, start=0.0, end=1.0) for i in range(n)]
    a = CtaTrack(0, "attn", unit=0, start=0.0, end=20.0)
    a.stages = [StageSpan("slice", -1, 0.0, 10.0), StageSpan("gate", -1, 10.0, 20.0)]
    b = CtaTrack(b_cta, "gemv", unit=b_cta, start=0.0, end=40.0)
    b.stages = [StageSpan("load_x", -1, 0.0, 25.0), StageSpan("gemv0", -1, 25.0, 40.0)]
    b.polls = [PollRecord("load_x", -1, "XRDY", 1, 1, 1.0, 25.0, 3, 0, 19.0, None)]
    ctas[0], ctas[b_cta] = a, b
    return Timeline(Meta("measured", "h200", 1, 1), ctas)


def test_kind_sequence_names_stages_and_handoffs_in_time_order() -> None:
    tl = _launch(1)
    cp = critical_path(tl)
    assert cp is not None
    seq = kind_sequence(tl, cp)
    # load_x ends where its poll was satisfied: it is still where the path enters CTA 1
    assert seq == ["slice", "gate", "<-XRDY", "load_x", "gemv0"]
    assert stage_kinds(seq) == ["slice", "gate", "load_x", "gemv0"]


def test_kind_sequences_agree_across_cta_numbers() -> None:
    one, other = _launch(1), _launch(5)
    p1, p2 = critical_path(one), critical_path(other)
    assert p1 is not None and p2 is not None
    assert p1.ctas != p2.ctas
    assert kind_sequence(one, p1) == kind_sequence(other, p2)


def test_a_poll_satisfied_before_its_stage_matters_is_no_handoff() -> None:
    tl = _launch(1)
    tl.ctas[1].polls[0].put_time = 0.5  # the flag was up before the poll began
    cp = critical_path(tl)
    assert cp is not None
    assert kind_sequence(tl, cp) == ["load_x", "gemv0"]
