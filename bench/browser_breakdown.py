"""Where the app's first render goes: server, payload and browser, one part at a time.

    PYTHONPATH=. python bench/browser_breakdown.py [--floor] [--top N] [--json FILE]
                                                   [--no-browser] [--traces DIR]

A companion to ``browser_bench.py`` (which times the whole page): this one says what the
time is spent on, for the default view (the first bundled trace overlaid on its
simulation).

1. **The server's script run** (``streamlit.testing.v1.AppTest`` on ``app.py``, its run
   store filled first by another process: a restarted server): CPU seconds of a first
   run (the page's imports, the run read back, the figure) and of a later one (the
   caches warm), each under ``cProfile`` in the script's thread: the app's functions,
   Streamlit's element calls, plotly and the imports by cumulative time.
2. **The payload**: each element's message as the browser gets it (its protobuf bytes:
   the timeline's picture is its image's), and where the page draws a chart (not the
   timeline, which opens on a picture of it), the figure's JSON by field (hover texts,
   coordinates) with its points.
3. **The browser** (``streamlit run app.py`` in a fresh headless Chromium, as
   ``browser_bench.py`` runs it): a first and a later visit, each until the chart
   stopped drawing; for each, CPU seconds by process (the server; Chromium's browser,
   renderer, GPU, utility and zygote processes; from ``/proc``), the renderer's
   JavaScript self time by script file (the CDP sampling profiler: plotly.js's chunk is
   the chart, the others Streamlit's elements and shell) and how many times the chart
   was drawn (each bar's path set, counted in the page). ``--floor``: the same for
   ``browser_bench.py``'s one-chart page.

The sampling profiler adds to the renderer's CPU. The figures move with the machine's
load: run it on a quiet machine, or compare two trees with ``browser_bench.py
--baseline``.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import pstats
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from browser_bench import BARS, FLOOR_APP, ROOT, browser, complete_render, server

SAMPLE_US = 200  # the CDP profiler's sampling interval
SETTLE_S = 1.5  # a visit is over when no bar was drawn again for this long
SETTLE_MAX_S = 20.0
# counts, from the page's start, each time a bar's path is drawn (its ``d`` set): a
# draw of the whole chart sets it once a bar
DRAWS_JS = """
window.__kdaBarDraws = 0;
new MutationObserver(ms => { for (const m of ms) { const p = m.target.parentNode;
  if (p && p.classList && p.classList.contains("point")) window.__kdaBarDraws++; } })
  .observe(document, {attributes: true, attributeFilter: ["d"], subtree: true});
"""
BAR_DRAWS = "return [window.__kdaBarDraws || 0, document.querySelectorAll(arguments[0]).length]"
# cProfile rows kept: the app's own code and Streamlit's element calls
PROFILED = ("kda_sim/", "streamlit/elements/", "plotly/", "<frozen importlib._bootstrap>")


# -- 1. the server's script run -----------------------------------------------------------


# runs app.py in the script thread under cProfile; each run's stats to its own file
PROFILED_SCRIPT = """import cProfile, os, runpy, time
prof = cProfile.Profile(time.thread_time)  # the script thread's CPU, not the wall
n = len(os.listdir(os.environ["KDA_SIM_BREAKDOWN_STATS"]))
prof.enable()
try:
    runpy.run_path({app!r}, run_name="__main__")
finally:
    prof.disable()
    prof.dump_stats(os.path.join(os.environ["KDA_SIM_BREAKDOWN_STATS"], f"run{{n}}.prof"))
"""


# one run of the page in another process: what a restarted server finds in its run store
FILL_STORE = """from streamlit.testing.v1 import AppTest
AppTest.from_file({app!r}, default_timeout=300).run()
"""


def script_runs(top: int) -> dict[str, Any]:
    """A first and a later run of the page's script in AppTest, each profiled in the
    script's thread (its CPU seconds); the CPU seconds of the whole process each took.
    The run store is filled first in another process: the first run is a restarted
    server's first visitor, as browser_bench.py times it."""
    from streamlit.testing.v1 import AppTest

    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="kda-sim-breakdown-") as d:
        store, stats = Path(d) / "store", Path(d) / "stats"
        store.mkdir()
        stats.mkdir()
        os.environ["KDA_SIM_CACHE"] = str(store)
        fill = FILL_STORE.format(app=str(ROOT / "app.py"))
        subprocess.run([sys.executable, "-c", fill], check=True, capture_output=True)
        os.environ["KDA_SIM_BREAKDOWN_STATS"] = str(stats)
        script = Path(d) / "profiled_app.py"
        script.write_text(PROFILED_SCRIPT.format(app=str(ROOT / "app.py")))
        at = AppTest.from_file(str(script), default_timeout=300)
        for i, label in enumerate(("first_run", "later_run")):
            c0 = time.process_time()
            at.run()
            cpu = time.process_time() - c0
            assert not at.exception, [e.value for e in at.exception]
            got = pstats.Stats(str(stats / f"run{i}.prof"))
            out[label] = {"cpu_s": round(cpu, 3), "functions": _top(got, top)}
        out["elements"] = element_bytes(at)
        # the timeline opens on a picture of its chart: no figure on the first render
        charts = at.get("plotly_chart")
        out["figure"] = figure_bytes(charts[0].proto.spec) if charts else None
    return out


