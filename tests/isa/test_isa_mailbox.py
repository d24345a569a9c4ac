"""`kda-sim isa` on the mailbox corpus: FlyDSL builds (compile-only) of two-workgroup
mailbox kernels (scripts/isa_mailbox_fixtures.py), gfx942 and gfx950, across poll modes
(buffer load with each cache-bit set, relaxed / acquire atomics at agent or workgroup
scope), sleep on and off, the put's bits, and weights before the poll. No markers.

expected.json holds each fixture's findings (kind, line) and loop count, written by
reading the assembly:

- sleep off, buffer poll (any bits): LLVM deletes the loop and the tag load; the value
  is read once (line 33) with no wait: ``unpolled_flag_load``, and no loop;
- atomic polls stay loops with or without sleep; an agent-scope atomic load is
  ``global_load ... sc1``, a workgroup-scope one ``sc0``: two ``scope_below_agent``
  (the peeled first try and the retry), as are a buffer poll with ``sc0`` or no bits;
- LLVM hoists a buffer poll's first try above the three unrelated loads and waits for
  it with ``vmcnt(3)``; the retry in the loop issues behind them: with weights (nt) the
  finding is at the retry's ``s_waitcnt vmcnt(0)`` (line 37);
- every kernel has a cold block after ``s_endpgm`` that branches back
  (``s_cbranch_scc0 .LBB0_9`` ... ``s_branch``): no loop;
- a put with ``sc0`` only is a ``scope_below_agent`` store (line 75);
- after a relaxed (monotonic) poll the value is read with a plain ``global_load_dword``
  (line 38), or, sleep off, through the scalar cache (``s_load_dword s0, s[4:5], 0x0``,
  line 32 / 33): no ``buffer_inv`` orders it after the poll, so ``unordered_read``;
  after an acquire poll the read follows ``buffer_inv sc1``: nothing.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kda_sim.isa import analyze_text
from kda_sim.isa.report import FindingKind

MAILBOX = Path(__file__).parent / "fixtures" / "mailbox"
EXPECTED = json.loads((MAILBOX / "expected.json").read_text())
ARGS = (
    ("x", "staging"),
    ("w", "weights"),
    ("mb", "mailbox"),
    ("out", "staging"),
    ("tag", "scalar"),
)


def test_the_corpus_is_at_least_thirty_kernels_over_both_archs() -> None:
    files = sorted(MAILBOX.glob("*/*.s"))
    assert len(files) >= 30 and {f.parent.name for f in files} == {"gfx942", "gfx950"}
    assert {f"{f.parent.name}/{f.stem}" for f in files} == set(EXPECTED["findings"])


@pytest.mark.parametrize("name", sorted(EXPECTED["findings"]))
def test_no_false_alarm_and_no_miss(name: str) -> None:
    r = analyze_text((MAILBOX / f"{name}.s").read_text(), name, arg_layout=ARGS)
    got = sorted([str(f.kind), f.line] for f in r.findings)
    assert got == sorted(EXPECTED["findings"][name]), [f.message for f in r.findings]
    assert r.kernels[0].loops == EXPECTED["loops"][name]


def test_the_weights_finding_names_the_retry_and_its_wait() -> None:
    name = "gfx950/buffer_sc0_sc1_sleep_weights"
    r = analyze_text((MAILBOX / f"{name}.s").read_text(), name, arg_layout=ARGS)
    [f] = r.findings
    assert f.kind is FindingKind.POLL_BEHIND_WEIGHTS
    assert "retry" in f.message and "`s_waitcnt vmcnt(0)`" in f.message
    first, retry = r.kernels[0].polls[0].tries
    assert first.wait == "s_waitcnt vmcnt(3)" and first.by_class == {}
    assert retry.wait_line == f.line and retry.by_class == {"weights": 3}


def test_a_deleted_poll_exits_1(capsys: pytest.CaptureFixture[str]) -> None:
    from kda_sim.cli import main

    rc = main(["isa", str(MAILBOX / "gfx942" / "buffer_sc0_sc1_nosleep.s")])
    assert rc == 1 and "unpolled_flag_load" in capsys.readouterr().out
