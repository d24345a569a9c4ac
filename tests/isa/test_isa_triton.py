"""`kda-sim isa` on Triton AMD-backend builds (compile-only) of two-program spin kernels,
gfx942 and gfx950 (scripts/isa_triton_fixtures.py). expected.json holds each one's
findings and loop count, read from the assembly:

- ``tl.atomic_add(flag, 0)`` and ``tl.atomic_cas`` spins: the whole workgroup loops, lane
  0 does the atomic (agent scope: ``buffer_wbl2 sc1`` ... ``buffer_inv sc1``) and
  broadcasts it through LDS, with ``s_waitcnt lgkmcnt(0)`` before each ``s_barrier``:
  one loop, no finding;
- triton-lang/triton#11037's work-stealing loop (``idx = tl.atomic_add(counter, 1)``
  until ``idx >= N``): the same broadcast, but on the path from thread 0's
  ``ds_write_b32`` of the new index (line 38) round the outer loop to the ``s_barrier``
  (line 82) that the waves pass before ``ds_read_b32`` (line 83) there is no
  ``s_waitcnt lgkmcnt(0)``: ``lds_write_at_barrier`` on both archs (their ISA is the
  same). A wave may read the old index, leave the loop apart from the others and leave
  them at a barrier that never completes: the reported hang. Two loops (the outer one
  irreducible). The issue's control, the atomic once, waits before its barrier: none;
- ``tl.load(flag, volatile=True)``: the load becomes one ``s_load_dword`` (line 30)
  and the loop an empty spin (``.LBB0_3``, line 41): ``unpolled_flag_load`` and
  ``spin_without_load``;
- a plain ``tl.load`` spin is deleted with its load: nothing is left to see (``unseen``);
- after a relaxed ``atomic_add`` (an agent-scope ``global_load ... sc1``) the value is
  read plain with no ``buffer_inv`` (line 79): ``unordered_read``; after an acquire one
  the read follows ``buffer_inv sc1``: nothing. The producer's value store before its
  release ``atomic_xchg`` is data, not a flag: nothing.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kda_sim.isa import analyze_text
from kda_sim.isa.report import FindingKind

TRITON = Path(__file__).parent / "fixtures" / "triton"
EXPECTED = json.loads((TRITON / "expected.json").read_text())


@pytest.mark.parametrize("name", sorted(EXPECTED["findings"]))
def test_triton_spins_get_their_findings(name: str) -> None:
    r = analyze_text((TRITON / f"{name}.s").read_text(), name)
    got = sorted([str(f.kind), f.line] for f in r.findings)
    assert got == sorted(EXPECTED["findings"][name]), [f.message for f in r.findings]
    assert r.kernels[0].loops == EXPECTED["loops"][name]


def test_the_work_stealing_loop_of_triton_11037_names_its_write_and_read() -> None:
    name = "gfx950/work_steal_loop"
    r = analyze_text((TRITON / f"{name}.s").read_text(), name)
    [f] = r.findings
    assert f.kind is FindingKind.LDS_WRITE_AT_BARRIER and "`s_barrier`" in f.message
    assert "line 38 `ds_write_b32 v2, v0`" in f.message and "line 83" in f.message
