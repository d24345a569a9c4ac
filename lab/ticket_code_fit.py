"""The unrolled ticket build's code share, fitted to untraced times and validated each
shape held out (docs/whatif/ticket_k1.md, "The model mended: the build's code share").

The model prices the protocol's share of the difference between the static K1 and the
unrolled ticket build (its takes, the order items are taken in: ``lab.ticket_unroll_
predict``); the rest is the ticket kernel's slower code, which no mechanism of the model
carries. Here it is carried as the build's own stage costs
(:mod:`kda_sim.kernels.k1.code_share`: ns a gemv group, ns a kda item at L = 1 and at
L >= 2), fitted so that the model's difference (ticket build on the base plus the share,
static build on the base; two CTAs an SM, the run's variants, nominal latencies) meets the
measured untraced one: the two builds timed alternating in one run (``bench.kernel_bench
--variants``, CUDA-graph replays). Leave one shape out: the share is fitted on eight
shapes and the ninth predicted, for each of the nine. The fit is non-negative least
squares (the share is a cost) on the model's response to each term (simulated once a
shape at +1 us a term, then one Gauss-Newton step at the fold's share); the held-out
prediction is simulated.

``--form`` names the free terms (``FORMS``); ``--check BENCH`` predicts another run of the
same build on the same GPU with the share fitted on all nine shapes; ``--overlay OUT``
writes the base's fitted overlay with that share added (the build's costs,
``<gpu>.kda_tickets_unrolled.fitted.json``, a bundled base only).

    python -m lab.ticket_code_fit --bench kernel_bench_tickets.json [--base h200-k1]
        [--form gemv+item_l1+item_l2] [--check OTHER.json ...] [--overlay OUT] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
from scipy.optimize import lsq_linear

from kda_kernel.triton.defaults import default_config
from kda_sim.engine import simulate
from kda_sim.errors import InvalidInput
from kda_sim.kernels.k1.code_share import CODE_SHARE, with_code_share
from kda_sim.machine import load_profile
from kda_sim.machine.profile import GpuProfile
from lab.gpu_jobs import report_main
from lab.ticket_k1_fit import within
from lab.ticket_k1_report import variant_rows
from lab.ticket_unroll_predict import OCCUPANCY, UNROLL

# a form: its free terms, each a direction in the code share's terms
Form = tuple[dict[str, float], ...]
FORMS: dict[str, Form] = {
    # the default: a gemv group's and a kda item's, the item's apart at L = 1 and L >= 2
    # as the build's spills are (30 at L = 1, 62 to 66 above)
    "gemv+item_l1+item_l2": ({"gemv_group": 1.0}, {"kda_item_l1": 1.0}, {"kda_item_l2": 1.0}),
    "gemv+item": ({"gemv_group": 1.0}, {"kda_item_l1": 1.0, "kda_item_l2": 1.0}),
    "item_l1+item_l2": ({"kda_item_l1": 1.0}, {"kda_item_l2": 1.0}),
}
DEFAULT_FORM = "gemv+item_l1+item_l2"
STEP_NS = 1000.0  # the step each term's response is simulated at


def untraced(bench: Path, unroll: int = UNROLL) -> dict[tuple[int, int], tuple[float, float]]:
    """(R, L) -> the static build's and the unrolled ticket build's untraced times (us):
    the bench's rows whose variant is ``{}`` and ``{"kda_tickets": true, "ticket_unroll":
    unroll}`` (a run may time other builds beside them: capped registers, the loop, a
    probe; they are left out). A shape without both is refused."""
    want = {"kda_tickets": True, "ticket_unroll": unroll}
    got: dict[tuple[int, int], dict[str, float]] = {}
    for r in variant_rows(bench):
        build = "static" if r["variant"] == {} else "tickets" if r["variant"] == want else None
        if build is not None:
            got.setdefault((int(r["R"]), int(r["L"])), {})[build] = float(r["us"])
    out = {}
    for shape, b in sorted(got.items()):
        if set(b) != {"static", "tickets"}:
            raise InvalidInput(
                f"{shape[0]}x{shape[1]}: the static build and the ticket build with "
                f"ticket_unroll {unroll} are both needed, the bench has {sorted(b)}",
                where=str(bench),
            )
        out[shape] = (b["static"], b["tickets"])
    if not out:
        raise InvalidInput(f"no static and ticket_unroll {unroll} rows", where=str(bench))
    return out


def share_of(form: Form, theta: np.ndarray) -> dict[str, float]:
    """The code share (ns a term) of the form's free values ``theta``."""
    out = dict.fromkeys(CODE_SHARE, 0.0)
    for direction, v in zip(form, theta, strict=True):
        for term, c in direction.items():
            out[term] += c * float(v)
    return out


