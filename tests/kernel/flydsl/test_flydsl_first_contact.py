"""The first-contact record (``scripts/first_contact_mi355x.sh``, its driver
``kda_kernel.flydsl.first_contact``) against the fake device of the runner's tests
(``fake_kda_sim.py``): the folder's layout, a failed step logged and the others run, a
launch that never returns killed at its time limit and no further launch made."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from kda_kernel.flydsl.first_contact import parse_pairs, plan
from kda_sim.errors import InvalidInput

HERE = Path(__file__).parent
ROOT = HERE.parents[2]
FAKE = f"{sys.executable} {HERE / 'fake_kda_sim.py'}"


def steps(folder: Path) -> dict[str, dict]:
    lines = (folder / "steps.jsonl").read_text().splitlines()
    return {s["name"]: s for s in map(json.loads, lines)}


def record(tmp_path: Path, env: dict[str, str], *flags: str) -> tuple[int, Path]:
    out = tmp_path / "fc"
    proc = subprocess.run(
        ["bash", str(ROOT / "scripts" / "first_contact_mi355x.sh"), "--out", str(out),
         "--kda-sim", FAKE, "--warmup", "1", "--fit-budget", "2", *flags],
        env=os.environ | {"PYTHON": sys.executable} | env, capture_output=True, text=True,
        timeout=300,
    )  # fmt: skip
    return proc.returncode, out


def test_the_default_shapes_are_the_builds() -> None:
    """R, L in 1, 2, 4: both archs run every S <= 9 (gfx942 from S = 4 by the windowed
    gemv), 4x4 refused by the seed's rule."""
    pairs = parse_pairs("1x1,1x2,1x4,2x1,2x2,2x4,4x1,4x2,4x4")
    for arch in ("gfx950", "gfx942"):
        run, refused = plan(arch, pairs)
        assert [c.S for c in run] == [1, 2, 4, 2, 4, 8, 4, 8] and list(refused) == ["R4L4"]
        assert "seed's 136 KiB" in refused["R4L4"]
    with pytest.raises(InvalidInput, match="--shapes"):
        parse_pairs("2x")


def test_a_record_with_a_failed_step(tmp_path: Path) -> None:
    rc, out = record(tmp_path, {"FAKE_WRONG": "1,2"}, "--shapes", "1x1,1x2,4x4", "--no-ktrace")
    assert rc == 1  # a step failed
    s = steps(out)
    assert s["R1L2_cold"]["rc"] == 1 and s["R1L2_warm"]["rc"] == 1  # the check failed
    assert "core_out" in (out / s["R1L2_cold"]["err"]).read_text()
    assert s["R1L1_cold"]["rc"] == s["R1L1_warm"]["rc"] == s["calibrate"]["rc"] == 0
    assert s["R1L1_watchdog"]["rc"] == 0 and "--watchdog-ms" in s["R1L1_watchdog"]["argv"]
    assert list(s)[:5] == ["versions", "git", "rocminfo", "rocm_smi", "R1L1_watchdog"]
    if (ROOT / ".git").exists():  # a checkout: the record names its commit
        assert s["git"]["rc"] == 0 and len((out / s["git"]["out"]).read_text().split()[0]) == 40
    assert list(s)[-1] == "calibrate"  # the failed shape did not stop the fit
    warm = json.loads((out / "results" / "R1L1_warm.json").read_text())
    assert warm["steps"] == 2 and warm["preflight"].startswith("safe")
    assert max(warm["errors"].values()) < 1e-6
    traces = sorted(p.name for p in (out / "traces").iterdir())
    assert traces == ["R1L1_cold.json", "R1L1_warm.json"]
    assert not (out / "results" / "R1L2_warm.json").exists()
    m = json.loads((out / "manifest.json").read_text())
    assert m["shapes"] == ["R1L1", "R1L2"] and "seed's 136 KiB" in m["refused_by_the_build"]["R4L4"]
    assert m["ktrace"] == "not recorded (--no-ktrace)" and m["fit"]["train"] == ["R1L1_warm.json"]
    assert not (out / "ktrace").exists()
    fit = json.loads((out / "fit" / "mi355x_fit.json").read_text())
    assert fit  # the overlay calibrate wrote
    with tarfile.open(out.with_name("fc.tar.gz")) as t:
        assert "fc/manifest.json" in t.getnames() and "fc/fit/report.json" in t.getnames()


