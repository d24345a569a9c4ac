"""The Triton K1's build keys: what a build refuses before anything compiles."""

from __future__ import annotations

from dataclasses import replace

import pytest

from kda_kernel.triton import trace_layout as T
from kda_kernel.triton.ctrl_layout import COUNTER_WORD, CTRL_WORDS
from kda_kernel.triton.defaults import default_config, recommended
from kda_kernel.triton.launch import (
    BACKOFFS_NS,
    LAB_WAITS_NS,
    MAX_NB,
    Build,
    Unsupported,
    Workspace,
    options_only,
    wait_error,
)
from kda_sim.errors import InvalidInput
from kda_sim.kernels.k1.config import LaunchConfig


def test_largest_nb_builds() -> None:
    assert Build.default(4, 4, MAX_NB).validate().nb == MAX_NB


def test_nb_past_the_gate_lanes_is_refused() -> None:
    # nb = 15 passes the protocol's own limits (16 (nb + 1) <= 256 threads) but its
    # nb + 2 weights do not fit the kernel's 16 lanes: such a build gives NaN rows
    with pytest.raises(ValueError, match=r"nb = 15 > 14"):
        Build.default(1, 1, 15).validate()


def test_trace_level_reaches_the_kernel_only_when_traced() -> None:
    assert Build.default(1, 1, 8).constexprs()["TRACE"] == 0
    assert Build.default(1, 1, 8, trace_level=3).constexprs()["TRACE"] == 0
    assert Build.default(1, 1, 8, trace=True).constexprs()["TRACE"] == 1
    assert Build.default(1, 1, 8, trace=True, trace_level=2).constexprs()["TRACE"] == 2


def test_prefetch_mode_and_fma_limit_are_checked() -> None:
    assert Build.default(1, 1, 8, prefetch=3).constexprs()["PREFETCH"] == 3
    assert Build.default(1, 1, 8, prefetch=True).constexprs()["PREFETCH"] == 1  # the old switch
    with pytest.raises(ValueError, match="prefetch = 5"):
        Build.default(1, 1, 8, prefetch=5).validate()
    with pytest.raises(ValueError, match="fma_max_s = 0"):
        Build.default(1, 1, 8, fma_max_s=0).validate()
    with pytest.raises(ValueError, match="prefetch_delay_ns = -1"):
        Build.default(1, 1, 8, prefetch=3, prefetch_delay_ns=-1).validate()


def test_layout_and_back_off_keys_are_checked() -> None:
    b = Build.default(1, 1, 8).validate()  # by default each region on 128 B lines of its own
    assert all(o % 16 == 0 for o in b.offsets().values()) and b.constexprs()["ALIGN"] == 16
    assert b.scratch_words() > Build.default(1, 1, 8, align=1).scratch_words()
    with pytest.raises(ValueError, match="align = 24"):
        Build.default(1, 1, 8, align=24).validate()
    with pytest.raises(ValueError, match="sleep_ns = -1"):
        Build.default(1, 1, 8, sleep_ns=-1).validate()
    # the gate's PART poll spins as shipped; a lab build backs it off (an option, not a variant)
    assert Build.default(1, 1, 8).constexprs()["GATE_SLEEP_NS"] == 0
    gate = Build.default(1, 1, 8, gate_sleep_ns=128).validate()
    assert gate.constexprs()["GATE_SLEEP_NS"] == 128 and gate.cfg == Build.default(1, 1, 8).cfg
    with pytest.raises(ValueError, match="gate_sleep_ns = -2"):
        Build.default(1, 1, 8, gate_sleep_ns=-2).validate()
    late = Build.default(1, 1, 8, gate_delay_ns=4000, gate_stagger_ns=2500).validate()
    ce = late.constexprs()
    assert (ce["GATE_DELAY_NS"], ce["GATE_STAGGER_NS"]) == (4000, 2500)
    assert Build.default(1, 1, 8).constexprs()["GATE_DELAY_NS"] == 0
    with pytest.raises(ValueError, match="gate_stagger_ns = -1"):
        Build.default(1, 1, 8, gate_stagger_ns=-1).validate()
    # k.norm's and the ONRM put's lab waits likewise, and only under the static placement
    norm = Build.default(1, 1, 8, norm_delay_ns=5000, norm_stagger_ns=3000, onrm_put_delay_ns=2000)
    ce = norm.validate().constexprs()
    names = ("NORM_DELAY_NS", "NORM_STAGGER_NS", "ONRM_PUT_DELAY_NS")
    assert tuple(ce[n] for n in names) == (5000, 3000, 2000)
    assert Build.default(1, 1, 8).constexprs()["ONRM_PUT_DELAY_NS"] == 0
    with pytest.raises(ValueError, match="norm_stagger_ns = 20000"):
        Build.default(1, 1, 8, norm_stagger_ns=20000).validate()
    with pytest.raises(ValueError, match="static placement only"):
        Build.default(1, 1, 8, norm_delay_ns=5000).with_(kda_tickets=True).validate()
    # k.recur's token loop rolled: 0 or 1, and only under the static placement
    assert Build.default(1, 4, 8, recur_rolled=1).validate().constexprs()["RECUR_ROLLED"] == 1
    assert Build.default(1, 4, 8).constexprs()["RECUR_ROLLED"] == 0
    with pytest.raises(ValueError, match="recur_rolled = 2: 0 or 1"):
        Build.default(1, 1, 8, recur_rolled=2).validate()
    with pytest.raises(ValueError, match="static placement only"):
        Build.default(1, 1, 8, recur_rolled=1).with_(kda_tickets=True).validate()


