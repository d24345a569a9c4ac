"""K1's fault catalogue (its ``mutations`` hook; ``kda-sim check --mutant NAME``): faults
applied to K1's protocol or configuration, each of which the checks must catch with the
right category (the machinery: :mod:`kda_sim.checks.mutations`). Its data-flow faults are
the generic injectors (:mod:`kda_sim.checks.dataflow.faults`) at fixed sites."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from kda_sim.checks.dataflow.faults import FaultKind
from kda_sim.checks.findings import Category
from kda_sim.checks.mutations import (
    Case,
    Mutation,
    TagSetup,
    fault_case,
    in_order,
    role_end,
    stage_span,
    with_ops,
    with_programs,
)
from kda_sim.checks.tags.analysis import Policy
from kda_sim.checks.tags.faults import Side, TagFault, with_tag_fault
from kda_sim.checks.tags.schemes import FrozenEpoch, TagScheme
from kda_sim.kernels.k1 import poll_sites as sites
from kda_sim.kernels.k1.batches import poll
from kda_sim.kernels.k1.config import LaunchConfig
from kda_sim.kernels.k1.constants import GEMV0, HD, NA, TAG_SLOTS, WAVES
from kda_sim.kernels.k1.program import build_launch
from kda_sim.kernels.k1.regions import Region
from kda_sim.kernels.k1.tags import STEP_TAG
from kda_sim.machine.profile import GpuProfile
from kda_sim.protocol.ops import Begin, Load, LoadKind, Op, Publish, Put, Store


def missing_put(cfg: LaunchConfig, prof: GpuProfile) -> Case:
    base = build_launch(cfg)
    p = base.programs[GEMV0]
    k = next(k for k, op in enumerate(p.ops) if isinstance(op, Put))
    return Case(
        cfg, prof, launch=with_programs(base, {GEMV0: with_ops(p, [*p.ops[:k], *p.ops[k + 1 :]])})
    )


def wrong_index_put(cfg: LaunchConfig, prof: GpuProfile) -> Case:
    base = build_launch(cfg)
    p = base.programs[0]
    ops = list(p.ops)
    k = next(k for k, op in enumerate(ops) if isinstance(op, Put) and op.region is Region.MSQ)
    put = ops[k]
    assert isinstance(put, Put)
    ops[k] = Put(Region.MSQ, put.cells + cfg.S, tag=put.tag)  # MSQ[a + 1][t], not MSQ[a][t]
    return Case(cfg, prof, launch=with_programs(base, {0: with_ops(p, ops)}))


def task_behind_own_producer(cfg: LaunchConfig, prof: GpuProfile) -> Case:
    """Task 0 (its k.conv polls PROJ group 0) moved to the front of CTA 56, which puts
    group 0 only after its role work."""
    base = build_launch(cfg)
    src = base.programs[cfg.kda0 % cfg.blocks]
    lo = next(k for k, op in enumerate(src.ops) if isinstance(op, Begin) and op.task == 0)
    hi = stage_span(src.ops, "k.norm", 0)[1]
    task_ops = list(src.ops[lo : hi + 1])
    new_src = with_ops(src, [*src.ops[:lo], *src.ops[hi + 1 :]])
    dst = base.programs[GEMV0] if src.cta != GEMV0 else new_src
    new_dst = with_ops(dst, [*task_ops, *dst.ops])
    changes = {src.cta: new_src, GEMV0: new_dst}
    return Case(cfg, prof, launch=with_programs(base, changes))


def gate_past_attn_range(cfg: LaunchConfig, prof: GpuProfile) -> Case:
    """The gate of token 0 runs on gemv CTA 56 (after its role work) instead of CTA 0."""
    cfg = replace(cfg, gate_local=False)
    base = build_launch(cfg)
    a = base.programs[0]
    lo, hi = stage_span(a.ops, "gate")
    gate = list(a.ops[lo : hi + 1])
    g = base.programs[GEMV0]
    at = role_end(g.ops)
    changes = {
        0: with_ops(a, [*a.ops[:lo], *a.ops[hi + 1 :]]),
        GEMV0: with_ops(g, [*g.ops[:at], *gate, *g.ops[at:]]),
    }
    return Case(cfg, prof, launch=with_programs(base, changes))


def poll_unput_region(cfg: LaunchConfig, prof: GpuProfile) -> Case:
    """gate_local (no gate stage puts WGT) with mix's WGT poll left in."""
    cfg = replace(cfg, gate_local=True)
    base = build_launch(cfg)
    n_wgt = cfg.S * (cfg.NS + 1)
    wgt = poll("WGT", base.space.gid(Region.WGT, np.arange(n_wgt)[:, None]), site=sites.WGT)
    changes = {}
    for a in range(cfg.blocks):
        p = base.programs[a]
        if p.role.value != "attn":
            continue
        k = stage_span(p.ops, "mix")[0]
        changes[a] = with_ops(p, [*p.ops[: k + 1], wgt, *p.ops[k + 1 :]])
    return Case(cfg, prof, launch=with_programs(base, changes))