def _top(got: pstats.Stats, top: int) -> list[dict[str, Any]]:
    """The ``top`` functions of the app, Streamlit's elements and plotly by cumulative
    time (a caller's time includes its callees': the rows overlap)."""
    stats = got.stats  # type: ignore[attr-defined]
    rows = []
    for (file, line, func), (_cc, calls, _tt, ct, _callers) in stats.items():
        at = next((file[file.rindex(p) :] for p in PROFILED if p in file), None)
        if at is not None:
            rows.append({"function": f"{at}:{line} {func}", "calls": calls, "cum_s": ct})
    rows.sort(key=lambda r: -r["cum_s"])
    return [{**r, "cum_s": round(r["cum_s"], 3)} for r in rows[:top]]


# -- 2. the payload -----------------------------------------------------------------------


def element_bytes(at: Any) -> list[dict[str, Any]]:
    """Each element of the page (sidebar and main) with its message's size in bytes."""
    rows: list[dict[str, Any]] = []

    def walk(node: Any, where: str) -> None:
        children = getattr(node, "children", None)
        if children:
            for child in children.values():
                walk(child, where)
            return
        proto = getattr(node, "proto", None)
        if proto is not None:
            label = getattr(proto, "label", "") or ""
            rows.append({"where": where, "element": node.type, "label": label,
                         "bytes": proto.ByteSize()})  # fmt: skip

    walk(at.sidebar, "sidebar")
    walk(at.main, "main")
    return rows


def figure_bytes(spec: str) -> dict[str, Any]:
    """The timeline figure's JSON (as the chart element carries it) by field."""
    fig = json.loads(spec)
    fields: Counter[str] = Counter()
    points = 0
    for tr in fig["data"]:
        for k, v in tr.items():
            fields[k] += len(json.dumps(v))
        xs = tr.get("x")
        if isinstance(xs, dict):  # plotly's typed array: {"dtype", "bdata"}
            points += len(base64.b64decode(xs["bdata"])) // np.dtype(xs["dtype"]).itemsize
        elif isinstance(xs, list):
            points += len(xs)
    return {
        "total": len(spec),
        "traces": len(fig["data"]),
        "points": points,
        "layout": len(json.dumps(fig["layout"])),
        "by_field": dict(fields.most_common(8)),
    }


# -- 3. the browser -----------------------------------------------------------------------


def cpu_by_process(server_pid: int, driver_pid: int) -> dict[str, float]:
    """CPU seconds so far of the server and of each kind of Chromium process (its
    ``--type=``; none: the browser process), children reaped included."""
    tree: dict[int, list[int]] = {}
    cpu: dict[int, float] = {}
    kind: dict[int, str] = {}
    tick = os.sysconf("SC_CLK_TCK")
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            text = (d / "stat").read_text()
            argv = (d / "cmdline").read_bytes()
        except OSError:  # gone meanwhile
            continue
        f = text[text.rindex(")") + 2 :].split()
        pid = int(d.name)
        tree.setdefault(int(f[1]), []).append(pid)
        cpu[pid] = sum(int(x) for x in f[11:15]) / tick
        # Chromium rewrites a child's command line into one string: search it whole
        typ = re.search(rb"--type=([a-z-]+)", argv)
        kind[pid] = f"chromium {typ.group(1).decode()}" if typ else "chromium browser"
    out: Counter[str] = Counter()
    out["server"] = _subtree(server_pid, tree, cpu)
    todo = list(tree.get(driver_pid, []))  # chromedriver's children: chromium
    out["chromedriver"] = cpu.get(driver_pid, 0.0)
    while todo:
        pid = todo.pop()
        out[kind.get(pid, "chromium browser")] += cpu.get(pid, 0.0)
        todo += tree.get(pid, [])
    return dict(out)


