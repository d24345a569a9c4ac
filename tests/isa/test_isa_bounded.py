"""Bounded polls (``polls.clock_bound``, ``kda-sim isa --bounded``): a poll loop gives
up in time when a clock read inside it reaches a compare; a clock read only stored (a
trace stamp) is no bound. On the hand-made poll of ``fixtures/handmade/`` with the
loop body edited."""

from __future__ import annotations

from pathlib import Path

import pytest

from kda_sim.isa import analyze_text

HANDMADE = Path(__file__).parent / "fixtures" / "handmade"
LOOP_HEAD = "\ts_sleep 1\n"
# the bounded-wait build's shape (FlyDSL's K1, cut down): the clock less the first
# try's, compared with the bound; the loop goes on only while stale and in time
BOUND = (
    "\ts_memrealtime s[12:13]\n"
    "\ts_waitcnt lgkmcnt(0)\n"
    "\ts_sub_u32 s12, s12, s14\n"
    "\ts_subb_u32 s13, s13, s15\n"
    "\tv_cmp_le_i64_e64 s[16:17], s[12:13], v[4:5]\n"
)
# the same through a VGPR (a 32-bit elapsed count)
BOUND_VGPR = (
    "\ts_memrealtime s[12:13]\n"
    "\ts_waitcnt lgkmcnt(0)\n"
    "\tv_mov_b32_e32 v6, s12\n"
    "\tv_sub_u32_e32 v6, v6, v7\n"
    "\tv_cmp_lt_u32_e64 s[16:17], v6, s20\n"
)
# a trace stamp: the clock read and stored, never compared
STAMP = (
    "\ts_memrealtime s[12:13]\n\ts_waitcnt lgkmcnt(0)\n\ts_store_dwordx2 s[12:13], s[4:5], 0x0\n"
)


def poll_with(body: str) -> str:
    text = (HANDMADE / "poll_sc0_only.s").read_text().replace("offen sc0 nt", "offen sc1")
    assert text.count(LOOP_HEAD) == 1
    return text.replace(LOOP_HEAD, LOOP_HEAD + body)


@pytest.mark.parametrize(
    ("body", "bounded"), [(BOUND, True), (BOUND_VGPR, True), (STAMP, False), ("", False)]
)
def test_a_clock_that_reaches_a_compare_bounds_the_poll(body: str, bounded: bool) -> None:
    r = analyze_text(poll_with(body))
    [poll] = r.kernels[0].polls
    assert poll.bounded is bounded
    assert r.findings == []  # not asked for: no finding either way
    checked = analyze_text(poll_with(body), bounded=True)
    kinds = [f.kind for f in checked.findings]
    assert kinds == ([] if bounded else ["poll_unbounded"])
    assert ("bounded)" in checked.render()) is bounded


def test_the_cli_fails_an_unbounded_poll_under_bounded(tmp_path: Path, capsys) -> None:
    from kda_sim.cli import main

    for name, body in (("stamp", STAMP), ("bound", BOUND)):
        (tmp_path / f"{name}.s").write_text(poll_with(body))
    assert main(["isa", str(tmp_path / "stamp.s")]) == 0
    assert main(["isa", "--bounded", str(tmp_path / "stamp.s")]) == 1
    assert "poll_unbounded" in capsys.readouterr().out
    assert main(["isa", "--bounded", str(tmp_path / "bound.s")]) == 0
