"""One lab build's traced launches from a directory ``lab.trace_spread record`` wrote
(``k1_R{R}_L{L}_{i}.json``): each launch checked to be the shape its name says and the
build the others are (``meta.extra["build"]``), or refused (``InvalidInput``, exit 2 in
the lab reports) before any table is made of them."""

from __future__ import annotations

import argparse
import statistics as st
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kda_sim.compare.spread import launches_by_shape
from kda_sim.errors import InvalidInput
from kda_sim.importers import load_trace
from kda_sim.timeline.model import Timeline
from lab.gpu_jobs import report_main


def build_launches(d: Path) -> tuple[dict[str, Any], dict[str, list[Timeline]]]:
    """(the build's options, its launches by shape ``"RxL"``) of directory ``d``."""
    build: dict[str, Any] | None = None
    shapes: dict[str, list[Timeline]] = {}
    for (R, L), paths in launches_by_shape(d).items():
        for f in paths:
            tl = load_trace(f)
            if (R, L) != (tl.meta.R, tl.meta.L):
                raise InvalidInput(
                    f"{f}: its meta says R={tl.meta.R}, L={tl.meta.L}", what="shape", where=str(f)
                )
            b = dict(tl.meta.extra.get("build") or {})
            if build is not None and b != build:
                raise InvalidInput(f"{f}: build {b}, not {build} as the others", where=str(f))
            build = b
            shapes.setdefault(f"{R}x{L}", []).append(tl)
    return build or {}, shapes


def read_build(
    d: Path,
    rows_of: Callable[[Timeline], list[dict[str, Any]]],
    medians: Callable[[list[dict[str, Any]]], dict[str, Any]],
) -> dict[str, Any]:
    """One build's launches in ``d``: its options, how many, and by shape ``medians`` of
    the rows ``rows_of`` reads from every launch of the shape."""
    build, launches = build_launches(d)
    shapes = {
        shape: medians([r for tl in tls for r in rows_of(tl)]) for shape, tls in launches.items()
    }
    files = sum(len(tls) for tls in launches.values())
    return {"dir": str(d), "build": build, "launches": files, "shapes": shapes}


def median(xs: list[float]) -> float | None:
    """The median, None of nothing."""
    return st.median(xs) if xs else None


def ns(v: float | None) -> str:
    """A table's ns ("-": none)."""
    return "-" if v is None else f"{v:.0f}"


# the first columns of every poll table: the polls, their retries, and a try that passed
# at once (its median and how many): what a try costs where the pairs had landed
POLL_COLUMNS = ["polls", "retries", "a try passed at once (polls)"]


def poll_medians(rs: list[dict[str, Any]], span: str) -> dict[str, Any]:
    """:data:`POLL_COLUMNS`' figures of one shape's poll rows (``span``: a row's try)."""
    once = [r[span] for r in rs if r["retries"] == 0]
    return {
        "polls": len(rs),
        "retries": dict(sorted(Counter(int(r["retries"]) for r in rs).items())),
        "try_at_once": median(once),
        "at_once": len(once),
    }


def poll_cells(s: dict[str, Any]) -> list[str]:
    """:data:`POLL_COLUMNS`' cells of :func:`poll_medians`."""
    return [str(s["polls"]), str(s["retries"]), f"{ns(s['try_at_once'])} ({s['at_once']})"]


def build_table(
    rep: dict[str, Any], columns: list[str], cells: Callable[[dict[str, Any]], list[str]]
) -> str:
    """Every build's shapes a row: the build's options ("as shipped": none), the shape and
    ``cells`` of the shape's medians under ``columns``."""
    lines = [" | ".join(["build", "shape", *columns]), "|".join(["---"] * (len(columns) + 2))]
    for b in rep["builds"]:
        name = ", ".join(f"{k}={v}" for k, v in sorted(b["build"].items())) or "as shipped"
        for shape, s in b["shapes"].items():
            lines.append(" | ".join([name, shape, *cells(s)]))
    return "\n".join(lines)


def builds_main(
    name: str,
    doc: str,
    read_dir: Callable[[Path], dict[str, Any]],
    show: Callable[[dict[str, Any]], str],
    argv: list[str] | None,
) -> int:
    """A lab report over build directories: ``DIR [DIR ...] [--json OUT]``, each read by
    ``read_dir``, the table by ``show``, bad input exit 2 (``report_main``)."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("dirs", type=Path, nargs="+", help="one build's traced launches each")
    ap.add_argument("--json", type=Path, help="write the medians here")
    a = ap.parse_args(argv)
    return report_main(name, lambda: {"builds": [read_dir(d) for d in a.dirs]}, show, a.json)
