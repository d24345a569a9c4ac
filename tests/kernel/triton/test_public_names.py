"""The device functions probes use (bench/) have public names: the kernel's own objects."""

from __future__ import annotations

import pytest

pytest.importorskip("triton")

from kda_kernel.triton import gemv, machine, mailbox


def test_the_public_names_are_the_kernels_functions() -> None:
    assert mailbox.put is mailbox._put and mailbox.poll is mailbox._poll
    assert mailbox.load_pairs is mailbox._load_pairs and mailbox.count_bad is mailbox._count_bad
    assert machine.now is machine._now and machine.smid is machine._smid
    assert gemv.gemv is gemv._gemv
