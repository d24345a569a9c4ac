"""Compile our FlyDSL K1 for gfx942 and gfx950 and commit what `kda-sim isa` says of it.

    bash scripts/flydsl_env.sh && python scripts/isa_k1_report.py [--R 1 --L 1]

Writes docs/isa/k1_<arch>.s (the ISA, so the report's line numbers can be read) and
docs/isa/k1_<arch>.json: the analyzer's report (preset k1: argument classes by
position, accepted polls from the protocol model), plus the build's shape and compile
seconds, the role-rule verdict the seed states, and the lines of the in_nw and on_w
loads. ``--nw-first`` / ``--onw-first`` build the variant (LaunchConfig.nw_first /
onw_first) into k1_<arch>_nw_first.* / k1_<arch>_onw_first.*; both together into
k1_<arch>_nw_first_onw_first.* (the suffix names every variant on, in VARIANTS' order).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kda_kernel.flydsl.toolchain import ARCHES, missing  # noqa: E402
from kda_sim.isa import analyze_path  # noqa: E402
from kda_sim.isa.analyze import load_lines  # noqa: E402
from kda_sim.isa.model import polls_behind_weights  # noqa: E402
from kda_sim.isa.presets import K1_ARGS  # noqa: E402
from kda_sim.kernels.k1.config import VARIANTS, LaunchConfig  # noqa: E402


def role_rule(report: dict, accepted: set[str]) -> dict:
    """The seed's rule: no poll with weight loads in flight but the accepted ones."""
    polls = [p for k in report["kernels"] for p in k["polls"]]
    offenders = [
        p["label"] for p in polls if p["by_class"].get("weights") and p["label"] not in accepted
    ]
    behind = {p["label"]: p["by_class"].get("weights", 0) for p in polls if p["label"] in accepted}
    return {
        "holds": not offenders,
        "offenders": offenders,
        "accepted_by_design": sorted(accepted),
        "weights_in_flight_at_accepted": behind,
    }


# the arguments whose loads' lines each report gives: where the compiler put the loads
# the variants move (in_nw: nw_first, on_w: onw_first) against the polls
PLACED_LOADS = ("in_nw", "on_w")


def suffix_of(cfg: LaunchConfig) -> str:
    """``_<variant>`` for every variant the build has on, in VARIANTS' order ("" for the
    seed's build), so no two builds' files share a name."""
    return "".join(f"_{v}" for v in VARIANTS if getattr(cfg, v))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--R", type=int, default=1)
    ap.add_argument("--L", type=int, default=1)
    ap.add_argument(
        "--nw-first",
        action="store_true",
        help="the build that asks for in_nw with the slice's loads (files k1_<arch>_nw_first.*)",
    )
    ap.add_argument(
        "--onw-first",
        action="store_true",
        help="the build whose kda tasks ask for on_w with k.stage's loads (files "
        "k1_<arch>_onw_first.*; with --nw-first, k1_<arch>_nw_first_onw_first.*)",
    )
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "isa")
    args = ap.parse_args()
    why = missing()
    if why:
        print(why, file=sys.stderr)
        return 2
    from kda_kernel.flydsl.k1 import build_k1

    cfg = LaunchConfig(args.R, args.L, nw_first=args.nw_first, onw_first=args.onw_first)
    suffix = suffix_of(cfg)
    accepted = polls_behind_weights(cfg)
    args.out.mkdir(parents=True, exist_ok=True)
    refused = 0
    with tempfile.TemporaryDirectory() as tmp:
        for arch in ARCHES:
            try:
                b = build_k1(cfg, arch, Path(tmp) / arch)
            except ValueError as e:  # a shape this target cannot build (gfx942's LDS)
                print(f"{arch}: not built: {e}", file=sys.stderr)
                refused += 1
                continue
            report = analyze_path(b.built.isa, arg_layout=K1_ARGS, accept=accepted).to_dict()
            doc = {
                "build": {
                    "arch": arch,
                    "config": cfg.to_dict(),
                    "compile_seconds": round(b.built.seconds, 2),
                },
                "role_rule": role_rule(report, accepted),
                "report": report,
            }
            shutil.copyfile(b.built.isa, args.out / f"k1_{arch}{suffix}.s")
            report["file"] = f"k1_{arch}{suffix}.s"
            lines = load_lines(b.built.isa.read_text(), arg_layout=K1_ARGS)
            for name in PLACED_LOADS:
                doc[f"{name}_load_lines"] = lines.get(name, [])
            path = args.out / f"k1_{arch}{suffix}.json"
            path.write_text(json.dumps(doc, indent=2) + "\n")
            holds = doc["role_rule"]["holds"]
            print(f"{arch}: {b.built.seconds:.1f} s, role rule holds: {holds} -> {path}")
    return 2 if refused == len(ARCHES) else 0


if __name__ == "__main__":
    sys.exit(main())
