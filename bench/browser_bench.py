"""The app's first complete render in a real browser (a benchmark, not a timed test).

    python bench/browser_bench.py [--repeat N] [--traces DIR] [--floor] [--figure]
                                  [--cold-store] [--baseline DIR]

Each repeat starts ``streamlit run app.py`` headless on the bundled traces (``traces/``,
or ``--traces``), waits for its health check, opens the page in a fresh headless Chromium
(Debian's ``chromium`` and ``chromium-driver``, found as tests/app/test_browser.py finds
them) and times from navigation to the first *complete* render: the timeline drawn (its
picture loaded, or the chart's bars), no spinner left and the script run over
(Streamlit's running indicator gone). That is the server's first visitor (the page's
imports on the script thread, the trace read, its simulation, the figure and its
picture). The same browser then loads the page again: a later visitor, with the server's
caches warm. Server and browser start-up are not timed.

The app keeps the default view's run on disk (kda_sim/app/run_store.py) in a cache folder
of the benchmark's own (``KDA_SIM_CACHE``). By default one untimed visit fills it first:
every timed server is a restarted one, as a user's is after the first visit. With
``--cold-store`` each server starts with an empty folder: the first visit ever, or the
first after the trace, the profile or the code changed.

Prints each repeat and the median, min and max of both; the goal is a first render under
2 s. Run it with the checkout first on the path (``PYTHONPATH=.``) on a quiet machine:
the figure moves with the load. ``--floor`` times a page of one plotly chart of two bars
the same way, in the same run: what Streamlit and the browser take for any page here.
``--figure`` times a page of the default view's timeline alone (built once a server:
its later visitor is the chart in the browser). ``--baseline DIR`` times another
checkout's app (a copy of main, say) the same way, and its figure with ``--figure``. The
pages take turns within each repeat (this app, the baseline, the figures, the floor), so
that a before and after are measured under the same load.
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
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = Path("/usr/bin/chromium")
DRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
START_S = 180  # a cold server on a loaded machine: imports before the health check
DRAW_S = 300
GOAL_S = 2.0
BARS = "[data-testid='stPlotlyChart'] .js-plotly-plot .barlayer .point"
# the timeline view opens on a picture of its chart (kda_sim/app/views/common.py
# PICTURE_KEY): drawn once the image is decoded
PICTURE = ".st-key-timeline_picture img"
# the page is complete when the chart has bars or the picture is loaded, no spinner is
# left and the app says its script is no longer running (Streamlit's
# data-test-script-state on the app's root)
STATE_JS = """
const app = document.querySelector("[data-testid='stApp']");
const img = document.querySelector(arguments[1]);
const picture = !!(img && img.complete && img.naturalWidth > 0);
return [document.querySelectorAll(arguments[0]).length > 0 || picture,
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


# the default view's timeline alone (the first bundled trace overlaid on its simulation,
# its critical path), as the checkout's own code draws it; built once a server, so a
# later visitor times the chart in the browser and little else
FIGURE_APP = """import streamlit as st
from kda_sim.app import data
from kda_sim.app.figures import Layer, timeline_figure
from kda_sim.app.views.common import CHART_CONFIG
from kda_sim.timeline.critical import critical_path
st.set_page_config(layout="wide")
@st.cache_resource
def figure():
    path = data.bundled_traces()[0]
    run = data.run_of_trace(path.name, "bundled", data.read_bundled(path))
    real = run.real_linked
    layers = (Layer("real", real, False), Layer("simulated", run.sim, True))
    return timeline_figure(layers, critical=critical_path(real))
st.plotly_chart(figure(), key="timeline_chart", config=CHART_CONFIG, width="stretch")
"""


class Server(NamedTuple):
    url: str
    pid: int


@contextmanager
def server(
    traces: Path, app: Path = ROOT / "app.py", store: Path | None = None, tree: Path = ROOT
) -> Iterator[Server]:
    """A fresh ``streamlit run APP`` on localhost, healthy; its URL and process.
    ``store``: the app's cache folder (``KDA_SIM_CACHE``), else a fresh empty one;
    ``tree``: the checkout whose ``kda_sim`` it imports (first on its path)."""
    port = _free_port()
    cmd = [
        sys.executable, "-m", "streamlit", "run", str(app),
        "--server.headless", "true", "--server.port", str(port),
        "--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false",
    ]  # fmt: skip
    empty = tempfile.TemporaryDirectory(prefix="kda-sim-bench-cache-")
    path = os.pathsep.join(x for x in (str(tree), os.environ.get("PYTHONPATH", "")) if x)
    env = {
        **os.environ,
        "PYTHONPATH": path,
        "KDA_SIM_TRACES": str(traces),
        "KDA_SIM_CACHE": str(store or empty.name),
    }
    with empty, tempfile.TemporaryFile() as log:
        proc = subprocess.Popen(cmd, cwd=tree, env=env, stdout=log, stderr=subprocess.STDOUT)
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
            yield Server(url, proc.pid)
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


def cpu_seconds(roots: list[int]) -> float:
    """CPU time (user and system, with that of reaped children) of the processes
    ``roots`` and all their descendants, from /proc: the work done, which the machine's
    load slows but does not add to (a timing under load mostly waits for a core)."""
    tree: dict[int, list[int]] = {}
    cpu: dict[int, int] = {}
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            text = (d / "stat").read_text()
        except OSError:  # gone meanwhile
            continue
        f = text[text.rindex(")") + 2 :].split()  # after "pid (comm) "
        pid = int(d.name)
        tree.setdefault(int(f[1]), []).append(pid)
        cpu[pid] = sum(int(x) for x in f[11:15])  # utime stime cutime cstime
    total, todo, seen = 0, list(roots), set()
    while todo:
        pid = todo.pop()
        if pid in seen:
            continue
        seen.add(pid)
        total += cpu.get(pid, 0)
        todo += tree.get(pid, [])
    return total / os.sysconf("SC_CLK_TCK")


def complete_render(driver: object, url: str) -> float:
    """Seconds from navigation to the drawn timeline with nothing still running."""
    from selenium.webdriver.support.ui import WebDriverWait

    def done(d: object) -> bool:
        drawn, spinners, state = d.execute_script(STATE_JS, BARS, PICTURE)  # type: ignore[attr-defined]
        return bool(drawn) and not spinners and state != "running"

    t = time.perf_counter()
    driver.get(url)  # type: ignore[attr-defined]
    WebDriverWait(driver, DRAW_S, poll_frequency=0.02).until(done)
    return time.perf_counter() - t


@dataclass(frozen=True)
class Page:
    """A page to time: its script, the checkout whose ``kda_sim`` its server imports, and
    whether each server finds a run store kept from a first visit (else an empty one)."""

    label: str
    app: Path
    tree: Path = ROOT
    store: bool = True


def measure(traces: Path, repeat: int, pages: list[Page]) -> dict[str, dict[str, list[float]]]:
    """Each page's first and later visitor, ``repeat`` fresh servers each; the pages take
    turns within a repeat, so that each repeat's pages run under the same load."""
    keys = ("first_visitor", "later_visitor", "first_visitor_cpu", "later_visitor_cpu")
    out: dict[str, dict[str, list[float]]] = {p.label: {k: [] for k in keys} for p in pages}
    with ExitStack() as stack:
        stores: dict[str, Path] = {}
        for p in pages:
            if p.store:  # one untimed visit: what a restarted server finds kept
                d = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="kda-sim-store-")))
                with server(traces, p.app, d, p.tree) as srv, browser() as driver:
                    complete_render(driver, srv.url)
                stores[p.label] = d
        for i in range(repeat):
            for p in pages:
                with server(traces, p.app, stores.get(p.label), p.tree) as srv, browser() as drv:
                    got = _visits(srv, drv)
                for k, v in zip(keys, got, strict=True):
                    out[p.label][k].append(round(v, 3))
                print(
                    f"repeat {i + 1}/{repeat} {p.label}: first visitor {got[0]:.2f} s "
                    f"({got[2]:.2f} s of CPU), later {got[1]:.2f} s ({got[3]:.2f} s of CPU)"
                )
    return out


