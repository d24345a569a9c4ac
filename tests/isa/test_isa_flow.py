"""The analyzer's pieces on small hand-written kernels: parsing, CFG and loops, the
in-order vmcnt queue across branches and loops, kernel-argument provenance."""

from __future__ import annotations

import pytest

from kda_sim.errors import InvalidInput
from kda_sim.isa import analyze_text, waitcnt
from kda_sim.isa import cfg as cfg_mod
from kda_sim.isa.memops import mem_op, vm_wait
from kda_sim.isa.parser import parse, split_instruction
from kda_sim.isa.provenance import kernarg_offset

HEAD = '\t.amdgcn_target "amdgcn-amd-amdhsa-unknown-gfx942"\n\t.text\n\t.type\tk,@function\nk:\n'
TAIL = ".Lfunc_end0:\n"
META = """\t.amdgpu_metadata
---
amdhsa.kernels:
  - .args:
      - .address_space:  global
        .offset:         0
        .size:           8
        .value_kind:     global_buffer
      - .name:           flags
        .offset:         8
        .size:           8
        .value_kind:     global_buffer
    .name:           k
    .sgpr_count:     22
amdhsa.target:   amdgcn-amd-amdhsa-unknown-gfx942
\t.end_amdgpu_metadata
"""


def kernel(body: str, meta: str = META) -> str:
    return HEAD + body + TAIL + meta


# two weight loads, then a branch: one path drains, the other does not; then a poll
BRANCHY = """\
\ts_load_dwordx4 s[8:11], s[0:1], 0x0
\ts_waitcnt lgkmcnt(0)
\tbuffer_load_dwordx4 v[0:3], v9, s[4:7], 0 offen nt
\tbuffer_load_dwordx4 v[4:7], v9, s[4:7], 0 offen offset:16 nt
\ts_cbranch_scc1 .LBB0_2
\ts_waitcnt vmcnt(0)
.LBB0_2:
\ts_mov_b32 s12, s10
\t;;#ASMSTART
\t; kda-sim: poll s R
\t;;#ASMEND
.LBB0_3:
\ts_sleep 1
\tbuffer_load_dwordx2 v[8:9], v10, s[12:15], 0 offen sc0 sc1
\ts_waitcnt vmcnt(0)
\tv_cmp_eq_u32_e32 vcc, s2, v9
\ts_cbranch_vccz .LBB0_3
\ts_endpgm
"""


def test_split_instruction_reads_operands_and_modifiers() -> None:
    mn, ops, mods = split_instruction(
        "buffer_load_dwordx2 v[2:3], v4, s[8:11], 0 offen offset:16 sc0 sc1"
    )
    assert mn == "buffer_load_dwordx2"
    assert ops == ("v[2:3]", "v4", "s[8:11]", "0")
    assert mods == ("offen", "offset:16", "sc0", "sc1")


def test_memops_and_waits() -> None:
    k = parse(kernel(BRANCHY)).kernels[0]
    op = mem_op(k.instrs[2])
    assert op is not None and op.nbytes == 16 and op.cache == {"nt"} and op.resource == 4
    poll = mem_op(k.instrs[8])
    assert poll is not None and poll.coherent
    assert vm_wait(k.instrs[5]) == 0 and vm_wait(k.instrs[1]) is None


def test_gfx9_numeric_waitcnt_is_decoded() -> None:
    k = parse(kernel("\ts_waitcnt 0xc071\n\ts_waitcnt 0\n\ts_endpgm\n")).kernels[0]
    assert vm_wait(k.instrs[0]) == 0x31  # low bits 1, bits 15:14 = 3 -> 3 << 4
    assert vm_wait(k.instrs[1]) == 0


def test_cfg_finds_the_back_edge() -> None:
    k = parse(kernel(BRANCHY)).kernels[0]
    g = cfg_mod.build(k)
    [loop] = g.loops
    header = g.blocks[loop.header]
    assert k.instrs[header.start].mnemonic == "s_sleep"
    assert loop.blocks == {loop.header}


