"""What the protocol model says a kernel's CTA does, in the terms the ISA gives back:
(stage, region, kind) of every put / poll / publish, and which polls the model
itself puts behind weight loads (the ones the design accepts). ``cfg`` is any
registered kernel's configuration."""

from __future__ import annotations

from typing import Any

from kda_sim.kernels.registry import spec_for
from kda_sim.protocol.ops import Begin, End, Load, LoadKind, Poll, Publish, Put, Use

StageOps = dict[str, list[tuple[str, str]]]  # stage -> [(region, kind)] in program order


def _note(seq: list[tuple[str, str]], item: tuple[str, str]) -> None:
    # a site repeated back to back is one site (as the kernel's record keeps it)
    if not seq or seq[-1] != item:
        seq.append(item)


def stage_ops(cfg: Any) -> StageOps:
    """Each stage's put / poll / publish sequence, from the first CTA that runs it."""
    out: StageOps = {}
    for prog in spec_for(cfg).build(cfg).programs:
        stage = ""
        seen: StageOps = {}
        for op in prog.ops:
            if isinstance(op, Begin):
                stage = op.stage
                seen.setdefault(stage, [])
            elif isinstance(op, End):
                stage = ""
            elif isinstance(op, Put):
                _note(seen[stage], (op.region.name, "put"))
            elif isinstance(op, Poll):
                _note(seen[stage], (op.label, "poll"))
            elif isinstance(op, Publish):
                _note(seen[stage], (op.region.name, "publish"))
        for name, seq in seen.items():
            out.setdefault(name, seq)
    return out


def polls_behind_weights(cfg: Any) -> set[str]:
    """Poll labels ("stage region") that the model issues with weight loads in flight."""
    labels: set[str] = set()
    for prog in spec_for(cfg).build(cfg).programs:
        stage = ""
        pending: set[str] = set()
        for op in prog.ops:
            if isinstance(op, Begin):
                stage = op.stage
            elif isinstance(op, Load) and op.kind is LoadKind.WEIGHT:
                pending.add(op.name)
            elif isinstance(op, Use):
                pending -= set(op.names)
            elif isinstance(op, Poll) and pending:
                labels.add(f"{stage} {op.label}")
    return labels