class Model:
    """The model's difference (us, ticket build less static) at each shape and share,
    simulated once each (cached)."""

    def __init__(self, base: GpuProfile, shapes: list[tuple[int, int]]) -> None:
        self.base = base
        self.runs = 0
        self.static = {s: self._us(default_config(*s, 8), base) for s in shapes}
        self._cache: dict[tuple[tuple[int, int], tuple[float, ...]], float] = {}

    def _us(self, cfg: Any, prof: GpuProfile) -> float:
        self.runs += 1
        out = simulate(cfg, prof, occupancy=OCCUPANCY)
        if out.deadlock or out.timeline.makespan is None:
            raise InvalidInput(f"{cfg.label()}: the model deadlocks", what="prediction")
        return out.timeline.makespan / 1e3

    def diff(self, shape: tuple[int, int], share: dict[str, float]) -> float:
        key = (shape, tuple(round(share[t], 3) for t in CODE_SHARE))
        if key not in self._cache:
            cfg = default_config(*shape, 8, kda_tickets=True, ticket_unroll=UNROLL)
            self._cache[key] = self._us(cfg, with_code_share(self.base, share)) - self.static[shape]
        return self._cache[key]


def fit(
    model: Model, form: Form, shapes: list[tuple[int, int]], meas: dict[tuple[int, int], float]
) -> np.ndarray:
    """The form's values (ns) that best meet the measured differences at ``shapes``: least
    squares on each term's simulated response, then one Gauss-Newton step from there, both
    bounded below so that no value is negative (``nonneg_step``)."""
    zero = np.zeros(len(form))
    f0 = np.array([model.diff(s, share_of(form, zero)) for s in shapes])
    jac = np.array(
        [
            [
                (model.diff(s, share_of(form, STEP_NS * np.eye(len(form))[j])) - f) / STEP_NS
                for j in range(len(form))
            ]
            for s, f in zip(shapes, f0, strict=True)
        ]
    )
    y = np.array([meas[s] for s in shapes])
    theta = nonneg_step(jac, y - f0, zero)
    f1 = np.array([model.diff(s, share_of(form, theta)) for s in shapes])
    return theta + nonneg_step(jac, y - f1, theta)


def nonneg_step(jac: np.ndarray, rhs: np.ndarray, theta: np.ndarray) -> np.ndarray:
    """The step ``x`` from ``theta`` minimising ``|jac x - rhs|`` with ``theta + x >= 0``.

    The form's values are costs of the build's slower code (each a sum of code-share
    terms with positive weights), so none can be negative; unbounded, shapes that hardly
    tell two terms apart let the fit set one against the other (a gemv group at -35 us and
    a kda item at +40 us on the refit h200-k1, issue 38) and the shape held out is missed.
    Where the unbounded solution is already non-negative, ``lsq_linear`` returns it (its
    first solve is ``lstsq``), so such fits are unchanged. BVLS: an exact active-set solve
    for a few dense columns, whose values at a bound are exactly the bound (a term at its
    floor is 0 ns, not a rounding below it)."""
    return lsq_linear(jac, rhs, bounds=(-theta, np.inf), method="bvls").x


def run(
    bench: Path,
    base_name: str = "h200-k1",
    form_name: str = DEFAULT_FORM,
    checks: tuple[Path, ...] = (),
    log: Callable[[str], None] = print,
) -> dict[str, Any]:
    if form_name not in FORMS:
        raise InvalidInput(f"--form {form_name}: one of {sorted(FORMS)}", what="form")
    form = FORMS[form_name]
    t0 = time.perf_counter()
    times = untraced(bench)
    shapes = list(times)
    meas = {s: t - st for s, (st, t) in times.items()}
    model = Model(load_profile(base_name), shapes)
    zero = share_of(form, np.zeros(len(form)))
    rows = []
    for held in shapes:
        train = [s for s in shapes if s != held]
        share = share_of(form, fit(model, form, train, meas))
        pred, proto = model.diff(held, share), model.diff(held, zero)
        rows.append(row(held, meas[held], proto, pred, share))
        log(
            f"{held[0]}x{held[1]}: measured {meas[held]:+.2f}, protocol {proto:+.2f}, held out "
            f"{pred:+.2f} us ({'within' if rows[-1]['within'] else 'MISSED'})"
        )
    share_all = share_of(form, fit(model, form, shapes, meas))
    fitted = [
        row(s, meas[s], model.diff(s, zero), model.diff(s, share_all), share_all) for s in shapes
    ]
    out: dict[str, Any] = {
        "bench": str(bench),
        "base": base_name,
        "form": form_name,
        "terms": [sorted(d) for d in form],
        "rows": rows,
        "share_all_ns": share_all,
        "fitted_rows": fitted,
        "checks": [],
    }
    for other in checks:
        o = untraced(other)
        crows = [
            row(s, t - st, model.diff(s, zero), model.diff(s, share_all), share_all)
            for s, (st, t) in o.items()
        ]
        out["checks"].append({"bench": str(other), "rows": crows})
    out["simulated_launches"] = model.runs
    out["seconds"] = time.perf_counter() - t0
    return out