def publish_without_drain(cfg: LaunchConfig, prof: GpuProfile) -> Case:
    base = build_launch(cfg)
    changes = {}
    for p in base.programs:
        ops = [replace(op, drain=False) if isinstance(op, Publish) else op for op in p.ops]
        if ops != list(p.ops):
            changes[p.cta] = with_ops(p, ops)
    return Case(cfg, prof, launch=with_programs(base, changes))


def store_after_publish(cfg: LaunchConfig, prof: GpuProfile) -> Case:
    base = build_launch(cfg)
    changes = {}
    for p in base.programs:
        ops = list(p.ops)
        ks = [k for k, op in enumerate(ops) if isinstance(op, Store) and op.what == "x"]
        kp = [k for k, op in enumerate(ops) if isinstance(op, Publish)]
        if not ks or not kp:
            continue
        store = ops.pop(ks[0])
        ops.insert(kp[0], store)  # the publish moved up one: the store lands after it
        changes[p.cta] = with_ops(p, ops)
    return Case(cfg, prof, launch=with_programs(base, changes))


def rg1_weights_before_poll(cfg: LaunchConfig, prof: GpuProfile) -> Case:
    prof = in_order(prof)
    base = build_launch(cfg)
    changes = {}
    for p in base.programs:
        if p.role.value != "gemv":
            continue
        ops = list(p.ops)
        k = next(k for k, op in enumerate(ops) if isinstance(op, Load) and op.name == "w.rg1a")
        w = ops.pop(k)
        ops.insert(1, w)  # right after rg0's weights, before the XRDY poll
        changes[p.cta] = with_ops(p, ops)
    return Case(cfg, prof, launch=with_programs(base, changes))


def weights_in_kda_task(cfg: LaunchConfig, prof: GpuProfile) -> Case:
    """Each kda task streams a block of weights in k.stage, before its first poll."""
    prof = in_order(prof)
    base = build_launch(cfg)
    changes = {}
    nbytes = WAVES * 16 * HD * 2 * 8
    for p in base.programs:
        if not p.tasks:
            continue
        ops: list[Op] = []
        for op in p.ops:
            ops.append(op)
            if isinstance(op, Begin) and op.stage == "k.stage":
                ops.append(Load("k.w", LoadKind.WEIGHT, nbytes, "weights in a kda task"))
        changes[p.cta] = with_ops(p, ops)
    return Case(cfg, prof, launch=with_programs(base, changes))


# -- data-flow mutants: the generic injectors (checks/dataflow/faults.py) at fixed sites, each
# a silent fault of one CTA, found statically
def poll_drops_a_cell(cfg: LaunchConfig, prof: GpuProfile) -> Case:
    """gemv CTA 56 polls XRDY of every slice but slice 1, and reads slice 1's x rows."""
    xrdy1 = int(build_launch(cfg).space.gid(Region.XRDY, 1))
    return fault_case(
        cfg, prof, FaultKind.DROP_POLL_CELL, lambda s: s.cta == GEMV0 and s.cell == xrdy1
    )


