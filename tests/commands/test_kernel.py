"""``kda-sim kernel run``'s flags come from the default kernel's ``real_backends`` hook."""

from __future__ import annotations

import argparse

import pytest

from kda_sim.commands.kernel import add_parser, given_variants, real_kernel
from kda_sim.kernels.registry import DEFAULT_KERNEL, get


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser()
    add_parser(p.add_subparsers(dest="command"))
    return p


def test_the_flags_are_the_kernels_faults_and_schedules() -> None:
    spec, offers = real_kernel()
    assert spec is get(DEFAULT_KERNEL)
    p = _parser()
    for fault in offers.faults:
        assert p.parse_args(["kernel", "run", "--inject", fault]).inject == fault
    with pytest.raises(SystemExit):  # argparse: exit 2 for a fault the kernel has not
        p.parse_args(["kernel", "run", "--inject", "no-such-fault"])
    assert offers.schedules  # K1 has ticket schedules
    for name in offers.schedules:
        args = p.parse_args(["kernel", "run", f"--{name.replace('_', '-')}"])
        assert given_variants(args) == {name: True}
