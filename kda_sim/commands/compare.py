"""``kda-sim compare``: a real trace against the model -- clocks, conformance, errors."""

from __future__ import annotations

import argparse
import sys
from functools import partial
from pathlib import Path

from kda_sim.cli import COMMANDS
from kda_sim.commands.common import (
    add_default_kernel_flags,
    add_input_caps,
    add_jobs_flag,
    add_trace_kernel_flag,
    check_outputs,
    finite_json,
    jobs_of,
    no_kernel_flags,
    variant_flags,
    write_output,
)
from kda_sim.compare.calibrate import MAX_SEEDS, check_seeds
from kda_sim.compare.conformance import check_conformance
from kda_sim.compare.counterpart import counterpart
from kda_sim.compare.diff import Comparison, compare_timelines
from kda_sim.compare.launch import (
    occupancy_of,
    placement_of,
    profile_of,
    resources,
    with_resources,
)
from kda_sim.compare.model import config_of
from kda_sim.compare.seeded import distribution, record, seeded_run
from kda_sim.compare.spread import model_run
from kda_sim.engine import simulate
from kda_sim.errors import InvalidInput
from kda_sim.importers import decoder_for, kind_of, read_kernel_trace
from kda_sim.importers.claimed_launch import check_claimed_launch
from kda_sim.kernels.registry import DEFAULT_KERNEL, get
from kda_sim.machine.profile import GpuProfile
from kda_sim.parallel import Jobs, Workers
from kda_sim.timeline.critical import PathStep, stage_kinds
from kda_sim.timeline.joins import NEAR_NS
from kda_sim.timeline.model import Timeline
from kda_sim.timeline.summary import fmt_ns, partners_side_by_side, slots_side_by_side


def add_shape_flags(p: argparse.ArgumentParser) -> None:
    add_trace_kernel_flag(p)
    add_input_caps(p)
    g = p.add_argument_group("shape of a stamp tensor / ktrace file (they do not record it)")
    g.add_argument("--R", type=int, default=None, help="requests of the traced launch")
    g.add_argument("--L", type=int, default=None, help="tokens a request of the traced launch")
    g.add_argument("--nb", type=int, default=8, help="AttnRes blocks (default 8)")
    g.add_argument("--kda0", type=int, default=0, help="CTA of kda task 0 (default 0)")
    add_default_kernel_flags(g, skip=("R", "L", "nb", "kda0"))  # its switches: K1's variants
    g.add_argument("--trace-gpu", default="mi355x", help="the GPU a stamp / ktrace file came from")
    p.add_argument(
        "--clock-mode",
        choices=("global", "per_unit"),
        default=None,
        help="clock alignment (default: from the trace's clock: globaltimer and "
        "s_memrealtime are device-wide)",
    )
    p.add_argument(
        "--clock-group",
        choices=("unit", "xcd"),
        default=None,
        help="one clock a unit (SM / CU) or an XCD (default: xcd on AMD, else unit)",
    )


def read_any(path: Path, args: argparse.Namespace):
    """A trace of any kind, refused unless it is the launch its header (or the shape
    flags) name."""
    no_kernel_flags(args)
    tl = _read_any(path, args)
    if args.kernel is not None and tl.meta.kernel != get(args.kernel).name:
        raise InvalidInput(
            f"a {tl.meta.kernel} launch, not one of --kernel {args.kernel}",
            what="kernel",
            where=str(path),
        )
    check_claimed_launch(tl, str(path))
    return tl