def row(
    shape: tuple[int, int], meas: float, proto: float, pred: float, share: dict[str, float]
) -> dict[str, Any]:
    return {
        "R": shape[0],
        "L": shape[1],
        "meas_diff_us": meas,
        "protocol_diff_us": proto,
        "pred_diff_us": pred,
        "error_us": pred - meas,
        "within": within(pred, meas),
        "protocol_within": within(proto, meas),
        "share_ns": share,
    }


def table(rows: list[dict[str, Any]], pred_head: str) -> str:
    lines = [
        f"| R x L | measured difference (us) | protocol only (us) | {pred_head} (us) | error "
        "(us) | within 1 us or 25 %? | share: gemv group / kda item L = 1 / L >= 2 (ns) |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        sh = r["share_ns"]
        lines.append(
            f"| {r['R']} x {r['L']} | {r['meas_diff_us']:+.2f} | {r['protocol_diff_us']:+.2f} "
            f"| {r['pred_diff_us']:+.2f} | {r['error_us']:+.2f} | "
            f"{'yes' if r['within'] else 'no'} | "
            + " / ".join(f"{sh[t]:.0f}" for t in CODE_SHARE)
            + " |"
        )
    n = sum(r["within"] for r in rows)
    p = sum(r["protocol_within"] for r in rows)
    lines.append(f"\n{n} of {len(rows)} within the bar ({p} of {len(rows)} on the protocol alone)")
    return "\n".join(lines)


def overlay(base_name: str, share: dict[str, float], bench: Path, out: Path) -> dict[str, Any]:
    """The base's fitted overlay (a bundled kernel profile such as h200-k1) with the code
    share added: the unrolled ticket build's costs, labelled as fitted to untraced times."""
    from kda_sim.kernels.registry import get
    from kda_sim.machine.costs import aliases, fitted_file, validate_costs_dict

    if base_name not in aliases() or aliases()[base_name][2]:
        raise InvalidInput(
            f"--overlay needs a bundled kernel profile as --base (one of "
            f"{sorted(k for k, v in aliases().items() if not v[2])}), not {base_name!r}",
            what="base",
        )
    gpu, kernel, _ = aliases()[base_name]
    spec = get(kernel)
    d = json.loads(Path(str(fitted_file(spec, gpu))).read_text())
    prof = with_code_share(load_profile(base_name), share)
    d["costs"] = {k: list(v) for k, v in prof.costs.items() if k in d["costs"]}
    d["cost_above"] = {k: list(v) for k, v in prof.cost_above.items()}
    terms = ", ".join(f"{t} {share[t]:.0f} ns" for t in CODE_SHARE)
    date = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    d["provenance"] = {
        "by": "lab/ticket_code_fit.py",
        "date": date,
        "detail": (
            f"{base_name}'s costs with the unrolled ticket build's code share added ({terms}; "
            "kda_sim.kernels.k1.code_share), fitted to the untraced times of the static and "
            f"the ticket build in one run ({bench.name}), not a mechanism: the build's own, "
            "not a new build's"
        ),
    }
    d.setdefault("sources", {})["build"] = (
        "the Triton K1's kda_tickets build with ticket_unroll copies (kernel/triton/"
        "tickets.py): the static costs plus its code share, fitted to untraced times"
    )
    validate_costs_dict(d, str(out), spec)
    out.write_text(json.dumps(d, indent=2) + "\n")
    return d


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bench", type=Path, required=True, help="the run's kernel bench JSON")
    ap.add_argument("--base", default="h200-k1", help="the static build's profile")
    ap.add_argument("--form", default=DEFAULT_FORM, help=f"the free terms: {sorted(FORMS)}")
    ap.add_argument("--check", type=Path, action="append", default=[], help="another run")
    ap.add_argument("--overlay", type=Path, help="write the build's overlay (all nine shapes)")
    ap.add_argument("--json", type=Path)
    a = ap.parse_args(argv)
    say = lambda m: print(m, file=sys.stderr)  # noqa: E731

    def make() -> dict[str, Any]:
        rep = run(a.bench, a.base, a.form, tuple(a.check), say)
        if a.overlay:
            overlay(a.base, rep["share_all_ns"], a.bench, a.overlay)
            say(f"wrote {a.overlay}")
        return rep

    def show(rep: dict[str, Any]) -> str:
        out = [f"{a.bench} on {a.base}, form {a.form}, each shape held out:"]
        out.append(table(rep["rows"], "with the code share, held out"))
        sh = rep["share_all_ns"]
        out.append("\nfitted on all nine: " + ", ".join(f"{t} {sh[t]:.0f} ns" for t in CODE_SHARE))
        for c in rep["checks"]:
            out.append(f"\n{c['bench']}, on the share fitted on all nine of {a.bench.name}:")
            out.append(table(c["rows"], "with the code share"))
        out.append(f"\n({rep['simulated_launches']} simulated launches, {rep['seconds']:.0f} s)")
        return "\n".join(out)

    return report_main("ticket_code_fit", make, show, a.json, a.overlay)


if __name__ == "__main__":
    raise SystemExit(main())
