"""The measured traces in ``traces/`` (skipped where none is checked in), of every
kernel: they conform to the model, and a K1 one altered on purpose does not."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from kda_sim.compare.conformance import check_conformance
from kda_sim.importers import load_trace, trace_files
from kda_sim.importers.caps import read_inflated

ROOT = Path(__file__).resolve().parents[2]


def measured(kernel: str | None = None) -> list[Path]:
    """The measured traces in ``traces/``; of ``kernel`` only where it is named."""
    out = []
    for p in trace_files(ROOT / "traces"):
        try:
            meta = json.loads(read_inflated(p))["otherData"]["meta"]
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if meta.get("source") == "measured" and kernel in (None, meta.get("kernel", "k1")):
            out.append(p)
    return out


TRACES = measured()
K1_TRACES = measured("k1")  # the stage-order test swaps two of K1's stages


@pytest.mark.skipif(not TRACES, reason="no measured trace in traces/")
@pytest.mark.parametrize("path", TRACES, ids=[p.name for p in TRACES])
def test_measured_trace_conforms(path: Path) -> None:
    tl = load_trace(path)
    r = check_conformance(tl)
    assert r.conforms, r.summary(limit=5)
    assert r.fit.residual_ns == 0.0


@pytest.mark.skipif(not K1_TRACES, reason="no measured K1 trace in traces/")
def test_measured_trace_with_stage_order_altered_is_flagged() -> None:
    tl = copy.deepcopy(load_trace(K1_TRACES[0]))
    c = next(c for c in tl.ctas if sum(s.name.startswith("k.") for s in c.stages) >= 5)
    sp = {s.name: s for s in c.stages}
    conv, gates = sp["k.conv"], sp["k.gates"]
    d1, d2, t0 = conv.dur, gates.dur, conv.start
    gates.start, gates.end = t0, t0 + d2
    conv.start, conv.end = t0 + d2, t0 + d2 + d1
    r = check_conformance(tl)
    assert not r.conforms
    assert any(f.kind == "stage_order" and f.cta == c.cta for f in r.findings)
