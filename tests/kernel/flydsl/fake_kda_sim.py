"""``kda-sim`` (run as a script: its folder is on sys.path) with the FlyDSL device
replaced by the runner tests' fake (``test_flydsl_run.FakeRuntime``: its launch writes
the reference's outputs and the stamps laid out as the kernel writes them); the
first-contact test runs this as its kda-sim. ``FAKE_WRONG=R,L``: that shape's outputs
are wrong (the check fails, exit 1); ``FAKE_HANG=R,L,WARMUP``: that launch never
returns (as a missing producer would)."""

from __future__ import annotations

import os
import sys
import time

from test_flydsl_run import FakeRuntime

from kda_kernel.flydsl import run as frun
from kda_sim.cli import main


def flag(name: str) -> str:
    args = sys.argv[1:]
    return args[args.index(name) + 1] if name in args else "0"


class Device(FakeRuntime):
    def launch(self, build: object, args: list) -> None:
        if os.environ.get("FAKE_HANG") == ",".join(map(flag, ("--R", "--L", "--warmup"))):
            time.sleep(3600)
        super().launch(build, args)


shape = f"{flag('--R')},{flag('--L')}"
frun.RocmRuntime = lambda: Device(corrupt=os.environ.get("FAKE_WRONG") == shape)  # type: ignore[assignment,misc]
sys.exit(main(sys.argv[1:]))