def test_a_launch_that_never_returns_stops_the_launches(tmp_path: Path) -> None:
    rc, out = record(
        tmp_path,
        {"FAKE_HANG": "1,1,0"},
        *("--shapes", "1x1,2x1", "--timeout", "20", "--no-tar", "--no-ktrace"),
    )
    assert rc == 1
    s = steps(out)
    # the bounded-wait launch returns (the fake hangs only without the bound); a launch
    # step starts a Python with torch: the limit leaves it room on a loaded machine
    assert s["R1L1_watchdog"]["rc"] == 0
    assert s["R1L1_cold"]["timed_out"] and 20 <= s["R1L1_cold"]["seconds"] < 50
    assert "killed after 20 s" in (out / s["R1L1_cold"]["err"]).read_text()
    later = [s[k] for k in ("R1L1_warm", "R2L1_watchdog", "R2L1_cold", "R2L1_warm")]
    assert all(x["skipped"] and x["rc"] is None for x in later)
    m = json.loads((out / "manifest.json").read_text())
    assert m["launch_hung"] and "no warm trace" in m["fit"]["skipped"]
    assert not out.with_name("fc.tar.gz").exists()


def test_a_bounded_launch_that_gives_up_keeps_its_shape_from_hanging(tmp_path: Path) -> None:
    """A put that never lands at 1x1: the bounded-wait launch gives up (exit 1, its
    records in the log), the unbounded 1x1 launches are not made, 2x1 runs on."""
    rc, out = record(
        tmp_path, {"FAKE_MISSING": "1,1"}, "--shapes", "1x1,2x1", "--no-tar", "--no-ktrace"
    )
    assert rc == 1
    s = steps(out)
    assert s["R1L1_watchdog"]["rc"] == 1 and not s["R1L1_watchdog"]["timed_out"]
    err = (out / s["R1L1_watchdog"]["err"]).read_text()
    assert "CTA   0 task 0 k.conv [PROJ] timeout: PROJ[0]" in err and "255 released" in err
    assert all("would hang" in s[k]["skipped"] for k in ("R1L1_cold", "R1L1_warm"))
    assert s["R2L1_watchdog"]["rc"] == s["R2L1_cold"]["rc"] == s["R2L1_warm"]["rc"] == 0
    m = json.loads((out / "manifest.json").read_text())
    assert not m["launch_hung"] and m["watchdog_ms"] == 2000.0


def test_the_ktrace_launch_is_recorded(tmp_path: Path) -> None:
    """By default a warm launch of the ktrace build a shape, after the stamps' launches:
    its file in ktrace/ and its result naming the CTAs read back; a failed one (1x2's
    check) logged like the others. The fake writes the file with flydsl's writer."""
    pytest.importorskip("flydsl")
    rc, out = record(tmp_path, {"FAKE_WRONG": "1,2"}, "--shapes", "1x1,1x2", "--no-tar")
    assert rc == 1
    s = steps(out)
    names = list(s)
    assert names.index("R1L1_warm") < names.index("R1L1_ktrace") < names.index("R1L2_watchdog")
    argv = s["R1L1_ktrace"]["argv"]
    assert s["R1L1_ktrace"]["rc"] == 0 and argv[argv.index("--ktrace") + 1].endswith(
        "ktrace/R1L1_ktrace.pftrace.gz"
    )
    assert s["R1L2_ktrace"]["rc"] == 1 and "core_out" in (out / s["R1L2_ktrace"]["err"]).read_text()
    res = json.loads((out / "results" / "R1L1_ktrace.json").read_text())
    assert res["ktrace_build"] and res["ktrace_ctas"] == 256 and "ktrace_error" not in res
    assert (out / "ktrace" / "R1L1_ktrace.pftrace.gz").is_file()
    m = json.loads((out / "manifest.json").read_text())
    assert m["ktrace"].startswith("ktrace/<shape>_ktrace.pftrace.gz: a warm launch")
    assert m["fit"]["train"] == ["R1L1_warm.json"]  # the fit reads the stamps' traces only


