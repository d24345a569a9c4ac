"""Whether a change to the engine changed any result: a digest of every ``simulate`` call's
arguments and result, recorded in two trees and compared.

    PYTHONPATH=TREE python -m lab.result_digests record DIR [--quick]
    DIGEST_DIR=DIR/tests PYTHONPATH=TREE python -m pytest -p lab.result_digests tests/engine ...
    python -m lab.result_digests compare BASE_DIR NEW_DIR

``record`` runs K1 over R x L x GPU x its variants (nominal and seeded, folded and not),
every example kernel's defaults, the grid barrier at several sizes, host sequences, and
every bug-corpus case's ``kda-sim check`` (bug and fix; each report kept as printed).
Loaded as a pytest plugin (``-p``), it records every call the tests make. A digest is
a hash of the result's timeline meta and tracks, stuck report, stale reads, HBM bytes,
final memory and deadlock flag, keyed by the call's arguments with each profile as it is
written (``to_dict``: a figure left unset leaves the key alone); each process appends
``argument digest, result digest, label`` lines to ``DIR/<pid>.tsv``. ``compare`` prints
how many calls both trees made and every one whose results differ (exit 1 then), and
whether the check reports are equal.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import importlib
import io
import os
import pickle
import sys
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPORTS = "check_reports.txt"
_original: list[Callable[..., Any]] = []  # the engine's simulate, once ``install`` wrapped it


def _hash(obj: object) -> str:
    try:
        data = pickle.dumps(obj, protocol=4)
    except Exception:  # an unpicklable part: its repr stands for it
        data = repr(obj).encode()
    return hashlib.sha1(data).hexdigest()[:16]


def _as_written(obj: Any) -> Any:
    """``obj`` with every profile in it as its written form (``to_dict``): a figure left
    unset is not written, so a profile field added with a default that keeps results
    unchanged keeps every call's argument digest too."""
    from kda_sim.machine import GpuProfile

    if isinstance(obj, GpuProfile):
        return sorted(obj.to_dict().items())
    if isinstance(obj, (tuple, list)):
        return type(obj)(_as_written(x) for x in obj)
    return obj


def _recorded(*args: Any, **kw: Any) -> Any:
    res = _original[0](*args, **kw)
    tl = res.timeline
    parts = (tl.meta, tl.ctas, tl.stuck, res.stale_reads, res.hbm_bytes, res.final, res.deadlock)
    key = hashlib.sha1(repr(_as_written((args, sorted(kw.items())))).encode()).hexdigest()[:16]
    out = Path(os.environ.get("DIGEST_DIR", "digests"))
    out.mkdir(parents=True, exist_ok=True)
    with open(out / f"{os.getpid()}.tsv", "a") as f:
        f.write(f"{key}\t{_hash(parts)}\t{repr(args[0])[:80] if args else ''}\n")
    return res


def install() -> None:
    """Wrap the engine's ``simulate``: every later import of it (the commands', the host
    runner's) gets the recorder."""
    if _original:
        return
    simmod = importlib.import_module("kda_sim.engine.simulate")
    _original.append(simmod.simulate)
    simmod.simulate = importlib.import_module("kda_sim.engine").simulate = _recorded


def pytest_configure(config: object) -> None:
    """As a pytest plugin (``-p lab.result_digests``): record every call the tests make."""
    install()


def _k1_cases(quick: bool) -> None:
    from kda_sim.kernels.k1.config import LaunchConfig
    from kda_sim.machine import load_profile

    variants: list[dict[str, Any]] = [
        {},
        {"nw_first": True},
        {"onw_first": True},
        {"gate_local": True},
        {"nw_first": True, "onw_first": True},
        {"kda_tickets": True},
        {"gemv_tickets": True},
    ]
    shapes = [(1, 1), (4, 2)] if quick else [(1, 1), (1, 2), (2, 2), (4, 1), (4, 2), (2, 4), (8, 1)]
    for gpu in ("mi355x", "h200") if quick else ("mi355x", "h200", "mi300x", "h100"):
        prof = load_profile(gpu)
        for (r, length), var in ((s, v) for s in shapes for v in variants):
            cfg = LaunchConfig(r, length, **var)
            for seed in (None, 3):
                for fold in (True, False):
                    try:
                        _recorded(cfg, prof, seed=seed, fold_events=fold)
                    except Exception as e:  # a shape that does not fit: the same in both
                        print("k1", gpu, cfg.label(), type(e).__name__, str(e)[:80])
        print("k1 done", gpu, flush=True)


def _example_cases(quick: bool) -> None:
    from kda_sim.kernels.registry import BUILTIN, get
    from kda_sim.machine import load_profile

    for gpu in ("mi355x", "h200") if quick else ("mi355x", "h200", "mi300x", "h100"):
        for name in sorted(BUILTIN):
            if name == "k1":
                continue
            spec = get(name)
            prof = load_profile(gpu, kernel=name)
            cfgs = [spec.default_config()]
            if name == "gridbarrier":
                d = spec.config_to_dict(spec.default_config())
                for ctas in (2, 33, 128) if quick else (2, 8, 33, 128, 256, 512):
                    for var in ({}, {"broken": True}, {"last_resets": True}, {"rounds": 3}):
                        made = spec.config_from_dict({**d, "ctas": ctas, **var})
                        cfgs.append(spec.validate(made))
            for cfg in cfgs:
                big = getattr(cfg, "ctas", 0) > 128  # seeded runs walk every write: kept small
                for seed in (None,) if big else (None, 1):
                    for occ in (None, 1):
                        for fold in (True, False):
                            try:
                                _recorded(cfg, prof, seed=seed, occupancy=occ, fold_events=fold)
                            except Exception as e:
                                print(name, gpu, type(e).__name__, str(e)[:80])
        print("examples done", gpu, flush=True)


