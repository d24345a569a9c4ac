"""How fast the app answers on this machine (a benchmark, not a timed test).

    python bench/app_bench.py [--repeat N]

1. first render: a fresh page on the first bundled real trace (or, where traces/
   holds none, a jittered simulation saved as 'measured' in a temporary folder)
   overlaid on its simulation, with empty caches and an empty run store (a cache
   folder of the benchmark's own). Reported twice: with the page's libraries already
   imported (what a running `streamlit run` server pays for the first visitor ever)
   and the imports themselves (paid once a server). Then again with the memory caches
   emptied and the run store kept: a restarted server's first visitor.
2. what-if: the What-if view re-simulating a configuration not seen before.
3. with --browser: `streamlit run app.py` in headless chromium, from navigation to
   the drawn timeline, for the server's first visitor and a later one (this adds the
   page's imports, the websocket and the browser's drawing of the page).

Goals: first render < 2 s, what-if < 1 s on a 2-core machine.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _imports() -> float:
    t = time.perf_counter()
    import pandas  # noqa: F401
    import plotly.graph_objects  # noqa: F401
    import streamlit  # noqa: F401
    from streamlit.testing.v1 import AppTest  # noqa: F401

    import kda_sim.app.main
    import kda_sim.engine  # noqa: F401

    return time.perf_counter() - t


def _traces_dir() -> tuple[Path, str]:
    from kda_sim.app.data import OPENS_ON  # imported by now (_imports): costs nothing
    from kda_sim.importers import trace_files

    # the one the page opens on first, as the app lists them
    real = sorted(trace_files(ROOT / "traces"), key=lambda p: (p.name != OPENS_ON, p.name))
    if real:
        return ROOT / "traces", f"bundled {real[0].name}"
    d = Path(tempfile.mkdtemp(prefix="kda-sim-bench-"))
    # made in a child process: this one's protocol caches must stay cold for the timing
    code = (
        "import sys\n"
        "from kda_sim.kernels.k1.config import LaunchConfig\n"
        "from kda_sim.engine import simulate\n"
        "from kda_sim.machine.profile import load_profile\n"
        "from kda_sim.timeline.chrome import write_chrome\n"
        "prof = load_profile('h200-stock')\n"
        "tl = simulate(LaunchConfig(2, 2), prof, seed=7, jitter=0.2).timeline\n"
        "tl.meta.source = 'measured'\n"
        "write_chrome(tl, sys.argv[1])\n"
    )
    subprocess.run([sys.executable, "-c", code, str(d / "h200_R2_L2.json")], check=True, cwd=ROOT)
    return d, "a stand-in h200 R=2 L=2 'measured' trace (traces/ holds none yet)"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=3, help="what-if re-simulations to time")
    ap.add_argument("--browser", action="store_true", help="also time the page in chromium")
    args = ap.parse_args()
    # the app keeps runs on disk (kda_sim/app/run_store.py): a folder of our own, empty
    store = tempfile.TemporaryDirectory(prefix="kda-sim-bench-store-")
    os.environ["KDA_SIM_CACHE"] = store.name
    imports = _imports()
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    traces, what = _traces_dir()
    os.environ["KDA_SIM_TRACES"] = str(traces)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
    t = time.perf_counter()
    at.run()
    first = time.perf_counter() - t
    assert not at.exception, [e.value for e in at.exception]
    # the timeline opens on a picture of its chart (the chart is a toggle away)
    assert at.get("image"), "no timeline picture on the first page"

    t = time.perf_counter()
    at.run()
    rerun = time.perf_counter() - t

    st.cache_resource.clear()  # a restarted server: nothing in memory, the store kept
    st.cache_data.clear()
    again = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
    t = time.perf_counter()
    again.run()
    restarted = time.perf_counter() - t
    assert not again.exception, [e.value for e in again.exception]

    at.sidebar.radio(key="view").set_value("What-if").run()
    whatif = []
    # shapes the page has not simulated yet: each is a real re-simulation
    for R, L in [(1, 1), (1, 2), (2, 1), (3, 1), (1, 3), (3, 2)][: args.repeat]:
        at.number_input(key="wi|k1|R").set_value(R)
        at.number_input(key="wi|k1|L").set_value(L)
        t = time.perf_counter()
        at.run()
        whatif.append(time.perf_counter() - t)
        assert not at.exception, [e.value for e in at.exception]
        assert at.success or at.error or at.warning, "no verdict shown"
    report = {
        "machine": f"{os.cpu_count()} CPUs",
        "opened_on": what,
        "imports_s": round(imports, 3),
        "first_render_s": round(first, 3),
        "first_render_goal_s": 2.0,
        "rerun_s": round(rerun, 3),
        "first_render_restarted_server_s": round(restarted, 3),
        "whatif_resimulate_s": [round(x, 3) for x in whatif],
        "whatif_median_s": round(statistics.median(whatif), 3),
        "whatif_goal_s": 1.0,
    }
    if args.browser:
        report["browser_s"] = _browser(traces)
    print(json.dumps(report, indent=2))
    return 0


def _browser(traces: Path) -> dict[str, float]:
    """Seconds from navigation to the complete page in headless chromium, one server:
    browser_bench.py's measure (which repeats it and gives the spread)."""
    from browser_bench import ROOT as TREE
    from browser_bench import Page, measure

    runs = measure(traces, 1, [Page("app", TREE / "app.py")])["app"]
    return {k: v[0] for k, v in runs.items()}


if __name__ == "__main__":
    raise SystemExit(main())
