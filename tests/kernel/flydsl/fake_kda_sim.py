"""``kda-sim`` (run as a script: its folder is on sys.path) with the FlyDSL device
replaced by the runner tests' fake (``test_flydsl_run.FakeRuntime``: its launch writes
the reference's outputs and the stamps laid out as the kernel writes them); the
first-contact test runs this as its kda-sim. ``FAKE_WRONG=R,L``: that shape's outputs
are wrong (the check fails, exit 1); ``FAKE_HANG=R,L,WARMUP``: that launch never
returns (as a missing producer would without the bound: a bounded-wait launch gives up
instead, see FAKE_MISSING); ``FAKE_MISSING=R,L``: a put of that shape never lands (the
bounded-wait launch writes its give-up records, the others hang)."""

from __future__ import annotations

import os
import sys
import time

from test_flydsl_run import FakeRuntime, Missing

from kda_kernel.flydsl import health
from kda_kernel.flydsl import run as frun
from kda_sim.cli import main
from kda_sim.kernels.k1.config import LaunchConfig
from kda_sim.kernels.k1.regions import Region
from kda_sim.protocol.space import CellSpace


def flag(name: str) -> str:
    args = sys.argv[1:]
    return args[args.index(name) + 1] if name in args else "0"


class Device(FakeRuntime):
    def launch(self, build: object, args: list) -> None:
        bounded = "--watchdog-ms" in sys.argv
        hang = os.environ.get("FAKE_HANG") == ",".join(map(flag, ("--R", "--L", "--warmup")))
        if not bounded and (hang or self.missing is not None):
            time.sleep(3600)
        super().launch(build, args)


shape = f"{flag('--R')},{flag('--L')}"
missing = None
if os.environ.get("FAKE_MISSING") == shape:
    # the missing put: CTA 0's first kda task waits for PROJ row 0 of token 0
    space = CellSpace.of(LaunchConfig(int(flag("--R")), int(flag("--L"))))
    missing = Missing(0, health.site("k.conv", "PROJ"), int(space.gid(Region.PROJ, 0)), 0)
frun.RocmRuntime = lambda: Device(  # type: ignore[assignment,misc]
    corrupt=os.environ.get("FAKE_WRONG") == shape, missing=missing
)
sys.exit(main(sys.argv[1:]))
