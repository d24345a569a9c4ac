"""``kda-sim kernel run``: its flags come from the default kernel's ``real_backends``
hook; its --trace is checked before any backend work and written through
``write_output`` (a temporary file put in place)."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import kda_sim.commands.kernel as kernel_cmd
from kda_sim.cli import main
from kda_sim.commands.kernel import add_parser, given_variants, real_kernel
from kda_sim.kernels.registry import DEFAULT_KERNEL, get


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser()
    add_parser(p.add_subparsers(dest="command"))
    return p


def test_the_flags_are_the_kernels_faults_and_schedules() -> None:
    spec, offers = real_kernel()
    assert spec is get(DEFAULT_KERNEL)
    p = _parser()
    for fault in offers.faults:
        assert p.parse_args(["kernel", "run", "--inject", fault]).inject == fault
    with pytest.raises(SystemExit):  # argparse: exit 2 for a fault the kernel has not
        p.parse_args(["kernel", "run", "--inject", "no-such-fault"])
    assert offers.schedules  # K1 has ticket schedules
    for name in offers.schedules:
        args = p.parse_args(["kernel", "run", f"--{name.replace('_', '-')}"])
        assert given_variants(args) == {name: True}


class FakeBackend:
    """A backend that writes ``text`` as its trace, after ``during(path)`` runs."""

    name = "fake"
    faults: tuple[str, ...] = ()

    def __init__(self, text: str = "trace", during=None) -> None:
        self.text = text
        self.during = during
        self.calls: list[dict] = []

    def run_shape(self, cfg, **request):
        self.calls.append(request)
        if self.during is not None:
            self.during()
        if request.get("trace_path") is not None:
            Path(request["trace_path"]).write_text(self.text)
        return {"R": cfg.R, "trace": str(request.get("trace_path"))}

    def exit_code(self, error: BaseException) -> int | None:
        return None


@pytest.fixture
def backend(monkeypatch: pytest.MonkeyPatch) -> FakeBackend:
    fake = FakeBackend()
    monkeypatch.setattr(kernel_cmd, "load_backend", lambda name: fake)
    return fake


def unwritable_dir(tmp_path: Path) -> Path:
    """A folder this process cannot create a file in (root ignores modes: /proc/self)."""
    d = tmp_path / "ro"
    d.mkdir()
    d.chmod(0o555)
    for candidate in (d, Path("/proc/self")):
        if not os.access(candidate, os.W_OK | os.X_OK):
            return candidate
    pytest.skip("no folder here refuses this process a file")


def test_a_bad_trace_path_is_exit_2_before_the_backend_is_loaded(
    tmp_path: Path, capsys, monkeypatch
) -> None:
    def never(name: str) -> None:
        raise AssertionError("the backend was loaded before --trace was checked")

    monkeypatch.setattr(kernel_cmd, "load_backend", never)
    (tmp_path / "mine.json").write_text("recorded")
    (tmp_path / "d").mkdir()
    cases = [
        ([str(tmp_path / "no" / "t.json")], "no such directory"),
        ([str(tmp_path / "mine.json")], "exists; pass --force"),
        ([str(tmp_path / "d"), "--force"], "is a directory"),
        ([str(unwritable_dir(tmp_path) / "t.json"), "--force"], "cannot write in"),
    ]
    for extra, said in cases:
        assert main(["kernel", "run", "--trace", *extra]) == 2, extra
        err = capsys.readouterr().err
        assert said in err and f"--trace {extra[0]}" in err, (extra, err)
    assert (tmp_path / "mine.json").read_text() == "recorded"


def test_a_bad_trace_path_imports_no_gpu_stack(tmp_path: Path) -> None:
    """In a fresh process: refused before torch, Triton or the backends are imported."""
    code = (
        "import sys; from kda_sim.cli import main; "
        f"rc = main(['kernel', 'run', '--trace', {str(tmp_path / 'no' / 't.json')!r}]); "
        "print(rc, sorted(m for m in ('torch', 'triton', 'kda_kernel') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split("\n")[0] == "2 []", out


def test_the_trace_is_written_through_a_temporary_file(tmp_path: Path, backend, capsys) -> None:
    trace = tmp_path / "t.json"
    assert main(["kernel", "run", "--trace", str(trace), "--json"]) == 0
    assert trace.read_text() == "trace"
    (given,) = backend.calls
    tmp = Path(given["trace_path"])
    assert tmp.parent == tmp_path and tmp != trace and not tmp.exists()  # put in place
    assert json.loads(capsys.readouterr().out)["trace"] == str(trace)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.json"]


def test_a_trace_that_appeared_during_the_run_is_kept(tmp_path: Path, backend, capsys) -> None:
    trace = tmp_path / "t.json"
    backend.during = lambda: trace.write_text("theirs")
    assert main(["kernel", "run", "--trace", str(trace)]) == 2
    assert "appeared while we worked" in capsys.readouterr().err
    assert trace.read_text() == "theirs"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.json"]  # no temporary left
    assert main(["kernel", "run", "--trace", str(trace), "--force"]) == 0
    assert trace.read_text() == "trace"


def test_a_run_that_fails_leaves_no_trace(tmp_path: Path, backend) -> None:
    def fail() -> None:
        raise RuntimeError("the GPU fell over")

    backend.during = fail
    with pytest.raises(RuntimeError, match="fell over"):  # not the backend's: a traceback
        main(["kernel", "run", "--trace", str(tmp_path / "t.json")])
    assert list(tmp_path.iterdir()) == []


def test_without_trace_the_backend_is_asked_for_none(backend, capsys) -> None:
    assert main(["kernel", "run", "--json"]) == 0
    assert "trace_path" not in backend.calls[0]


def test_replays_without_graph_is_refused_by_name(backend, capsys) -> None:
    """--replays counts --graph's replays: alone it would be silently unused."""
    assert main(["kernel", "run", "--replays", "5"]) == 2
    assert "--replays" in capsys.readouterr().err and backend.calls == []
    assert main(["kernel", "run", "--json"]) == 0
    assert "replays" not in backend.calls[0]  # the backend's own default