def test_paths_join_conservatively() -> None:
    """One path drained the weights, the other did not: the poll may wait behind both."""
    k = parse(kernel(BRANCHY)).kernels[0]
    g = cfg_mod.build(k)
    flow = waitcnt.analyze(k, g, "gfx942")
    states = flow.before(8)
    assert {vm for vm, _ in states} == {(), (2, 3)}


def test_the_undrained_path_is_reported() -> None:
    r = analyze_text(kernel(BRANCHY), arg_layout=(("w", "weights"), ("flags", "mailbox")))
    [poll] = r.kernels[0].polls
    assert poll.label == "s R" and not poll.peeled
    # the worst path: both weight loads, oldest first (s[4:7] is no argument: bits say nt)
    assert poll.by_class == {"weights": 2}
    assert [f.line for f in poll.in_flight] == [7, 8]


def test_provenance_follows_moves_to_the_kernarg_load() -> None:
    k = parse(kernel(BRANCHY)).kernels[0]
    assert k.args[1].name == "flags" and k.args[0].name == "arg0"
    # s12 <- s10 <- s_load_dwordx4 s[8:11], s[0:1], 0x0: dword 2 of the segment
    assert kernarg_offset(k, 8, 12) == 8


# the kernarg pointers spilled to VGPR lanes and restored (SGPR pressure: the debug +
# delta + gate_local FlyDSL K1 does this), then moved as a pair into the resource
SPILLED = """\
\ts_load_dwordx4 s[8:11], s[0:1], 0x0
\ts_waitcnt lgkmcnt(0)
\tv_writelane_b32 v40, s8, 2
\tv_writelane_b32 v40, s9, 3
\tv_writelane_b32 v40, s10, 4
\tv_writelane_b32 v40, s11, 5
\ts_mov_b32 s8, 0
\ts_mov_b32 s10, 0
\tv_readlane_b32 s36, v40, 4
\tv_readlane_b32 s37, v40, 5
\ts_mov_b64 s[12:13], s[36:37]
\ts_mov_b32 s14, -1
\ts_mov_b32 s15, 0x27000
\tbuffer_load_dwordx2 v[8:9], v10, s[12:15], 0 offen sc1
\ts_endpgm
"""


def test_provenance_follows_lane_spills_and_pair_moves() -> None:
    k = parse(kernel(SPILLED)).kernels[0]
    load = next(i for i in k.instrs if i.mnemonic.startswith("buffer_load"))
    # s12 <- s36 (s_mov_b64) <- lane 4 of v40 <- s10 <- dword 2 of the segment: flags,
    # though s10 itself was overwritten after the spill
    assert kernarg_offset(k, load.index, 12) == 8
    # a lane nobody saved into names nothing
    unsaved = kernel(SPILLED.replace("v_readlane_b32 s36, v40, 4", "v_readlane_b32 s36, v40, 9"))
    k2 = parse(unsaved).kernels[0]
    assert kernarg_offset(k2, load.index, 12) is None


def test_cache_bits_classify_without_names() -> None:
    r = analyze_text(kernel(BRANCHY))
    [poll] = r.kernels[0].polls
    assert poll.by_class == {"weights": 2}  # nt, resource not traced to a named argument


def test_a_loop_without_sleep_or_coherent_load_is_not_a_poll() -> None:
    body = BRANCHY.replace("\ts_sleep 1\n", "").replace(" sc0 sc1", "")
    r = analyze_text(kernel(body))
    assert r.kernels[0].polls == []
    assert [f.kind for f in r.findings] == ["poll_missing"]


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("", "no AMDGPU kernel"),
        ("hello world\n", "no AMDGPU kernel"),
        ("\t.text\nfoo:\n\tmov eax, 1\n", "no AMDGPU kernel"),
    ],
)
def test_text_that_is_not_isa_is_refused_by_name(text: str, needle: str) -> None:
    with pytest.raises(InvalidInput, match=needle):
        analyze_text(text, "x.s")


# a cold block laid out after s_endpgm, branched to and branching back: a join, no cycle
COLD_AFTER_END = """\
\ts_cmp_gt_i32 s2, 0
\ts_cbranch_scc0 .LBB0_4
.LBB0_1:
\tv_mov_b32_e32 v1, 1
.LBB0_2:
\tbuffer_store_dword v1, v0, s[4:7], 0 offen
\ts_endpgm
.LBB0_4:
\tv_mov_b32_e32 v1, 2
\ts_cbranch_execnz .LBB0_1
\ts_branch .LBB0_2
"""

