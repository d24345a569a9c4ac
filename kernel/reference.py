"""K1 ``kda_pre`` in torch on the CPU: the layer the Triton kernel must reproduce.

Written from ``shared/MATH.md`` (formulas) and the seed's launcher (tensor shapes). Rounding
follows the original unfused path wherever it is elementwise: every value handed from one
original kernel to the next is rounded to bf16 at the same point; reductions run in fp32
(float64 would hide nothing here: the kernel's split-K order differs anyway).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

import torch

from kda_kernel.backend import OUTPUTS, Result, given_config
from kda_sim.kernels.k1.config import LaunchConfig
from kda_sim.kernels.k1.constants import (
    BETA_0,
    CONV_W,
    FA_0,
    G2_0,
    HD,
    HIDDEN,
    K_0,
    NH,
    NPROJ,
    PROJ,
    Q_0,
    V_0,
)

LOWER_BOUND = -5.0
L2_EPS = 1e-6  # fla's l2norm eps (MATH.md 5)
RMS_EPS = 1e-5  # the AttnRes source norm and the output RMSNorm (eps, out_eps)
ONORM_EPS = 1e-5  # the gated RMSNorm of the core output


def bf16r(x: torch.Tensor) -> torch.Tensor:
    """Round to bf16 (nearest even) and come back to fp32."""
    return x.to(torch.bfloat16).to(torch.float32)


def f32(x: torch.Tensor) -> torch.Tensor:
    return x.to(torch.float32)


def attn_weights(
    srcs: torch.Tensor, ares_nw: torch.Tensor, ares_qk: torch.Tensor, eps: float
) -> torch.Tensor:
    """The AttnRes gate's softmax weights [S, NS] of the sources ``srcs`` [S, NS, H]."""
    wq = f32(ares_nw) * f32(ares_qk)
    rstd = torch.rsqrt(srcs.pow(2).mean(-1) + eps)  # [S, NS]
    logit = (srcs * wq).sum(-1) * rstd
    return torch.softmax(logit, dim=-1)


def attn_res(
    prefix: torch.Tensor,
    delta: torch.Tensor | None,
    blocks: torch.Tensor,
    ares_nw: torch.Tensor,
    ares_qk: torch.Tensor,
    in_nw: torch.Tensor,
    eps: float,
    out_eps: float,
) -> tuple[torch.Tensor, torch.Tensor]:
    """AttnRes seam: (p' [S, H] fp32 of bf16 values, x [S, H] fp32 of bf16 values)."""
    p = f32(prefix)
    if delta is not None:
        p = bf16r(p + f32(delta))
    srcs = torch.cat([f32(blocks), p[:, None, :]], dim=1)  # [S, NS, H], prefix last
    w = attn_weights(srcs, ares_nw, ares_qk, eps)
    mixed = (w[..., None] * srcs).sum(1)  # not rounded (MATH.md 1)
    x = bf16r(mixed * torch.rsqrt(mixed.pow(2).mean(-1, keepdim=True) + out_eps) * f32(in_nw))
    return p, x


