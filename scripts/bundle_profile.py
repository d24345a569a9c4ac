"""Make a fitted overlay the bundled fitted costs of a kernel on a GPU.

    python scripts/bundle_profile.py FITTED.json traces/k1_h200_R1_L1.json.gz \
        --note "the Triton K1 on the H200, fitted ..." \
        --build "the Triton K1 we ship (kernel/triton), as its H200 traces ran" \
        --out kda_sim/kernels/k1/costs/h200.fitted.json

``FITTED.json`` is a ``kda-sim calibrate --out`` overlay (kernel costs, the GPU
parameters the fit moved, provenance). The fitted values are kept as they are; what the
traces' build is (its threads, registers, shared memory, no x-rows limit, weights
streamed: ``kda_sim.compare.launch.with_resources``) comes from a measured trace of that
build and joins the overlay's ``overrides``, so ``kda-sim simulate --gpu h200-k1`` runs
the same build that ``kda-sim compare`` runs against the trace. ``--build`` says in words
which build the costs model (the ``build`` source ``costs_from`` quotes).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from kda_sim.commands.common import refuse_overwrite
from kda_sim.compare.calibrate import write_overlay
from kda_sim.compare.launch import resources, with_resources
from kda_sim.errors import InvalidInput
from kda_sim.importers.chrome import read_kernel_trace
from kda_sim.machine.costs import BUILD_SOURCE
from kda_sim.machine.profile import load_profile, parse_profile_json


def bundle(fitted: Path, trace: Path, note: str, build: str = "") -> dict:
    d = parse_profile_json(fitted.read_bytes(), str(fitted))
    prof = load_profile(str(fitted))  # checks the overlay
    res = resources(read_kernel_trace(trace))
    if res is None:
        raise InvalidInput("records no build resources (meta.extra.resources)", where=str(trace))
    built = with_resources(prof, res)
    over = dict(d.get("overrides", {}))
    over["kernel"] = built.to_dict()["kernel"]
    over["x_lds_budget"] = built.x_lds_budget
    over["streamed_weights"] = built.streamed_weights
    d["overrides"] = over
    src = dict(d.get("sources", {}))
    src["profile"] = note
    if build:
        src = {BUILD_SOURCE: build, **src}
    if "kernel (measured build)" in built.sources:
        src["kernel (measured build)"] = built.sources["kernel (measured build)"]
    d["sources"] = src
    return d


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("fitted", type=Path)
    ap.add_argument("trace", type=Path, help="a measured trace of the build")
    ap.add_argument("--note", required=True, help="what the fit is (its sources entry)")
    ap.add_argument("--build", default="", help="which build the costs model, in words")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--force", action="store_true")
    a = ap.parse_args(argv)
    try:
        refuse_overwrite(a.out, a.force)
        d = bundle(a.fitted, a.trace, a.note, a.build)
        write_overlay(d, a.out)
    except InvalidInput as e:
        print(f"bundle_profile: {e}", file=sys.stderr)
        return 2
    print(f"{a.out}: {d['kernel']} on {d['gpu']}, fitted")
    return 0


if __name__ == "__main__":
    sys.exit(main())
