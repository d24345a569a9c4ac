"""The Tags view's tables: pair classes and their last writers, slot tags, scenarios."""

from __future__ import annotations

import pytest

from kda_sim.app.tag_tables import (
    TagInputs,
    pair_classes,
    parse_nb,
    run_check,
    scenario_figure,
    scenario_table,
    scheme_defaults,
    slot_tags,
)
from kda_sim.checks.tags.analysis import Kind, Policy
from kda_sim.errors import InvalidInput


def _inputs(**kw) -> TagInputs:
    d = scheme_defaults()
    base = dict(
        shapes=("2x2",),
        nb=(8, 8),
        policy=Policy.NEVER_ZEROED,
        scheme="step_tag",
        tag_slots=d.tag_slots,
        epoch_bits=d.epoch_bits,
    )
    return TagInputs(**{**base, **kw})


def test_the_shipped_scheme_is_safe_and_every_class_has_its_last_writer() -> None:
    model, _, v = run_check(_inputs())
    assert v.safe and not v.scenarios
    table = pair_classes(model, Policy.NEVER_ZEROED)
    assert len(table) == model.classes
    assert int(table["pairs"].sum()) == int(model.sizes.sum())
    # two launches a step, each writes the same scratch: the second slot writes last
    written = table[table["2x2: last written by"] != "—"]
    assert set(written["2x2: last written by"]) == {"slot 1"}
    polled = table[table["2x2: polled by"] != "—"]
    finds = polled["before its own launch writes it, a poll finds"]
    assert finds.str.contains(
        "slot 0 sees the previous step's (slot 1 of a 2x2 step)", regex=False
    ).all()
    assert finds.str.contains("slot 1 sees slot 0's pair of this step", regex=False).all()


def test_drop_slot_is_a_same_step_stale_pass_drawn_as_launches() -> None:
    model, scheme, v = run_check(_inputs(faults=("drop-slot",)))
    assert not v.safe and v.shortest is not None
    assert v.shortest.kind is Kind.SAME_STEP
    rows = scenario_table(v, scheme.bits)
    assert len(rows) == len(v.scenarios) and rows.loc[0, "steps apart"] == 0
    fig = scenario_figure(v.shortest, v.nb, model.slots)
    red = [s for s in fig.layout.shapes if s.line.color == "#d62728"]
    assert len(fig.layout.shapes) == model.slots and len(red) == 2  # the writer and the reader


def test_slot_tags_follow_the_formula() -> None:
    model, scheme, _ = run_check(_inputs(nb=(1, 2, 8)))
    t = slot_tags(model, scheme, 5, steps=2)
    assert list(t["tag"]) == [scheme.tag(e, s) for e in (5, 6) for s in range(3)]
    assert list(t["nb"][:3]) == [1, 2, 8]


@pytest.mark.parametrize("text", ["", "a,b", "1,0"])
def test_bad_nb_is_invalid_input(text: str) -> None:
    with pytest.raises(InvalidInput):
        parse_nb(text)


def test_no_shape_is_invalid_input() -> None:
    with pytest.raises(InvalidInput, match="shape"):
        run_check(_inputs(shapes=()))


def test_more_slots_than_tag_slots_is_invalid_input() -> None:
    with pytest.raises(InvalidInput, match=r"nb 8,8,8: 3 launch slots .*TAG_SLOTS = 2"):
        run_check(_inputs(nb=(8, 8, 8), tag_slots=2))


def test_a_frozen_epoch_is_analysed_where_it_is_frozen() -> None:
    zeroed = dict(policy=Policy.ZEROED, tag_slots=1, faults=("frozen-epoch",), nb=(8,))
    assert run_check(_inputs(**zeroed, epoch0=0))[2].safe
    assert not run_check(_inputs(**zeroed, epoch0=-1))[2].safe
    assert not run_check(_inputs(**zeroed))[2].safe  # no epoch given: every value
