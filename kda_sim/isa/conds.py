"""What a path knows from the scalar branches it took.

Kernels that give workgroups roles test the same SGPR twice (``s_cmp_eq_u32 s2, 0``
before the put, ``s_cmp_lg_u32 s2, 0`` before the poll): the control-flow graph has
a path through both the put and the poll, but no workgroup runs it. A path carries
the outcomes of the ``s_cmp`` tests it branched on (while their registers are not
written again), and an edge whose test contradicts them is not taken. Only tests
that another branch repeats on the same registers are remembered, so paths split
only where that can prune one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kda_sim.isa.parser import Instr

# (relation, type, lhs, rhs) of an s_cmp, relation one of eq / lt / gt: lg, ge, le are
# their negations, kept as the same test with the opposite outcome
Test = tuple[str, str, str, str]
Fact = tuple[Test, bool]
Facts = frozenset[Fact]

_CMP = re.compile(r"^s_cmp_(eq|lg|lt|le|gt|ge)_([iu](?:32|64))$")
_CANON = {
    "eq": ("eq", True),
    "lg": ("eq", False),
    "lt": ("lt", True),
    "ge": ("lt", False),
    "gt": ("gt", True),
    "le": ("gt", False),
}
_SGPR = re.compile(r"^s(?:(\d+)|\[(\d+):(\d+)\])$")
_LITERAL = re.compile(r"^-?(0x[0-9a-fA-F]+|\d+)$")
# scalar instructions that leave SCC alone: the branch's test may sit above them
_KEEPS_SCC = (
    "s_mov",
    "s_movk",
    "s_cmov",
    "s_cselect",
    "s_waitcnt",
    "s_nop",
    "s_sleep",
    "s_load",
    "s_buffer_load",
    "s_store",
    "s_barrier",
    "s_setprio",
    "s_getpc",
    "s_dcache",
    "s_memtime",
    "s_memrealtime",
    "s_sendmsg",
)
# no register destination: compares, control, waits; operand 0 of a store is its data
_NO_DEST = ("s_cmp", "s_bitcmp", "s_branch", "s_cbranch", "s_waitcnt", "s_sleep", "s_nop")
_STORES = ("_store", "ds_write")
_CALLS = ("s_swappc", "s_setpc", "s_call")
# VALU ops with a second (carry / scale) SGPR destination after the first
_TWO_DESTS = ("_co_", "div_scale", "mad_u64", "mad_i64")


def sgprs(operand: str) -> frozenset[int] | None:
    """SGPR numbers ``operand`` names (``s2``, ``s[4:7]``), else None."""
    m = _SGPR.match(operand)
    if not m:
        return None
    if m.group(1) is not None:
        return frozenset({int(m.group(1))})
    return frozenset(range(int(m.group(2)), int(m.group(3)) + 1))


def _test_of(ins: Instr) -> tuple[Test, bool] | None:
    """The canonical test an ``s_cmp`` makes, and whether SCC = 1 means it holds."""
    m = _CMP.match(ins.mnemonic)
    if not m or len(ins.operands) < 2:
        return None
    a, b = ins.operands[0], ins.operands[1]
    if not all(sgprs(x) is not None or _LITERAL.match(x) for x in (a, b)):
        return None  # vcc, m0, exec...: not followed
    rel, holds = _CANON[m.group(1)]
    return (rel, m.group(2), a, b), holds


def branch_test(instrs: list[Instr], start: int, end: int) -> tuple[Test, bool] | None:
    """For a block ``[start, end)`` ending in ``s_cbranch_scc0/1``: the test that set
    SCC in this block and the test's value on the *taken* edge; None when SCC comes
    from anything but an ``s_cmp`` we read (or from another block)."""
    last = instrs[end - 1]
    if last.mnemonic not in ("s_cbranch_scc0", "s_cbranch_scc1"):
        return None
    scc_taken = last.mnemonic == "s_cbranch_scc1"
    for i in range(end - 2, start - 1, -1):
        ins = instrs[i]
        if not ins.mnemonic.startswith("s_") or ins.mnemonic.startswith(_KEEPS_SCC):
            continue
        found = _test_of(ins)
        if found is None:
            return None
        test, holds = found
        return test, holds == scc_taken
    return None


def tested_registers(test: Test) -> frozenset[int]:
    return frozenset().union(*(sgprs(x) or frozenset() for x in test[2:]))


def written(ins: Instr) -> frozenset[int] | None:
    """SGPRs ``ins`` may write (conservative); None: any (a call)."""
    mn = ins.mnemonic
    if mn.startswith(_CALLS):
        return None
    if mn.startswith(_NO_DEST) or any(s in mn for s in _STORES) or not ins.operands:
        return frozenset()
    dests = [ins.operands[0]]
    if any(s in mn for s in _TWO_DESTS) and len(ins.operands) > 1:
        dests.append(ins.operands[1])
    return frozenset().union(*(sgprs(d) or frozenset() for d in dests))


def _same(x: str, y: str) -> bool:
    if x == y:
        return True
    return bool(_LITERAL.match(x) and _LITERAL.match(y)) and int(x, 0) == int(y, 0)


def contradicts(facts: Facts, test: Test, value: bool) -> bool:
    """Whether ``test`` having ``value`` is impossible given ``facts``: the same test
    with the other outcome, or ``a == c1`` and ``a == c2`` for two literals c1 != c2."""
    rel, typ, a, b = test
    for (frel, ftyp, fa, fb), fval in facts:
        if (frel, ftyp, fa) != (rel, typ, a):
            continue
        if _same(fb, b):
            if fval != value:
                return True
        elif rel == "eq" and fval and value and _LITERAL.match(fb) and _LITERAL.match(b):
            return True
    return False


def branches(instrs: list[Instr], blocks: list[tuple[int, int, int | None]]) -> Branches:
    """The tests of the conditional branches ending ``blocks`` (``(start, end, taken
    block)``), kept where another branch tests the same register: a test made once
    can prune no path, and remembering it would only split paths."""
    found: dict[int, tuple[Test, bool, int]] = {}
    for b, (start, end, target) in enumerate(blocks):
        if target is None:
            continue
        t = branch_test(instrs, start, end)
        if t is not None:
            found[b] = (t[0], t[1], target)
    tested: dict[str, int] = {}
    for test, _, _ in found.values():
        tested[test[2]] = tested.get(test[2], 0) + 1
    return Branches({b: e for b, e in found.items() if tested[e[0][2]] > 1})


@dataclass(frozen=True)
class Branches:
    """Per block, the test its conditional branch makes (tracked ones only)."""

    tests: dict[int, tuple[Test, bool, int]]  # block -> (test, value when taken, target)

    def follow(self, facts: Facts, block: int, succ: int) -> Facts | None:
        """The facts on edge ``block -> succ``, or None where they contradict."""
        entry = self.tests.get(block)
        if entry is None:
            return facts
        test, taken_value, target = entry
        value = taken_value if succ == target else not taken_value
        if contradicts(facts, test, value):
            return None
        return facts | {(test, value)}


def forget(facts: Facts, regs: frozenset[int] | None) -> Facts:
    """``facts`` without the tests on ``regs`` (what an instruction writes, see
    :func:`written`; None: all of them)."""
    if not facts or (regs is not None and not regs):
        return facts
    if regs is None:
        return frozenset()
    return frozenset(f for f in facts if not (tested_registers(f[0]) & regs))


def kill(facts: Facts, ins: Instr) -> Facts:
    """``facts`` without the tests whose registers ``ins`` writes."""
    return forget(facts, written(ins))