def test_a_machine_that_cannot_launch_is_refused_before_the_folder(tmp_path: Path) -> None:
    """Without --kda-sim the launches are this machine's: here (no ROCm GPU) the script
    stops at once, exit 2, naming why, and writes no folder."""
    from kda_kernel.flydsl.run import rocm_gpu_present

    if rocm_gpu_present():
        pytest.skip("this machine has a ROCm GPU")
    out = tmp_path / "fc"
    proc = subprocess.run(
        ["bash", str(ROOT / "scripts" / "first_contact_mi355x.sh"), "--out", str(out)],
        env=os.environ | {"PYTHON": sys.executable, "COMPILE_ONLY": "1"},
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 2, proc.stderr
    assert "no launch can be made here: no ROCm GPU here" in proc.stderr
    assert "COMPILE_ONLY" not in proc.stderr  # the script unsets it: not the reason
    assert not out.exists()
    proc = subprocess.run(  # a python without kda-sim: named, before anything runs
        ["bash", str(ROOT / "scripts" / "first_contact_mi355x.sh"), "--out", str(out)],
        env=os.environ | {"PYTHON": "false"}, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 2 and "false cannot import kda-sim" in proc.stderr
    assert not out.exists()


@pytest.mark.parametrize(
    ("gpu", "said"),
    [("gfx942", "this GPU is gfx942, not gfx950: pass --arch gfx942"),
     ("gfx90a", "this GPU is gfx90a; the FlyDSL K1 builds for gfx942, gfx950")],
)  # fmt: skip
def test_a_gpu_of_another_arch_is_named(
    gpu: str, said: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    from kda_kernel.flydsl import first_contact as fc

    monkeypatch.setattr(fc, "unavailable_reason", lambda: None)
    monkeypatch.setattr(fc, "missing", lambda: None)
    monkeypatch.setattr(fc.RocmRuntime, "arch", lambda self: gpu)
    assert fc.main(["--out", str(tmp_path / "fc")]) == 2
    assert said in capsys.readouterr().err and not (tmp_path / "fc").exists()
    monkeypatch.setattr(fc, "missing", lambda: "flydsl is not installed; run ...")
    assert fc.main(["--out", str(tmp_path / "fc")]) == 2
    assert "flydsl is not installed" in capsys.readouterr().err

    def no_torch() -> None:
        raise ModuleNotFoundError("No module named 'torch'", name="torch")

    monkeypatch.setattr(fc, "unavailable_reason", no_torch)
    assert fc.main(["--out", str(tmp_path / "fc")]) == 2
    assert "torch is not installed" in capsys.readouterr().err


def test_a_linker_only_rocm_path_is_not_the_runs(tmp_path: Path) -> None:
    """``flydsl_env.sh --print-env`` exports ROCM_PATH at a root holding only a linker:
    the script unsets it (a ROCm install's, with lib/, is kept), and the record's
    versions step keeps the environment the launches saw."""
    linker_only, rocm = tmp_path / "linker_only", tmp_path / "rocm"
    (linker_only / "llvm" / "bin").mkdir(parents=True)
    (rocm / "lib").mkdir(parents=True)
    for root, kept in ((linker_only, None), (rocm, str(rocm))):
        run_dir = tmp_path / f"run_{root.name}"
        run_dir.mkdir()
        _, out = record(run_dir, {"ROCM_PATH": str(root)}, "--shapes", "4x4", "--no-tar")
        env = json.loads((out / steps(out)["versions"]["out"]).read_text())["env"]
        assert env.get("ROCM_PATH") == kept and "COMPILE_ONLY" not in env
