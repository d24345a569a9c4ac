"""The app in a real browser: headless Debian chromium loads the page, waits for the
timeline's picture, saves docs/screenshot.png (the README shows it), then turns on the
interactive chart and checks how it is drawn.

Skipped cleanly without /usr/bin/chromium and chromedriver (CI installs Debian's
``chromium`` and ``chromium-driver``)."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import IO

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")
DRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
SHOT = ROOT / "docs" / "screenshot.png"
START_S = 90  # a cold server imports streamlit, plotly and pandas before the first page
DRAW_S = 120  # first page: imports on the script thread, a simulation, the figure

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not CHROMIUM.exists() or not Path(DRIVER).exists(),
        reason="needs Debian's chromium and chromium-driver",
    ),
]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    port = _free_port()
    # the runs the app keeps on disk go to a folder of the test's, not the user's cache
    env = {**os.environ, "KDA_SIM_CACHE": str(tmp_path_factory.mktemp("kda-sim-cache"))}
    cmd = [
        sys.executable, "-m", "streamlit", "run", str(ROOT / "app.py"),
        "--server.headless", "true", "--server.port", str(port),
        "--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false",
    ]  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryFile() as log:
        proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
        try:
            yield _wait_healthy(proc, log, url)
        finally:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()


def _wait_healthy(proc: subprocess.Popen, log: IO[bytes], url: str) -> str:
    deadline = time.monotonic() + START_S
    while True:
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as r:
                if r.status == 200:
                    return url
        except OSError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            log.seek(0)
            pytest.fail(f"streamlit did not start:\n{log.read().decode(errors='replace')}")
        time.sleep(0.5)


def test_page_draws_the_timeline_and_is_screenshotted(server: str, tmp_path: Path) -> None:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    opts = webdriver.ChromeOptions()
    opts.binary_location = str(CHROMIUM)
    for flag in (
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-dev-shm-usage",
        "--window-size=1600,1250",
        f"--user-data-dir={tmp_path / 'profile'}",
    ):
        opts.add_argument(flag)
    driver = webdriver.Chrome(options=opts, service=Service(DRIVER))
    try:
        driver.get(server)
        wait = WebDriverWait(driver, DRAW_S)
        # the view opens on a picture of its chart, across the column
        picture = wait.until(lambda d: d.execute_script(PICTURE_JS, _picture()))
        assert picture["width"] > 800 and picture["natural"] >= 2 * 800, picture
        assert not driver.find_elements(By.CSS_SELECTOR, "[data-testid='stPlotlyChart']")
        body = driver.find_element(By.TAG_NAME, "body").text
        assert "simulated" in body or "trace" in body
        assert "Traceback" not in body
        # let the spinner go and fonts settle before the picture
        WebDriverWait(driver, 30).until_not(
            ec.presence_of_element_located((By.CSS_SELECTOR, "[data-testid='stSpinner']"))
        )
        time.sleep(1.5)
        SHOT.parent.mkdir(exist_ok=True)
        assert driver.save_screenshot(str(SHOT))
        assert SHOT.stat().st_size > 20_000
        _interactive_chart(driver)
        _stage_tables_open_on_demand(driver)
    finally:
        driver.quit()


# the timeline's picture once decoded: its drawn (CSS) and its own width; Streamlit
# gives a keyed container the class st-key-<key>
PICTURE_JS = """
const img = document.querySelector(arguments[0]);
if (!img || !img.complete || !img.naturalWidth) return null;
return {width: img.getBoundingClientRect().width, natural: img.naturalWidth};
"""


def _picture() -> str:
    from kda_sim.app.views.common import PICTURE_KEY

    return f".st-key-{PICTURE_KEY} img"


def _interactive_chart(driver) -> None:
    """The toggle swaps the picture for the interactive chart, a bar per CTA stage,
    which Streamlit's theme draws with the figure's own margins."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    toggle = next(
        e
        for e in driver.find_elements(By.CSS_SELECTOR, "[data-testid='stCheckbox'] label")
        if e.text.strip().startswith("Interactive chart")
    )
    # a real click: the toggle (react-aria) ignores a click event sent from script
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'});", toggle)
    toggle.click()
    chart = WebDriverWait(driver, DRAW_S).until(
        ec.presence_of_element_located(
            (By.CSS_SELECTOR, "[data-testid='stPlotlyChart'] .js-plotly-plot .barlayer")
        )
    )
    bars = chart.find_elements(By.CSS_SELECTOR, ".barlayer .point")
    assert len(bars) > 1000, "the timeline should draw a bar per CTA stage"
    assert not driver.find_elements(By.CSS_SELECTOR, _picture())
    time.sleep(1.5)
    _margins_not_pushed(driver)
    _legend_clear_of_the_toolbars(driver)


