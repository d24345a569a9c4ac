"""Variants of the 2-CTA pingpong example (``kda_sim/kernels/examples/pingpong.py``) for
the generic checks' tests: the producer can hand over flagged data (plain stores, then a
flag through ``Publish``, with or without its drain), and the consumer can stream weights
before its poll or issue a staging load after it. ``ACCEPTING`` is the same kernel with
an ``accepted_waits`` hook that accepts the consumer's poll behind its weights; ``GRID``
is the plain pingpong with ``sweep_axes`` (rounds x nbytes)."""

from __future__ import annotations

from dataclasses import dataclass

from kda_sim.kernels import registry
from kda_sim.kernels.examples import pingpong
from kda_sim.kernels.spec import AcceptedWait, Kernel
from kda_sim.protocol.batches import poll
from kda_sim.protocol.ops import Begin, Compute, End, Load, LoadKind, Publish, Put, Store, Use
from kda_sim.protocol.program import CtaProgram, Launch
from kda_sim.protocol.space import CellSpace

WEIGHT_BYTES = 1 << 20


@dataclass(frozen=True)
class VariantConfig:
    rounds: int = 1
    flagged: bool = False  # hand over DATA[i] flagged by FLAG[i] instead of a VAL pair
    drain: bool = True  # the Publish drains the producer's stores first
    weights_first: bool = False  # the consumer issues weight loads before its poll
    late_staging: bool = False  # the consumer issues a staging load after its poll


@dataclass(frozen=True)
class AcceptingConfig(VariantConfig):
    pass


def regions(cfg: VariantConfig) -> dict[str, int]:
    if cfg.flagged:
        return {"DATA": cfg.rounds, "FLAG": cfg.rounds}
    return {"VAL": cfg.rounds}


def build(cfg: VariantConfig) -> Launch:
    space = CellSpace.from_sizes(regions(cfg))
    producer: list = []
    consumer: list = []
    for i in range(cfg.rounds):
        producer += [Begin("produce"), Compute("pp.produce")]
        if cfg.flagged:
            data, flag = space.gid(0, [i]), space.gid(1, [i])
            producer += [Store("data", 4096, (int(data[0]),)), Publish(1, flag, cfg.drain)]
        else:
            flag = space.gid(0, [i])
            producer += [Put(0, flag)]
        producer += [End("produce")]
        consumer += [Begin("consume")]
        if cfg.weights_first:
            consumer += [Load(f"w{i}", LoadKind.WEIGHT, WEIGHT_BYTES, "weights")]
        consumer += [poll("FLAG" if cfg.flagged else "VAL", flag.reshape(1, 1), width=1)]
        if cfg.flagged:
            consumer += [
                Load(f"d{i}", LoadKind.FLAGGED, 4096, "data", hbm=False, reads=(int(data[0]),)),
                Use((f"d{i}",)),
            ]
        if cfg.late_staging:
            consumer += [Load(f"norm{i}", LoadKind.STAGING, 1 << 16, "norm"), Use((f"norm{i}",))]
        if cfg.weights_first:
            consumer += [Use((f"w{i}",))]
        consumer += [Compute("pp.consume"), End("consume")]
    programs = (
        CtaProgram(0, "producer", (), tuple(producer)),
        CtaProgram(1, "consumer", (), tuple(consumer)),
    )
    return Launch(cfg, space, programs)


@dataclass(frozen=True)
class GridConfig(pingpong.PingPongConfig):
    pass


@dataclass(frozen=True)
class _Accepting(Kernel):
    accepted_waits: tuple[AcceptedWait, ...] = ()


@dataclass(frozen=True)
class _Grid(Kernel):
    sweep_axes: tuple[str, str] = ("rounds", "nbytes")


_COMMON = dict(
    build_fn=build,
    regions_fn=regions,
    roles=("producer", "consumer"),
    stages=("produce", "consume"),
    cost_keys=("pp.produce", "pp.consume"),
    default_costs={"pp.produce": (800.0, 0.0), "pp.consume": (400.0, 0.0)},
)
VARIANTS = registry.register(Kernel(name="pingpong-variants", config_type=VariantConfig, **_COMMON))
ACCEPTING = registry.register(
    _Accepting(
        name="pingpong-accepting",
        config_type=AcceptingConfig,
        accepted_waits=(
            AcceptedWait(
                lambda role, rec: role == "consumer" and rec.label == "VAL",
                "consumers poll VAL with their weights in flight",
                "the producer",
            ),
        ),
        **_COMMON,
    )
)
GRID = registry.register(
    _Grid(
        name="pingpong-grid",
        config_type=GridConfig,
        build_fn=pingpong.build,
        regions_fn=pingpong.regions,
        roles=pingpong.KERNEL.roles,
        stages=pingpong.KERNEL.stages,
        cost_keys=pingpong.KERNEL.cost_keys,
        default_costs=pingpong.KERNEL.default_costs,
    )
)
