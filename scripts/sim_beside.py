"""Write each measured trace's simulated counterpart beside it (``X.json`` -> ``X_sim.json``).

    python scripts/sim_beside.py [traces/k1_h200_*.json ...]

The configuration, GPU profile (the fitted ``h200-k1`` for our Triton K1's H200 traces)
and the measured build's resources come from the trace itself, as ``kda-sim compare``
takes them; the simulation is nominal (no jitter).
"""

from __future__ import annotations

import sys
from pathlib import Path

from kda_sim.compare.launch import occupancy_of, profile_of, resources, with_resources
from kda_sim.engine import simulate
from kda_sim.timeline.chrome import read_chrome, write_chrome


def main(paths: list[str]) -> int:
    files = [Path(p) for p in paths] or sorted(Path("traces").glob("*.json"))
    for path in files:
        if path.stem.endswith("_sim"):
            continue
        tl = read_chrome(path)
        if tl.meta.source != "measured":
            continue
        m = tl.meta
        prof = with_resources(profile_of(tl), resources(tl))
        sim = simulate(m.config(), prof, occupancy=occupancy_of(tl)).timeline
        sim.meta.extra["simulates"] = path.name
        out = path.with_name(f"{path.stem}_sim.json")
        write_chrome(sim, out)
        real, pred = tl.makespan or 0.0, sim.makespan or 0.0
        print(f"{out}: {prof.name}, makespan {pred / 1e3:.1f} us (measured {real / 1e3:.1f} us)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