@pytest.mark.parametrize("name", [*BACKOFFS_NS, *LAB_WAITS_NS])
def test_a_waits_range_is_the_one_validate_checks(name: str) -> None:
    """``wait_error`` (a lab command's check of a wait it takes as a flag) refuses what
    ``Build.validate`` refuses, saying the same, and passes what it builds."""
    for ns in (-1, 0, LAB_WAITS_NS.get(name, 10**6), LAB_WAITS_NS.get(name, 10**6) + 1):
        why = wait_error(name, ns)
        build = Build.default(1, 1, 8, **{name: ns})
        if why is None:
            build.validate()
        else:
            with pytest.raises(ValueError, match=f"^{name} = {ns}: {why}$"):
                build.validate()
    assert wait_error(name, -1) is not None


def test_stress_and_trace_level_keys_are_checked() -> None:
    assert Build.default(1, 1, 8).constexprs()["JITTER_NS"] == 0  # production: no stagger code
    assert Build.default(1, 1, 8).constexprs()["SLICE_BARRIER"] is True
    assert Build.default(1, 1, 8, slice_barrier=False).constexprs()["SLICE_BARRIER"] is False
    assert Build.default(1, 1, 8, jitter_ns=300).validate().constexprs()["JITTER_NS"] == 300
    with pytest.raises(ValueError, match="jitter_ns = -5"):
        Build.default(1, 1, 8, jitter_ns=-5).validate()
    assert Build.default(1, 1, 8, trace=True, trace_level=4).validate().constexprs()["TRACE"] == 4
    assert Build.default(1, 1, 8, trace_level=4).constexprs()["TRACE"] == 0  # untraced: no record
    with pytest.raises(ValueError, match="trace_level = 5"):
        Build.default(1, 1, 8, trace=True, trace_level=5).validate()


def test_gate_local_is_the_configurations_variant_on_the_same_layout() -> None:
    # the pre-flight, the cell space and the trace's meta all read it from Build.cfg
    b = Build.default(2, 1, 8, gate_local=True).validate()
    assert b.cfg.gate_local and b.constexprs()["GATE_LOCAL"] is True
    assert Build.default(2, 1, 8).constexprs()["GATE_LOCAL"] is False
    assert b.offsets() == Build.default(2, 1, 8).offsets()  # WGT keeps its cells, unwritten


