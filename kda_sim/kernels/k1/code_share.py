"""The unrolled ticket build's code share: what its code costs beyond the static build's,
carried as that build's own stage costs. Fitted to untraced times (the static and the
ticket build timed alternating in one run), not a mechanism: the model's protocol (the
takes, the order items are taken in) prices the rest of the difference, and nothing in
the model says why the ticket kernel's code is slower (its register allocation: it
spills, docs/whatif/ticket_k1.md, "What a spill costs"). A share fitted for one build
and GPU is that build's: a new build's code has its own.

Three terms, each extra nanoseconds on a stage cost of the build:

* ``gemv_group``: each gemv group (the ``gemv`` cost, both its forms);
* ``kda_item_l1``, ``kda_item_l2``: each kda item at L = 1 and at L >= 2, on its
  ``k.norm`` (the item's last stage, after its last wait, so the time lands on the item's
  end, not inside a wait); apart at L = 1 and L >= 2 as the build's spills are (30 at
  L = 1, 62 to 66 above, in every run of it).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from kda_sim.errors import InvalidInput
from kda_sim.machine.profile import GpuProfile

CODE_SHARE: tuple[str, ...] = ("gemv_group", "kda_item_l1", "kda_item_l2")
GEMV_KEY, ITEM_KEY = "gemv", "k.norm"
L_SWITCH = 1.0  # k.norm's units are L: above 1, the L >= 2 form (cost_above)


def with_code_share(prof: GpuProfile, share: Mapping[str, float]) -> GpuProfile:
    """``prof``'s costs with the code share added (``share``: ns a term of
    :data:`CODE_SHARE`, a term left out is 0)."""
    unknown = sorted(set(share) - set(CODE_SHARE))
    if unknown:
        raise InvalidInput(f"code share terms {unknown}: known {list(CODE_SHARE)}", what="share")
    for key in (GEMV_KEY, ITEM_KEY):
        if key not in prof.costs:
            raise InvalidInput(f"the profile has no {key!r} cost", what="share", where=prof.name)
    g = float(share.get("gemv_group", 0.0))
    x1, x2 = float(share.get("kda_item_l1", 0.0)), float(share.get("kda_item_l2", 0.0))
    costs, above = dict(prof.costs), dict(prof.cost_above)
    a, b = costs[GEMV_KEY]
    costs[GEMV_KEY] = (a + g, b)
    if GEMV_KEY in above:
        units, aa, bb = above[GEMV_KEY]
        above[GEMV_KEY] = (units, aa + g, bb)
    a, b = costs[ITEM_KEY]
    units, aa, bb = above.get(ITEM_KEY, (L_SWITCH, a, b))
    if units != L_SWITCH:
        raise InvalidInput(
            f"{ITEM_KEY} switches form above {units} units, the code share at L = 1 and "
            f"L >= 2 needs {L_SWITCH}",
            what="share",
            where=prof.name,
        )
    costs[ITEM_KEY] = (a + x1, b)
    above[ITEM_KEY] = (units, aa + x2, bb)
    return replace(prof, costs=costs, cost_above=above)
