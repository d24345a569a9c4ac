"""LDS writes outstanding at ``s_barrier`` (kda_sim.isa.lds): lgkmcnt waits retire LDS
ops in issue order, paths are kept apart, and a barrier with nothing read after it is
no finding."""

from __future__ import annotations

import pytest

from kda_sim.isa import analyze_text, lds
from kda_sim.isa.cfg import build
from kda_sim.isa.memops import lgkm_wait
from kda_sim.isa.parser import Instr, parse, split_instruction
from kda_sim.isa.report import FindingKind


def kernel_text(*body: str) -> str:
    head = [
        '\t.amdgcn_target "amdgcn-amd-amdhsa-unknown-gfx942"',
        "\t.text",
        "\t.type k,@function",
        "k:",
    ]
    return "\n".join([*head, *(b if b.endswith(":") else f"\t{b}" for b in body), "\ts_endpgm"])


def barriers(*body: str) -> list[lds.UnwaitedBarrier]:
    k = parse(kernel_text(*body)).kernels[0]
    found, approximate = lds.unwaited_barriers(k, build(k))
    assert not approximate
    return found


WRITE, READ = "ds_write_b32 v2, v0", "ds_read_b32 v0, v2"


def test_a_write_not_waited_for_reaches_the_barrier() -> None:
    [u] = barriers(WRITE, "s_barrier", READ, "s_waitcnt lgkmcnt(0)")
    assert (u.barrier, u.writes, u.read) == (1, (0,), 2)


def test_lgkmcnt_0_before_the_barrier_retires_it() -> None:
    assert barriers(WRITE, "s_waitcnt lgkmcnt(0)", "s_barrier", READ) == []


def test_lgkmcnt_n_keeps_the_n_youngest() -> None:
    # the write is older than the one read issued after it: lgkmcnt(1) retires it
    assert barriers(WRITE, "ds_read_b32 v4, v5", "s_waitcnt lgkmcnt(1)", "s_barrier", READ) == []
    [u] = barriers("ds_read_b32 v4, v5", WRITE, "s_waitcnt lgkmcnt(1)", "s_barrier", READ)
    assert u.writes == (1,)


def test_one_path_without_the_wait_is_enough() -> None:
    [u] = barriers(
        "s_cbranch_scc0 .LBB0_2", WRITE, "s_waitcnt lgkmcnt(0)", ".LBB0_2:",
        "s_cbranch_scc1 .LBB0_3", WRITE, ".LBB0_3:", "s_barrier", READ,
    )  # fmt: skip
    assert u.writes == (4,)  # the second write: the first is always waited for


def test_around_a_loop_the_write_of_the_last_pass_reaches_the_barrier() -> None:
    [u] = barriers(".LBB0_1:", "s_barrier", READ, "s_waitcnt lgkmcnt(0)", WRITE,
                   "s_cbranch_scc1 .LBB0_1")  # fmt: skip
    assert u.writes == (3,) and u.read == 1


def test_no_read_after_the_barrier_is_no_finding() -> None:
    assert barriers(READ, WRITE, "s_barrier", "ds_bpermute_b32 v1, v2, v3") == []
    assert barriers(WRITE, "ds_swizzle_b32 v1, v2", "s_barrier", READ) != []


def _ins(text: str) -> Instr:
    mn, ops, mods = split_instruction(text)
    return Instr(0, 1, mn, ops, mods, text)


@pytest.mark.parametrize(
    ("text", "n"),
    [
        ("s_waitcnt lgkmcnt(0)", 0),
        ("s_waitcnt vmcnt(0) lgkmcnt(3)", 3),
        ("s_waitcnt vmcnt(2)", None),
        ("s_waitcnt 0", 0),
        ("s_waitcnt 0xc07f", 0),  # gfx9: lgkmcnt in bits 11:8
        ("s_waitcnt 0x0f70", None),  # lgkmcnt 15: no wait on it
    ],
)
def test_lgkm_wait(text: str, n: int | None) -> None:
    assert lgkm_wait(_ins(text)) == n


def test_the_finding_names_the_barrier_the_write_and_the_read() -> None:
    r = analyze_text(kernel_text(WRITE, "s_barrier", READ, "s_waitcnt lgkmcnt(0)"), "k.s")
    [f] = r.findings
    assert f.kind is FindingKind.LDS_WRITE_AT_BARRIER and f.line == 6
    assert "line 5 `ds_write_b32 v2, v0`" in f.message and "line 7" in f.message


def test_past_the_cap_the_queues_with_writes_are_kept() -> None:
    # the write waited for on one side only, where 8 reads follow (so the queues without
    # the write are the longer ones), then 7 branches that may each add a read: 256
    # possible queues, half of them with the write
    body = ["s_cbranch_scc0 .L0", WRITE, "s_cbranch_scc1 .L0", "s_waitcnt lgkmcnt(0)"]
    body += [f"ds_read_b32 v{n}, v2" for n in range(20, 28)] + [".L0:"]
    for n in range(1, 8):
        body += [f"s_cbranch_scc0 .L{n}", f"ds_read_b32 v{n + 2}, v2", f".L{n}:"]
    k = parse(kernel_text(*body, "s_barrier", READ)).kernels[0]
    found, approximate = lds.unwaited_barriers(k, build(k))
    assert approximate and [u.writes for u in found] == [(1,)]
