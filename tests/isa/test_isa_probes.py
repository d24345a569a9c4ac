"""`kda-sim isa` on the committed probe fixtures (FlyDSL builds of kernel/flydsl/probes.py,
refreshed by scripts/isa_fixtures.py): runs without FlyDSL."""

from __future__ import annotations

from pathlib import Path

import pytest

from kda_sim.isa import analyze_text
from kda_sim.isa.presets import PROBE_ARGS
from kda_sim.isa.report import FindingKind, IsaReport

FIXTURES = Path(__file__).parent / "fixtures"
ARCHES = ("gfx942", "gfx950")
WEIGHT_LOADS = 3  # kernel/flydsl/probes.py issues three dwordx4 weight loads before its poll


def analyze(
    arch: str, probe: str, text: str | None = None, accept: tuple[str, ...] = ()
) -> IsaReport:
    text = text if text is not None else (FIXTURES / arch / f"{probe}.s").read_text()
    return analyze_text(text, probe, arg_layout=PROBE_ARGS, accept=accept)


def kinds(report: IsaReport) -> list[FindingKind]:
    return sorted(f.kind for f in report.findings)


@pytest.mark.parametrize("arch", ARCHES)
def test_poll_after_weights_counts_every_weight_load(arch: str) -> None:
    r = analyze(arch, "poll_after_weights")
    assert r.arch == arch
    [poll] = r.kernels[0].polls
    assert poll.label == "probe MB"
    assert poll.by_class == {"weights": WEIGHT_LOADS}
    assert poll.bytes_by_class == {"weights": 16 * WEIGHT_LOADS}
    assert [f.load_class for f in poll.in_flight] == ["weights"] * WEIGHT_LOADS
    lines = [f.line for f in poll.in_flight]
    assert lines == sorted(lines) and poll.line > lines[-1]  # oldest first, all before the poll
    assert all("w (" in f.source for f in poll.in_flight)  # traced back to kernel argument w
    assert kinds(r) == [FindingKind.POLL_BEHIND_WEIGHTS]


@pytest.mark.parametrize("arch", ARCHES)
def test_an_accepted_poll_is_reported_but_not_a_finding(arch: str) -> None:
    r = analyze(arch, "poll_after_weights", accept=("probe MB",))
    [poll] = r.kernels[0].polls
    assert poll.accepted and poll.by_class["weights"] == WEIGHT_LOADS
    assert r.findings == []


@pytest.mark.parametrize("arch", ARCHES)
def test_a_drain_before_the_poll_clears_it(arch: str) -> None:
    text = (FIXTURES / arch / "poll_after_weights.s").read_text()
    drained = text.replace(
        ";;#ASMSTART\n\t; kda-sim: poll", "s_waitcnt vmcnt(0)\n\t;;#ASMSTART\n\t; kda-sim: poll", 1
    )
    assert drained != text
    r = analyze(arch, "poll_after_weights", text=drained)
    assert r.kernels[0].polls[0].in_flight == []
    assert r.findings == []


@pytest.mark.parametrize("arch", ARCHES)
def test_vmcnt_n_keeps_the_n_youngest(arch: str) -> None:
    text = (FIXTURES / arch / "poll_after_weights.s").read_text()
    partial = text.replace(
        ";;#ASMSTART\n\t; kda-sim: poll", "s_waitcnt vmcnt(1)\n\t;;#ASMSTART\n\t; kda-sim: poll", 1
    )
    [poll] = analyze(arch, "poll_after_weights", text=partial).kernels[0].polls
    assert poll.by_class == {"weights": 1}


@pytest.mark.parametrize("arch", ARCHES)
def test_a_poll_with_nothing_outstanding_is_not_reported(arch: str) -> None:
    r = analyze(arch, "poll_clear")
    [poll] = r.kernels[0].polls
    assert poll.pairs == 2 and poll.sleeps and poll.coherent
    assert poll.in_flight == [] and poll.by_class == {}
    assert r.findings == []


@pytest.mark.parametrize("arch", ARCHES)
def test_publish_with_its_drain(arch: str) -> None:
    r = analyze(arch, "publish_drained")
    [pub] = r.kernels[0].publishes
    assert pub.drained and pub.barrier_line > 0 and pub.barrier_line < pub.line
    assert pub.stores_at_barrier == [] and r.findings == []


@pytest.mark.parametrize("arch", ARCHES)
def test_publish_without_its_drain(arch: str) -> None:
    r = analyze(arch, "publish_undrained")
    [pub] = r.kernels[0].publishes
    assert not pub.drained and pub.barrier_line > 0
    [store] = pub.stores_at_barrier
    assert store.kind == "store" and store.load_class == "staging" and store.nbytes == 16
    assert kinds(r) == [FindingKind.PUBLISH_UNDRAINED]


@pytest.mark.parametrize("arch", ARCHES)
def test_a_deleted_poll_loop_is_reported_missing(arch: str) -> None:
    r = analyze(arch, "poll_deleted")
    assert r.kernels[0].polls == []
    assert kinds(r) == [FindingKind.POLL_MISSING, FindingKind.SPIN_WITHOUT_LOAD]
    missing = next(f for f in r.findings if f.kind is FindingKind.POLL_MISSING)
    assert "probe MB" in missing.message


def test_fixtures_are_the_targets_they_claim() -> None:
    for arch in ARCHES:
        for f in (FIXTURES / arch).glob("*.s"):
            assert f'amdgcn-amd-amdhsa-unknown-{arch}"' in f.read_text(), f
