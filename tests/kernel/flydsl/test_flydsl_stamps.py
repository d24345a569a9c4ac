"""The timeline build's stamp layout (pure Python)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from kda_kernel.flydsl.stamps import (
    CTA_ID,
    END,
    RECORD,
    TASKS_RUN,
    TWIN_POINTS,
    TWIN_WIDTH,
    StampLayout,
    launch_record,
    tasks_per_cta,
    timeline,
)
from kda_sim.errors import TraceFormatError
from kda_sim.kernels.k1.config import LaunchConfig
from kda_sim.kernels.k1.kda import tasks_of
from kda_sim.kernels.k1.program import Role, role_of


def test_first_fifteen_columns_are_the_twins() -> None:
    assert len(TWIN_POINTS) == 12 and TWIN_WIDTH == 15
    assert StampLayout.role("start") == 0 and StampLayout.last_task("k.norm") == 11
    assert min(END, CTA_ID, TASKS_RUN, StampLayout.task_base(0)) >= TWIN_WIDTH


@pytest.mark.parametrize(("r", "per_cta"), [(1, 1), (2, 1), (3, 2), (16, 6)])
def test_every_task_of_a_cta_has_its_columns(r: int, per_cta: int) -> None:
    cfg = LaunchConfig(r, 1)
    layout = StampLayout(tasks_per_cta(cfg.n_tasks, cfg.blocks))
    assert layout.tasks_per_cta == per_cta
    assert layout.width == StampLayout.task_base(per_cta)


def stamped_like_the_kernel(cfg: LaunchConfig) -> np.ndarray:
    """What k1.py writes, one tick a point: start, role points (gate on every attn CTA),
    each task's five points (and the last task's copy in 7..11), end, id, count and the
    launch record."""
    layout = StampLayout(tasks_per_cta(cfg.n_tasks, cfg.blocks))
    out = np.zeros((cfg.blocks, layout.width), dtype=np.int64)
    for cta in range(cfg.blocks):
        row, t = out[cta], 1000 + 3 * cta
        row[0] = t
        role = role_of(cta)
        points = {Role.ATTN: ("slice", "gate", "mix"), Role.GEMV: ("load_x", "gemv0", "gemv1")}
        for name in points.get(role, ()):
            t += 7
            row[layout.role(name)] = t
        tasks = tasks_of(cta, cfg)
        for n, _ in enumerate(tasks):
            for p in range(5):
                t += 5
                row[layout.task_base(n) + p] = t
                row[7 + p] = t
        row[END], row[CTA_ID], row[TASKS_RUN] = t + 1, cta, len(tasks)
        row[list(RECORD)] = launch_record(cfg)
    return out


def test_the_projects_importer_reads_every_task() -> None:
    cfg = LaunchConfig(3, 1)  # 288 tasks: CTAs 0..31 run two
    tl = timeline(stamped_like_the_kernel(cfg), cfg)
    by_cta = {c.cta: c for c in tl.ctas}
    zero = by_cta[0]
    assert [s.name for s in zero.stages][:3] == ["slice", "gate", "mix"]
    assert [s.task for s in zero.stages if s.name == "k.stage"] == [0, 256]
    assert all(s.end > s.start for s in zero.stages if s.name.startswith("k."))
    assert zero.end is not None and zero.end > zero.stages[-1].end
    gemv = by_cta[56]
    assert [(s.name, s.task) for s in gemv.stages][:3] == [
        ("load_x", -1),
        ("gemv0", -1),
        ("gemv1", -1),
    ]
    assert [s.task for s in gemv.stages if s.name == "k.norm"] == [56]
    assert tl.meta.extra["only_last_task"] is False


def test_the_columns_the_twin_never_stamps_hold_the_launch() -> None:
    cfg = LaunchConfig(1, 1)
    assert RECORD == (12, 13, 14) and TWIN_WIDTH == 15
    arr = stamped_like_the_kernel(cfg)
    with pytest.raises(TraceFormatError, match="CTA 0: the stamps record a launch at L=1, read"):
        timeline(arr, LaunchConfig(1, 2))  # the same stamps, the same width: only the record
    arr[5, 12] = 1234
    with pytest.raises(TraceFormatError, match="CTA 5: column 12 holds 1234, not a launch"):
        timeline(arr, cfg)


def test_a_row_flushed_to_the_wrong_place_is_refused() -> None:
    cfg = LaunchConfig(1, 1)
    arr = stamped_like_the_kernel(cfg)
    arr[3, CTA_ID] = 4
    with pytest.raises(TraceFormatError, match="CTA 4"):
        timeline(arr, cfg)


def test_a_build_that_dumps_no_isa_is_an_error(tmp_path: Path) -> None:
    from kda_kernel.flydsl.build import compile_isa

    stale = tmp_path / "k_0" / "22_final_isa.s"
    stale.parent.mkdir()
    stale.write_text("an earlier build's dump\n")
    with pytest.raises(RuntimeError, match=r"the build failed"):
        compile_isa(lambda: None, "gfx942", tmp_path)