def test_blocks_first_in_the_builds_whose_slice_can_run_by_token() -> None:
    # the token form runs at S < src_min_s (4): some S of every L = 1 and 2 build, no S of
    # an L = 4 build, which keeps the code it had; every R of an L shares one setting, so
    # the builds an L's shapes share stay one compiled kernel
    assert all(Build.default(R, L).constexprs()["BLK_FIRST"] for R in (1, 2, 4) for L in (1, 2))
    assert not any(Build.default(R, 4).constexprs()["BLK_FIRST"] for R in (1, 2, 4))
    assert not Build.default(1, 1, blk_first=False).constexprs()["BLK_FIRST"]
    assert not Build.default(1, 1, src_min_s=1).constexprs()["BLK_FIRST"]


def test_the_mix_runs_by_source_at_every_s_a_build_serves_unless_asked() -> None:
    # TB = 1 only at S = 1; a TB = 2 build serves S >= 2; an L = 4 build never runs the
    # token form, and keeps its code (the threshold src_min_s, as before the switch)
    assert Build.default(1, 1).constexprs()["MIX_MIN_S"] == 1
    assert all(
        Build.default(R, L).constexprs()["MIX_MIN_S"] == 2
        for R in (1, 2, 4)
        for L in (1, 2)
        if R * L > 1
    )
    assert {Build.default(R, 4).constexprs()["MIX_MIN_S"] for R in (1, 2, 4)} == {4}
    assert Build.default(1, 1, mix_min_s=4).constexprs()["MIX_MIN_S"] == 4
    with pytest.raises(ValueError, match="mix_min_s"):
        Build.default(1, 1, mix_min_s=0).validate()


def test_in_nw_is_asked_first_where_the_slice_runs_by_token_unless_asked() -> None:
    # the recommended configuration: the L = 1 and 2 builds ask for in_nw with the slice's
    # loads; L = 4 keeps its code
    assert all(Build.default(R, L).constexprs()["NW_FIRST"] for R in (1, 2, 4) for L in (1, 2))
    assert not any(Build.default(R, 4).constexprs()["NW_FIRST"] for R in (1, 2, 4))
    assert Build.default(1, 4, nw_first=True).constexprs()["NW_FIRST"]
    assert not Build.default(1, 1, nw_first=False).constexprs()["NW_FIRST"]
    # a slice by source at every S: the seed's order, as before the variant
    assert not Build.default(1, 1, src_min_s=1).constexprs()["NW_FIRST"]


def test_the_kernel_runs_what_the_configuration_says() -> None:
    # the constexprs are cfg's variants, never a choice of the build's own
    for nw in (False, True):
        for L in (1, 4):
            cfg = LaunchConfig(1, L, nw_first=nw, onw_first=True)
            b = Build(cfg).validate()
            assert b.cfg is cfg and b.constexprs()["NW_FIRST"] is nw
    assert default_config(1, 2) == LaunchConfig(1, 2, nw_first=True, onw_first=True)
    assert recommended(LaunchConfig(2, 4, kda0=56, gate_local=True)) == LaunchConfig(
        2, 4, kda0=56, gate_local=True, nw_first=False, onw_first=True
    )


@pytest.mark.parametrize(
    ("cfg", "field"),
    [
        (LaunchConfig(1, 1), "onw_first"),
        (LaunchConfig(1, 1, blocks=300, onw_first=True), "blocks"),
        (LaunchConfig(1, 1, onw_first=True, gemv_tickets=True), "gemv_tickets"),
    ],
)
def test_a_configuration_the_kernel_cannot_build_is_refused_naming_the_field(
    cfg: LaunchConfig, field: str
) -> None:
    with pytest.raises(Unsupported, match=field) as e:
        Build(cfg).validate()
    assert e.value.what == field and isinstance(e.value, InvalidInput)


def test_a_dict_splits_into_configuration_and_options() -> None:
    b = Build.default(2, 1, 4, kda0=56, trace=True, nw_first=False, gate_local=True)
    assert b.cfg == LaunchConfig(2, 1, 4, 56, True, nw_first=False, onw_first=True)
    assert b.trace and b.with_(nb=8, trace=False) == Build(replace(b.cfg, nb=8))
    with pytest.raises(TypeError, match="nw_frist"):
        Build.default(1, 1, nw_frist=True)
    assert options_only({"trace": True}) == {"trace": True}
    with pytest.raises(Unsupported, match="gate_local"):
        options_only({"gate_local": True})


