"""Compile K1 builds in parallel processes (Triton's on-disk cache then serves them), so
a GPU session spends seconds, not minutes, compiling. ``python -m kda_kernel.triton.warm`` warms the
builds the GPU tests and the benchmark use.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import sys
import time

from kda_kernel.triton.launch import STRESS_JITTER_NS


def _one(spec: tuple[int, int, bool, bool, dict]) -> str:
    R, L, watchdog, trace, extra = spec
    import torch

    from kda_kernel.inputs import make_inputs
    from kda_kernel.triton.launch import Build, Workspace, compile_only
    from kda_sim.kernels.k1.config import LaunchConfig
    from kda_sim.kernels.k1.constants import PROJ

    t = time.perf_counter()
    b = Build.default(R, L, 8, **({"watchdog": watchdog, "trace": trace} | extra))
    inp = make_inputs(LaunchConfig(R, L, 8), seed=0, device="cuda")
    core = torch.empty(L, PROJ, dtype=torch.bfloat16, device="cuda")
    k = compile_only(b, inp, core, Workspace.create([b], "cuda"))
    k._init_handles()
    return (
        f"R={R} L={L} watchdog={watchdog} trace={trace} {extra}: "
        f"{time.perf_counter() - t:.1f} s, {k.n_regs} regs, {k.n_spills} spills, "
        f"{k.metadata.shared} B shared"
    )


# R is a runtime argument (never specialized), so one R stands for every R with the same
# constexprs: only Build.TB tells R apart, at L = 1 (1 token an iteration at S = 1, else 2)
SPECS = [
    (R, L, wd, tr, {})
    for R, L in ((1, 1), (2, 1), (1, 2), (1, 4))
    for wd, tr in ((True, False), (False, True), (False, False))
]
# the staggered-warps GPU test's builds (tests/kernel/test_gpu_k1.py)
SPECS += [(L, L, True, False, {"jitter_ns": STRESS_JITTER_NS}) for L in (1, 2, 4)]
SPECS += [(1, 1, True, False, {"jitter_ns": STRESS_JITTER_NS, "slice_barrier": False})]
# the kda0 GPU tests' builds (KDA0_CASES and the traced kda0 = 200 launch there)
SPECS += [
    (R, L, True, False, {"kda0": k})
    for R, L, k in ((1, 1, 200), (2, 2, 160), (4, 1, 255), (4, 4, 56))
]
SPECS += [(2, 2, False, True, {"kda0": 200})]
# the gate_local GPU tests' builds (the variant's replayed step and its traced launch)
SPECS += [(L, L, True, False, {"gate_local": True}) for L in (1, 2, 4)]
SPECS += [(2, 2, False, True, {"gate_local": True})]


def variant_specs(kws: list[dict], ls: list[int]) -> list[tuple[int, int, bool, bool, dict]]:
    """Extra builds: each dict of LaunchConfig variants and Build options (a variant left
    unsaid: the recommended one, Build.default), untraced unless it says ``trace``, at each
    L of ``ls``; at L = 1 at R = 1 and R = 2 both (Build.TB tells them apart there)."""
    return [
        (R, L, False, False, kw) for kw in kws for L in ls for R in ((1, 2) if L == 1 else (1,))
    ]


if __name__ == "__main__":
    import json

    # extra builds: a JSON list of dicts (variant_specs), warmed at each L of KDA_WARM_LS
    # (default 1,2,4; an L outside the grid, such as 3, is a build of its own)
    kws = json.loads(sys.argv[1]) if len(sys.argv) > 1 else []
    ls = [int(v) for v in os.environ.get("KDA_WARM_LS", "1,2,4").split(",")]
    extra = variant_specs(kws, ls)
    specs = SPECS + extra
    only = os.environ.get("KDA_WARM_ONLY")
    if only == "watchdog":  # a correctness-only session
        specs = [sp for sp in specs if sp[2]]  # (R, L, watchdog, trace, fields)
    elif only == "variants":  # a session that times variants only
        specs = extra
    t0 = time.perf_counter()
    with mp.get_context("spawn").Pool(min(len(specs), 14)) as pool:
        for line in pool.imap_unordered(_one, specs):
            print(line, flush=True)
    print(f"warm: {time.perf_counter() - t0:.1f} s", file=sys.stderr)
