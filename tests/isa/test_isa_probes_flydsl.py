"""The probes compiled now (not the committed fixtures), for gfx942 and gfx950: the
analyzer's verdicts hold on what this FlyDSL emits."""

from __future__ import annotations

from pathlib import Path

import pytest

from kda_kernel.flydsl.toolchain import ARCHES, missing
from kda_sim.isa import analyze_path
from kda_sim.isa.presets import PROBE_ARGS
from kda_sim.isa.report import FindingKind

pytestmark = [pytest.mark.flydsl, pytest.mark.skipif(missing() is not None, reason=str(missing()))]


@pytest.mark.parametrize("arch", ARCHES)
def test_compiled_probes_get_their_verdicts(arch: str, tmp_path: Path) -> None:
    from kda_kernel.flydsl.probes import WEIGHT_LOADS, build_probe

    def report(name: str):
        built = build_probe(name, arch, tmp_path / name)
        return analyze_path(built.isa, arg_layout=PROBE_ARGS)

    behind = report("poll_after_weights")
    assert behind.kernels[0].polls[0].by_class == {"weights": WEIGHT_LOADS}
    assert [f.kind for f in behind.findings] == [FindingKind.POLL_BEHIND_WEIGHTS]
    clear = report("poll_clear")
    assert clear.kernels[0].polls[0].in_flight == [] and clear.findings == []
    assert report("publish_drained").kernels[0].publishes[0].drained
    undrained = report("publish_undrained")
    assert not undrained.kernels[0].publishes[0].drained
    assert [f.kind for f in undrained.findings] == [FindingKind.PUBLISH_UNDRAINED]
    deleted = report("poll_deleted")
    assert deleted.kernels[0].polls == []
    assert FindingKind.POLL_MISSING in {f.kind for f in deleted.findings}
