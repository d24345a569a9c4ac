"""Conformance: a trace of the model's protocol shows none; altered ones are flagged."""

from __future__ import annotations

import copy

from kda_sim.compare.conformance import check_conformance


def test_same_protocol_conforms(real22) -> None:
    tl, _ = real22
    r = check_conformance(tl)
    assert r.conforms and r.counts == {"skew": 0, "stage_order": 0, "handoff": 0}


def test_stage_order_altered_on_purpose_is_flagged(real22) -> None:
    tl = copy.deepcopy(real22[0])
    c = tl.ctas[70]
    sp = {s.name: s for s in c.stages}
    conv, gates = sp["k.conv"], sp["k.gates"]
    d1, d2, t0 = conv.dur, gates.dur, conv.start
    gates.start, gates.end = t0, t0 + d2  # gates now runs before conv
    conv.start, conv.end = t0 + d2, t0 + d2 + d1
    r = check_conformance(tl)
    assert not r.conforms
    f = [f for f in r.findings if f.kind == "stage_order"]
    assert f and f[0].cta == 70 and "k.gates" in f[0].what


def test_early_consumer_is_a_handoff_the_model_does_not_have(real22) -> None:
    tl = copy.deepcopy(real22[0])
    p = next(p for p in tl.ctas[5].polls if p.stage == "k.conv")
    p.satisfied = p.first_issue + 50.0  # went on long before the gemv CTAs put PROJ
    r = check_conformance(tl)
    hand = [f for f in r.findings if f.kind == "handoff"]
    assert hand and hand[0].cta == 5 and hand[0].by_ns > 1000.0


def test_unknown_poll_and_stage(real22) -> None:
    tl = copy.deepcopy(real22[0])
    c = tl.ctas[0]
    extra = copy.deepcopy(c.polls[0])
    extra.label = "XRDY"
    c.polls.append(extra)
    st = copy.deepcopy(c.stages[0])
    st.name = "gemv0"
    c.stages.append(st)
    r = check_conformance(tl)
    kinds = {(f.kind, f.cta) for f in r.findings}
    assert ("handoff", 0) in kinds and ("stage_order", 0) in kinds


def test_skew_within_resolution_is_classified_as_skew(sim22) -> None:
    tl = copy.deepcopy(sim22)
    tl.meta.extra["clock_resolution_ns"] = 100.0
    # a hand-off between two CTAs on one SM (one clock: no offset can absorb it) runs
    # 50 ns backwards, below the 2 x 100 ns two stamps resolve
    _c, p = next(
        (c, p)
        for c in tl.ctas
        for p in c.polls
        if p.producer is not None and tl.ctas[p.producer].unit == c.unit and p.producer != c.cta
    )
    put = tl.ctas[p.producer].puts[p.put_ref]
    p.satisfied = put.time - 50.0
    r = check_conformance(tl)
    assert r.conforms and r.counts["skew"] == 1 and r.counts["handoff"] == 0
    strict = check_conformance(tl, tolerance_ns=1.0)
    assert not strict.conforms and strict.counts["handoff"] == 1


def test_a_partial_trace_never_conforms_and_says_what_it_lacks(real22) -> None:
    """CTAs that recorded nothing or never ended: only the rest was checked."""
    tl = copy.deepcopy(real22[0])
    for c in tl.ctas[200:]:
        c.start, c.end, c.stages, c.polls, c.puts = None, None, [], [], []
    tl.ctas[10].end = None
    r = check_conformance(tl)
    assert not r.conforms and r.partial and r.counts["handoff"] == 0
    assert r.unrecorded == list(range(200, 256)) and r.unfinished == [10]
    assert r.missing().startswith("56 of 256 CTAs recorded nothing (200, 201,")
    assert "1 of 256 CTAs never ended (10)" in r.missing()
    assert r.summary()["partial"]["unrecorded_ctas"] == r.unrecorded
    assert check_conformance(real22[0]).summary()["partial"] is None


def test_cli_says_partial_never_conforms(tmp_path, capsys) -> None:
    from pathlib import Path

    from kda_sim.cli import main

    ktrace = (
        Path(__file__).parents[1] / "importers" / "fixtures" / "kda_pre_R1_L1_ktrace.pftrace.gz"
    )
    assert main(["compare", str(ktrace), "--R", "1", "--L", "1"]) == 1
    out = capsys.readouterr().out
    assert "partial trace: 248 of 256 CTAs recorded nothing (2, 3," in out
    assert "PARTIAL TRACE" in out and "conformance: conforms" not in out