def _sequence_cases() -> None:
    from kda_sim.host.run import run_sequence
    from kda_sim.host.spec_text import parse
    from kda_sim.kernels.registry import get
    from kda_sim.machine import load_profile

    cases = [
        ("k1", "launch; launch; zero=ONRM; launch", {"R": 1, "L": 1}),
        ("k1", "launch; replay*2", {"R": 4, "L": 2}),
        ("splitk", "launch zero=SEM; replay*2; launch; replay update", {}),
        ("splitk", "zero=SEM; launch; replay", {"reset": False, "wait": "ge"}),
        ("schedworker", "launch grid=scheduler & launch grid=worker; replay", {"workers": 3}),
        ("pingpong", "launch; replay*2 update; launch; launch rounds=2", {}),
        ("deepgemm_gridid", "launch; replay*2", {"fix": True}),
        ("deepgemm_gridid", "launch; replay", {}),
    ]
    for kernel, text, cfg in cases:
        spec = get(kernel)
        for gpu in ("h200", "mi355x"):
            prof = load_profile(gpu, kernel=kernel)
            for fold in (True, False):
                run_sequence(spec, spec.config_type(**cfg), prof, parse(text), fold_events=fold)
    print("sequences done", flush=True)


def _check_reports(out: Path) -> None:
    from kda_sim.cli import main
    from kda_sim.kernels.bugs.corpus import cases

    with open(out / REPORTS, "w") as f:
        for case in cases():
            for fixed in (False, True):
                text = io.StringIO()
                with contextlib.redirect_stdout(text), contextlib.redirect_stderr(io.StringIO()):
                    try:
                        rc = main(case.argv(fixed))
                    except SystemExit as e:
                        rc = e.code
                f.write(f"== {case.kernel} {'fixed' if fixed else 'bug'} rc={rc}\n")
                f.write(text.getvalue() + "\n")
    print("check reports done", flush=True)


def _load(d: Path) -> tuple[dict[str, set[str]], dict[str, str]]:
    out: dict[str, set[str]] = defaultdict(set)
    labels: dict[str, str] = {}
    for f in d.glob("**/*.tsv"):
        for line in f.read_text().splitlines():
            arg, res, label = line.split("\t", 2)
            out[arg].add(res)
            labels[arg] = label
    return out, labels


def _in_order(d: Path) -> list[list[str]] | None:
    """A record run's calls in the order they ran (argument, result, label): the lines of
    its one process's file; None where the folder holds several (a pytest run's)."""
    files = list(d.glob("**/*.tsv"))
    if len(files) != 1:
        return None
    return [line.split("\t", 2) for line in files[0].read_text().splitlines()]


def _by_order(base_dir: Path, new_dir: Path) -> list[str] | None:
    """Two record runs that share no call's arguments (a type the arguments hold printed
    with a field more) compared call by call in order: the labels of the calls whose
    result or label differs; None where the runs cannot be paired so."""
    a, b = _in_order(base_dir), _in_order(new_dir)
    if a is None or b is None or len(a) != len(b):
        return None
    return [f"{x[2]} / {y[2]}" for x, y in zip(a, b, strict=True) if x[1:] != y[1:]]


def compare(base_dir: Path, new_dir: Path) -> int:
    base, labels = _load(base_dir)
    new, _ = _load(new_dir)
    both = base.keys() & new.keys()
    differ = sorted(a for a in both if base[a] != new[a])
    print(
        f"calls' arguments: base {len(base)}, new {len(new)}, both {len(both)} (only base "
        f"{len(base.keys() - new.keys())}, only new {len(new.keys() - base.keys())}); "
        f"results differ: {len(differ)}"
    )
    for a in differ[:20]:
        print("DIFF", a, labels.get(a))
    if not both and (base or new):  # nothing compared by arguments: by order, or a failure
        by_order = _by_order(base_dir, new_dir)
        if by_order is None:
            print("no call in common, and the runs cannot be paired in order: not compared")
            return 1
        print(f"no call in common; in order, calls whose result or label differs: {len(by_order)}")
        for lab in by_order[:20]:
            print("DIFF", lab)
        differ = by_order
    reports = [d / REPORTS for d in (base_dir, new_dir)]
    same_reports = True
    if all(r.exists() for r in reports):
        same_reports = reports[0].read_text() == reports[1].read_text()
        count = reports[0].read_text().count("\n== ") + 1
        print(f"check reports: {count} in each, {'identical' if same_reports else 'DIFFER'}")
    return 1 if differ or not same_reports else 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    rec = sub.add_parser("record", help="run the cases, digests into DIR")
    rec.add_argument("dir", type=Path)
    rec.add_argument("--quick", action="store_true", help="fewer shapes, GPUs and sizes")
    cmp_ = sub.add_parser("compare", help="compare two trees' digests")
    cmp_.add_argument("base", type=Path)
    cmp_.add_argument("new", type=Path)
    a = ap.parse_args(argv)
    if a.cmd == "compare":
        for d in (a.base, a.new):
            if not d.is_dir():
                print(f"result_digests: {d} is not a directory", file=sys.stderr)
                return 2
        return compare(a.base, a.new)
    a.dir.mkdir(parents=True, exist_ok=True)
    os.environ["DIGEST_DIR"] = str(a.dir / "cases")
    install()
    _k1_cases(a.quick)
    _example_cases(a.quick)
    _sequence_cases()
    _check_reports(a.dir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
