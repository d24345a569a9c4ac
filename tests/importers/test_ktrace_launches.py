"""Generated ktrace dumps of whole launches at every shape R, L in {1, 2, 4}: the
simulated launch's events laid out as the FlyDSL K1's ktrace build leaves them in
FlyDSL's trace buffer (``make_ktrace_fixture.py``: two waves a CTA, wave 0 with the
polls), written by flydsl's own decoder and writer, read back into the one timeline
type with every task of every CTA; a dump read as a launch it is not is refused,
exit 2, naming the mismatch."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from kda_sim.cli import main
from kda_sim.engine import simulate
from kda_sim.errors import TraceFormatError
from kda_sim.importers.claimed_launch import check_claimed_launch
from kda_sim.importers.ktrace import launch_waves
from kda_sim.kernels.k1.config import LaunchConfig
from kda_sim.kernels.k1.ktrace import read_ktrace, to_timeline
from kda_sim.machine.profile import load_profile
from kda_sim.protocol.handoffs import handoffs_of
from kda_sim.protocol.ops import Begin, Poll, Publish, Put

pytest.importorskip("flydsl")
sys.path.insert(0, str(Path(__file__).parent))
from make_ktrace_fixture import build

sys.path.pop(0)

MAX_S = 9  # the x rows' LDS budget (the seed's): 4 x 4 is no launch
SHAPES = [(r, l_) for r in (1, 2, 4) for l_ in (1, 2, 4) if r * l_ <= MAX_S]


@pytest.fixture(scope="module")
def dumps(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[int, int], Path]:
    root = tmp_path_factory.mktemp("ktrace_launches")
    return {(r, l_): build(root / f"R{r}_L{l_}", all_ctas=True, R=r, L=l_) for r, l_ in SHAPES}


@pytest.mark.parametrize(("R", "L"), SHAPES)
def test_every_task_of_every_cta_is_read(dumps: dict, R: int, L: int) -> None:
    tl = read_ktrace(dumps[(R, L)], R=R, L=L)
    cfg = tl.meta.config()
    programs = handoffs_of(cfg).launch.programs
    assert tl.meta.extra["ctas_recorded"] == list(range(cfg.blocks))
    tasks = set()
    sim = simulate(cfg, load_profile("mi355x")).timeline  # the launch the dump was made of
    for c, prog, s in zip(tl.ctas, programs, sim.ctas, strict=True):
        want = [(op.stage, op.task) for op in prog.ops if isinstance(op, Begin)]
        assert [(s.name, s.task) for s in c.stages] == want, f"CTA {c.cta}"
        assert len(c.polls) == sum(isinstance(op, Poll) for op in prog.ops)
        assert len(c.puts) == sum(isinstance(op, Put | Publish) for op in prog.ops)
        assert all(p.satisfied is not None and p.satisfied >= p.first_issue for p in c.polls)
        # each poll's retries, from its "retries <LABEL>" mark
        assert [p.retries for p in c.polls] == [p.retries for p in s.polls], f"CTA {c.cta}"
        assert c.start is not None and c.end is not None and c.unit is not None
        tasks |= {s.task for s in c.stages if s.name.startswith("k.")}
    assert tasks == set(range(cfg.n_tasks))
    check_claimed_launch(tl, "dump")


@pytest.mark.parametrize(
    ("made", "read", "words"),
    [
        ((1, 1), (2, 1), "CTA 1: 7 polls recorded, its program has 8"),
        ((2, 2), (2, 1), "stage"),
        ((4, 1), (1, 1), "'k.stage' of task 256"),
        ((1, 4), (1, 2), "not the launch its header names"),
    ],
)
def test_a_dump_read_as_another_shape_is_refused(
    dumps: dict, made: tuple[int, int], read: tuple[int, int], words: str, capsys
) -> None:
    path = dumps[made]
    with pytest.raises(TraceFormatError, match="not the launch its header names"):
        check_claimed_launch(read_ktrace(path, R=read[0], L=read[1]), str(path))
    rc = main(["compare", str(path), "--R", str(read[0]), "--L", str(read[1])])
    err = capsys.readouterr().err
    assert rc == 2 and words in err and str(path) in err


def test_a_dump_of_fewer_ctas_is_partial_and_one_of_more_is_refused(dumps: dict, capsys) -> None:
    """A dump of some CTAs only (ktrace's ``blocks`` filter records a subset) never
    conforms (exit 1, naming the CTAs missing); a workgroup past the claimed launch's
    CTAs is refused (exit 2)."""
    small = Path(__file__).parent / "fixtures" / "kda_pre_R1_L1_ktrace.pftrace.gz"
    rc = main(["compare", str(small), "--R", "1", "--L", "1"])
    out = capsys.readouterr().out
    assert rc == 1 and "partial trace: 248 of 256 CTAs recorded nothing" in out
    waves = launch_waves(small.read_bytes(), 1, "small")
    with pytest.raises(TraceFormatError, match="workgroup 252 is outside the launch's 200 CTAs"):
        to_timeline(waves, LaunchConfig(1, 1, blocks=200), "mi355x", "small")


def test_a_dump_missing_a_stage_is_refused_naming_it(tmp_path: Path, capsys) -> None:
    """A CTA that recorded no span of a stage its program runs (its k.stage range
    deleted, a stage with no poll or put: a dump of another build, or a lost range) is
    not the launch: refused, exit 2, naming the CTA and the stage."""
    tl = simulate(LaunchConfig(1, 1), load_profile("mi355x")).timeline
    c = tl.ctas[60]
    c.stages = [s for s in c.stages if s.name != "k.stage"]
    path = build(tmp_path, timeline=tl)
    rc = main(["compare", str(path), "--R", "1", "--L", "1"])
    err = capsys.readouterr().err
    assert rc == 2 and "CTA 60" in err and "k.stage" in err, err


def test_compare_reports_the_per_xcd_estimate_of_a_whole_launch(dumps: dict, capsys) -> None:
    """s_memrealtime is taken as one clock, and the per-XCD offsets the hand-offs point
    to are printed beside it, one an XCD (not applied)."""
    rc = main(["compare", str(dumps[(1, 1)]), "--R", "1", "--L", "1"])
    out = capsys.readouterr().out
    assert rc == 0, out
    line = next(s for s in out.splitlines() if s.startswith("per-XCD offsets"))
    assert "not applied" in line and len(re.findall(r"XCD \d+ [+-]?\d", line)) == 8