def _subtree(root: int, tree: dict[int, list[int]], cpu: dict[int, float]) -> float:
    total, todo = 0.0, [root]
    while todo:
        pid = todo.pop()
        total += cpu.get(pid, 0.0)
        todo += tree.get(pid, [])
    return total


def self_time_by_script(profile: dict[str, Any]) -> dict[str, float]:
    """Seconds of JavaScript self time by script file (the CDP profile's samples)."""
    where = {}
    for n in profile["nodes"]:
        cf = n["callFrame"]
        url = cf.get("url", "")
        name = url.rsplit("/", 1)[-1].split("?")[0] if url else cf.get("functionName", "")
        where[n["id"]] = name or "(anonymous)"
    out: Counter[str] = Counter()
    for node, dt in zip(profile["samples"], profile["timeDeltas"], strict=True):
        out[where[node]] += dt / 1e6
    out.pop("(idle)", None)
    return {k: round(v, 3) for k, v in out.most_common(10)}


def _settled(driver: Any) -> tuple[int, int]:
    """(bar paths drawn, bars) once the chart stopped drawing: Streamlit's chart may draw
    again after the page is complete, and that CPU belongs to the visit."""
    seen, quiet_since, t_end = -1, time.monotonic(), time.monotonic() + SETTLE_MAX_S
    while time.monotonic() < t_end:
        draws, bars = driver.execute_script(BAR_DRAWS, BARS)
        if draws != seen:
            seen, quiet_since = draws, time.monotonic()
        elif time.monotonic() - quiet_since >= SETTLE_S:
            break
        time.sleep(0.1)
    return seen, bars


def visit(driver: Any, url: str, srv_pid: int) -> dict[str, Any]:
    """One visit, timed and broken down (its CPU until the chart settled)."""
    drv_pid = driver.service.process.pid
    driver.execute_cdp_cmd("Profiler.enable", {})
    driver.execute_cdp_cmd("Profiler.setSamplingInterval", {"interval": SAMPLE_US})
    c0 = cpu_by_process(srv_pid, drv_pid)
    driver.execute_cdp_cmd("Profiler.start", {})
    wall = complete_render(driver, url)
    draws, bars = _settled(driver)
    profile = driver.execute_cdp_cmd("Profiler.stop", {})["profile"]
    c1 = cpu_by_process(srv_pid, drv_pid)
    return {
        "wall_s": round(wall, 3),
        "bars": bars,
        "chart_draws": round(draws / bars, 2) if bars else 0,
        "cpu_s": {k: round(c1.get(k, 0.0) - c0.get(k, 0.0), 3) for k in c1},
        "js_self_s": self_time_by_script(profile),
    }


def browser_visits(traces: Path, app: Path = ROOT / "app.py") -> dict[str, Any]:
    """A restarted server's first visitor and a later one (browser_bench.py's visits)."""
    with tempfile.TemporaryDirectory(prefix="kda-sim-store-") as store:
        with server(traces, app, store=Path(store)) as srv, browser() as driver:
            complete_render(driver, srv.url)  # fills the run store, as browser_bench does
        with server(traces, app, store=Path(store)) as srv, browser() as driver:
            driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": DRAWS_JS})
            first = visit(driver, srv.url, srv.pid)
            later = visit(driver, srv.url, srv.pid)
    return {"first_visitor": first, "later_visitor": later}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--traces", type=Path, default=ROOT / "traces", help="the bundled traces")
    ap.add_argument("--top", type=int, default=15, help="profiled functions a run (default 15)")
    ap.add_argument("--json", type=Path, help="also write the result to FILE")
    ap.add_argument("--no-browser", action="store_true", help="the server and payload only")
    ap.add_argument(
        "--floor", action="store_true", help="also break down browser_bench.py's one-chart page"
    )
    args = ap.parse_args()
    from kda_sim.importers import trace_files  # here: the bench times its own imports

    if not trace_files(args.traces):
        ap.error(f"--traces {args.traces}: no .json or .json.gz trace there")
    os.environ["KDA_SIM_TRACES"] = str(args.traces)
    report: dict[str, Any] = {"load_avg_1min_start": round(os.getloadavg()[0], 2)}
    report["server"] = script_runs(args.top)
    if not args.no_browser:
        report["browser"] = browser_visits(args.traces)
        if args.floor:
            with tempfile.TemporaryDirectory(prefix="kda-sim-floor-") as d:
                floor = Path(d) / "floor.py"
                floor.write_text(FLOOR_APP)
                report["floor"] = browser_visits(args.traces, floor)
    report["load_avg_1min_end"] = round(os.getloadavg()[0], 2)
    text = json.dumps(report, indent=1)
    print(text)
    if args.json is not None:
        args.json.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
