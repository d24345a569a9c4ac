"""Make a fitted profile the bundled profile of a kernel on a GPU.

    python scripts/bundle_profile.py FITTED.json traces/k1_h200_R1_L1.json \
        --name h200-k1 --note "the Triton K1 on the H200, fitted ..." \
        --out kda_sim/machine/profiles/h200-k1.json

``FITTED.json`` is a ``kda-sim calibrate --out`` profile (the one bundled as ``h200-k1``
is in git history: ``docs/measurements.md``). The fitted values are kept as they are;
what the traces' build is (its threads, registers, shared memory, no x-rows limit,
weights streamed: ``kda_sim.compare.launch.with_resources``) comes from a measured trace
of that build, so ``kda-sim simulate --profile NAME`` runs the
same build that ``kda-sim compare`` runs against the trace.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from kda_sim.commands.common import refuse_overwrite
from kda_sim.compare.launch import resources, with_resources
from kda_sim.errors import InvalidInput
from kda_sim.importers.chrome import read_kernel_trace
from kda_sim.machine.profile import load_profile


def bundle(fitted: Path, trace: Path, name: str, note: str) -> dict:
    prof = load_profile(str(fitted))
    res = resources(read_kernel_trace(trace))
    if res is None:
        raise InvalidInput("records no build resources (meta.extra.resources)", where=str(trace))
    d = with_resources(prof, res).to_dict()
    d["name"] = name
    d["sources"]["profile"] = note
    return d


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("fitted", type=Path)
    ap.add_argument("trace", type=Path, help="a measured trace of the build")
    ap.add_argument("--name", required=True)
    ap.add_argument("--note", required=True, help="what the profile is (its sources entry)")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--force", action="store_true")
    a = ap.parse_args(argv)
    try:
        refuse_overwrite(a.out, a.force)
        d = bundle(a.fitted, a.trace, a.name, a.note)
    except InvalidInput as e:
        print(f"bundle_profile: {e}", file=sys.stderr)
        return 2
    a.out.write_text(json.dumps(d, indent=2) + "\n")
    print(f"{a.out}: {a.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