# a rotated poll loop: the latch (exec bookkeeping) is laid out before the header
# (the loads), which the preheader enters directly; no copy of the loads outside it
ROTATED = """\
\ts_mov_b64 s[20:21], 0
\ts_branch .LBB0_3
.LBB0_2:
\ts_or_b64 s[20:21], vcc, s[20:21]
\ts_andn2_b64 exec, exec, s[20:21]
\ts_cbranch_execz .LBB0_5
.LBB0_3:
\tbuffer_load_dwordx2 v[6:7], v23, s[8:11], 0 offen sc0 sc1
\ts_waitcnt vmcnt(0)
\tv_cmp_ne_u32_e32 vcc, s33, v7
\ts_cbranch_vccz .LBB0_2
\ts_sleep 1
\ts_branch .LBB0_2
.LBB0_5:
\ts_endpgm
"""

# two entries into one cycle (B1 <-> B2, entered at both): irreducible
IRREDUCIBLE = """\
\ts_cbranch_scc0 .LBB0_2
.LBB0_1:
\tv_add_u32_e32 v1, 1, v1
.LBB0_2:
\tv_cmp_gt_u32_e32 vcc, 10, v1
\ts_cbranch_vccnz .LBB0_1
\ts_endpgm
"""


def test_a_cold_block_after_endpgm_that_branches_back_is_no_loop() -> None:
    k = parse(kernel(COLD_AFTER_END)).kernels[0]
    g = cfg_mod.build(k)
    cold = g.block_of[k.labels[".LBB0_4"]]
    assert set(g.blocks[cold].succs) == {g.block_of[k.labels[".LBB0_1"]], cold + 1}
    assert g.loops == [] and g.back_edges == []
    r = analyze_text(kernel(COLD_AFTER_END))
    assert r.kernels[0].loops == 0 and r.findings == []


def test_a_rotated_loop_has_its_header_after_its_latch_and_no_peeled_copy() -> None:
    k = parse(kernel(ROTATED)).kernels[0]
    g = cfg_mod.build(k)
    [loop] = g.loops
    header, latch = g.block_of[k.labels[".LBB0_3"]], g.block_of[k.labels[".LBB0_2"]]
    assert loop.header == header and loop.latches == (latch,) and latch < header
    assert not loop.irreducible
    [poll] = analyze_text(kernel(ROTATED)).kernels[0].polls
    assert not poll.peeled and poll.line == k.instrs[k.labels[".LBB0_3"]].line


def test_an_irreducible_cycle_is_a_loop_with_two_entries() -> None:
    k = parse(kernel(IRREDUCIBLE)).kernels[0]
    g = cfg_mod.build(k)
    [loop] = g.loops
    assert loop.irreducible and len(loop.entries) == 2 and g.back_edges == []
    assert loop.blocks == {g.block_of[k.labels[".LBB0_1"]], g.block_of[k.labels[".LBB0_2"]]}


@pytest.mark.parametrize("arch", ["gfx942", "gfx950"])
@pytest.mark.parametrize(
    ("bits", "scope"),
    [
        ("sc0 nt", "workgroup"),
        ("nt", "wavefront"),
        ("sc1", None),
        ("sc0 sc1", None),
        ("sc1 nt", None),
    ],
)
def test_a_poll_below_agent_scope_is_a_finding(arch: str, bits: str, scope: str | None) -> None:
    """LLVM's AMDGPU memory model (gfx942 tables, gfx950 alike): sc0 alone is workgroup
    scope, agent needs sc1, system sc0 sc1."""
    text = kernel(BRANCHY.replace("offen sc0 sc1", f"offen {bits}")).replace("gfx942", arch)
    r = analyze_text(text)
    found = [f for f in r.findings if f.kind == "scope_below_agent"]
    if scope is None:
        assert found == []
        return
    [f] = found
    assert f.line == 18 and f"has {' '.join(sorted(bits.split()))}:" in f.message
    assert f"{scope} scope on {arch}" in f.message and "sc1" in f.message


