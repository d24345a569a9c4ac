"""One launch's tags from its programs, for every launch's report (``kda-sim check``):
where its ops do not all carry one tag expression, the CTA whose put or poll computes
another tag than the kernel's is found (:mod:`kda_sim.checks.tags.programs`), in launch
after launch of this configuration (one slot a step, never zeroed: what a plain
``kda-sim check`` runs). A launch whose ops carry one expression, or none, reports
nothing here (``check --tags`` asks about schemes and steps)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from kda_sim.checks.findings import Finding
from kda_sim.checks.tags.footprint import ProgramSteps
from kda_sim.checks.tags.programs import program_findings
from kda_sim.checks.tags.schemes import SlotOnly, StepTag, TagScheme
from kda_sim.kernels.registry import spec_for
from kda_sim.kernels.spec import hook
from kda_sim.protocol.ops import Poll, Publish, Put
from kda_sim.protocol.program import Launch
from kda_sim.protocol.tagexpr import EpochWord, TagExpr
from kda_sim.protocol.tickets import TicketLoop


@dataclass
class LaunchTags:
    reference: TagExpr  # the tag the launch's CTAs should compute
    others: int  # ops that compute another
    findings: list[Finding] = field(default_factory=list)

    def line(self) -> str:
        head = f"  tags, from the programs: {self.others} puts or polls compute another tag than "
        head += self.reference.text()
        n = sum(f.fails for f in self.findings)
        return head + (f"; {n} failing" if n else "; none hangs or passes stale")

    def to_dict(self) -> dict[str, Any]:
        return {
            "reference": self.reference.text(),
            "others": self.others,
            "findings": [f.to_dict() for f in self.findings],
        }


def tag_counts(launch: Launch) -> Counter[TagExpr]:
    """How many puts, flags and polls carry each tag expression (None left out)."""
    out: Counter[TagExpr] = Counter()
    for p in launch.programs:
        for op in p.ops:
            if isinstance(op, Put | Publish | Poll) and op.tag is not None:
                out[op.tag] += 1
            elif isinstance(op, TicketLoop):
                for body in op.bodies:
                    out.update(o.tag for o in body if isinstance(o, Put | Publish | Poll) and o.tag)
    return out


def scheme_of(expr: TagExpr) -> TagScheme | None:
    """The scheme whose tag ``expr`` is (None: an expression no scheme here computes)."""
    if expr.lag or expr.word is not EpochWord.STEP or expr.offset != 1:
        return None
    if not expr.has_epoch:
        return SlotOnly(expr.bits, slot_term=expr.slot)
    return StepTag(expr.bits, expr.epoch_bits, expr.scale, slot_term=expr.slot)


def shipped_tag(cfg: Any) -> TagExpr | None:
    """The kernel's own tag, where its ``tag_model`` hook says (None: it does not)."""
    tm = hook(spec_for(cfg), "tag_model")
    if tm is None:
        return None
    return TagExpr(tm.tag_bits, tm.tag_slots, tm.epoch_bits)


def check_launch_tags(launch: Launch) -> LaunchTags | None:
    """The tags of ``launch`` from its programs; None where its ops carry at most one
    expression. The reference is the kernel's shipped tag where it has one and some op
    carries it, else the expression most ops carry."""
    counts = tag_counts(launch)
    if len(counts) <= 1:
        return None
    ref = shipped_tag(launch.cfg)
    if ref is None or ref not in counts:
        ref = counts.most_common(1)[0][0]
    scheme = scheme_of(ref)
    if scheme is None:
        return None
    out = LaunchTags(ref, sum(n for e, n in counts.items() if e != ref))
    steps = ProgramSteps(ref, lambda _a, _nb: launch, lambda la: np.arange(la.space.total))
    name = spec_for(launch.cfg).label(launch.cfg)
    out.findings = program_findings(steps, scheme, (name,), (0,), zeroed=False)
    return out
