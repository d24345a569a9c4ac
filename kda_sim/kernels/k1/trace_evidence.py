"""What a K1 trace records of the configuration fields its CTA and stage records do not:
its header's ``nb`` against the cell counts of its attn CTAs' polls.

``nb`` sets the AttnRes blocks (NS = nb + 1), and with them the pairs the ``PART`` poll
(the gate's partial sums, ``2 NS`` a token) and the ``WGT`` poll (the mix weights) wait
for: a trace records each poll's ``n_cells``, so a trace relabelled to another ``nb``
has PART and WGT counts its header's launch does not poll. The other polls' counts do
not depend on ``nb`` and are left to the trace's producer (the measured traces count
the gates' PROJ poll by its ``fa`` pairs only). A trace that counts no cells (a FlyDSL
ktrace records 0) carries no evidence of ``nb`` either.

``nw_first`` and ``onw_first`` move a weight load earlier in a program; a trace records
no loads (only stages, polls and puts), so it carries no evidence of either: a header
that relabels them is taken as it says.
"""

from __future__ import annotations

from typing import Any

from kda_sim.errors import TraceFormatError

NB_POLLS: tuple[str, ...] = ("PART", "WGT")  # the polls whose cells scale with NS = nb + 1


def check_trace(cfg: Any, tl: Any, programs: tuple[Any, ...], where: str) -> None:
    """Refuse ``tl`` when a CTA recorded a PART or WGT poll of another cell count than
    ``cfg``'s launch polls (its header's ``nb`` is not the run's), naming ``nb``."""
    from kda_sim.protocol.ops import Poll

    for c, prog in zip(tl.ctas, programs, strict=True):
        if not c.polls:
            continue
        for label in NB_POLLS:
            got = [p.n_cells for p in c.polls if p.label == label]
            want = [len(op.cells) for op in prog.ops if isinstance(op, Poll) and op.label == label]
            if not got or 0 in got:  # 0: a format that counts no cells (FlyDSL ktrace)
                continue
            if got != want[: len(got)]:
                raise TraceFormatError(
                    f"CTA {c.cta}'s {label} polls recorded {got} cells, but the header's "
                    f"nb = {cfg.nb} launch polls {want}: the trace is not of nb = {cfg.nb}",
                    what="nb",
                    where=where,
                )
