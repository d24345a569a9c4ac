"""Launch K1 several times and check what its roles hand over, not only its outputs: the
x rows (attn -> gemv), the PROJ mailbox values and tags (gemv -> kda) and the prefix.

Finds which role a wrong output starts in (run 24 used it on the 1x1 build whose traced
form had failed the reference check in run 23). Usage, on the GPU:
``python3 -m lab.kernel_handoff_check --R 1 --L 1 --repeats 6 --builds '[{"trace": true}, {}]'``
"""

from __future__ import annotations

import argparse
import json
from typing import Any

import torch

from kda_kernel.inputs import clone_inputs, make_inputs
from kda_kernel.reference import front_of
from kda_kernel.triton.launch import Build, Workspace, launch, step_tag
from kda_sim.kernels.k1.config import LaunchConfig as Shape
from kda_sim.kernels.k1.constants import NPROJ, PROJ


def check(R: int, L: int, nb: int, kw: dict[str, Any], repeats: int) -> list[dict[str, Any]]:
    sh = Shape(R, L, nb)
    inp0 = make_inputs(sh, seed=0, device="cuda")
    c = {k: (v.cpu() if v is not None else None) for k, v in inp0.items()}
    p, x, proj = front_of(c)
    b = Build.default(R, L, nb, **kw).validate()
    ws = Workspace.create([b], "cuda")
    lo = b.offsets()["PROJ"]
    rows = []
    for rep in range(repeats):
        inp = clone_inputs(inp0)
        core = torch.zeros(sh.S, PROJ, dtype=torch.bfloat16, device="cuda")
        ws.epoch.add_(1)
        launch(b, inp, core, ws, 0)
        torch.cuda.synchronize()
        tag = step_tag(int(ws.epoch.item()), 0)
        w = ws.scratch[lo : lo + sh.S * NPROJ].cpu().view(sh.S, NPROJ)
        pv = (w & 0xFFFFFFFF).to(torch.int32).view(torch.float32)
        rows.append(
            {
                "build": kw,
                "launch": rep,
                "prefix_exact": torch.equal(inp["prefix"].cpu(), p.to(torch.bfloat16)),
                "x_max_abs": float((ws.xbuf[: sh.S].float().cpu() - x).abs().max()),
                "proj_max_abs": float((pv - proj).abs().max()),
                "proj_tags_all": bool(((w >> 32) == tag).all()),
            }
        )
        print(json.dumps(rows[-1]), flush=True)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--R", type=int, default=1)
    ap.add_argument("--L", type=int, default=1)
    ap.add_argument("--nb", type=int, default=8)
    ap.add_argument("--repeats", type=int, default=6)
    ap.add_argument(
        "--builds",
        default="[{}]",
        help="JSON list of dicts of LaunchConfig variants and Build options",
    )
    a = ap.parse_args()
    for kw in json.loads(a.builds):
        check(a.R, a.L, a.nb, kw, a.repeats)


if __name__ == "__main__":
    main()