def test_a_store_to_the_polled_word_below_agent_scope_is_a_finding() -> None:
    put = "\tbuffer_store_dwordx2 v[8:9], v10, s[12:15], 0 offen sc0\n\ts_endpgm\n"
    r = analyze_text(kernel(BRANCHY.replace("\ts_endpgm\n", put)))
    [f] = [f for f in r.findings if f.kind == "scope_below_agent"]
    assert f.line == 22
    assert "store to polled argument flags" in f.message and "workgroup scope" in f.message


def test_atomics_are_agent_scope_without_bits() -> None:
    from kda_sim.isa.memops import Scope, scope

    k = parse(kernel("\tbuffer_atomic_add v1, v0, s[4:7], 0 offen sc0\n\ts_endpgm\n")).kernels[0]
    op = mem_op(k.instrs[0])
    assert op is not None and scope(op, "gfx942") is Scope.AGENT
    assert scope(op, "gfx950") is Scope.AGENT
    sys_op = mem_op(parse(kernel("\tglobal_atomic_add v1, v0, s[4:5] sc1\n")).kernels[0].instrs[0])
    assert sys_op is not None and scope(sys_op, "gfx950") is Scope.SYSTEM


# the first try hoisted above the weights: its wait (vmcnt(3)) leaves the three weight
# loads in flight; the retry, in the loop, issues behind them and waits on them
HOISTED_FIRST_TRY = """\
\tbuffer_load_dwordx2 v[8:9], v10, s[12:15], 0 offen sc0 sc1
\tbuffer_load_dwordx4 v[0:3], v9, s[4:7], 0 offen nt
\tbuffer_load_dwordx4 v[4:7], v9, s[4:7], 0 offen offset:16 nt
\tbuffer_load_dwordx4 v[12:15], v9, s[4:7], 0 offen offset:32 nt
\ts_waitcnt vmcnt(3)
\tv_cmp_ne_u32_e32 vcc, s2, v9
\ts_and_saveexec_b64 s[0:1], vcc
\ts_cbranch_execz .LBB0_3
.LBB0_2:
\ts_sleep 1
\tbuffer_load_dwordx2 v[8:9], v10, s[12:15], 0 offen sc0 sc1
\ts_waitcnt vmcnt(0)
\tv_cmp_eq_u32_e32 vcc, s2, v9
\ts_cbranch_vccz .LBB0_2
.LBB0_3:
\ts_endpgm
"""


def test_poll_behind_weights_is_reported_at_the_retry_that_waits_on_them() -> None:
    r = analyze_text(kernel(HOISTED_FIRST_TRY))
    [poll] = r.kernels[0].polls
    first, retry = poll.tries
    assert (first.kind, first.by_class, first.wait) == ("first try", {}, "s_waitcnt vmcnt(3)")
    assert retry.kind == "retry" and retry.by_class == {"weights": 3}
    assert retry.line == 15 and retry.wait_line == 16 and retry.lines == [6, 7, 8]
    [f] = r.findings
    assert f.kind == "poll_behind_weights" and f.line == 16  # the retry's s_waitcnt vmcnt(0)
    assert "retry" in f.message and "first try" not in f.message and "lines 6..8" in f.message


def test_a_drained_retry_is_not_reported() -> None:
    text = HOISTED_FIRST_TRY.replace("\ts_waitcnt vmcnt(3)\n", "\ts_waitcnt vmcnt(0)\n")
    r = analyze_text(kernel(text))
    assert [t.by_class for t in r.kernels[0].polls[0].tries] == [{}, {}] and r.findings == []


