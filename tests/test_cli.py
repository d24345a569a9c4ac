"""``kda-sim simulate`` as a user runs it: exit codes, files, messages."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kda_sim.cli import main


def test_simulate_prints_makespan_and_stage_table(capsys) -> None:
    assert main(["simulate", "--gpu", "mi355x", "--R", "1", "--L", "1"]) == 0
    out = capsys.readouterr().out
    assert "makespan" in out and "k.recur" in out and "occupancy" in out


def test_simulate_json_summary(capsys) -> None:
    assert main(["simulate", "--gpu", "h200", "--R", "1", "--L", "2", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["deadlock"] is False and d["ctas"] == 256 and d["makespan_ns"] > 0


def test_nw_first_is_a_flag_and_shortens_the_mi355x_launch(capsys) -> None:
    span = {}
    for flag in ([], ["--nw-first"]):
        assert main(["simulate", "--gpu", "mi355x", "--R", "1", "--L", "1", "--json", *flag]) == 0
        d = json.loads(capsys.readouterr().out)
        assert d["config"]["nw_first"] is bool(flag)
        span[bool(flag)] = d["makespan_ns"]
    assert span[True] < span[False]


def test_deadlock_is_exit_1_and_names_the_wait(capsys) -> None:
    assert main(["simulate", "--gpu", "h200-stock", "--R", "4", "--L", "2", "--json"]) == 1
    d = json.loads(capsys.readouterr().out)
    assert d["deadlock"] and d["makespan_ns"] is None and d["stuck_count"] == 256
    assert "not resident" in d["stuck"][0]["reason"]


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["--R", "17", "--L", "1"], "S = R L = 17"),
        (["--L", "17"], "L = 17 > 16"),
        (["--nb", "0"], "nb = 0"),
        (["--R", "0"], "R = 0"),
        (["--gpu", "a100"], "unknown GPU"),
        (["--R", "10", "--L", "1"], "LDS"),
        (["--occupancy", "0"], "occupancy"),
    ],
)
def test_impossible_input_is_exit_2_naming_the_constraint(argv, needle, capsys) -> None:
    assert main(["simulate", *argv]) == 2
    assert needle in capsys.readouterr().err


def test_out_and_png_are_written_and_never_overwritten(tmp_path: Path, capsys) -> None:
    out, png = tmp_path / "t.json", tmp_path / "t.png"
    assert main(["simulate", "--R", "1", "--L", "1", "--out", str(out), "--png", str(png)]) == 0
    assert json.loads(out.read_text())["traceEvents"]
    assert png.read_bytes()[:4] == b"\x89PNG"
    out.write_text("mine")
    assert main(["simulate", "--R", "1", "--L", "1", "--out", str(out)]) == 2
    assert out.read_text() == "mine"
    assert "--force" in capsys.readouterr().err


KERNEL_RUN_ARGV = [
    "kernel",
    "run",
    "--R",
    "2",
    "--L",
    "2",
    "--nb",
    "4",
    "--kda0",
    "56",
    "--check",
    "--graph",
    "--replays",
    "3",
    "--watchdog-ms",
    "50",
    "--inject",
    "drop",
    "--prefetch-weights",
    "2",
    "--nw-first",
    "off",
    "--json",
]


def test_kernel_run_passes_every_option_as_kernel_run_takes_it(monkeypatch, tmp_path, capsys):
    """The CLI's call must bind to kda_kernel.triton.run.run's signature and give a valid Build
    (a renamed keyword once made every ``kda-sim kernel run`` a TypeError)."""
    import inspect

    import kda_kernel.triton.run as krun
    from kda_kernel.triton.launch import Build

    real = krun.run
    seen: dict = {}

    def spy(*args, **kwargs):
        seen.update(inspect.signature(real).bind(*args, **kwargs).arguments)
        Build(seen["cfg"], **(seen.get("build") or {})).validate()
        return {"ok": True}

    monkeypatch.setattr(krun, "run", spy)
    trace = tmp_path / "t.json"
    assert main([*KERNEL_RUN_ARGV, "--trace", str(trace)]) == 0
    assert json.loads(capsys.readouterr().out) == {"ok": True, "trace": str(trace)}
    cfg = seen["cfg"]
    assert (cfg.R, cfg.L, cfg.nb, cfg.kda0) == (2, 2, 4, 56)
    assert not cfg.nw_first and cfg.onw_first  # as asked; on_w as the build recommends
    assert seen["inject"] == "drop" and seen["watchdog_ms"] == 50 and seen["replays"] == 3
    assert seen["build"] == {"prefetch": 2}
    # written into a temporary file beside it, put in place (kda_sim.commands.common.write_output)
    assert Path(seen["trace_path"]).parent == trace.parent and trace.exists()


def _kernel_run_cfg(monkeypatch, argv: list[str]):
    import kda_kernel.triton.run as krun

    seen: dict = {}
    monkeypatch.setattr(krun, "run", lambda cfg, **kw: seen.update(cfg=cfg) or {"ok": True})
    assert main(["kernel", "run", *argv, "--json"]) == 0
    return seen["cfg"]


@pytest.mark.parametrize(("L", "nw_first"), [(1, True), (2, True), (4, False)])
def test_kernel_run_fills_in_the_triton_builds_recommended_variants(
    monkeypatch, capsys, L, nw_first
) -> None:
    """Without --nw-first the CLI runs the Triton build's recommendation, said explicitly
    in the configuration it passes (and so in the trace's meta)."""
    from kda_kernel.triton.defaults import default_config

    cfg = _kernel_run_cfg(monkeypatch, ["--L", str(L)])
    assert cfg == default_config(1, L)
    assert (cfg.nw_first, cfg.onw_first) == (nw_first, True)
    asked = _kernel_run_cfg(monkeypatch, ["--L", str(L), "--nw-first", "off"])
    assert not asked.nw_first and asked.onw_first


def test_kernel_run_kda_tickets_reaches_the_build(monkeypatch, capsys) -> None:
    """--kda-tickets: the recommended configuration with the schedule on (the static
    placement unless asked)."""
    from kda_kernel.triton.defaults import default_config

    cfg = _kernel_run_cfg(monkeypatch, ["--R", "2", "--L", "1", "--kda-tickets"])
    assert cfg == default_config(2, 1, kda_tickets=True) and not cfg.gemv_tickets
    assert not _kernel_run_cfg(monkeypatch, ["--R", "2", "--L", "1"]).kda_tickets


def test_kernel_run_refuses_gemv_tickets_naming_it(capsys) -> None:
    assert main(["kernel", "run", "--gemv-tickets"]) == 2
    err = capsys.readouterr().err
    assert "gemv_tickets" in err and "Traceback" not in err


def test_kernel_run_refuses_a_variant_the_triton_build_cannot_build(capsys) -> None:
    """The Triton K1 asks for on_w in k.stage only: --onw-first off is exit 2 naming it,
    before any GPU work."""
    assert main(["kernel", "run", "--onw-first", "off"]) == 2
    err = capsys.readouterr().err
    assert "onw_first" in err and "Traceback" not in err


@pytest.mark.skipif(
    __import__("torch").cuda.is_available(), reason="checks the answer on a machine without a GPU"
)
def test_kernel_run_without_a_gpu_is_exit_2_with_a_message(capsys) -> None:
    assert main(KERNEL_RUN_ARGV) == 2
    err = capsys.readouterr().err
    assert "no CUDA GPU" in err and "Traceback" not in err


def test_kernel_run_never_overwrites_a_trace(tmp_path: Path, capsys) -> None:
    trace = tmp_path / "mine.json"
    trace.write_text("recorded")
    assert main([*KERNEL_RUN_ARGV, "--trace", str(trace)]) == 2
    assert "exists; pass --force" in capsys.readouterr().err
    assert trace.read_text() == "recorded"


def test_kernel_run_with_a_missing_backend_is_exit_2_naming_the_registered(capsys) -> None:
    assert main(["kernel", "run", "--backend", "cuda"]) == 2
    err = capsys.readouterr().err
    assert "no backend 'cuda' registered in kda_sim.backends" in err and "triton" in err


def test_kernel_run_by_the_torch_backend_runs_the_reference(capsys) -> None:
    assert main(["kernel", "run", "--backend", "torch", "--R", "1", "--L", "1", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["backend"] == "torch" and out["core_out_rms"] > 0
    assert main(["kernel", "run", "--backend", "torch", "--graph"]) == 2
    assert "one untraced step: not ['graph']" in capsys.readouterr().err


def test_a_command_module_that_does_not_import_is_an_error_not_a_missing_command(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import sys

    import kda_sim.commands
    from kda_sim.cli import build_parser

    # a command's module is imported when its parser is built: every one for the whole
    # parser (--help), the named one alone for a run
    monkeypatch.delattr(kda_sim.commands, "floor", raising=False)
    monkeypatch.setitem(sys.modules, "kda_sim.commands.floor", None)  # import fails
    with pytest.raises(ImportError):
        build_parser()
    with pytest.raises(ImportError):
        main(["floor", "--help"])
    monkeypatch.undo()
    sub = next(a for a in build_parser()._actions if a.choices and "floor" in a.choices)
    assert "floor" in sub.choices