def _read_any(path: Path, args: argparse.Namespace):
    kind = kind_of(path)
    if kind == "chrome":
        return read_kernel_trace(path)
    # a stamp tensor or ktrace file: the kernel's own format, read by its decoders
    read = decoder_for(args.kernel or DEFAULT_KERNEL, path)
    if args.R is None or args.L is None:
        raise InvalidInput(f"{path}: a {kind_of(path)} file needs --R and --L", what="R/L")
    return read(
        path,
        R=args.R,
        L=args.L,
        nb=args.nb,
        kda0=args.kda0,
        gpu=args.trace_gpu,
        **variant_flags(args),
    )


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("compare", help=COMMANDS["compare"])
    p.add_argument("real", type=Path, help="trace: .json, .pftrace.gz, .pt / .npy stamps")
    p.add_argument("--sim", type=Path, help="a simulated timeline (default: simulate it)")
    p.add_argument("--gpu", default=None, help="profile to simulate on (default: the trace's GPU)")
    p.add_argument("--profile", default=None, help="a fitted profile .json (overrides --gpu)")
    p.add_argument("--tolerance", type=float, default=None, help="skew tolerance in ns")
    p.add_argument("--rows", type=int, default=10, help="worst (CTA, stage) rows to show")
    p.add_argument("--json", action="store_true", help="print a machine-readable report")
    p.add_argument("--out", type=Path, default=None, help="also write the JSON report to this file")
    p.add_argument("--force", action="store_true", help="overwrite --out if it exists")
    p.add_argument(
        "--near",
        type=float,
        default=NEAR_NS,
        metavar="NS",
        help="a join of the critical path whose runner-up was ready less than NS earlier is "
        f"near-critical, and its rival path shown (default {NEAR_NS:.0f}: how far a join's "
        "slack moves between two launches of a shape, the median over 72 H200 launches)",
    )
    p.add_argument(
        "--seeds",
        type=int,
        default=None,
        metavar="N",
        help="with a profile that sets cta_spread (a spread between CTAs): run the launch N "
        f"times, seeds 0 to N-1 without per-op jitter (1 to {MAX_SEEDS}), and report the "
        "model's critical paths as shares of the runs beside the trace's, and the makespan "
        "and per-kind duration errors as mean and spread over the runs; the per-CTA views "
        "are seed 0's (default: one nominal run, which draws no spread)",
    )
    add_jobs_flag(p, "the seeded runs (--seeds)")
    add_shape_flags(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    check_outputs(args.force, out=args.out)  # before the work: a refusal costs nothing
    if not args.near >= 0:  # also refuses nan
        raise InvalidInput(f"--near {args.near}: a threshold in ns, 0 or more", what="--near")
    if args.seeds is not None:  # before the trace: a bad count costs nothing
        check_seeds(args.seeds, least=1)
        if args.sim:
            raise InvalidInput(
                "--seeds with --sim: a given simulation is one run; leave out --sim to "
                "simulate the seeded runs",
                what="--seeds",
            )
    elif args.jobs is not None or args.cluster is not None:
        # they share the seeded runs alone: without --seeds they would be ignored silently
        flag = "--jobs" if args.jobs is not None else "--cluster"
        raise InvalidInput(
            f"{flag} shares the seeded runs among processes, and without --seeds there is "
            f"one run; give --seeds N, or leave out {flag}",
            what=flag,
        )
    # where the seeded runs go, before the trace: a cluster that is not there costs nothing
    jobs = jobs_of(args) if args.seeds is not None else 1
    real = read_any(args.real, args)
    cfg = config_of(real)
    spec = get(real.meta.kernel)
    prof = None
    if args.sim:
        sim = read_kernel_trace(args.sim)
        check_claimed_launch(sim, str(args.sim))
        what = str(args.sim)
    else:
        prof = with_resources(profile_of(real, args.profile or args.gpu), resources(real))
        if args.seeds is not None:  # before any simulation
            check_seeds(args.seeds, prof, least=1)
        elif prof.cta_spread:
            print(
                f"note: {prof.name} sets cta_spread, but one nominal launch draws no spread; "
                "--seeds N runs N seeded launches with it",
                file=sys.stderr,
            )
        if args.seeds is not None:
            sim = model_run(real, prof, 0)[1]
        elif kind_of(args.real) == "chrome" and real.meta.measured_build() == "k1":
            # our K1's trace: its counterpart, the same simulation, cached
            sim = counterpart(args.real, args.profile or args.gpu, real)
        else:
            sim = simulate(
                cfg, prof, occupancy=occupancy_of(real), placement=placement_of(real, prof)
            ).timeline
        what = f"simulated on {prof.name}"
        if args.seeds is not None:
            what += f", seed 0 of {args.seeds} seeded runs (the per-CTA views are its)"
    clk = {"clock_mode": args.clock_mode, "clock_group": args.clock_group}
    conf = check_conformance(real, tolerance_ns=args.tolerance, **clk)
    cmp = compare_timelines(real, sim, **clk, near_ns=args.near)
    report = {
        "real": str(args.real),
        "sim": what,
        # which kernel costs the simulation ran (a saved one: what its meta says)
        "costs": (sim.meta.extra.get("costs") if isinstance(sim.meta.extra, dict) else None),
        "kernel": spec.name,
        "config": spec.config_to_dict(cfg),
        "conformance": conf.summary(),
        "comparison": cmp.summary(rows=args.rows),
    }
    slots = slots_side_by_side({"real": real, "sim": sim})
    if slots:
        report["by_task_slot"] = slots
    partners = partners_side_by_side({"real": real, "sim": sim})
    if partners:
        report["by_unit_partner"] = partners
    if prof is not None and args.seeds is not None:
        report["seeds"] = _seeded(args, jobs, real, prof, cmp)
    text = finite_json(report, indent=2)
    if args.out is not None:
        write_output(args.out, lambda tmp: tmp.write_text(text + "\n"), args.force, "--out")
    if args.json:
        print(text)
    else:
        _print(report, conf, cmp)
    return 0 if conf.conforms else 1


def _seeded(
    args: argparse.Namespace, jobs: Jobs, real: Timeline, prof: GpuProfile, first: Comparison
) -> dict:
    """The distribution over seeds 0 to ``args.seeds`` - 1: seed 0's comparison
    ``first`` (the report's), the others run now, shared among ``jobs``."""
    run = partial(
        seeded_run,
        real,
        prof,
        clock_mode=args.clock_mode,
        clock_group=args.clock_group,
        near_ns=args.near,
    )
    with Workers(jobs, desc="seeded runs") as workers:
        rest = workers.map(run, range(1, args.seeds))
    trace = stage_kinds(first.real_kinds)
    return {
        "cta_spread": dict(prof.cta_spread),
        "views_of_seed": 0,
        **distribution(trace, [record(0, first), *rest]),
    }


def _ns(v: float | None) -> str:
    return fmt_ns(v)


def _pct(v: float | None) -> str:
    return "n/a" if v is None else f"{100 * v:+.1f}%"


def _print(report: dict, conf, cmp) -> None:
    c = report["comparison"]
    clk = conf.fit
    print(f"{report['real']}  vs  {report['sim']}  ({cmp.matched and len(cmp.matched)} stages)")
    spec = get(report["kernel"])
    print(f"configuration: {spec.label(spec.config_from_dict(report['config']))}")
    if report.get("costs"):
        print(f"costs: {report['costs']}")
    print(
        f"clocks: {clk.n_pairs} unit pairs from {clk.n_handoffs} hand-offs; residual "
        f"{clk.residual_ns:.0f} ns, smallest margin {clk.margin_ns:.0f} ns, offsets "
        f"{clk.offsets.min():.0f} .. {clk.offsets.max():.0f} ns"
    )
    est = clk.summary()["estimate_ns"]
    if est and not conf.partial:  # a device-wide clock on AMD: what per-XCD clocks need
        # (a partial trace's few hand-offs pin no XCD: its estimate is not printed)
        per = ", ".join(f"XCD {u} {fmt_ns(o, signed=True)}" for u, o in est.items())
        print(
            f"per-XCD offsets the hand-offs point to (not applied; --clock-mode per_unit "
            f"applies them): {per}"
        )
    if conf.partial:  # what it lacks was not checked: never "conforms"
        broke = any(f.kind != "skew" for f in conf.findings)
        found = "breaks the order" if broke else "no finding"
        verdict = f"PARTIAL TRACE, {found} in the part recorded"
        print(f"partial trace: {conf.missing()}")
    else:
        verdict = "conforms" if conf.conforms else "DOES NOT CONFORM"
    counts = ", ".join(f"{n} {k.replace('_', ' ')}" for k, n in conf.counts.items())
    print(f"conformance: {verdict}  (findings: {counts}; skew tolerance {_ns(conf.tolerance_ns)})")
    for f in conf.findings[:10]:
        print(f"  [{f.kind}] CTA {f.cta}: {f.what}: {f.detail}")
    if c["real_makespan_ns"] is not None and c["sim_makespan_ns"] is not None:
        print(
            f"makespan: real {c['real_makespan_ns'] / 1e3:.3f} us, sim "
            f"{c['sim_makespan_ns'] / 1e3:.3f} us ({_pct(c['makespan_err'])})"
        )
    s = c["start_err_frac"]
    if s["median"] is not None:
        print(
            f"start error / makespan: median {100 * s['median']:.2f}%  p90 {100 * s['p90']:.2f}%"
            f"  max {100 * s['max']:.2f}%"
        )
    print(f"{'stage':8} {'n':>4} {'start err':>10} {'dur real':>9} {'dur sim':>9}")
    for name, st in c["by_stage"].items():
        print(
            f"{name:8} {st['n']:4d} {fmt_ns(st['start_err_median_ns'], signed=True):>10} "
            f"{_ns(st['dur_real_median_ns']):>9} {_ns(st['dur_sim_median_ns']):>9}"
        )
    _print_split(c["stage_split"])
    if report.get("by_task_slot"):
        print("stages by task slot (a CTA's later task may run code it has not run yet):")
        print(f"{'stage':8} {'slot':>4} {'dur real':>9} {'dur sim':>9}")
        for r in report["by_task_slot"]:
            real_d, sim_d = r.get("dur_real_median_ns"), r.get("dur_sim_median_ns")
            print(f"{r['stage']:8} {r['slot'] + 1:4d} {_ns(real_d):>9} {_ns(sim_d):>9}")
    if report.get("by_unit_partner"):
        print("role stages by what shares the CTA's unit (SM / CU):")
        print(
            f"{'stage':8} {'beside':>10} {'n real':>6} {'dur real':>9} {'max real':>9}"
            f" {'n sim':>6} {'dur sim':>9}"
        )
        for r in report["by_unit_partner"]:
            print(
                f"{r['stage']:8} {r['partners'] or 'alone':>10} {r.get('real_count', 0):6d} "
                f"{_ns(r.get('dur_real_median_ns')):>9} {_ns(r.get('dur_real_max_ns')):>9} "
                f"{r.get('sim_count', 0):6d} {_ns(r.get('dur_sim_median_ns')):>9}"
            )
    _print_paths(c["critical_path"], cmp)
    if report.get("seeds"):
        _print_seeds(report["seeds"])


def _spread_text(st: dict | None, pct: bool = True) -> str:
    """A figure's mean and spread over the runs, in words."""
    if st is None:
        return "n/a"
    f = _pct if pct else _ns
    sd = f"{100 * st['sd']:.1f}%" if pct else _ns(st["sd"])
    return f"mean {f(st['mean'])}, sd {sd} ({f(st['min'])} .. {f(st['max'])})"


def _print_seeds(d: dict) -> None:
    """The seeded runs: the errors' mean and spread, the paths as shares of the runs."""
    spread = ", ".join(f"{k} {v:g}" for k, v in d["cta_spread"].items())
    print(
        f"seeded runs: {d['runs']} (seeds 0 to {d['runs'] - 1}, cta_spread {spread}, no per-op "
        f"jitter); the views above are seed {d['views_of_seed']}'s"
    )
    print(f"  makespan error: {_spread_text(d['makespan_err'])}")
    print(f"  sim makespan:   {_spread_text(d['sim_makespan_ns'], pct=False)}")
    print("  duration error by stage kind (medians, sim against real), over the runs:")
    for k, st in d["dur_err_by_kind"].items():
        print(f"    {k:8} {_spread_text(st)}")
    share = d["trace_path_share"]
    modal = ", modal" if d["trace_path_modal"] else ""
    print(
        f"  critical path by stage kind, the trace's: {' '.join(d['trace_path'])} "
        f"(the model's in {100 * share:.0f}% of runs{modal})"
    )
    print(f"  {'share':>6} {'runs':>5}  the model's paths")
    for p in d["paths"]:
        marks = [m for m, on in (("the trace's", p["trace"]), ("modal", p["modal"])) if on]
        mark = f"  <- {', '.join(marks)}" if marks else ""
        print(f"  {100 * p['share']:5.0f}% {p['runs']:5d}  {' '.join(p['kinds'])}{mark}")


def _print_split(split: dict) -> None:
    """Per stage kind: median duration real vs sim, the error, and its parts."""
    if not split:
        return
    print("what each stage's time is made of (medians; wait: its polls; load: loads it")
    print("uses in flight outside the waits, unrecorded in a real trace; compute: the rest):")
    print(
        f"{'stage':8} {'dur real':>9} {'dur sim':>9} {'err':>7} {'wait real':>9} "
        f"{'wait sim':>9} {'load sim':>9} {'comp real':>9} {'comp sim':>9}"
    )
    for name, r in split.items():
        real_load = "" if r["real_load_ns"] is None else f" (load real {_ns(r['real_load_ns'])})"
        print(
            f"{name:8} {_ns(r['real_dur_ns']):>9} {_ns(r['sim_dur_ns']):>9} "
            f"{_pct(r['dur_err']):>7} {_ns(r['real_wait_ns']):>9} {_ns(r['sim_wait_ns']):>9} "
            f"{_ns(r['sim_load_ns']):>9} {_ns(r['real_compute_ns']):>9} "
            f"{_ns(r['sim_compute_ns']):>9}{real_load}"
        )


def _step_text(step: PathStep | None) -> str:
    """One step of a critical path in words."""
    if step is None:
        return "(the path begins)"
    if step.kind == "handoff":
        what = f"CTA {step.cta} waits on CTA {step.src}"
        what += f" ({step.label})" if step.label else ""
    elif step.kind == "slot":
        what = f"CTA {step.cta} waits for CTA {step.src}'s slot"
    else:
        what = f"CTA {step.cta} runs" + (f" {step.label}" if step.label else "")
    return f"{what}, {fmt_ns(step.start)} .. {fmt_ns(step.end)} ({fmt_ns(step.dur)})"


def _print_paths(cp: dict, cmp, last: int = 8) -> None:
    """The two critical paths as tables: their length, the time on each by stage, and
    their last steps side by side from the end, marking where they part."""
    rp, sp = cp["real"], cp["sim"]
    if not (rp and sp):
        return
    print("critical path:")
    print(f"  {'':18} {'real':>10} {'sim':>10}")
    print(f"  {'length':18} {_ns(rp['length_ns']):>10} {_ns(sp['length_ns']):>10}")
    print(f"  {'hand-offs':18} {rp['handoffs']:>10} {sp['handoffs']:>10}")
    for name in dict.fromkeys([*rp["by_stage"], *sp["by_stage"]]):
        r, s = rp["by_stage"].get(name), sp["by_stage"].get(name)
        print(f"  {name:18} {_ns(r):>10} {_ns(s):>10}")
    print(f"  CTAs, real: {' '.join(map(str, rp['ctas'][:16]))}")
    print(f"  CTAs, sim:  {' '.join(map(str, sp['ctas'][:16]))}")
    kinds = cp["kinds"]
    print(f"  by kind, real: {' '.join(kinds['real'])}")
    print(f"  by kind, sim:  {' '.join(kinds['sim'])}")
    agree = "agree" if kinds["agree"] else "differ"
    also = "the hand-offs too" if kinds["handoffs_agree"] else "the hand-offs differ"
    print(
        f"  stage kinds {agree} ({also}); the last {kinds['common_tail']} kinds and "
        "hand-offs are shared"
    )
    _print_near(cp.get("near"))
    rs = list(cmp.real_path.steps)[::-1] if cmp.real_path else []
    ss = list(cmp.sim_path.steps)[::-1] if cmp.sim_path else []
    part = cp["part"]
    common = part["common_steps"] if part else 0
    n = min(max(len(rs), len(ss)), last)
    print(f"  the last steps, from the end (the paths share {common}):")
    w = max([len(_step_text(x)) for x in rs[:n]] + [len("real")])
    print(f"  {'#':>3}  {'real':{w}}  sim")
    for i in range(n):
        r = _step_text(rs[i] if i < len(rs) else None)
        s = _step_text(ss[i] if i < len(ss) else None)
        mark = " <- they part" if i == common else ""
        print(f"  {i + 1:>3}  {r:{w}}  {s}{mark}")


def _join_text(j: dict) -> str:
    """A join in words: where, what was taken over what, and by how much."""

    def who(r: dict) -> str:
        if r["kind"] == "order":
            return f"CTA {r['cta']}'s own order"
        return f"CTA {r['cta']}'s {'put' if r['kind'] == 'put' else 'end'}"

    where = "the last end" if j["kind"] == "end" else f"CTA {j['cta']} {j['stage']} {j['label']}"
    if j["kind"] == "slot":
        where = f"CTA {j['cta']}'s slot"
    return f"{where}: {who(j['taken'])} over {who(j['runner_up'])} by {fmt_ns(j['slack_ns'])}"


def _print_near(near: dict | None, most: int = 6) -> None:
    """The joins of each path whose slack is under the threshold, and the stage-kind
    paths one swap of them gives; then the agreement within the near-critical set."""
    if not near:
        return
    th = fmt_ns(near["near_ns"])
    for side in ("real", "sim"):
        n = near[side]
        joins = n["near_joins"]
        print(f"  near-critical joins, {side} (slack under {th}): {len(joins)} of {n['joins']}")
        if side == "real" and near.get("real_puts_placed"):
            print(
                "    (the trace records no puts: each is placed from its stage's bounds, and "
                "a 0 ns slack between puts placed at one instant is the trace's, not the GPU's)"
            )
        for j in joins[:most]:
            print(f"    {_join_text(j)}")
        if len(joins) > most:
            print(f"    ... {len(joins) - most} more (--json lists them)")
        for r in n["rivals"]:
            print(f"    rival by {fmt_ns(r['slack_ns'])}: {' '.join(r['kinds'])}")
    verdict = "agree" if near["agree_within"] else "differ"
    print(
        f"  stage kinds {verdict} within the near-critical set (the real path the model's or "
        f"one of its rivals within {th}, or the model's one of the real's)"
    )
