"""The ktrace fixtures compiled now (FlyDSL compile-only, both archs): this FlyDSL's
ktrace code is still recognised, and its ranges name the findings and polls that
tests/isa/fixtures/ktrace/expected.json says."""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType

import pytest

from kda_kernel.flydsl.toolchain import ARCHES, missing
from kda_sim.isa import analyze_text

pytestmark = [pytest.mark.flydsl, pytest.mark.skipif(missing() is not None, reason=str(missing()))]

ROOT = Path(__file__).parents[2]
EXPECTED = json.loads((ROOT / "tests/isa/fixtures/ktrace/expected.json").read_text())


@pytest.mark.parametrize("arch", ARCHES)
def test_the_ktrace_builds_compiled_now_name_their_ranges(
    arch: str, tmp_path: Path, mailbox_script: ModuleType
) -> None:
    mod = mailbox_script
    for v in (v for v in mod.variants() if v.ktrace):
        isa, names = mod.build(v, arch, tmp_path / v.name)
        assert set(names) == {"producer.put", "consumer.poll"}, v.name
        r = analyze_text(isa.read_text(), v.name, arg_layout=mod.ARGS, ktrace_names=names)
        want = EXPECTED["findings"][f"{arch}/{v.name}"]
        got = sorted([str(f.kind), f.ktrace_range] for f in r.findings)
        assert got == sorted([k, rng] for k, _, rng in want), v.name
        labels = sorted(x.label for x in r.kernels[0].ktrace_ranges)
        assert labels == ['"consumer.poll"', '"producer.put"'], v.name