def _visits(srv: Server, driver: object) -> tuple[float, float, float, float]:
    """A fresh server's first visitor and, in the same browser, a later one: seconds
    each, and the CPU seconds the server and the browser spent on each."""
    procs = [srv.pid, driver.service.process.pid]  # type: ignore[attr-defined]
    c0 = cpu_seconds(procs)
    first = complete_render(driver, srv.url)
    c1 = cpu_seconds(procs)
    later = complete_render(driver, srv.url)
    return first, later, c1 - c0, cpu_seconds(procs) - c1


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
    ap.add_argument(
        "--figure",
        action="store_true",
        help="also time a page of the default view's timeline alone (its later visitor: "
        "the chart in the browser), and the baseline's with --baseline",
    )
    ap.add_argument(
        "--baseline",
        type=Path,
        metavar="DIR",
        help="also time another checkout's app (DIR/app.py, its own kda_sim), repeat for "
        "repeat with this one's: a before and after under the same load",
    )
    args = ap.parse_args()
    if args.repeat < 1:
        ap.error("--repeat: at least 1")
    if not CHROMIUM.exists() or not Path(DRIVER).exists():
        ap.error("needs Debian's chromium and chromium-driver (/usr/bin/chromium, chromedriver)")
    from kda_sim.importers import trace_files  # here: the bench times its own imports

    if not trace_files(args.traces):
        ap.error(f"--traces {args.traces}: no .json or .json.gz trace there")
    if args.baseline is not None and not (args.baseline / "app.py").is_file():
        ap.error(f"--baseline {args.baseline}: no app.py there")
    keep = not args.cold_store
    with tempfile.TemporaryDirectory(prefix="kda-sim-floor-") as d:
        floor_app, figure_app = Path(d) / "floor.py", Path(d) / "figure.py"
        floor_app.write_text(FLOOR_APP)
        figure_app.write_text(FIGURE_APP)
        pages = [Page("app", ROOT / "app.py", ROOT, keep)]
        if args.baseline is not None:
            base = args.baseline.resolve()
            pages.append(Page("baseline", base / "app.py", base, keep))
        if args.figure:
            pages.append(Page("figure", figure_app, ROOT, False))
            if args.baseline is not None:
                pages.append(Page("baseline figure", figure_app, args.baseline.resolve(), False))
        if args.floor:
            pages.append(Page("floor", floor_app, ROOT, False))  # keeps no run
        runs = measure(args.traces, args.repeat, pages)
    report: dict[str, object] = {k: {**summary(v), "runs": v} for k, v in runs["app"].items()}
    for label in ("baseline", "figure", "baseline figure", "floor"):
        if label in runs:
            report[label] = {k: {**summary(v), "runs": v} for k, v in runs[label].items()}
    if args.baseline is not None:
        report["baseline_dir"] = str(args.baseline)
    report["run_store"] = "empty each server" if args.cold_store else "kept from a first visit"
    report["goal_s"] = GOAL_S
    report["cpus"] = os.cpu_count()
    report["load_avg_1min"] = round(os.getloadavg()[0], 2)
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
