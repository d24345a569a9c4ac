"""lab/variant_check.py: stage medians by task slot, read from the bundled 4x4 trace
(half its CTAs run two kda tasks), and nothing the user gave overwritten."""

from __future__ import annotations

import shutil
import statistics
from pathlib import Path

import pytest

from kda_kernel.triton.trace_layout import KDA_STAGES
from kda_sim.errors import InvalidInput
from kda_sim.importers.chrome import read_kernel_trace
from lab.variant_check import main, record, report, slot_stages

TRACES = Path(__file__).resolve().parents[2] / "traces"


def test_slots_hold_each_ctas_first_and_second_task() -> None:
    tl = read_kernel_trace(TRACES / "k1_h200_R4_L4.json.gz")
    slots = slot_stages(tl)
    assert len(slots) == 2  # 384 tasks over 256 CTAs
    assert all(set(s) == set(KDA_STAGES) for s in slots)
    # slot 1's k.stage: the median over the CTAs' second tasks, computed here directly
    second = []
    for c in tl.ctas:
        tasks = sorted({s.task for s in c.stages if s.task >= 0})
        if len(tasks) == 2:
            second += [s.dur for s in c.stages if s.task == tasks[1] and s.name == "k.stage"]
    assert len(second) == 128
    assert slots[1]["k.stage"] == pytest.approx(statistics.median(second))


def test_one_task_a_cta_has_one_slot() -> None:
    assert len(slot_stages(read_kernel_trace(TRACES / "k1_h200_R1_L1.json.gz"))) == 1


def test_report_names_each_trace(tmp_path: Path) -> None:
    shutil.copy(TRACES / "k1_h200_R4_L4.json.gz", tmp_path / "R4_L4_default.json")
    out = report(tmp_path)
    assert list(out) == ["R4_L4_default"]
    assert len(out["R4_L4_default"]["slots_us"]) == 2
    assert out["R4_L4_default"]["makespan_us"] > 0


def test_record_refuses_an_existing_trace_before_any_launch(tmp_path: Path) -> None:
    kept = tmp_path / "R4_L4_default.json"
    kept.write_text("mine")
    with pytest.raises(InvalidInput, match="exists"):
        record([(4, 4)], {"sleep_ns": 0}, tmp_path)
    assert kept.read_text() == "mine"


def test_a_variant_that_is_not_an_object_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["record", "--variant", "[1]", "--dir", str(tmp_path)]) == 2
    assert main(["record", "--variant", "{oops", "--dir", str(tmp_path)]) == 2
    assert main(["report", str(tmp_path)]) == 2  # no traces there
    assert "variant_check:" in capsys.readouterr().err


def test_an_unknown_build_field_is_named_before_any_launch(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="bogus"):
        record([(1, 1)], {"bogus": 1}, tmp_path)
    assert not any(tmp_path.iterdir())


def test_without_a_gpu_record_exits_2_with_the_reason(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import torch

    if torch.cuda.is_available():
        pytest.skip("a GPU is here")
    assert main(["record", "--variant", "{}", "--shapes", "1x1", "--dir", str(tmp_path)]) == 2
    assert "no CUDA GPU" in capsys.readouterr().err
