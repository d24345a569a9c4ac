"""Rebuild the committed ISA fixtures of `kda-sim isa`'s tests from the probe kernels.

    python scripts/isa_fixtures.py     # needs flydsl + ld.lld (scripts/flydsl_env.sh)

Writes tests/isa/fixtures/<arch>/<probe>.s: the analyzer's tests read these, so they
run where FlyDSL is absent.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kda_kernel.flydsl.probes import PROBES, build_probe  # noqa: E402
from kda_kernel.flydsl.toolchain import ARCHES, missing  # noqa: E402


def main() -> int:
    why = missing()
    if why:
        print(why, file=sys.stderr)
        return 2
    out = ROOT / "tests" / "isa" / "fixtures"
    with tempfile.TemporaryDirectory() as tmp:
        for arch in ARCHES:
            (out / arch).mkdir(parents=True, exist_ok=True)
            for probe in PROBES:
                built = build_probe(probe.name, arch, Path(tmp) / arch / probe.name)
                shutil.copyfile(built.isa, out / arch / f"{probe.name}.s")
                print(f"{arch} {probe.name}: {built.seconds:.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
