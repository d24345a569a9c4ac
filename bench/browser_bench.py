"""The app's first complete render in a real browser (a benchmark, not a timed test).

    python bench/browser_bench.py [--repeat N] [--traces DIR] [--floor] [--cold-store]

Each repeat starts ``streamlit run app.py`` headless on the bundled traces (``traces/``,
or ``--traces``), waits for its health check, opens the page in a fresh headless Chromium
(Debian's ``chromium`` and ``chromium-driver``, found as tests/app/test_browser.py finds
them) and times from navigation to the first *complete* render: the timeline's bars
drawn, no spinner left and the script run over (Streamlit's running indicator gone).
That is the server's first visitor (the page's imports on the script thread, the trace
read, its simulation, the figure). The same browser then loads the page again: a later
visitor, with the server's caches warm. Server and browser start-up are not timed.

The app keeps the default view's run on disk (kda_sim/app/run_store.py) in a cache folder
of the benchmark's own (``KDA_SIM_CACHE``). By default one untimed visit fills it first:
every timed server is a restarted one, as a user's is after the first visit. With
``--cold-store`` each server starts with an empty folder: the first visit ever, or the
first after the trace, the profile or the code changed.

Prints each repeat and the median, min and max of both; the goal is a first render under
2 s. Run it with the checkout first on the path (``PYTHONPATH=.``) on a quiet machine:
the figure moves with the load. ``--floor`` times a page of one plotly chart of two bars
the same way, in the same run: what Streamlit and the browser take for any page here.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = Path("/usr/bin/chromium")
DRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
START_S = 180  # a cold server on a loaded machine: imports before the health check
DRAW_S = 300
GOAL_S = 2.0
BARS = "[data-testid='stPlotlyChart'] .js-plotly-plot .barlayer .point"
# the page is complete when the chart has bars, no spinner is left and the app says its
# script is no longer running (Streamlit's data-test-script-state on the app's root)
STATE_JS = """
const app = document.querySelector("[data-testid='stApp']");
return [document.querySelectorAll(arguments[0]).length > 0,
        document.querySelectorAll("[data-testid='stSpinner']").length,
        app ? (app.dataset.testScriptState || "") : ""];
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# the floor: a page with one chart (the page is complete when its bars are drawn)
FLOOR_APP = """import plotly.graph_objects as go
import streamlit as st
st.title("floor")
st.plotly_chart(go.Figure(go.Bar(x=[1, 2], y=[1, 2])))
"""


@contextmanager
def server(traces: Path, app: Path = ROOT / "app.py", store: Path | None = None) -> Iterator[str]:
    """A fresh ``streamlit run APP`` on localhost, healthy; its URL. ``store``: the app's
    cache folder (``KDA_SIM_CACHE``), else a fresh empty one."""
    port = _free_port()
    cmd = [
        sys.executable, "-m", "streamlit", "run", str(app),
        "--server.headless", "true", "--server.port", str(port),
        "--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false",
    ]  # fmt: skip
    empty = tempfile.TemporaryDirectory(prefix="kda-sim-bench-cache-")
    env = {**os.environ, "KDA_SIM_TRACES": str(traces), "KDA_SIM_CACHE": str(store or empty.name)}
    with empty, tempfile.TemporaryFile() as log:
        proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
        try:
            url = f"http://127.0.0.1:{port}"
            deadline = time.monotonic() + START_S
            while True:
                try:
                    with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as r:
                        if r.status == 200:
                            break
                except OSError:
                    pass
                if proc.poll() is not None or time.monotonic() > deadline:
                    log.seek(0)
                    raise SystemExit(f"streamlit did not start:\n{log.read().decode()}")
                time.sleep(0.2)
            yield url
        finally:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()


@contextmanager
def browser() -> Iterator[object]:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = str(CHROMIUM)
    profile = tempfile.mkdtemp(prefix="kda-sim-bench-chromium-")
    for flag in (
        "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        "--disable-dev-shm-usage", "--window-size=1600,1250", f"--user-data-dir={profile}",
    ):  # fmt: skip
        opts.add_argument(flag)
    driver = webdriver.Chrome(options=opts, service=Service(DRIVER))
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def complete_render(driver: object, url: str) -> float:
    """Seconds from navigation to the drawn timeline with nothing still running."""
    from selenium.webdriver.support.ui import WebDriverWait

    def done(d: object) -> bool:
        bars, spinners, state = d.execute_script(STATE_JS, BARS)  # type: ignore[attr-defined]
        return bool(bars) and not spinners and state != "running"

    t = time.perf_counter()
    driver.get(url)  # type: ignore[attr-defined]
    WebDriverWait(driver, DRAW_S, poll_frequency=0.02).until(done)
    return time.perf_counter() - t


def measure(
    traces: Path, repeat: int, app: Path = ROOT / "app.py", cold_store: bool = False
) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {"first_visitor": [], "later_visitor": []}
    with tempfile.TemporaryDirectory(prefix="kda-sim-bench-store-") as d:
        store = None if cold_store else Path(d)
        if store is not None:  # one untimed visit: what a restarted server finds kept
            with server(traces, app, store) as url, browser() as driver:
                complete_render(driver, url)
        for i in range(repeat):
            first, later = _visits(traces, app, store)
            out["first_visitor"].append(round(first, 3))
            out["later_visitor"].append(round(later, 3))
            print(f"repeat {i + 1}/{repeat}: first visitor {first:.2f} s, later {later:.2f} s")
    return out


def _visits(traces: Path, app: Path, store: Path | None) -> tuple[float, float]:
    """A fresh server's first visitor and, in the same browser, a later one."""
    with server(traces, app, store) as url, browser() as driver:
        return complete_render(driver, url), complete_render(driver, url)


def summary(xs: list[float]) -> dict[str, float]:
    return {
        "median_s": round(statistics.median(xs), 3),
        "min_s": round(min(xs), 3),
        "max_s": round(max(xs), 3),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5, help="fresh servers to time (default 5)")
    ap.add_argument("--traces", type=Path, default=ROOT / "traces", help="the bundled traces")
    ap.add_argument(
        "--floor",
        action="store_true",
        help="also time a page of one small chart, repeat for repeat with the app's",
    )
    ap.add_argument(
        "--cold-store",
        action="store_true",
        help="each server starts with an empty run store (the first visit ever)",
    )
    args = ap.parse_args()
    if args.repeat < 1:
        ap.error("--repeat: at least 1")
    if not CHROMIUM.exists() or not Path(DRIVER).exists():
        ap.error("needs Debian's chromium and chromium-driver (/usr/bin/chromium, chromedriver)")
    if not any(args.traces.glob("*.json")):
        ap.error(f"--traces {args.traces}: no .json trace there")
    runs = measure(args.traces, args.repeat, cold_store=args.cold_store)
    report: dict[str, object] = {k: {**summary(v), "runs": v} for k, v in runs.items()}
    if args.floor:
        with tempfile.TemporaryDirectory(prefix="kda-sim-floor-") as d:
            app = Path(d) / "floor.py"
            app.write_text(FLOOR_APP)
            print("the floor: one small chart")
            floor = measure(args.traces, args.repeat, app, cold_store=True)  # no store
        report["floor"] = {k: {**summary(v), "runs": v} for k, v in floor.items()}
    report["run_store"] = "empty each server" if args.cold_store else "kept from a first visit"
    report["goal_s"] = GOAL_S
    report["cpus"] = os.cpu_count()
    report["load_avg_1min"] = round(os.getloadavg()[0], 2)
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
