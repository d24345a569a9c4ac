"""A build variant's measured effect beside the model's prediction of it.

A kernel benchmark times build variants against the default build, shape by shape
(``bench/kernel_bench.py --variants``: rows of R, L, the variant's build fields, the time
a launch, and the launch configuration the build runs, ``config``). Where a variant runs
another launch configuration than the default build (a configuration switch such as K1's
``nw_first``), both configurations are simulated on a profile and the model's difference
set beside the measured one; on a second profile (an untested GPU) the prediction stands
alone. A variant that changes only code the model does not see (a tile size, a back-off)
runs the default's configuration and is listed as such.

A row's shape (``R``, ``L``) is the kernel's two ``sweep_axes`` (K1: R and L), and its
``config`` one of the kernel's configurations (``kernel``: K1 unless named).
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

from kda_sim.engine import simulate
from kda_sim.errors import InvalidInput
from kda_sim.importers.caps import read_capped
from kda_sim.jsoncheck import parse_json, refuse_non_finite
from kda_sim.kernels.registry import DEFAULT_KERNEL, get, spec_for
from kda_sim.kernels.spec import require_hook
from kda_sim.machine.profile import load_profile

NO_CONFIG = (
    "no 'config' (the launch configuration the build runs), which kernel_bench writes "
    "beside each variant; add it to an older file with python -m bench.kernel_bench "
    "--add-configs FILE --out NEW"
)


def load_rows(path: Path) -> list[dict[str, Any]]:
    """The variant rows of a kernel benchmark's JSON (rows missing R, L, variant or us are
    left out)."""
    d = parse_json(read_capped(path), str(path))  # NaN, long integers, deep nesting refused
    refuse_non_finite(d, str(path))
    try:
        rows = d["variants"]
        return [r for r in rows if {"R", "L", "variant", "us"} <= set(r)]
    except (ValueError, KeyError, TypeError) as e:
        raise InvalidInput(f"not a kernel_bench file with variants: {e}", where=str(path)) from e


def axes(kernel: str) -> tuple[str, str]:
    """The two configuration fields a row's shape gives (the kernel's ``sweep_axes``)."""
    return require_hook(get(kernel), "sweep_axes", "the two fields a bench row's shape gives")


def _fields(spec: Any) -> set[str]:
    t = spec.config_type
    if dataclasses.is_dataclass(t):
        return {f.name for f in dataclasses.fields(t)}
    return set(spec.config_to_dict(spec.default_config()))


def config_of(row: dict[str, Any], kernel: str = DEFAULT_KERNEL) -> Any:
    """The launch configuration a row's build runs, checked against the row's shape."""
    where = f"the row R={row['R']} L={row['L']} variant {json.dumps(row['variant'])}"
    given = row.get("config")
    if not isinstance(given, dict):
        raise InvalidInput(NO_CONFIG, where=where)
    spec = get(kernel)
    first, second = axes(kernel)
    unknown = sorted(set(given) - _fields(spec))
    if unknown:
        raise InvalidInput(f"config: not a field of {spec.name}'s: {unknown}", where=where)
    try:
        cfg = spec.validate(spec.config_from_dict(given))
    except TypeError as e:
        raise InvalidInput(f"config: {e}", where=where) from e
    except InvalidInput as e:
        raise InvalidInput(f"config: {e}", what=e.what, where=where) from e
    shape = spec.config_to_dict(cfg)
    if (row["R"], row["L"]) != (shape[first], shape[second]):
        raise InvalidInput(
            f"config is {first}={shape[first]} {second}={shape[second]}, not the row's shape",
            where=where,
        )
    return cfg


def switches(cfg: Any) -> tuple[str, ...]:
    """The configuration's switches that are on (K1: its variants and schedules)."""
    d = spec_for(cfg).config_to_dict(cfg)
    return tuple(k for k, v in d.items() if v is True)


def makespan_us(cfg: Any, profile: str, cache: dict) -> float:
    key = (cfg, profile)
    if key not in cache:
        spec = spec_for(cfg)
        tl = simulate(cfg, load_profile(profile, kernel=spec)).timeline
        if tl.makespan is None:
            raise InvalidInput(
                f"{spec.label(cfg)} deadlocks on it (a fit without the build's resources? "
                f"scripts/bundle_profile.py adds them)",
                where=profile,
            )
        cache[key] = tl.makespan / 1e3
    return cache[key]


def compare(
    rows: list[dict[str, Any]], profile: str, predict: str | None, kernel: str = DEFAULT_KERNEL
) -> dict[str, Any]:
    """Each variant row beside its shape's default row (``variant`` {}): the measured
    difference, and the model's on ``profile`` (and ``predict``) where the configurations
    differ. A variant without a default row at its shape is left out."""
    base = {(r["R"], r["L"]): r for r in rows if not r["variant"]}
    cache: dict = {}
    out = []
    for r in rows:
        shape = (r["R"], r["L"])
        if not r["variant"] or shape not in base:
            continue
        d = base[shape]
        c0, c1 = config_of(d, kernel), config_of(r, kernel)
        row: dict[str, Any] = {
            "R": shape[0],
            "L": shape[1],
            "variant": r["variant"],
            "measured_default_us": d["us"],
            "measured_variant_us": r["us"],
            "measured_delta_us": r["us"] - d["us"],
            "default_config": switches(c0),
            "variant_config": switches(c1),
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
    # which kernel costs each named profile ran
    costs = {p: load_profile(p, kernel=kernel).costs_from for p in (profile, predict) if p}
    return {"profile": profile, "predict": predict, "costs": costs, "rows": out}


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
    lines += [f"costs of {p}: {c}" for p, c in report.get("costs", {}).items() if c]
    return "\n".join(lines)


def plot(report: dict[str, Any], out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [r for r in report["rows"] if "model_delta_us" in r]
    labels = [f"{r['R']}x{r['L']}" for r in rows]
    xs = range(len(rows))
    series = [
        ("measured", "measured_delta_us", "#1f77b4"),
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
