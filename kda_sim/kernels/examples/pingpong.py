"""Two CTAs and one hand-off: CTA 0 loads its input, computes a value and puts it with
its tag into the mailbox ``VAL``; CTA 1 polls that (value, tag) pair until the tag is
this launch's, then computes with the value. ``rounds`` repeats the hand-off, one cell
a round.

It finishes whenever the producer gets a slot: on a GPU with a single slot where the
consumer is dispatched first, the consumer spins forever and the producer never runs.
"""

from __future__ import annotations

from dataclasses import dataclass

from kda_sim.errors import InvalidInput
from kda_sim.kernels.spec import Kernel
from kda_sim.protocol.batches import poll
from kda_sim.protocol.ops import Begin, Compute, End, Load, LoadKind, Put, Use
from kda_sim.protocol.program import CtaProgram, Launch
from kda_sim.protocol.space import CellSpace


@dataclass(frozen=True)
class PingPongConfig:
    rounds: int = 1  # values handed over, one mailbox cell each
    nbytes: int = 1 << 16  # bytes the producer loads a round

    def validate(self) -> PingPongConfig:
        if self.rounds < 1:
            raise InvalidInput(f"rounds = {self.rounds}: at least 1", what="rounds")
        if self.nbytes < 0:
            raise InvalidInput(f"nbytes = {self.nbytes}: not negative", what="nbytes")
        return self


def regions(cfg: PingPongConfig) -> dict[str, int]:
    return {"VAL": cfg.rounds}


def launch_size(cfg: PingPongConfig) -> tuple[int, tuple[str, ...]]:
    """Six producer ops and four consumer ops a round (:func:`build`)."""
    return 10 * cfg.rounds, ("rounds",)


def build(cfg: PingPongConfig) -> Launch:
    space = CellSpace.from_sizes(regions(cfg))
    producer: list = []
    consumer: list = []
    for i in range(cfg.rounds):
        cell = space.gid(0, [i])
        producer += [
            Begin("produce"),
            Load(f"in{i}", LoadKind.STAGING, cfg.nbytes, "input"),
            Use((f"in{i}",)),
            Compute("pp.produce"),
            Put(0, cell),
            End("produce"),
        ]
        val = poll("VAL", cell.reshape(1, 1), width=1)
        consumer += [
            Begin("consume"),
            val,
            Compute("pp.consume", reads=val.cells),  # computes with the value it polled
            End("consume"),
        ]
    programs = (
        CtaProgram(0, "producer", (), tuple(producer)),
        CtaProgram(1, "consumer", (), tuple(consumer)),
    )
    return Launch(cfg, space, programs)


KERNEL = Kernel(
    name="pingpong",
    description="2-CTA producer/consumer: one (value, tag) hand-off a round",
    config_type=PingPongConfig,
    build_fn=build,
    regions_fn=regions,
    launch_size=launch_size,
    roles=("producer", "consumer"),
    stages=("produce", "consume"),
    role_colors={"producer": "#1f77b4", "consumer": "#2ca02c"},
    stage_colors={"produce": "#ff7f0e", "consume": "#9467bd"},
    cost_keys=("pp.produce", "pp.consume"),
    default_costs={"pp.produce": (800.0, 0.0), "pp.consume": (400.0, 0.0)},
    threads=256,
    regs_per_thread=32,
)
