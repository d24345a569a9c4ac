"""Branch tests a path remembers (kda_sim.isa.conds): which s_cmp sets the SCC a
branch reads, what contradicts what, and which writes make a test stale."""

from __future__ import annotations

from kda_sim.isa import conds
from kda_sim.isa.parser import Instr, split_instruction


def instrs(*lines: str) -> list[Instr]:
    out = []
    for i, text in enumerate(lines):
        mn, ops, mods = split_instruction(text)
        out.append(Instr(i, i + 1, mn, ops, mods, text))
    return out


EQ_S2_0 = ("eq", "u32", "s2", "0")


def test_the_taken_edge_value_follows_the_compare_and_the_branch_sense() -> None:
    # s_cmp_lg taken on scc0: s2 == 0 holds on the taken edge
    code = instrs("s_cmp_lg_u32 s2, 0", "v_mov_b32_e32 v1, 1", "s_cbranch_scc0 .LBB0_2")
    assert conds.branch_test(code, 0, 3) == (EQ_S2_0, True)
    code = instrs("s_cmp_eq_u32 s2, 0", "s_mov_b32 s8, s6", "s_cbranch_scc0 .LBB0_2")
    assert conds.branch_test(code, 0, 3) == (EQ_S2_0, False)
    code = instrs("s_cmp_gt_i32 s2, 3", "s_cbranch_scc1 .LBB0_2")
    assert conds.branch_test(code, 0, 2) == (("gt", "i32", "s2", "3"), True)


def test_scc_from_anything_else_is_not_read() -> None:
    # s_and_b32 sets SCC after the compare; vcc is not followed; no compare in the block
    assert conds.branch_test(instrs("s_cmp_eq_u32 s2, 0", "s_and_b32 s3, s4, 1",
                                    "s_cbranch_scc1 .L"), 0, 3) is None  # fmt: skip
    assert conds.branch_test(instrs("s_cmp_eq_u32 vcc_lo, 0", "s_cbranch_scc1 .L"), 0, 2) is None
    assert conds.branch_test(instrs("v_mov_b32_e32 v1, 1", "s_cbranch_scc1 .L"), 0, 2) is None
    assert conds.branch_test(instrs("s_cmp_eq_u32 s2, 0", "s_cbranch_vccz .L"), 0, 2) is None


def test_contradictions() -> None:
    facts = frozenset({(EQ_S2_0, True)})
    assert conds.contradicts(facts, EQ_S2_0, False)
    assert conds.contradicts(facts, ("eq", "u32", "s2", "0x0"), False)  # same literal
    assert conds.contradicts(facts, ("eq", "u32", "s2", "1"), True)  # s2 is 0, not 1
    assert not conds.contradicts(facts, ("eq", "u32", "s2", "1"), False)
    assert not conds.contradicts(facts, ("eq", "u32", "s3", "0"), False)  # another register
    assert not conds.contradicts(facts, ("eq", "i32", "s2", "0"), False)  # another type
    # s2 != 0 says nothing of s2 == 1
    assert not conds.contradicts(frozenset({(EQ_S2_0, False)}), ("eq", "u32", "s2", "1"), True)


def test_a_write_to_a_tested_register_forgets_the_test() -> None:
    facts = frozenset({(EQ_S2_0, True), (("eq", "u32", "s[4:5]", "s6"), False)})
    [mov, co, store, cmp, call, load] = instrs(
        "s_mov_b32 s2, s12",
        "v_add_co_u32_e64 v0, s[4:5], v1, v2",
        "buffer_store_dword v2, v1, s[8:11], 0 offen",
        "s_cmp_eq_u32 s2, 1",
        "s_swappc_b64 s[30:31], s[16:17]",
        "s_load_dwordx2 s[6:7], s[0:1], 0x0",
    )
    assert conds.kill(facts, mov) == {(("eq", "u32", "s[4:5]", "s6"), False)}
    assert conds.kill(facts, co) == {(EQ_S2_0, True)}  # the carry-out is written
    assert conds.kill(facts, store) == facts and conds.kill(facts, cmp) == facts
    assert conds.kill(facts, call) == frozenset()
    assert conds.kill(facts, load) == {(EQ_S2_0, True)}  # s6 is compared against


def test_a_test_made_once_is_not_remembered() -> None:
    code = instrs(
        "s_cmp_eq_u32 s2, 0",
        "s_cbranch_scc0 .A",
        "s_cmp_eq_u32 s3, 0",
        "s_cbranch_scc0 .B",
        "s_cmp_lg_u32 s2, 0",
        "s_cbranch_scc1 .C",
    )
    br = conds.branches(code, [(0, 2, 7), (2, 4, 8), (4, 6, 9), (6, 6, None)])
    assert set(br.tests) == {0, 2}
    # block 0's taken edge (scc0: s2 != 0) and block 2's taken edge (scc1: s2 != 0) agree
    after = br.follow(frozenset(), 0, 7)
    assert after == {(EQ_S2_0, False)}
    assert br.follow(after, 2, 9) == after and br.follow(after, 2, 5) is None
    assert br.follow(after, 1, 3) == after  # an untracked branch changes nothing
