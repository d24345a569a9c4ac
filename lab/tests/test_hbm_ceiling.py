"""The HBM ceiling probe: its CUDA source builds, its forms and summary, and its refusals
without a GPU (the timings themselves run on the H200 only)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from lab import hbm_ceiling as hc


def test_forms_include_the_k1s_own_shape_and_are_distinct() -> None:
    fs = hc.forms(quick=False)
    labels = [f.label() for f in fs]
    assert len(labels) == len(set(labels))
    assert any(f.kind == "chunked" and (f.blocks, f.threads) == (197, 256) for f in fs)
    assert {f.kind for f in fs} == {"grid", "chunked", "bulk", "torch_copy", "torch_sum"}
    # every bulk form fits a block's shared memory on the H200 (227 KB)
    assert all(f.chunk * f.stages <= 227 * 1024 for f in fs if f.kind == "bulk")


def test_summary_names_the_fastest_of_each_kind_and_every_error() -> None:
    rows = [
        hc.Row(hc.Form("grid", 264, 512, 4, 2), us=24.0, read_TB_s=3.76),
        hc.Row(hc.Form("grid", 132, 256, 1, 0), us=30.0, read_TB_s=3.0),
        hc.Row(hc.Form("chunked", 197, 256, 8, 0), us=26.0, read_TB_s=3.47, span_us=24.5),
        hc.Row(hc.Form("bulk", 132, 32, 0, 0, 32768, 4), error="launch returned 1"),
    ]
    text = "\n".join(hc.summary(rows))
    assert "grid 264x512 u4 nc_no_l1_256B | 24.0 | 3.76 | -" in text
    assert "chunked 197x256 u8 plain | 26.0 | 3.47 | 24.5" in text
    assert "bulk 132 blocks, 32 KB x 4: launch returned 1" in text


def test_without_a_gpu_it_refuses_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("a GPU is here")
    out = tmp_path / "ceiling.json"
    assert hc.main(["--out", str(out)]) == 2
    assert "GPU" in capsys.readouterr().err
    assert not out.exists()


def test_an_existing_report_is_not_overwritten(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "ceiling.json"
    out.write_text("kept")
    assert hc.main(["--out", str(out)]) == 2
    assert "--force" in capsys.readouterr().err
    assert out.read_text() == "kept"


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="no nvcc here")
def test_the_cuda_source_builds_for_sm90_with_both_entry_points(tmp_path: Path) -> None:
    so = hc.build(tmp_path)
    assert so.launch_read.restype is not None and so.launch_bulk.restype is not None


def test_an_unknown_kind_is_named(capsys: pytest.CaptureFixture[str]) -> None:
    assert hc.main(["--kinds", "grid,tma"]) == 2
    assert "--kinds" in capsys.readouterr().err


def test_kinds_pick_the_forms() -> None:
    assert {f.kind for f in hc.forms(False, ("bulk",))} == {"bulk"}


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="no nvcc here")
def test_each_form_compiles_to_the_loads_it_names(tmp_path: Path) -> None:
    """The probe measures what its labels say: 16-byte loads with each cache hint, and the
    copy engine's bulk copy completing on an mbarrier (sm_90 SASS)."""
    import subprocess

    triton = pytest.importorskip("triton")
    cuobjdump = Path(triton.__file__).parent / "backends" / "nvidia" / "bin" / "cuobjdump"
    if not cuobjdump.exists():
        pytest.skip("no cuobjdump in Triton's wheel")
    cubin = tmp_path / "hbm_read.cubin"
    subprocess.run(
        [
            "nvcc",
            "-cubin",
            "-O3",
            "-gencode",
            "arch=compute_90,code=sm_90",
            "-o",
            str(cubin),
            str(hc.SOURCE),
        ],
        check=True,
        capture_output=True,
    )
    sass = subprocess.run(
        [str(cuobjdump), "-sass", str(cubin)], check=True, capture_output=True, text=True
    ).stdout
    for op in ("LDG.E.128.CONSTANT", "LDG.E.EF.128", "LDG.E.NA.LTC256B.128", "UBLKCP"):
        assert op in sass, op