# the first chart's legend and the toolbars drawn over its top right corner: plotly's
# modebar and Streamlit's element toolbar (both shown while the pointer is on the chart)
RECTS_JS = """
const chart = document.querySelector("[data-testid='stPlotlyChart']");
const box = (el) => { if (!el) return null; const r = el.getBoundingClientRect();
  return r.width && r.height ? [r.left, r.top, r.right, r.bottom] : null; };
const host = chart.closest("[data-testid='stElementContainer']") || chart.parentElement;
return {legend: box(chart.querySelector("g.legend")),
        toolbars: [box(chart.querySelector(".modebar")),
                   box(host.querySelector("[data-testid='stElementToolbar']"))]};
"""


def _legend_clear_of_the_toolbars(driver) -> None:
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By

    chart = driver.find_element(By.CSS_SELECTOR, "[data-testid='stPlotlyChart']")
    ActionChains(driver).move_to_element(chart).perform()  # the toolbars show on hover
    time.sleep(0.5)
    got = driver.execute_script(RECTS_JS)
    ActionChains(driver).move_by_offset(0, 0).move_to_element_with_offset(
        driver.find_element(By.TAG_NAME, "body"), 5, 5
    ).perform()  # the picture without hover labels
    time.sleep(0.5)
    legend = got["legend"]
    toolbars = [t for t in got["toolbars"] if t]
    assert legend and toolbars, got
    for t in toolbars:
        apart = legend[2] <= t[0] or t[2] <= legend[0] or legend[3] <= t[1] or t[3] <= legend[1]
        assert apart, f"the legend {legend} overlaps a toolbar {t}"


# the margins plotly drew the first chart with, and the figure's own
MARGINS_JS = """
const gd = document.querySelector("[data-testid='stPlotlyChart'] .js-plotly-plot");
const size = gd._fullLayout._size, asked = gd._fullLayout.margin;
return {drawn: [size.l, size.r, size.t, size.b], asked: [asked.l, asked.r, asked.t, asked.b]};
"""


def _margins_not_pushed(driver) -> None:
    """The timeline's margins hold its axes, legend and labels as Streamlit's theme draws
    them: a margin plotly must push makes it draw every bar again (a third of the
    chart's time in the browser)."""
    got = driver.execute_script(MARGINS_JS)
    for side, drawn, asked in zip("lrtb", got["drawn"], got["asked"], strict=True):
        assert abs(drawn - asked) <= 1, f"margin {side} pushed from {asked} to {drawn}: {got}"


def _stage_tables_open_on_demand(driver) -> None:
    """The stage tables below the chart are not on the first render; opening their
    expander reruns the script, which draws them."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    from kda_sim.app.views.timeline import TABLES_LABEL

    grids = "[data-testid='stDataFrame']"
    assert not driver.find_elements(By.CSS_SELECTOR, grids), "drawn before being opened"
    summary = next(
        e
        for e in driver.find_elements(By.CSS_SELECTOR, "[data-testid='stExpander'] summary")
        if TABLES_LABEL in e.text
    )
    driver.execute_script("arguments[0].scrollIntoView(); arguments[0].click();", summary)
    WebDriverWait(driver, DRAW_S).until(lambda d: d.find_elements(By.CSS_SELECTOR, grids))
    assert driver.find_elements(By.CSS_SELECTOR, f"{grids} canvas"), "a grid without cells"
