"""An H100 profile of the static K1 from a run's traces (docs/whatif/ticket_k1.md, "The
model mended again"): run 97 ran on an H100, the prediction on the H200 fit ``h200-k1``.

The H100 (SXM, HBM3) and the H200 are one chip, GH100 with 132 SMs at the same clocks; they
differ in memory: 3.35 TB/s against 4.8. So the start is ``h200-k1``'s parameters with its
fitted HBM bandwidth scaled by the datasheets' ratio (the fit's fraction of the H200's peak
kept, or the best fit of a few fractions, ``--hbm-fracs``), and
:func:`kda_sim.compare.calibrate.fit_costs` corrects
the stage costs on the static build's traces of the run (the machine parameters kept).
With ``--holdout`` each shape is also fitted on the other shapes and its held-out traced
makespan error reported.

    python -m lab.k1_h100_fit --dir S [--launches 1] [--passes 2] [--holdout] \\
        [--hbm-fracs 0.75,0.85,0.95] [--no-share] [--out OVERLAY.json] [--json OUT]

``S`` holds ``static/{cold,warm}/k1_R*_L*_*.json`` (a run of
``scripts/device_ticket_k1.sh``); the overlay loads as ``--profile OVERLAY.json``
(``kda-sim simulate``, ``python -m lab.ticket_unroll_predict``).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from kda_sim.compare.calibrate import fit_costs, fitted_overlay, score_on, write_overlay
from kda_sim.compare.starts import share_start
from kda_sim.errors import InvalidInput
from kda_sim.machine import load_profile
from kda_sim.machine.profile import GpuProfile
from lab.ticket_k1_fit import traces

# the datasheet peak, bytes a ns: NVIDIA H100 SXM5 80 GB (HBM3), run 97's card
H100_HBM_PEAK = 3350.0
# every stage cost of the static K1: the attn roles, the gemv, the kda stages
KEYS: tuple[str, ...] = (
    "slice",
    "gate",
    "mix",
    "gemv",
    "k.stage",
    "k.conv",
    "k.gates",
    "k.recur",
    "k.norm",
)


# the stages two CTAs on one SM slow each other in: the gemv (two gemv CTAs on an SM
# finish last, docs/calibration.md) and the recurrence, the kda task's longest compute
# (run 97: 1.04 to 1.31 times as long beside another, medians a shape, where it is)
SHARED: tuple[str, ...] = ("gemv", "k.recur")


def h100_base(
    base: GpuProfile,
    train: list | None = None,
    frac: float | None = None,
    peak: float = H100_HBM_PEAK,
) -> GpuProfile:
    """``base`` (an H200 fit) with its HBM bandwidth moved to the H100's: ``frac`` of the
    H100's datasheet peak, by default the fraction of the H200's that ``base`` has
    (``hbm_peak_bytes_per_ns``); ``peak``: the card's datasheet peak (B/ns; the H100's by
    default, the H200's 4800 to fit an H200 run's static traces); with ``train``
    (prepared traces), the ``SHARED`` stages shared on a unit by the factor they show
    (:func:`kda_sim.compare.starts.share_start`, a measurement, not fitted)."""
    if frac is None:
        if base.hbm_peak_bytes_per_ns is None:
            raise InvalidInput(f"{base.name} names no HBM peak to scale from", what="base")
        frac = base.hbm_bytes_per_ns / base.hbm_peak_bytes_per_ns
    if not 0.0 < frac <= 1.0:
        raise InvalidInput(f"--hbm-fracs: {frac} is not in (0, 1]", what="--hbm-fracs")
    prof = base.with_params(hbm_bytes_per_ns=frac * peak)
    if train:
        prof = share_start(replace(prof, unit_shared=SHARED), train)
    return prof


def fit(
    folder: Path,
    start: str,
    launches: int,
    base_name: str,
    passes: int,
    holdout: bool,
    share: bool = True,
    log=print,
    fracs: tuple[float, ...] = (),
    peak: float = H100_HBM_PEAK,
) -> tuple[Any, GpuProfile, list, dict[str, Any]]:
    """The all-shape fit (its result, the base it started from, the training traces) and
    the report (each shape's traced makespan error, held out where asked). ``fracs``: HBM
    bandwidths to try, as fractions of the H100's peak, each fitted; the one whose fit
    has the lowest training loss is kept (none: the H200 fit's fraction)."""
    t0 = time.perf_counter()
    by_shape = traces(folder / "static" / start, launches)
    train = [tr for trs in by_shape.values() for tr in trs]
    log(f"prepared {len(train)} static traces ({time.perf_counter() - t0:.0f} s)")
    scan = []
    for frac in fracs or (None,):
        t1 = time.perf_counter()
        base_f = h100_base(load_profile(base_name), train if share else None, frac, peak)
        res_f = fit_costs(base_f, train, KEYS, passes=passes)
        # a pass is kept only where it lowers the loss: the fit's is the least of them
        scan.append((min(res_f.history), base_f.hbm_bytes_per_ns, base_f, res_f))
        log(
            f"hbm_bytes_per_ns {base_f.hbm_bytes_per_ns:.1f}, unit_shared "
            f"{list(base_f.unit_shared)}, unit_share {base_f.unit_share:.3f}: loss "
            f"{res_f.history[0]:.4f} -> {min(res_f.history):.4f}, {res_f.launches} launches, "
            f"{time.perf_counter() - t1:.0f} s"
        )
    _, _, base, res = min(scan, key=lambda x: x[0])
    hbm_frac = base.hbm_bytes_per_ns / peak
    rows = []
    for (R, L), trs in by_shape.items():
        row: dict[str, Any] = {
            "R": R,
            "L": L,
            "base_makespan_err": score_on(base, trs[0]).makespan_err,
            "fit_makespan_err": score_on(res.profile, trs[0]).makespan_err,
        }
        if holdout:
            t2 = time.perf_counter()
            rest = [tr for s, ts in by_shape.items() if s != (R, L) for tr in ts]
            start_prof = h100_base(load_profile(base_name), rest if share else None, hbm_frac)
            fold = fit_costs(start_prof, rest, KEYS, passes=passes)
            row["held_out_makespan_err"] = score_on(fold.profile, trs[0]).makespan_err
            row["fold_seconds"] = time.perf_counter() - t2
        rows.append(row)
        log(
            f"{R}x{L}: traced makespan error, base {100 * row['base_makespan_err']:+.1f} %, "
            f"fit {100 * row['fit_makespan_err']:+.1f} %"
            + (f", held out {100 * row['held_out_makespan_err']:+.1f} %" if holdout else "")
        )
    rep = {
        "base": base_name,
        "hbm_bytes_per_ns": base.hbm_bytes_per_ns,
        "hbm_scan": [{"hbm_bytes_per_ns": h, "loss": loss} for loss, h, _, _ in scan],
        "unit_shared": list(base.unit_shared),
        "unit_share": base.unit_share,
        "start": start,
        "launches": launches,
        "passes": passes,
        "fit_launches": res.launches,
        "fit_seconds": res.seconds,
        "loss": res.history,
        "costs": {k: list(res.profile.costs[k]) for k in KEYS},
        "rows": rows,
    }
    return res, base, train, rep


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dir", type=Path, required=True)
    ap.add_argument("--start", choices=("warm", "cold"), default="warm")
    ap.add_argument("--launches", type=int, default=1, help="traced launches a shape to fit on")
    ap.add_argument("--passes", type=int, default=2, help="cost passes (fit_costs)")
    ap.add_argument("--base", default="h200-k1", help="the H200 fit to start from")
    ap.add_argument("--holdout", action="store_true", help="also fit each shape held out")
    ap.add_argument(
        "--hbm-fracs",
        default="",
        help="HBM bandwidths to try, fractions of the H100's 3.35 TB/s (e.g. 0.75,0.85,0.95); "
        "the best-fitting is kept",
    )
    ap.add_argument(
        "--peak",
        type=float,
        default=H100_HBM_PEAK,
        help="the card's HBM datasheet peak, B/ns (default the H100's 3350; an H200 run: 4800)",
    )
    ap.add_argument("--no-share", action="store_true", help="leave unit sharing off (SHARED)")
    ap.add_argument("--out", type=Path, help="write the all-shape fit here, as an overlay")
    ap.add_argument("--json", type=Path)
    a = ap.parse_args(argv)
    say = lambda m: print(m, file=sys.stderr)  # noqa: E731
    try:
        if a.launches < 1 or a.passes < 1:
            raise InvalidInput("--launches and --passes: at least 1", what="arguments")
        if not 0.0 < a.peak < 1e6:
            raise InvalidInput(f"--peak {a.peak}: a bandwidth in B/ns above 0", what="--peak")
        try:
            fracs = tuple(float(x) for x in a.hbm_fracs.split(",") if x.strip())
        except ValueError as e:
            raise InvalidInput(f"--hbm-fracs {a.hbm_fracs!r}: {e}", what="--hbm-fracs") from e
        res, base, train, rep = fit(
            a.dir,
            a.start,
            a.launches,
            a.base,
            a.passes,
            a.holdout,
            not a.no_share,
            say,
            fracs,
            a.peak,
        )
        if a.out:
            d = fitted_overlay(res, base, train, out=a.out)
            d["provenance"]["detail"] = (
                f"lab/k1_h100_fit.py: {a.base} with hbm_bytes_per_ns "
                f"{base.hbm_bytes_per_ns:.1f} (of a {a.peak:.0f} B/ns peak: "
                + (f"the best fit of {a.hbm_fracs}" if fracs else "the H200 fit's fraction")
                + f"), unit_shared {list(base.unit_shared)} at unit_share "
                f"{base.unit_share:.3f} (share_start on the traces), then "
                f"calibrate.fit_costs on {', '.join(KEYS)} alone; " + d["provenance"]["detail"]
            )
            write_overlay(d, a.out)
            say(f"wrote {a.out}")
    except InvalidInput as e:
        print(f"k1_h100_fit: {e}", file=sys.stderr)
        return 2
    print(json.dumps(rep["rows"], indent=1))
    if a.json:
        a.json.write_text(json.dumps(rep, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
