"""``kda-sim check --sequence SPEC``: simulate the sequence and check it; the exit
status (0 safe, 1 a finding fails)."""

from __future__ import annotations

import json
from typing import Any

from kda_sim.checks.findings import Finding, failing
from kda_sim.checks.sequence import check_sequence
from kda_sim.host.report import sequence_json, sequence_text
from kda_sim.host.run import SequenceRun, run_sequence
from kda_sim.host.shortest import shortest
from kda_sim.host.spec_text import parse
from kda_sim.machine.profile import GpuProfile


def sequence_check(
    spec: Any, cfg: Any, prof: GpuProfile, text: str, *, occupancy: int | None
) -> tuple[SequenceRun, list[Finding]]:
    """The sequence ``text`` simulated and checked (the report's input; the app's too).
    Where it fails, each failing finding's ``details["shortest"]`` is the shortest
    sequence of its steps that fails as it does (:mod:`kda_sim.host.shortest`)."""
    steps = parse(text)
    seq = run_sequence(spec, cfg, prof, steps, occupancy=occupancy)
    findings = check_sequence(seq)
    bad = failing(findings)
    if bad:
        cats = {f.category for f in bad}
        least = shortest(spec, cfg, prof, steps, cats, occupancy=occupancy)
        for f in bad:
            f.details["shortest"] = least.to_dict()
    return seq, findings


def check_sequence_command(
    spec: Any, cfg: Any, prof: GpuProfile, text: str, *, occupancy: int | None, as_json: bool
) -> int:
    seq, findings = sequence_check(spec, cfg, prof, text, occupancy=occupancy)
    if as_json:
        print(json.dumps(sequence_json(seq, findings, prof.name), indent=2, default=str))
    else:
        print(sequence_text(seq, findings, prof.name))
    return 1 if failing(findings) else 0
