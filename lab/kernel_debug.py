"""Where the K1 output differs from the reference, mailbox by mailbox.

After one launch, the PROJ, QK and ONRM pairs left in scratch are compared with the same
quantities computed on the host from the reference path, so a wrong result is traced to
the producer that put it (a gemv group, a kda task's conv, a kda task's recurrence).
Usage: ``python -m lab.kernel_debug R L nb [repeats]``.
"""

from __future__ import annotations

import sys

import torch

from kda_kernel.inputs import clone_inputs, make_inputs
from kda_kernel.reference import front_of, kda_pre_reference, short_conv
from kda_kernel.triton.launch import Build, Workspace, launch, step_tag
from kda_kernel.triton.run import rel_err
from kda_sim.kernels.k1.config import LaunchConfig as Shape
from kda_sim.kernels.k1.constants import HD, NH, NPROJ, NVCH, PROJ, VCH


def _vals(words: torch.Tensor) -> torch.Tensor:
    return (words & 0xFFFFFFFF).to(torch.int32).view(torch.float32)


def once(R: int, L: int, nb: int, seed: int) -> None:
    sh = Shape(R, L, nb)
    inp = make_inputs(sh, seed=seed, device="cuda")
    keep = clone_inputs(inp)
    ref = kda_pre_reference(**keep, L=L)
    _, _, proj = front_of(keep)
    b = Build.default(R, L, nb, watchdog=True)
    ws = Workspace.create([b], "cuda")
    core = torch.full((sh.S, PROJ), float("nan"), dtype=torch.bfloat16, device="cuda")
    ws.epoch.add_(1)
    launch(b, inp, core, ws, 0, budget_ns=200_000_000)
    torch.cuda.synchronize()
    off, tag = b.offsets(), step_tag(1, 0)
    sc = ws.scratch
    pw = sc[off["PROJ"] : off["PROJ"] + sh.S * NPROJ].view(sh.S, NPROJ)
    pv = _vals(pw)
    bad_rows = ((pv - proj).abs() > 2**-6 * proj.abs().clamp_min(1)).any(0)
    groups = sorted({int(r) // 16 for r in bad_rows.nonzero().flatten()})
    print(
        f"seed {seed}: core rel {rel_err(core.float(), ref[1].float()):.3g} rstate rel "
        f"{rel_err(inp['rstate'], ref[3]):.3g} conv rel "
        f"{rel_err(inp['conv_state'].float(), ref[2].float()):.3g}; PROJ tags ok "
        f"{bool(((pw >> 32) == tag).all())}, groups off by > 1 ulp: {groups[:20]}"
    )
    qk = _vals(sc[off["QK"] : off["QK"] + R * NH * L * 2 * HD]).view(R, NH, L, 2, HD)
    bad_qk = []
    for r in range(R):
        acc = int(keep["num_acc"][r]) - 1
        slot_c = int(keep["st_idx"][r, 0])
        win = keep["conv_state"][max(slot_c, 0)].float()[:, acc : acc + 3].T
        y = short_conv(proj[r * L : (r + 1) * L, : 3 * PROJ], win, keep["conv_w"].float())
        for h in range(NH):
            for part in range(2):
                want = y[:, part * PROJ + h * HD : part * PROJ + (h + 1) * HD]  # [L, HD]
                got = qk[r, h, :, part]
                for ch in range(NVCH):
                    d = got[:, ch * VCH : (ch + 1) * VCH] - want[:, ch * VCH : (ch + 1) * VCH]
                    if float(d.abs().max()) > 1e-2:
                        bad_qk.append(
                            (r, h, ch, "qk"[part], [round(float(v), 3) for v in d.abs().amax(1)])
                        )
    print(
        f"  QK (req, head, chunk, q|k, max err by token) off: {bad_qk[:12]} ({len(bad_qk)} in all)"
    )
    d = (core.float() - ref[1].float()).abs().view(sh.S, NH, NVCH, VCH).amax(-1)
    cells = (d > 5e-2).nonzero().tolist()
    print(f"  core_out (token, head, chunk) off by > 0.05: {cells[:16]} ({len(cells)} in all)")


def main(R: int, L: int, nb: int, repeats: int = 2) -> None:
    for seed in range(repeats):
        for _ in range(2):  # the same inputs twice: a moving error is a race
            once(R, L, nb, seed)


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:5]))
