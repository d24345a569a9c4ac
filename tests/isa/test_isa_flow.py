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
