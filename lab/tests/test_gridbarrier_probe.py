"""The grid barrier probe: its kernel compiles for sm_90 (here, without a GPU) to the
protocol it claims (an acq_rel add, an acquire spin, globaltimer stamps after each work's
loads and FMAs), runs under Triton's interpreter on the CPU (the counter ends at ctas x
rounds, every CTA's record is a whole launch), and refuses bad arguments before any
launch."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("triton")

from lab import gridbarrier_probe as gp
from lab import gridbarrier_trace as gt
from lab.ptx import sm90_ptx

ROOT = Path(__file__).resolve().parents[2]
SIG = {
    "counter": "*i32",
    "buf": "*fp32",
    "stamps": "*i64",
    "sink": "*fp32",
    "clock": "*i32",
    "max_tries": "i32",
}


def _ptx(rounds: int, chunks: int = 8) -> str:
    cx = {
        "CTAS": 132,
        "ROUNDS": rounds,
        "ITERS": 64,
        "CHUNKS": chunks,
        "SLOTS": gt.record_slots(rounds),
        "INTERP": False,
    }
    return sm90_ptx(gp.gridbarrier_kernel, SIG, cx)


@pytest.mark.parametrize("rounds", [2, 4])
def test_the_kernel_is_the_protocol_it_claims(rounds: int) -> None:
    ptx = _ptx(rounds)
    # the rounds a loop, one body for every round (the same code each round, whatever
    # their number): an add, released and acquired at GPU scope; the wait's first try
    # and its retry loop each an acquire load of the counter
    assert ptx.count("atom.global.gpu.acq_rel.add") == 1
    assert ptx.count("ld.global.gpu.acquire") == 2
    # a work's begin and end, a barrier's begin, first issue, satisfied and end
    assert ptx.count("%globaltimer;") == 2 + 4
    assert ptx.count("%smid;") == 1
    assert "atom.global.gpu.relaxed" not in ptx  # the interpreter's clock is not here


def test_a_work_ends_after_its_loads_and_fmas() -> None:
    ptx = _ptx(2)
    first_add = ptx.index("atom.global.gpu.acq_rel.add")
    work = ptx[: ptx.rindex("%globaltimer;", 0, first_add)]  # up to the barrier's begin
    end = work.rindex("%globaltimer;")  # the work's end stamp
    # the loads, then the FMAs on them, then the CTA-wide sum's barrier, then the stamp
    assert work.index("ld.global.b32") < work.index("fma.rn.f32")
    assert work.rindex("fma.rn.f32") < work.rindex("bar.sync", 0, end) < end
    assert work.count("ld.global.b32") >= 8 * 4  # 8 chunks of 1024 fp32, 4 a thread


def test_in_the_interpreter_every_cta_passes_every_barrier() -> None:
    """4 programs, 2 rounds, a thread a program (the spins really wait on one another);
    the stamps are the interpreter's shared ticket clock, so they order across CTAs."""
    ctas, rounds = 4, 2
    code = (
        "import json, kda_kernel.triton.interp as ip\n"
        "ip.BACKOFF_S = (0.0002, 0.005, 1.5)\n"  # a spinning thread's sleep: short here
        "from lab.gridbarrier_probe import interp_run\n"
        f"print(json.dumps(interp_run({ctas}, {rounds}, 4, 8192)))\n"
    )
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    env = os.environ | {"TRITON_INTERPRET": "1", "PYTHONPATH": path}
    out = subprocess.run(
        [sys.executable, "-c", code],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    d = json.loads(out.stdout.strip().splitlines()[-1])
    assert d["counter"] == ctas * rounds
    s = np.asarray(d["stamps"], np.int64)
    assert (s[:, gt.SMID] == -1).all() and (s[:, gt.GAVE_UP] == 0).all()
    # a whole launch by the converter's checks (each CTA's stamps in order, one add a CTA
    # a round), the interpreter's SM ids read as CTA numbers
    s[:, gt.SMID] = np.arange(ctas)
    tl = gt.timeline_of(s, ctas, rounds, gpu="interpreter", sms=ctas)
    for r in range(rounds):
        b = gt.barrier_slot(rounds, r)
        # nobody passes round r before every CTA has begun its add of round r
        assert s[:, b + gt.B_SAT].min() > s[:, b + gt.B_BEGIN].max()
        assert {p.producer for c in tl.ctas for p in c.polls if p.task == r} == {
            int(np.flatnonzero(s[:, b + gt.B_OLD] == (r + 1) * ctas - 1)[0])
        }


@pytest.mark.parametrize(
    ("flags", "said"),
    [
        (["--ctas", "0"], "--ctas and --rounds"),
        (["--rounds", ""], "--ctas and --rounds"),
        (["--nbytes", "1000"], "a multiple of 4096"),
        (["--max-tries", "0"], "--max-tries"),
        (["--launches", "0"], "--launches at least 1"),
    ],
)
def test_bad_arguments_exit_2_before_any_launch(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flags: list[str], said: str
) -> None:
    out = tmp_path / "run.json"
    assert gp.main(["--out", str(out), *flags]) == 2
    assert said in capsys.readouterr().err and not out.exists()


def test_more_ctas_than_sms_exit_2_before_any_launch(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The SM count is the GPU's: a machine with a GPU of 132 SMs, faked, refuses 133 CTAs
    (not all resident: the others would spin) before it launches or writes anything."""
    torch = pytest.importorskip("torch")

    class Props:
        multi_processor_count = 132

    import kda_kernel.triton.trace as trace

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "get_device_properties", lambda _: Props())
    monkeypatch.setattr(trace, "environment", lambda: {"gpu": "fake"})
    monkeypatch.setattr(gp, "launch", lambda *a, **k: pytest.fail("launched"))
    out = tmp_path / "run.json"
    assert gp.main(["--out", str(out), "--ctas", "8,133"]) == 2
    assert "--ctas 133: more than the GPU's 132 SMs" in capsys.readouterr().err
    assert not out.exists()