def put_into_next_region(cfg: LaunchConfig, prof: GpuProfile) -> Case:
    """The last attn CTA puts the last pair of its MSQ one past the region's end."""
    space = build_launch(cfg).space
    lo, n = space.offsets[Region.MSQ], space.sizes[Region.MSQ]
    return fault_case(
        cfg, prof, FaultKind.NEXT_REGION, lambda s: s.cta == NA - 1 and lo <= s.cell < lo + n
    )


def item_on_two_ctas(cfg: LaunchConfig, prof: GpuProfile) -> Case:
    """kda task 0 runs on its CTA and again at the end of the next CTA's program."""
    return fault_case(cfg, prof, FaultKind.DUPLICATE_ITEM, lambda s: s.task == 0)


def put_before_poll(cfg: LaunchConfig, prof: GpuProfile) -> Case:
    """attn CTA 0 puts token 0's gate weights (WGT) before it polls the partials."""
    return fault_case(
        replace(cfg, gate_local=False),
        prof,
        FaultKind.PUT_BEFORE_POLL,
        lambda s: s.cta == 0 and s.stage == "gate",
    )


def permuted_put(cfg: LaunchConfig, prof: GpuProfile) -> Case:
    """kda tasks 1 and 0 (chunks of one head, on two CTAs) each put the other's QK lanes:
    every pair is put once, every poll passes, the gates read swapped data."""
    return fault_case(cfg, prof, FaultKind.PERMUTE, lambda s: s.task == 1 and s.stage == "k.conv")


# -- configuration mutants ---------------------------------------------------------------------
def more_ctas_than_resident(cfg: LaunchConfig, prof: GpuProfile) -> Case:
    """A GPU with one unit an attn CTA, one CTA a unit, kda0 = 0: only the attn CTAs are
    resident, and their kda tasks wait on gemv CTAs that never get a slot."""
    units = NA if NA % prof.xcds == 0 else NA // prof.xcds * prof.xcds
    small = replace(prof, units=units, name=f"{prof.name}-{units}")
    return Case(replace(cfg, kda0=0), small, occupancy=1)


# -- tag mutants ---------------------------------------------------------------------------------
# one CTA's tags wrong in its program (kda_sim.checks.tags.faults): every launch's report
# finds it from the programs (the tags section), naming that CTA
def tag_stale_epoch(cfg: LaunchConfig, prof: GpuProfile) -> Case:
    launch = with_tag_fault(build_launch(cfg), GEMV0, TagFault.STALE_EPOCH, Side.PUT)
    return Case(cfg, prof, launch=launch)


def tag_no_plus_one(cfg: LaunchConfig, prof: GpuProfile) -> Case:
    launch = with_tag_fault(build_launch(cfg), 3, TagFault.NO_PLUS_ONE, Side.POLL)
    return Case(cfg, prof, launch=launch)


def tag_parity(cfg: LaunchConfig, prof: GpuProfile) -> Case:
    launch = with_tag_fault(build_launch(cfg), 0, TagFault.PARITY, Side.PUT)
    return Case(cfg, prof, launch=launch)


def _tags(cfg: LaunchConfig, scheme: TagScheme, nbs: tuple[int, ...]) -> TagSetup:
    return TagSetup(scheme, Policy.NEVER_ZEROED, ((cfg.R, cfg.L),), nbs)


def _two_nb(cfg: LaunchConfig) -> tuple[int, ...]:
    # a slot with a larger nb writes PART pairs the other does not: the pair's last
    # writer and its next reader are then the same slot, one step apart
    return (1, max(2, cfg.nb))


def frozen_epoch(cfg: LaunchConfig, prof: GpuProfile) -> Case:
    return Case(cfg, prof, tags=_tags(cfg, FrozenEpoch(STEP_TAG), _two_nb(cfg)))


def tags_drop_slot(cfg: LaunchConfig, prof: GpuProfile) -> Case:
    return Case(cfg, prof, tags=_tags(cfg, replace(STEP_TAG, slot_term=False), (cfg.nb, cfg.nb)))


def tag_slots_past_int32(cfg: LaunchConfig, prof: GpuProfile) -> Case:
    return Case(cfg, prof, tags=_tags(cfg, replace(STEP_TAG, tag_slots=1 << 10), (cfg.nb,)))


