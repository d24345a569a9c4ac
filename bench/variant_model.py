"""A build variant's measured effect beside the model's prediction of it.

``kernel_bench --variants`` times each variant against the default build, shape by shape.
Where a variant changes the launch configuration the protocol model knows (a
:data:`kda_sim.config.VARIANTS` switch such as ``nw_first``: ``Build(...).cfg`` says which
configuration a build runs), this script simulates both configurations on a profile and
sets the model's difference beside the measured one; on a second profile (the user's
MI355X, say) it gives the prediction alone, which no measurement here can check. A variant
that changes only code the model does not see (a tile size, a sleep) is listed as such.

Usage:
    python -m bench.variant_model BENCH.json [--profile h200-k1] [--predict mi355x]
        [--out JSON] [--png PNG] [--force]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from bench.gpu_jobs import report_with_views
from kda_sim.config import LaunchConfig
from kda_sim.engine import simulate
from kda_sim.errors import InvalidInput
from kda_sim.machine.profile import load_profile


def load_rows(path: Path) -> list[dict[str, Any]]:
    try:
        rows = json.loads(path.read_text())["variants"]
        return [r for r in rows if {"R", "L", "variant", "us"} <= set(r)]
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise InvalidInput(f"not a kernel_bench file with variants: {e}", where=str(path)) from e


def config_of(R: int, L: int, variant: dict[str, Any]) -> LaunchConfig:
    """The launch configuration the Triton K1 build of ``variant`` runs."""
    from kda_kernel.triton.launch import Build  # CPU-importable: Build is plain data

    try:
        return Build(R, L, **variant).validate().cfg
    except (TypeError, ValueError) as e:
        raise InvalidInput(f"{variant}: not a build of R={R} L={L}: {e}", where="variant") from e


def makespan_us(cfg: LaunchConfig, profile: str, cache: dict) -> float:
    key = (cfg, profile)
    if key not in cache:
        tl = simulate(cfg, load_profile(profile)).timeline
        if tl.makespan is None:
            raise InvalidInput(
                f"{cfg.label()} deadlocks on it (a fit without the build's resources? "
                f"scripts/bundle_profile.py adds them)",
                where=profile,
            )
        cache[key] = tl.makespan / 1e3
    return cache[key]


def compare(rows: list[dict[str, Any]], profile: str, predict: str | None) -> dict[str, Any]:
    base = {(r["R"], r["L"]): r for r in rows if not r["variant"]}
    cache: dict = {}
    out = []
    for r in rows:
        shape = (r["R"], r["L"])
        if not r["variant"] or shape not in base:
            continue
        d = base[shape]
        c0, c1 = config_of(*shape, d["variant"]), config_of(*shape, r["variant"])
        row: dict[str, Any] = {
            "R": shape[0],
            "L": shape[1],
            "variant": r["variant"],
            "measured_default_us": d["us"],
            "measured_variant_us": r["us"],
            "measured_delta_us": r["us"] - d["us"],
            "default_config": c0.variants(),
            "variant_config": c1.variants(),
        }
        if c0 == c1:
            row["model"] = "no counterpart: the variant changes code the model does not see"
        else:
            m0, m1 = makespan_us(c0, profile, cache), makespan_us(c1, profile, cache)
            row |= {"model_default_us": m0, "model_variant_us": m1, "model_delta_us": m1 - m0}
            if predict is not None:
                p0, p1 = makespan_us(c0, predict, cache), makespan_us(c1, predict, cache)
                row |= {f"{predict}_delta_us": p1 - p0, f"{predict}_default_us": p0}
        out.append(row)
    return {"profile": profile, "predict": predict, "rows": out}


def table(report: dict[str, Any]) -> str:
    pr = report["predict"]
    head = f"{'RxL':>5} {'variant':<24} {'measured':>9} {'model':>8}"
    head += f" {pr + ' (model)':>16}" if pr else ""
    lines = [head + f"   (us a launch, variant - default; model: {report['profile']})"]
    for r in report["rows"]:
        name = json.dumps(r["variant"], separators=(",", ":"))
        model = f"{r['model_delta_us']:+8.2f}" if "model_delta_us" in r else f"{'-':>8}"
        line = f"{r['R']}x{r['L']:<3} {name:<24} {r['measured_delta_us']:+9.2f} {model}"
        if pr and f"{pr}_delta_us" in r:
            line += f" {r[f'{pr}_delta_us']:+16.2f}"
        lines.append(line)
    return "\n".join(lines)


def plot(report: dict[str, Any], out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [r for r in report["rows"] if "model_delta_us" in r]
    labels = [f"{r['R']}x{r['L']}" for r in rows]
    xs = range(len(rows))
    series = [
        ("measured (H200)", "measured_delta_us", "#1f77b4"),
        (f"model ({report['profile']})", "model_delta_us", "#aec7e8"),
    ]
    if report["predict"]:
        series.append(
            (
                f"model ({report['predict']}), untested on hardware",
                f"{report['predict']}_delta_us",
                "#ff7f0e",
            )
        )
    fig, ax = plt.subplots(figsize=(8, 4))
    w = 0.8 / len(series)
    for k, (label, key, colour) in enumerate(series):
        ax.bar(
            [x + (k - (len(series) - 1) / 2) * w for x in xs],
            [r.get(key, 0.0) for r in rows],
            w,
            label=label,
            color=colour,
        )
    ax.axhline(0, color="black", linewidth=0.8)
    ax.set_xticks(list(xs), labels)
    ax.set_ylabel("variant - default (us a launch)")
    names = sorted({json.dumps(r["variant"]) for r in rows})
    ax.set_title(f"variant {', '.join(names)}: measured and modelled")
    ax.legend(fontsize=8, ncol=len(series), loc="upper center", bbox_to_anchor=(0.5, -0.1))
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("bench", type=Path, help="kernel_bench JSON with --variants rows")
    ap.add_argument("--profile", default="h200-k1", help="the profile of the measured GPU")
    ap.add_argument("--predict", default=None, help="a second profile: prediction only")
    ap.add_argument("--out", type=Path)
    ap.add_argument("--png", type=Path)
    ap.add_argument("--force", action="store_true")
    a = ap.parse_args(argv)
    return report_with_views(
        "variant_model",
        lambda: compare(load_rows(a.bench), a.profile, a.predict),
        table,
        plot,
        a.out,
        a.png,
        a.force,
    )


if __name__ == "__main__":
    sys.exit(main())
