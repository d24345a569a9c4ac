"""The unfused paths the fused K1 competes with: the same layer as separate launches.

Both share a front of torch pieces (each a few kernels) and cuBLAS GEMMs, batched over
requests and heads and free of host syncs, so a CUDA graph holds a whole step: AttnRes
-> in_proj GEMM -> spec conv -> f_b GEMM. They differ in the back:

- ``unfused_layer``: torch gates, l2norm, delta-rule recurrence and gated RMSNorm;
- ``unfused_layer_fla``: flash-linear-attention's kernels, as vLLM's KDA decode runs them:
  ``fused_recurrent_kda_fwd`` (gates, l2norm, beta sigmoid and the recurrence in one
  launch, states read and written in place through the state indices and accepted-token
  counts) and ``layer_norm_gated_fwd`` (RMSNorm with the sigmoid output gate);
- ``unfused_layer_fla_compiled``: the same, its front compiled by ``torch.compile``
  (Inductor fuses the AttnRes and conv pieces into a few Triton kernels): the fastest
  unfused path we can build without writing kernels for it.

The in_proj GEMM alone is also timed: a lower bound for any unfused path.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import torch

from kda_sim.kernels.k1.constants import BETA_0, CONV_W, FA_0, G2_0, HD, NH, PROJ


@dataclass
class Front:
    """What the shared front hands the back: per request r, token j, head h."""

    proj: torch.Tensor  # [S, NPROJ] bf16, the in_proj GEMM's output
    q: torch.Tensor  # [R, L, NH, HD] fp32 conv outputs (not normalised)
    k: torch.Tensor
    v: torch.Tensor
    g1: torch.Tensor  # [R, L, NH, HD] bf16, f_a @ f_b (the gate before dt_bias)
    live: torch.Tensor  # [R] bool: the request has a state slot


def front(inp: dict[str, Any], L: int) -> Front:
    """AttnRes, in_proj, spec conv (conv state updated in place), f_b."""
    return Front(*_front(inp, L))


def _front(inp: dict[str, Any], L: int) -> tuple[torch.Tensor, ...]:
    # plain tensors out, so torch.compile captures it whole
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
    g1 = (proj[:, FA_0 : FA_0 + HD] @ inp["w_fb"].T).view(r_n, L, NH, HD)

    def heads(i: int) -> torch.Tensor:
        return y[:, i * PROJ : (i + 1) * PROJ].view(r_n, NH, HD, L).permute(0, 3, 1, 2)

    slot0 = torch.gather(st_idx.long(), 1, acc[:, None])[:, 0]
    return proj, heads(0), heads(1), heads(2), g1, slot0 > 0


@functools.cache
def _compiled_front() -> Any:
    # one compile a shape, and past dynamo's recompile limit (8) it would run the front
    # eagerly and the bench would time that as compiled (its nine shapes are one too many). A
    # higher limit, and a hit raises (fla_path then records the path as failed)
    torch._dynamo.config.recompile_limit = 64
    torch._dynamo.config.fail_on_recompile_limit_hit = True
    return torch.compile(_front, dynamic=False)


def unfused_layer(inp: dict[str, Any], L: int, core_out: torch.Tensor) -> None:
    """One layer in place (prefix, conv_state, rstate updated; core_out written), the back
    in torch pieces."""
    f = front(inp, L)
    r_n = f.q.shape[0]
    s = r_n * L
    st_idx, acc = inp["st_idx"], inp["num_acc"].long() - 1
    pr = f.proj.view(r_n, L, -1).float()
    a = torch.exp(inp["a_log"])[None, None, :, None]
    decay = torch.exp(-5.0 * torch.sigmoid(a * (f.g1.float() + inp["dt_bias"].view(NH, HD))))
    beta = torch.sigmoid(pr[..., BETA_0 : BETA_0 + NH])  # [R, L, NH]
    q = f.q * torch.rsqrt(f.q.pow(2).sum(-1, keepdim=True) + 1e-6) * HD**-0.5
    k = f.k * torch.rsqrt(f.k.pow(2).sum(-1, keepdim=True) + 1e-6)
    v = f.v
    # recurrence, batched over requests and heads
    rs = inp["rstate"]
    slot0 = torch.gather(st_idx.long(), 1, acc[:, None])[:, 0]
    live = f.live[:, None, None, None]
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


def unfused_layer_fla_compiled(inp: dict[str, Any], L: int, core_out: torch.Tensor) -> None:
    """``unfused_layer_fla`` with its front compiled by torch.compile (compiled at the first
    call of a shape: call it once before timing or capturing)."""
    unfused_layer_fla(inp, L, core_out, Front(*_compiled_front()(inp, L)))


def unfused_layer_fla(
    inp: dict[str, Any], L: int, core_out: torch.Tensor, f: Front | None = None
) -> None:
    """One layer in place, the back in flash-linear-attention's kernels (needs a GPU and
    fla-core). A padding request (no state slot) is given slot 0, as a scratch slot: fla
    reads a slot for every request, and only live requests' outputs are defined."""
    from fla.modules.norm.fused_norm_gate import layer_norm_gated_fwd
    from fla.ops.kda.fused_recurrent import fused_recurrent_kda_fwd

    if f is None:
        f = front(inp, L)
    r_n = f.q.shape[0]
    s = r_n * L

    def dense(t: torch.Tensor) -> torch.Tensor:  # fla's kernels index [R, L, NH, ...] rows
        return t.to(torch.bfloat16).contiguous()

    o, _ = fused_recurrent_kda_fwd(
        q=dense(f.q),
        k=dense(f.k),
        v=dense(f.v),
        g=dense(f.g1),
        beta=dense(f.proj[:, BETA_0 : BETA_0 + NH]).view(r_n, L, NH),
        A_log=inp["a_log"],
        dt_bias=inp["dt_bias"],
        scale=HD**-0.5,
        initial_state=inp["rstate"],
        inplace_final_state=True,
        state_v_first=True,
        ssm_state_indices=inp["st_idx"][:, :L].clamp_min(0),
        num_accepted_tokens=inp["num_acc"],
        use_qk_l2norm_in_kernel=True,
        use_gate_in_kernel=True,
        use_beta_sigmoid_in_kernel=True,
        lower_bound=-5.0,
    )  # [R, L, NH, HD] bf16
    g2 = f.proj[:, G2_0 : G2_0 + PROJ].contiguous().view(s * NH, HD)
    y, *_ = layer_norm_gated_fwd(
        o.reshape(s * NH, HD),
        g2,
        inp["on_w"],
        None,
        activation="sigmoid",
        eps=1e-5,
        is_rms_norm=True,
    )
    core_out.copy_(y.view(s, PROJ))


def in_proj_only(inp: dict[str, Any], out: torch.Tensor) -> None:
    """The unfused path's biggest piece alone (x already there)."""
    torch.matmul(inp["prefix"], inp["w_in"].T, out=out)
