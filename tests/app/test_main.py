"""The page's first render pays only for the view it opens on."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# what the timeline (the view the page opens on) does not need: the command line and the
# ISA analyser (the bug corpus's), the comparison (Compare's), the tag check (Tags'); the
# stage tables and pandas (drawn when the timeline's table expander is opened); matplotlib
# (the timeline's picture is drawn with it, or read back from the run store)
NOT_ON_FIRST_PAGE = (
    "kda_sim.cli",
    "kda_sim.isa",
    "kda_sim.compare.diff",
    "kda_sim.checks.tags",
    "kda_sim.app.stage_tables",
)
NOT_ON_FIRST_PAGE_LIBS = ("pandas", "pyarrow", "matplotlib")


def test_the_page_imports_only_the_view_it_opens_on() -> None:
    code = (
        "import json, sys\n"
        "import kda_sim.app.main, kda_sim.app.views.timeline\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    loaded = json.loads(out.stdout.splitlines()[-1])
    assert "kda_sim.app.views.timeline" in loaded
    for name in NOT_ON_FIRST_PAGE + NOT_ON_FIRST_PAGE_LIBS:
        assert not any(m == name or m.startswith(name + ".") for m in loaded), name
    # a view is imported when it is drawn
    assert "kda_sim.app.views.bugs" not in loaded and "kda_sim.app.views.whatif" not in loaded
