"""bench/browser_bench.py's plan, without a browser: which servers it starts, in which
order, with which run store and checkout (it times nothing here)."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import SimpleNamespace

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))

import browser_bench as bb  # noqa: E402


@pytest.fixture
def started(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, Path | None, Path]]:
    """The servers measure() starts (app, store, checkout), each visited instantly."""
    log: list[tuple[str, Path | None, Path]] = []

    @contextmanager
    def server(traces: Path, app: Path, store: Path | None, tree: Path) -> Iterator[bb.Server]:
        log.append((app.name, store, tree))
        yield bb.Server(f"http://{app.name}", os.getpid())

    @contextmanager
    def browser() -> Iterator[object]:
        yield SimpleNamespace(service=SimpleNamespace(process=SimpleNamespace(pid=os.getpid())))

    monkeypatch.setattr(bb, "server", server)
    monkeypatch.setattr(bb, "browser", browser)
    monkeypatch.setattr(bb, "complete_render", lambda driver, url: 1.0)
    return log


def test_pages_take_turns_and_stores_are_filled_once(
    started: list[tuple[str, Path | None, Path]], tmp_path: Path
) -> None:
    pages = [
        bb.Page("app", tmp_path / "app.py", ROOT, True),
        bb.Page("baseline", tmp_path / "base.py", tmp_path, True),
        bb.Page("floor", tmp_path / "floor.py", ROOT, False),
    ]
    out = bb.measure(tmp_path, 2, pages)
    names = [a for a, _, _ in started]
    # one untimed visit a page that keeps runs, then the pages in turn each repeat
    assert names == ["app.py", "base.py", *["app.py", "base.py", "floor.py"] * 2]
    stores = {a: s for a, s, _ in started}
    assert stores["floor.py"] is None  # an empty folder of its own each server
    assert stores["app.py"] != stores["base.py"]  # each checkout's runs apart
    assert [t for a, _, t in started if a == "base.py"] == [tmp_path] * 3
    assert out["baseline"]["first_visitor"] == out["baseline"]["later_visitor"] == [1.0, 1.0]
    assert all(x >= 0 for x in out["baseline"]["first_visitor_cpu"])


def test_cpu_seconds_counts_a_child_s_work(tmp_path: Path) -> None:
    """A process tree's CPU time from /proc: a busy child's second shows."""
    import subprocess

    spin = "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.3: pass\n"
    with subprocess.Popen(
        [sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE
    ) as parent:
        before = bb.cpu_seconds([parent.pid])
        child = subprocess.run([sys.executable, "-c", spin], check=True)  # our child, not its
        assert child.returncode == 0
        assert bb.cpu_seconds([parent.pid]) - before < 0.2  # another tree's work: not counted
        parent.stdin.close()  # type: ignore[union-attr]
    me = bb.cpu_seconds([os.getpid()])
    subprocess.run([sys.executable, "-c", spin], check=True)
    assert bb.cpu_seconds([os.getpid()]) - me >= 0.25  # a reaped child's CPU is ours


def test_cold_store_pages_fill_nothing_first(
    started: list[tuple[str, Path | None, Path]], tmp_path: Path
) -> None:
    bb.measure(tmp_path, 1, [bb.Page("app", tmp_path / "app.py", ROOT, False)])
    assert started == [("app.py", None, ROOT)]


def test_a_baseline_without_an_app_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(bb, "CHROMIUM", tmp_path)  # present: the check under test is later
    monkeypatch.setattr(bb, "DRIVER", str(tmp_path))
    monkeypatch.setattr(sys, "argv", ["browser_bench.py", "--baseline", str(tmp_path)])
    with pytest.raises(SystemExit) as e:
        bb.main()
    assert e.value.code == 2
    assert f"--baseline {tmp_path}: no app.py there" in capsys.readouterr().err


def test_a_page_is_drawn_once_the_timelines_picture_is_loaded() -> None:
    # the timeline view opens on a picture of its chart, in a container keyed
    # PICTURE_KEY (Streamlit's class st-key-<key>): the bench waits for its image
    from kda_sim.app.views.common import PICTURE_KEY

    assert f".st-key-{PICTURE_KEY} img" == bb.PICTURE
    assert "arguments[1]" in bb.STATE_JS and "naturalWidth" in bb.STATE_JS