def test_msq_poll_columns_hold_every_s_of_the_build_and_no_more() -> None:
    # rmax 4: the largest S an L = 1, 2, 4 build serves is 4, 8, 16
    assert [Build.default(1, L).constexprs()["MSQ_SP"] for L in (1, 2, 4)] == [4, 8, 16]
    assert Build.default(3, 1, rmax=3).constexprs()["MSQ_SP"] == 4
    assert Build.default(1, 1, rmax=1).constexprs()["MSQ_SP"] == 1


def test_kda_tickets_is_built_with_its_own_record_and_the_static_build_is_not_changed() -> None:
    static = Build.default(4, 2, trace=True)
    tickets = Build.default(4, 2, trace=True, kda_tickets=True).validate()
    assert static.constexprs()["KDA_TICKETS"] is False
    assert tickets.constexprs()["KDA_TICKETS"] is True
    assert static.constexprs()["NEV"] == T.record_words(4) == 64
    assert tickets.constexprs()["NEV"] == T.record_words(4, tickets=True) == 256
    assert T.EV_NTAKE < 256 and T.EV_TAKE0 == T.EV_TASK0 + T.TASK_STRIDE * T.TICKET_TASK_SLOTS


def test_the_ticket_counter_has_a_line_of_its_own_zeroed_once() -> None:
    b = Build.default(1, 1, kda_tickets=True)
    ws = Workspace.create([b], "cpu", clear=False)
    ctrl = ws.epoch.untyped_storage()
    assert ws.counter.untyped_storage().data_ptr() == ctrl.data_ptr()
    off = ws.counter.data_ptr() - ws.epoch.data_ptr()
    assert off == COUNTER_WORD * 4 and off % 128 == 0  # the epoch's line is another
    assert int(ws.counter.item()) == 0 and len(ctrl) == CTRL_WORDS * 4


def test_the_probes_are_lab_options_each_on_its_own_build() -> None:
    # Build.probe: not a LaunchConfig field (the configuration and the model know nothing
    # of it); off, the kernel gets both flags off and the record it had
    take = Build.default(4, 2, trace=True, probe="take").validate()
    item = Build.default(4, 2, kda_tickets=True, ticket_unroll=3, probe="static_item").validate()
    assert take.cfg == Build.default(4, 2).cfg and options_only({"probe": "take"})
    cx, ci = take.constexprs(), item.constexprs()
    assert (cx["PROBE_TAKE"], cx["PROBE_STATIC_ITEM"], cx["KDA_TICKETS"]) == (True, False, False)
    assert (ci["PROBE_TAKE"], ci["PROBE_STATIC_ITEM"], ci["KDA_TICKETS"]) == (False, True, True)
    assert cx["NEV"] == T.record_words(4, tickets=True)  # the takes' slots
    assert take.takes and item.takes and not Build.default(4, 2).takes
    plain = Build.default(4, 2, trace=True).constexprs()
    assert not plain["PROBE_TAKE"] and not plain["PROBE_STATIC_ITEM"] and plain["NEV"] == 64
    ws = Workspace.create([Build.default(1, 1), take], "cpu")
    assert ws.trace.shape[1] == T.record_words(4, tickets=True)


@pytest.mark.parametrize(
    ("fields", "match"),
    [
        ({"probe": "take", "kda_tickets": True}, "static build"),
        ({"probe": "static_item"}, "kda_tickets build"),
        ({"probe": "tkae"}, "one of"),
    ],
)
def test_a_probe_on_the_wrong_build_is_refused_naming_it(fields: dict, match: str) -> None:
    with pytest.raises(Unsupported, match=match) as e:
        Build.default(1, 1, **fields).validate()
    assert e.value.what == "probe"
