"""The host side of the watchdog on a synthetic alarm buffer (the GPU tests drive the real
one): records of this launch only, the cause before the waits it released, each with its
region and index, and a stale pair the kernel could not place said so, not as a number."""

from __future__ import annotations

import numpy as np
import pytest

from kda_kernel.triton import alarm_layout as A
from kda_kernel.triton.launch import Build
from kda_kernel.triton.watchdog import UNKNOWN_CELL, KernelStuck, check, read_alarm
from kda_sim.kernels.k1.regions import Region

TAG = 7


def _alarm(records: dict[int, tuple[int, int, int, int, int, int]]) -> np.ndarray:
    """records: cta -> (tag, kind, gidx, seen, time, site)."""
    buf = np.zeros(A.alarm_words(), dtype=np.int64)
    for cta, (tag, kind, gidx, seen, t, site) in records.items():
        r = A.REC0 + cta * A.REC_WORDS
        buf[r + A.F_TAG], buf[r + A.F_KIND], buf[r + A.F_GIDX] = tag, kind, gidx
        buf[r + A.F_EXPECT], buf[r + A.F_SEEN], buf[r + A.F_TIME] = TAG, seen, t
        buf[r + A.F_SITE], buf[r + A.F_TASK] = site, -1
    return buf


@pytest.fixture
def build() -> Build:
    return Build.default(1, 2, 8, watchdog=True)


def test_cause_first_then_released_and_old_launches_ignored(build: Build) -> None:
    xrdy = build.space.offsets[Region.XRDY] + 5
    buf = _alarm(
        {
            60: (TAG, A.KIND_RELEASED, xrdy, TAG - 1, 900, 3),
            61: (TAG, A.KIND_TIMEOUT, xrdy, TAG - 1, 1000, 3),
            62: (TAG - 1, A.KIND_TIMEOUT, xrdy, 0, 10, 3),  # an older launch's record
        }
    )
    recs = read_alarm(buf, [(build, 0, TAG)])
    assert [(r.cta, r.kind) for r in recs] == [(61, "timeout"), (60, "released")]
    assert (recs[0].region, recs[0].index, recs[0].stage) == ("XRDY", 5, "load_x")
    with pytest.raises(KernelStuck, match=r"XRDY\[5\] expected tag 7, saw 6"):
        check(buf, [(build, 0, TAG)])


def test_a_stale_replica_is_reported_without_a_made_up_cell(build: Build) -> None:
    buf = _alarm({100: (TAG, A.KIND_TIMEOUT, A.NO_CELL, -1, 1000, 7)})
    (rec,) = read_alarm(buf, [(build, 0, TAG)])
    assert (rec.region, rec.index) == ("PROJ beta", -1)
    line = rec.line(0)
    assert UNKNOWN_CELL in line and str(A.NO_CELL) not in line and "saw -1" not in line


def test_a_clean_alarm_passes(build: Build) -> None:
    check(np.zeros(A.alarm_words(), dtype=np.int64), [(build, 0, TAG)])
