"""Tag expressions (:class:`kda_sim.protocol.tagexpr.TagExpr`) evaluated as the device does,
and read under a scheme the check is asked about.

A kernel's programs carry the tag each put writes and each poll waits for. The check may
be asked about another scheme than the one the kernel ships (``--scheme``, ``--tag-slots``
...): an expression equal to the kernel's shipped tag then stands for that scheme's, and
one that differs keeps its difference on top of it (a put that reads the epoch one step
late does so under ``counter64`` too). A difference in the epoch term is refused by name
under a scheme whose tag has no epoch (``layer+1``), as the scheme faults are.
"""

from __future__ import annotations

from dataclasses import fields, replace

from kda_sim.checks.tags.device import remsi, wrap
from kda_sim.errors import InvalidInput
from kda_sim.protocol.tagexpr import EpochWord, TagExpr

# the fields that say how the epoch is read and reduced: a scheme without an epoch term
# has nothing to apply a difference in them to
EPOCH_FIELDS = frozenset({"word", "lag", "epoch_bits"})


def value(expr: TagExpr, epoch: int, slot: int, captured: int) -> int:
    """The tag ``expr`` computes in launch slot ``slot`` when the step counter holds
    ``epoch`` and the graph was captured at ``captured`` (device arithmetic: the epoch
    read wraps at the integer's width, ``%`` is remsi, ``+`` and ``*`` wrap)."""
    word = epoch if expr.word is EpochWord.STEP else captured
    x = wrap(word - expr.lag, expr.bits)
    key = x if expr.epoch_bits is None else remsi(x, 1 << expr.epoch_bits)
    return wrap(key * expr.scale + (slot if expr.slot else 0) + expr.offset, expr.bits)


def differences(expr: TagExpr, reference: TagExpr) -> dict[str, object]:
    """The fields in which ``expr`` differs from ``reference``, with ``expr``'s values."""
    out: dict[str, object] = {}
    for f in fields(TagExpr):
        mine = getattr(expr, f.name)
        if mine != getattr(reference, f.name):
            out[f.name] = mine
    return out


def under(expr: TagExpr | None, shipped: TagExpr, scheme: TagExpr, scheme_name: str) -> TagExpr:
    """``expr`` (a program's, None: not said) read under the scheme whose expression is
    ``scheme``: the scheme's own where ``expr`` is the kernel's ``shipped`` tag or not
    given, else the scheme's with ``expr``'s differences from ``shipped``."""
    if expr is None or expr == shipped:
        return scheme
    diff = differences(expr, shipped)
    if not scheme.has_epoch and EPOCH_FIELDS & set(diff):
        raise InvalidInput(
            f"a program's tag {expr.text()} reads the epoch differently from the kernel's "
            f"{shipped.text()}; --scheme {scheme_name} has no epoch to apply that to "
            f"(its tag is {scheme.text()})",
            what="scheme",
        )
    try:
        return replace(scheme, **diff)  # type: ignore[arg-type]
    except ValueError as e:
        raise InvalidInput(
            f"a program's tag {expr.text()} under --scheme {scheme_name}: {e}", what="scheme"
        ) from e


def repair(wrong: TagExpr, right: TagExpr) -> str:
    """What to change in ``wrong`` to compute ``right``, in a kernel author's words."""
    hints: list[str] = []
    diff = differences(wrong, right)
    if "word" in diff:
        hints.append(
            "read the device epoch counter (bumped inside the graph), not the value "
            "captured with the graph"
            if right.word is EpochWord.STEP
            else f"read the {right.word.value}"
        )
    if "lag" in diff:
        hints.append(
            "read this step's epoch (after its bump), not the previous step's"
            if right.lag == 0
            else f"read the epoch {right.lag} steps back"
        )
    if "epoch_bits" in diff:
        want = "the epoch itself" if right.epoch_bits is None else f"epoch % 2^{right.epoch_bits}"
        hints.append(f"reduce the epoch as {want}, not as {_reduction(wrong)}")
    if "scale" in diff:
        hints.append(f"multiply the epoch term by {right.scale}, not {wrong.scale}")
    if "slot" in diff:
        hints.append("add the launch's slot" if right.slot else "leave the slot out")
    if "offset" in diff:
        hints.append(f"add {right.offset}, not {wrong.offset}")
    if "bits" in diff:
        hints.append(f"compute in int{right.bits}, not int{wrong.bits}")
    return "; ".join(hints)


def _reduction(e: TagExpr) -> str:
    if e.epoch_bits is None:
        return "the epoch itself"
    return "a parity (epoch % 2)" if e.epoch_bits == 1 else f"epoch % 2^{e.epoch_bits}"
