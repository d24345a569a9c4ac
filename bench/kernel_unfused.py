"""The unfused path the fused K1 competes with: the same layer as separate launches.

torch pieces (each a few kernels) and cuBLAS GEMMs, batched over requests and heads,
free of host syncs so a CUDA graph can hold a whole step: AttnRes -> in_proj GEMM ->
spec conv -> f_b GEMM + gates -> l2norm -> delta-rule recurrence -> gated RMSNorm. vLLM's
path uses Triton kernels for attn_res / conv / recurrence / norm (fewer launches than
these torch pieces), so the in_proj GEMM alone is also timed: a lower bound for any
unfused path.
"""

from __future__ import annotations

from typing import Any

import torch

from kda_sim.constants import BETA_0, CONV_W, FA_0, G2_0, HD, NH, PROJ


def unfused_layer(inp: dict[str, Any], L: int, core_out: torch.Tensor) -> None:
    """One layer in place (prefix, conv_state, rstate updated; core_out written)."""
    prefix, delta, blocks = inp["prefix"], inp["delta"], inp["blocks"]
    s = prefix.shape[0]
    r_n = s // L
    p = (prefix.float() + delta.float()).to(torch.bfloat16)
    prefix.copy_(p)
    srcs = torch.cat([blocks, p[:, None]], 1).float()  # [S, NS, H]
    wq = inp["ares_nw"].float() * inp["ares_qk"].float()
    logit = (srcs @ wq) * torch.rsqrt(srcs.pow(2).mean(-1) + 1e-5)
    w = torch.softmax(logit, -1)
    mixed = torch.einsum("sn,snh->sh", w, srcs)
    x = (mixed * torch.rsqrt(mixed.pow(2).mean(-1, keepdim=True) + 1e-5) * inp["in_nw"].float()).to(
        torch.bfloat16
    )
    proj = x @ inp["w_in"].T  # cuBLAS, bf16 out
    # spec conv
    st_idx, acc = inp["st_idx"], inp["num_acc"].long() - 1
    slot_c = st_idx[:, 0].long()
    cs = inp["conv_state"]
    sl = cs.shape[2]
    state = cs[slot_c.clamp_min(0)]  # [R, 3P, SL]
    pos = acc[:, None] + torch.arange(CONV_W - 1, device=cs.device)[None]  # [R, 3]
    win = torch.gather(state, 2, pos[:, None, :].expand(-1, state.shape[1], -1))
    xin = proj[:, : 3 * PROJ].view(r_n, L, 3 * PROJ).transpose(1, 2)  # [R, 3P, L]
    seq = torch.cat([win.to(xin.dtype), xin], 2).float()
    cw = inp["conv_w"]
    y = sum(cw[None, :, q : q + 1] * seq[:, :, q : q + L] for q in range(CONV_W))
    y = (y * torch.sigmoid(y)).to(torch.bfloat16).float()  # [R, 3P, L]
    keep_pos = acc[:, None] + 1 + torch.arange(sl - L, device=cs.device)[None]
    kept = torch.gather(state, 2, keep_pos[:, None, :].expand(-1, state.shape[1], -1))
    new = torch.cat([kept, xin.to(cs.dtype)], 2)
    live_c = (slot_c > 0)[:, None, None]
    cs[slot_c.clamp_min(0)] = torch.where(live_c, new, state)
    # gates
    pr = proj.view(r_n, L, -1).float()
    g1 = (proj[:, FA_0 : FA_0 + HD] @ inp["w_fb"].T).float().view(r_n, L, NH, HD)
    a = torch.exp(inp["a_log"])[None, None, :, None]
    decay = torch.exp(-5.0 * torch.sigmoid(a * (g1 + inp["dt_bias"].view(NH, HD))))
    beta = torch.sigmoid(pr[..., BETA_0 : BETA_0 + NH])  # [R, L, NH]
    q = y[:, :PROJ].view(r_n, NH, HD, L).permute(0, 3, 1, 2)  # [R, L, NH, HD]
    k = y[:, PROJ : 2 * PROJ].view(r_n, NH, HD, L).permute(0, 3, 1, 2)
    v = y[:, 2 * PROJ :].view(r_n, NH, HD, L).permute(0, 3, 1, 2)
    q = q * torch.rsqrt(q.pow(2).sum(-1, keepdim=True) + 1e-6) * HD**-0.5
    k = k * torch.rsqrt(k.pow(2).sum(-1, keepdim=True) + 1e-6)
    # recurrence, batched over requests and heads
    rs = inp["rstate"]
    slot0 = torch.gather(st_idx.long(), 1, acc[:, None])[:, 0]
    live = (slot0 > 0)[:, None, None, None]
    st = torch.where(live, rs[slot0.clamp_min(0)], 0.0)  # [R, NH, V, K]
    outs = []
    for j in range(L):
        st = st * decay[:, j, :, None, :]
        pk = torch.einsum("rhvk,rhk->rhv", st, k[:, j])
        st = st + (beta[:, j, :, None] * (v[:, j] - pk))[..., None] * k[:, j, :, None, :]
        outs.append(torch.einsum("rhvk,rhk->rhv", st, q[:, j]).to(torch.bfloat16).float())
        sj = st_idx[:, j].long()
        ok = (sj > 0)[:, None, None, None] & live
        dst = sj.clamp_min(0)
        rs[dst] = torch.where(ok, st, rs[dst])
    o = torch.stack(outs, 1) * live[:, None, :, :, 0]  # [R, L, NH, V]
    g2 = pr[..., G2_0 : G2_0 + PROJ].view(r_n, L, NH, HD)
    yo = o * torch.rsqrt(o.pow(2).mean(-1, keepdim=True) + 1e-5) * inp["on_w"].float()
    core_out.copy_((yo * torch.sigmoid(g2)).view(s, PROJ).to(torch.bfloat16))


def in_proj_only(inp: dict[str, Any], out: torch.Tensor) -> None:
    """The unfused path's biggest piece alone (x already there)."""
    torch.matmul(inp["prefix"], inp["w_in"].T, out=out)