def slot_past_tag_slots(cfg: LaunchConfig, prof: GpuProfile) -> Case:
    return Case(cfg, prof, tags=_tags(cfg, STEP_TAG, (cfg.nb,) * (TAG_SLOTS + 1)))


CATALOGUE: tuple[Mutation, ...] = (
    Mutation(
        "missing-put", Category.DEADLOCK, "gemv CTA 56 never puts its first group", missing_put
    ),
    Mutation(
        "wrong-index-put", Category.DEADLOCK, "attn CTA 0 puts MSQ of slice 1", wrong_index_put
    ),
    Mutation(
        "task-behind-own-producer",
        Category.DEADLOCK,
        "kda task 0 runs on CTA 56 before the role work that puts what it polls",
        task_behind_own_producer,
    ),
    Mutation(
        "gate-past-attn-range",
        Category.DEADLOCK,
        "the gate of token 0 runs on gemv CTA 56 after its XRDY poll",
        gate_past_attn_range,
    ),
    Mutation(
        "poll-unput-region",
        Category.DEADLOCK,
        "gate_local, but mix still polls WGT (no stage puts it)",
        poll_unput_region,
    ),
    Mutation(
        "more-ctas-than-resident",
        Category.DEADLOCK,
        "56 units, one CTA a unit: only the attn CTAs are resident",
        more_ctas_than_resident,
    ),
    Mutation(
        "publish-without-drain",
        Category.VISIBILITY,
        "XRDY put without draining the x stores",
        publish_without_drain,
    ),
    Mutation(
        "store-after-publish",
        Category.VISIBILITY,
        "the x stores issued after the XRDY flag",
        store_after_publish,
    ),
    Mutation(
        "rg1-weights-before-poll",
        Category.ROLE,
        "gemv CTAs issue rg1's weights before polling XRDY",
        rg1_weights_before_poll,
    ),
    Mutation(
        "weights-in-kda-task",
        Category.ROLE,
        "kda tasks stream weights before their first poll",
        weights_in_kda_task,
    ),
    Mutation(
        "poll-drops-a-cell",
        Category.COVERAGE,
        "gemv CTA 56 reads slice 1's x rows without polling XRDY[1]",
        poll_drops_a_cell,
    ),
    Mutation(
        "put-into-next-region",
        Category.BOUNDS,
        "attn CTA 55 puts its last MSQ pair past the region's end, into XRDY",
        put_into_next_region,
    ),
    Mutation(
        "item-on-two-ctas",
        Category.ITEMS,
        "kda task 0 runs on its CTA and again on the next one",
        item_on_two_ctas,
    ),
    Mutation(
        "put-before-poll",
        Category.ORDER,
        "attn CTA 0 puts token 0's WGT before polling its partials",
        put_before_poll,
    ),
    Mutation(
        "permuted-put",
        Category.WRITERS,
        "kda tasks 0 and 1 put each other's QK lanes (each pair once)",
        permuted_put,
    ),
    Mutation(
        "tag-stale-epoch",
        Category.DEADLOCK,
        "gemv CTA 56's puts tag with the previous step's epoch",
        tag_stale_epoch,
    ),
    Mutation(
        "tag-no-plus-one",
        Category.DEADLOCK,
        "attn CTA 3's polls wait for a tag without its + 1",
        tag_no_plus_one,
    ),
    Mutation(
        "tag-parity",
        Category.DEADLOCK,
        "attn CTA 0's puts reduce the epoch % 2, not % 2^22",
        tag_parity,
    ),
    Mutation(
        "frozen-epoch",
        Category.STALE,
        "the epoch is captured in the graph, not bumped on replay",
        frozen_epoch,
    ),
    Mutation("tags-drop-slot", Category.STALE, "the tag has no slot term", tags_drop_slot),
    Mutation(
        "tag-slots-past-int32",
        Category.OVERFLOW,
        "TAG_SLOTS = 1024 with 22 epoch bits: tags past int32",
        tag_slots_past_int32,
    ),
    Mutation(
        "slot-past-tag-slots",
        Category.STALE,
        "257 launches a step with TAG_SLOTS = 256",
        slot_past_tag_slots,
    ),
)

BY_NAME = {m.name: m for m in CATALOGUE}