def front_of(
    inp: dict[str, torch.Tensor | None], eps: float = RMS_EPS, out_eps: float = RMS_EPS
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The hand-offs before the kda tasks, from a launch's inputs (``kda_kernel.inputs``):
    p' and x (the attn role's) and the bf16 in_proj rows (the gemv role's PROJ), fp32."""
    prefix, blocks, w_in = inp["prefix"], inp["blocks"], inp["w_in"]
    ares_nw, ares_qk, in_nw = inp["ares_nw"], inp["ares_qk"], inp["in_nw"]
    assert prefix is not None and blocks is not None and w_in is not None
    assert ares_nw is not None and ares_qk is not None and in_nw is not None
    p, x = attn_res(prefix, inp["delta"], blocks, ares_nw, ares_qk, in_nw, eps, out_eps)
    return p, x, bf16r(x @ f32(w_in).T)


def short_conv(xs: torch.Tensor, win: torch.Tensor, cw: torch.Tensor) -> torch.Tensor:
    """Spec-mode causal conv of one request: xs [L, C], win [CONV_W-1, C] -> bf16 silu [L, C]."""
    seq = torch.cat([win, xs], dim=0)  # [CONV_W - 1 + L, C]
    n = xs.shape[0]
    acc = torch.stack([(seq[j : j + CONV_W] * cw.T).sum(0) for j in range(n)])
    return bf16r(acc * torch.sigmoid(acc))


def kda_pre_reference(
    *,
    prefix: torch.Tensor,
    delta: torch.Tensor | None,
    blocks: torch.Tensor,
    ares_nw: torch.Tensor,
    ares_qk: torch.Tensor,
    in_nw: torch.Tensor,
    w_in: torch.Tensor,
    w_fb: torch.Tensor,
    conv_w: torch.Tensor,
    conv_state: torch.Tensor,
    a_log: torch.Tensor,
    dt_bias: torch.Tensor,
    on_w: torch.Tensor,
    rstate: torch.Tensor,
    st_idx: torch.Tensor,
    num_acc: torch.Tensor,
    L: int,
    eps: float = RMS_EPS,
    out_eps: float = RMS_EPS,
    onorm_eps: float = ONORM_EPS,
    lower_bound: float = LOWER_BOUND,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """One KDA layer: returns (prefix', core_out [S, PROJ] bf16, conv_state', rstate').

    Shapes: prefix / delta [S, H] bf16, blocks [S, nb, H] bf16, w_in [NPROJ, H] bf16,
    w_fb [PROJ, HD] bf16, conv_w [3 PROJ, CONV_W] fp32, conv_state [slots, 3 PROJ, SL] bf16
    (SL >= L + CONV_W - 2), a_log [NH] fp32, dt_bias [PROJ] fp32, on_w [HD] bf16,
    rstate [slots, NH, HD(V), HD(K)] fp32, st_idx [R, >= L] int32, num_acc [R] int32.
    """
    s = prefix.shape[0]
    assert s % L == 0, "S must be R * L"
    r_n = s // L
    assert blocks.shape[0] == s and blocks.shape[2] == HIDDEN and blocks.shape[1] >= 1
    assert w_in.shape == (NPROJ, HIDDEN)
    sl = conv_state.shape[2]
    assert sl >= L + CONV_W - 2, "conv state too short for L tokens"

    p, x = attn_res(prefix, delta, blocks, ares_nw, ares_qk, in_nw, eps, out_eps)
    proj = bf16r(x @ f32(w_in).T)  # [S, NPROJ]

    new_cs = conv_state.clone()
    new_rs = rstate.clone()
    core = torch.zeros(s, PROJ, dtype=torch.float32, device=prefix.device)
    a_exp = torch.exp(f32(a_log))
    for r in range(r_n):
        rows = slice(r * L, (r + 1) * L)
        pr = proj[rows]
        slot_c = int(st_idx[r, 0])
        off = int(num_acc[r]) - 1
        state = f32(conv_state[max(slot_c, 0)])  # [3 PROJ, SL]
        qkv_in = pr[:, Q_0 : V_0 + PROJ]  # [L, 3 PROJ]
        win = state[:, off : off + CONV_W - 1].T
        qkv = short_conv(qkv_in, win, f32(conv_w))  # [L, 3 PROJ]
        if slot_c > 0:
            keep = state[:, off + 1 : off + 1 + sl - L]
            new_cs[slot_c] = torch.cat([keep, qkv_in.T], dim=1).to(conv_state.dtype)

        g1 = bf16r(pr[:, FA_0 : FA_0 + HD] @ f32(w_fb).T)  # [L, PROJ]
        slot0 = int(st_idx[r, off])
        live = slot0 > 0
        for h in range(NH):
            hs = slice(h * HD, (h + 1) * HD)
            q = qkv[:, Q_0 + h * HD : Q_0 + (h + 1) * HD]
            k = qkv[:, K_0 + h * HD : K_0 + (h + 1) * HD]
            v = qkv[:, V_0 + h * HD : V_0 + (h + 1) * HD]
            q = q * torch.rsqrt(q.pow(2).sum(-1, keepdim=True) + L2_EPS) * HD**-0.5
            k = k * torch.rsqrt(k.pow(2).sum(-1, keepdim=True) + L2_EPS)
            gate = lower_bound * torch.sigmoid(a_exp[h] * (g1[:, hs] + f32(dt_bias[hs])))
            decay = torch.exp(gate)  # [L, HD(K)]
            beta = torch.sigmoid(pr[:, BETA_0 + h])  # [L]
            st = f32(rstate[slot0, h]).clone() if live else rstate.new_zeros(HD, HD)
            o = rstate.new_zeros(L, HD)
            for j in range(L):
                st = st * decay[j][None, :]
                vn = beta[j] * (v[j] - st @ k[j])
                st = st + vn[:, None] * k[j][None, :]
                o[j] = bf16r(st @ q[j])
                slot = int(st_idx[r, j])
                if live and slot > 0:
                    new_rs[slot, h] = st
            if not live:
                o.zero_()
            g2 = pr[:, G2_0 + h * HD : G2_0 + (h + 1) * HD]
            rn = torch.rsqrt(o.pow(2).mean(-1, keepdim=True) + onorm_eps)
            core[rows, hs] = o * rn * f32(on_w) * torch.sigmoid(g2)
    new_prefix = p.to(prefix.dtype) if delta is not None else prefix.clone()
    return new_prefix, core.to(torch.bfloat16), new_cs, new_rs


class TorchBackend:
    """The reference as the entry point's ``torch`` backend: CPU or GPU, no trace."""

    name = "torch"
    faults: tuple[str, ...] = ()

    def available(self) -> tuple[bool, str]:
        return True, ""

    def default_config(
        self, R: int, L: int, nb: int = 8, kda0: int = 0, **variants: Any
    ) -> LaunchConfig:
        """The variants given; the others the seed's order."""
        return given_config(R, L, nb, kda0, **variants)

    def build(self, cfg: LaunchConfig, options: Mapping[str, Any] | None = None) -> LaunchConfig:
        """Nothing to compile: the configuration, validated."""
        if options:
            raise ValueError(f"the torch reference takes no build options ({sorted(options)})")
        return cfg.validate()

    def run(
        self, inputs: Mapping[str, Any], cfg: LaunchConfig, *, trace: bool = False, **options: Any
    ) -> Result:
        if trace:
            raise ValueError("the torch reference records no trace")
        self.build(cfg, options)
        out = kda_pre_reference(**inputs, L=cfg.L)
        return Result(dict(zip(OUTPUTS, out, strict=True)))

    def run_shape(
        self,
        cfg: LaunchConfig,
        *,
        seed: int = 0,
        check: bool = False,
        warmup: int = 0,
        **request: Any,
    ) -> dict[str, Any]:
        """``kda-sim kernel run --backend torch``: one step of the reference on inputs made
        for ``cfg``, timed; ``check`` has nothing to compare it with, ``warmup`` runs it
        first. The GPU kernels' requests (a trace, a graph, the watchdog) are refused."""
        from kda_kernel.inputs import make_inputs

        asked = sorted(k for k, v in request.items() if v and k != "replays")
        if asked:
            raise ValueError(f"the torch reference runs one untraced step: not {asked}")
        for _ in range(warmup):
            self.run(make_inputs(cfg, seed=seed), cfg)
        t = time.perf_counter()
        res = self.run(make_inputs(cfg, seed=seed), cfg)
        core = res.outputs["core_out"].float()
        return {
            "backend": self.name,
            "R": cfg.R,
            "L": cfg.L,
            "nb": cfg.nb,
            "seconds": round(time.perf_counter() - t, 3),
            "core_out_rms": float(core.pow(2).mean().sqrt()),
        }

    def exit_code(self, error: BaseException) -> int | None:
        return 2 if isinstance(error, ValueError) else None


backend = TorchBackend()
