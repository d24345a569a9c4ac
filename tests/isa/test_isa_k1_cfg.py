"""The committed K1 ISA (docs/isa/): its loops are the ones the program can run."""

from __future__ import annotations

from pathlib import Path

import pytest

from kda_sim.isa import cfg as cfg_mod
from kda_sim.isa.parser import parse

DOCS = Path(__file__).parents[2] / "docs" / "isa"
# nine poll loops and the kda task loop around k.stage .. k.norm
K1_LOOPS = 10
ROTATED = {"mix MSQ", "k.norm ONRM+PROJ", "gate PART"}  # loads in the header, no peeled copy


BUILDS = sorted(p.stem[len("k1_") :] for p in DOCS.glob("k1_*.s"))  # both archs, each variant


def _kernel(arch: str):
    k = parse((DOCS / f"k1_{arch}.s").read_text()).kernels[0]
    return k, cfg_mod.build(k)


@pytest.mark.parametrize("arch", BUILDS)
def test_k1_has_ten_loops(arch: str) -> None:
    _, g = _kernel(arch)
    assert len(g.loops) == K1_LOOPS
    assert not any(lp.irreducible for lp in g.loops)


def test_the_two_backward_branches_of_the_gate_tail_are_no_loops() -> None:
    """The gate role's code is laid out after s_endpgm and ends branching back to the
    attn role's join (``s_cbranch_execnz .LBB0_13; s_branch .LBB0_14``): two branches
    to earlier blocks, neither on a cycle. A layout rule made them the 11th and 12th
    loops."""
    k, g = _kernel("gfx950")
    end = max(i.index for i in k.instrs if i.mnemonic == "s_endpgm")
    tail = [
        (b.id, s)
        for b in g.blocks
        for s in b.succs
        if s < b.id and k.instrs[b.end - 1].index > end and g.blocks[s].start < end
    ]
    names = {i: name for name, i in k.labels.items()}
    assert [names[g.blocks[s].start] for _, s in tail] == [".LBB0_13", ".LBB0_14"]
    for latch, target in tail:
        assert (latch, target) not in g.back_edges
        assert not any(latch in lp.blocks and target in lp.blocks for lp in g.loops)
        reach = {target}
        work = [target]
        while work:
            for s in g.blocks[work.pop()].succs:
                if s not in reach:
                    reach.add(s)
                    work.append(s)
        assert latch not in reach  # no path back from the target: no cycle


@pytest.mark.parametrize("arch", BUILDS)
def test_rotated_poll_loops_are_not_called_peeled(arch: str) -> None:
    from kda_sim.isa import analyze_text
    from kda_sim.isa.presets import K1_ACCEPTED, K1_ARGS

    r = analyze_text((DOCS / f"k1_{arch}.s").read_text(), arg_layout=K1_ARGS, accept=K1_ACCEPTED)
    assert r.findings == []  # no false alarm on any K1 build
    polls = r.kernels[0].polls
    assert len(polls) == 9
    assert {p.label for p in polls if not p.peeled} == ROTATED
    for p in polls:
        if not p.peeled:
            assert p.line >= p.loop_line  # the first try is the loop's own load