# a uniform branch (scc): one path puts to A, the other to B; they join before the poll
EXCLUSIVE_PUTS = """\
\ts_cmp_gt_i32 s2, 0
\ts_cbranch_scc0 .LBB0_2
\tbuffer_store_dwordx2 v[0:1], v9, s[12:15], 0 offen sc0 sc1
\ts_branch .LBB0_3
.LBB0_2:
\tbuffer_store_dwordx2 v[0:1], v9, s[12:15], 0 offen offset:8 sc0 sc1
.LBB0_3:
\tbuffer_load_dwordx2 v[8:9], v10, s[12:15], 0 offen sc0 sc1
\ts_waitcnt vmcnt(0)
\tv_cmp_ne_u32_e32 vcc, s2, v9
\ts_cbranch_vccz .LBB0_5
.LBB0_4:
\ts_sleep 1
\tbuffer_load_dwordx2 v[8:9], v10, s[12:15], 0 offen sc0 sc1
\ts_waitcnt vmcnt(0)
\tv_cmp_eq_u32_e32 vcc, s2, v9
\ts_cbranch_vccz .LBB0_4
.LBB0_5:
\ts_endpgm
"""


def test_paths_that_cannot_both_run_keep_their_own_queues() -> None:
    """Each path's queue is kept whole (a set of queues, not one merged queue): the
    poll is behind one store on either path, never both."""
    r = analyze_text(kernel(EXCLUSIVE_PUTS))
    [poll] = r.kernels[0].polls
    first = poll.tries[0]
    assert first.paths == 2 and first.by_class == {"store:mailbox": 1}
    assert len(poll.in_flight) == 1


# workgroup 0 publishes flags[0] (a value at flags[1] first, released by the atomic);
# workgroup 1 reads flags after a relaxed poll, plain, with no buffer_inv
RELAXED_THEN_VALUE = """\
\ts_load_dwordx2 s[2:3], s[0:1], 0x8
\ts_waitcnt lgkmcnt(0)
\ts_cmp_eq_u32 s12, 0
\ts_cbranch_scc1 .LBB0_4
\tv_mov_b32_e32 v0, 0
.LBB0_2:
\tglobal_load_dword v1, v0, s[2:3] sc1
\ts_waitcnt vmcnt(0)
\tv_cmp_ne_u32_e32 vcc, s6, v1
\ts_cbranch_vccnz .LBB0_2
\tglobal_load_dword v1, v0, s[2:3] offset:4
\ts_waitcnt vmcnt(0)
\ts_endpgm
.LBB0_4:
\tv_mov_b32_e32 v0, 0
\tv_mov_b32_e32 v1, 42
\tglobal_store_dword v0, v1, s[2:3] offset:4
\tbuffer_wbl2 sc1
\ts_waitcnt vmcnt(0)
\tglobal_atomic_swap v0, v1, s[2:3]
\ts_endpgm
"""


def test_a_value_read_after_a_relaxed_poll_is_unordered() -> None:
    r = analyze_text(kernel(RELAXED_THEN_VALUE))
    assert [(f.kind, f.line) for f in r.findings] == [("unordered_read", 15)]
    assert "after the poll at line 11" in r.findings[0].message
    # the value store before the release atomic is data, not a flag: no scope finding


def test_an_acquire_invalidate_orders_the_read() -> None:
    text = RELAXED_THEN_VALUE.replace(
        "\tv_cmp_ne_u32_e32 vcc, s6, v1\n", "\tbuffer_inv sc1\n\tv_cmp_ne_u32_e32 vcc, s6, v1\n"
    )
    assert analyze_text(kernel(text)).findings == []


def test_a_poll_hoisted_into_one_scalar_load_is_found() -> None:
    """The loop lost its load (it became one s_load before it): the spin and the read."""
    text = RELAXED_THEN_VALUE.replace(
        """.LBB0_2:
\tglobal_load_dword v1, v0, s[2:3] sc1
\ts_waitcnt vmcnt(0)
\tv_cmp_ne_u32_e32 vcc, s6, v1
\ts_cbranch_vccnz .LBB0_2
\tglobal_load_dword v1, v0, s[2:3] offset:4
""",
        """\ts_load_dword s4, s[2:3], 0x0
\ts_waitcnt lgkmcnt(0)
\ts_cmp_eq_u32 s4, s6
\ts_cbranch_scc1 .LBB0_3
.LBB0_2:
\ts_branch .LBB0_2
.LBB0_3:
""",
    )
    r = analyze_text(kernel(text))
    assert sorted((f.kind, f.line) for f in r.findings) == [
        ("spin_without_load", 15),
        ("unpolled_flag_load", 10),
    ]
