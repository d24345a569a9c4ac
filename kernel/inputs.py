"""Realistic random inputs for one K1 layer at a shape (R, L, nb).

Scales are chosen so every stage works in its live range: the AttnRes softmax is neither
flat nor one-hot, projections are O(1), decays spread over (e^-5, 1), and the recurrent
state is O(0.1). Padding requests carry state indices <= 0; num_acc is drawn in 1..L.
"""

from __future__ import annotations

from typing import Any

import torch

from kda_sim.kernels.k1.config import LaunchConfig
from kda_sim.kernels.k1.constants import CONV_W, HD, HIDDEN, NH, NPROJ, PROJ

BF = torch.bfloat16


def clone_inputs(inp: dict[str, Any]) -> dict[str, Any]:
    """A copy whose tensors are new (a launch updates prefix and states in place)."""
    return {k: v.clone() if isinstance(v, torch.Tensor) else v for k, v in inp.items()}


def state_slots(shape: LaunchConfig) -> int:
    """State slots: slot 0 is the null slot, then one per (request, token), then spare."""
    return 1 + shape.R * shape.L + 2


def make_inputs(
    shape: LaunchConfig,
    *,
    seed: int = 0,
    pad: tuple[int, ...] = (),
    num_acc: list[int] | None = None,
    with_delta: bool = True,
    device: str = "cpu",
    reuse: dict[str, torch.Tensor] | None = None,
) -> dict[str, torch.Tensor | None]:
    """Inputs for ``kda_pre_reference`` / the kernel. ``pad`` lists padding requests;
    ``reuse`` supplies tensors (weights, say) instead of drawing them."""
    g = torch.Generator().manual_seed(seed)
    s, r_n, L = shape.S, shape.R, shape.L

    def rn(*size: int, scale: float = 1.0, mean: float = 0.0) -> torch.Tensor:
        return torch.randn(*size, generator=g) * scale + mean

    reuse = reuse or {}
    if "w_in" in reuse:
        w_in = reuse["w_in"]
    else:
        w_in = rn(NPROJ, HIDDEN, scale=HIDDEN**-0.5)
        w_in[NPROJ - 4 :] = 0.0  # the 4 zero pad rows
        w_in = w_in.to(BF)
    # slots: request r's token j owns a distinct positive slot, shuffled
    perm = torch.randperm(r_n * L, generator=g) + 1
    st_idx = perm.view(r_n, L).to(torch.int32)
    if num_acc is None:
        acc = torch.randint(1, L + 1, (r_n,), generator=g).to(torch.int32)
    else:
        acc = torch.tensor(num_acc, dtype=torch.int32)
    for r in pad:
        st_idx[r] = -1 if r % 2 else 0  # both spellings of "no slot"
    # the scale of ares_qk sets the softmax's temperature: logits O(1)
    inp: dict[str, torch.Tensor | None] = {
        "prefix": rn(s, HIDDEN).to(BF),
        "delta": rn(s, HIDDEN, scale=0.5).to(BF) if with_delta else None,
        "blocks": rn(s, shape.nb, HIDDEN, scale=1.0).to(BF),
        "ares_nw": rn(HIDDEN, scale=0.1, mean=1.0).to(BF),
        "ares_qk": rn(HIDDEN, scale=0.02).to(BF),
        "in_nw": rn(HIDDEN, scale=0.1, mean=1.0).to(BF),
        "w_in": w_in,
        "w_fb": rn(PROJ, HD, scale=HD**-0.5).to(BF),
        "conv_w": rn(3 * PROJ, CONV_W, scale=0.5),
        "conv_state": rn(state_slots(shape), 3 * PROJ, shape.SL).to(BF),
        "a_log": torch.log(torch.rand(NH, generator=g) * 15 + 1),
        "dt_bias": rn(PROJ, scale=0.5),
        "on_w": rn(HD, scale=0.1, mean=1.0).to(BF),
        "rstate": rn(state_slots(shape), NH, HD, HD, scale=0.1),
        "st_idx": st_idx,
        "num_acc": acc,
    }
    inp |= {k: v for k, v in reuse.items() if k != "w_in"}
    return {k: (v.to(device) if v is not None else None) for k, v in inp.items()}
