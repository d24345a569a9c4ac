"""The markdown table docs/calibration.md shows for a ``kda-sim calibrate --json`` report
(the reports behind the page's tables are in git history: ``docs/measurements.md``).

Usage: ``python scripts/calibration_table.py REPORT.json``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

HEAD = (
    "| trace | R | L | set | real makespan (us) | makespan err, stock | makespan err, fitted "
    "| start err median, stock | start err median, fitted | start err p90, fitted |\n"
    "|---|---|---|---|---|---|---|---|---|---|"
)


def table(report: dict) -> str:
    lines = [HEAD]
    for r in report["rows"]:
        lines.append(
            f"| {r['trace']} | {r['R']} | {r['L']} | {r['set']} "
            f"| {r['real_makespan_ns'] / 1000:.2f} | {r['makespan_err_before']:+.1%} "
            f"| {r['makespan_err']:+.1%} | {r['start_err_median_before']:.2%} "
            f"| {r['start_err_median']:.2%} | {r['start_err_p90']:.2%} |"
        )
    return "\n".join(lines)


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    path = Path(sys.argv[1])
    try:
        report = json.loads(path.read_text())
        text = table(report)
    except (OSError, ValueError, KeyError, TypeError) as e:
        print(
            f"{path}: not a `kda-sim calibrate --json` report ({type(e).__name__}: {e})",
            file=sys.stderr,
        )
        return 2
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
