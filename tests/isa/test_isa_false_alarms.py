"""The false alarms of issue 34, each on a small hand-made kernel in
``fixtures/handmade/`` (the shapes LLVM gives FlyDSL's mailbox kernels, cut down):
a cold block after ``s_endpgm`` that branches back, a poll with ``sc0`` alone, and
a put and a poll on two paths that no workgroup runs both of."""

from __future__ import annotations

from pathlib import Path

import pytest

from kda_sim.isa import analyze_path, analyze_text
from kda_sim.isa import cfg as cfg_mod
from kda_sim.isa.parser import parse

HANDMADE = Path(__file__).parent / "fixtures" / "handmade"


def text_of(name: str) -> str:
    return (HANDMADE / f"{name}.s").read_text()


def line_of(text: str, needle: str) -> int:
    """1-based line of the one line holding ``needle``."""
    [n] = [i for i, line in enumerate(text.splitlines(), 1) if needle in line]
    return n


def test_a_cold_block_after_endpgm_branching_back_is_no_loop() -> None:
    text = text_of("cold_after_endpgm")
    k = parse(text).kernels[0]
    g = cfg_mod.build(k)
    cold = g.block_of[k.labels[".LBB0_4"]]
    end = k.labels[".LBB0_2"]
    assert k.instrs[end].mnemonic == "s_endpgm" and g.blocks[cold].start > end
    # the cold block branches back (twice) to the s_endpgm block: a join, not a cycle
    assert g.blocks[cold].succs == [g.block_of[end], cold + 1]
    assert g.blocks[cold + 1].succs == [g.block_of[end]]
    [loop] = g.loops  # the poll, nothing else
    assert loop.header == g.block_of[k.labels[".LBB0_1"]]
    r = analyze_path(HANDMADE / "cold_after_endpgm.s")
    assert r.kernels[0].loops == 1 and r.findings == []
    [poll] = r.kernels[0].polls
    assert poll.line == line_of(text, "buffer_load_dword v2")


@pytest.mark.parametrize("arch", ["gfx942", "gfx950"])
def test_a_poll_with_sc0_alone_is_below_agent_scope(arch: str) -> None:
    text = text_of("poll_sc0_only").replace("gfx942", arch)
    r = analyze_text(text, "poll_sc0_only.s")
    [f] = r.findings
    assert f.kind == "scope_below_agent"
    assert f.line == line_of(text, "offen sc0 nt")
    assert "has nt sc0:" in f.message and f"workgroup scope on {arch}" in f.message


def test_the_same_poll_with_sc1_is_clean() -> None:
    text = text_of("poll_sc0_only").replace("offen sc0 nt", "offen sc1 nt")
    assert analyze_text(text).findings == []


def test_a_put_and_a_poll_on_exclusive_paths_are_not_in_flight_together() -> None:
    """s2 == 0 stores, s2 != 0 polls: the CFG path through both is run by no
    workgroup, so the poll waits behind nothing, first try or retry."""
    r = analyze_path(HANDMADE / "exclusive_paths.s")
    [poll] = r.kernels[0].polls
    assert poll.in_flight == [] and poll.by_class == {}
    assert [(t.kind, t.lines) for t in poll.tries] == [("first try", []), ("retry", [])]


@pytest.mark.parametrize(
    ("old", "new"),
    [
        # the poll's test reads another register: the store may be in flight
        ("\ts_cmp_lg_u32 s2, 0\n", "\ts_cmp_lg_u32 s3, 0\n"),
        # s2 is written between the two tests: what the first said no longer holds
        ("\ts_cmp_lg_u32 s2, 0\n", "\ts_mov_b32 s2, s12\n\ts_cmp_lg_u32 s2, 0\n"),
        # the same test both times: the storing workgroup polls too
        ("\ts_cmp_lg_u32 s2, 0\n\ts_cbranch_scc0", "\ts_cmp_eq_u32 s2, 0\n\ts_cbranch_scc0"),
    ],
)
def test_a_path_that_can_run_both_keeps_the_store_in_flight(old: str, new: str) -> None:
    text = text_of("exclusive_paths")
    assert old in text
    r = analyze_text(text.replace(old, new, 1))
    [poll] = r.kernels[0].polls
    # the store sits above the edited lines: its line is the same in both texts
    assert [f.line for f in poll.in_flight] == [line_of(text, "buffer_store_dword")]
    assert poll.tries[0].lines == [f.line for f in poll.in_flight]


def test_a_load_of_another_argument_is_no_peeled_first_try() -> None:
    """The value is read with the poll's load form on the dominator path into the
    loop; it comes from another argument, so the poll is not peeled: its first try is
    the loop's load, behind the value load."""
    text = text_of("not_a_peeled_copy")
    r = analyze_path(HANDMADE / "not_a_peeled_copy.s")
    [poll] = r.kernels[0].polls
    poll_load = line_of(text, "buffer_load_dword v2")
    assert not poll.peeled and poll.line == poll_load
    first = poll.tries[0]
    assert first.kind == "first try" and first.line == poll_load
    assert first.lines == [line_of(text, "buffer_load_dword v3")]


def test_a_load_of_the_polled_argument_is_the_peeled_first_try() -> None:
    text = text_of("not_a_peeled_copy").replace(
        "buffer_load_dword v3, v1, s[4:7]", "buffer_load_dword v3, v1, s[8:11]"
    )
    [poll] = analyze_text(text).kernels[0].polls
    assert poll.peeled and poll.line == line_of(text, "buffer_load_dword v3")
