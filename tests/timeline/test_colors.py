"""The timeline's display order and colours come from the timeline's kernel; the default
kernel's are looked up when first read, never when the module is imported."""

from __future__ import annotations

import pytest

from kda_sim.kernels import registry
from kda_sim.timeline import colors


def test_importing_the_timeline_asks_for_no_kernel(fresh_python) -> None:
    code = (
        "import sys, kda_sim.timeline, kda_sim.timeline.colors, kda_sim.timeline.summary;"
        "print(any(m.startswith('kda_sim.kernels.k1') for m in sys.modules))"
    )
    assert fresh_python(code) == "False"


def test_display_is_the_timelines_kernel_and_the_defaults_are_the_default_kernels() -> None:
    pingpong = registry.get("pingpong")
    assert colors.display("pingpong") is pingpong
    default = registry.get(colors.DEFAULT_KERNEL)
    assert colors.display("no-such-kernel") is default
    assert tuple(default.stages) == colors.STAGES
    assert dict(default.role_colors) == colors.ROLE_COLORS
    with pytest.raises(AttributeError, match="NOT_A_DEFAULT"):
        colors.NOT_A_DEFAULT  # noqa: B018
