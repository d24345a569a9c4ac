"""The FlyDSL K1's kda-task arithmetic, transcribed to torch on the CPU, against the
reference (``kernel/reference.py``) at the Triton K1's tolerances.

No AMD GPU runs the kernel here, so this is the numerics' CPU check: ``transcribe`` is
``kernel/flydsl/k1_kda.py`` stage by stage (its f32 operations, its bf16 rounding
points, exp / sigmoid through exp2 as the kernel's ``v_exp_f32``), with the mailbox
hand-offs as dicts of cells and every buffer offset and cell index taken from the
kernel's own formulas (``kda_kernel.flydsl.k1_index``). The hand-offs before the kda
tasks (p', x, PROJ) are the reference's ``front_of``: the attn and gemv roles' rounding
points are bf16 nearest even (``k1_math.bf16r`` / ``bf_pack``, ``arith.truncf``), seen
in the ISA by ``test_flydsl_k1.py``. Untested on AMD hardware.
"""

from __future__ import annotations

import math

import pytest
import torch

from kda_kernel.flydsl import k1_index as idx
from kda_kernel.inputs import make_inputs
from kda_kernel.reference import (
    L2_EPS,
    LOWER_BOUND,
    ONORM_EPS,
    front_of,
    kda_pre_reference,
)
from kda_sim.kernels.k1.config import LaunchConfig
from kda_sim.kernels.k1.constants import CONV_W, HD, NVCH, PROJ, VCH

LOG2E = 1.4426950408889634
# kernel/triton/run.py's TOL: bf16 outputs one rounding apart, fp32 state
TOL = {"core_out": 2e-2, "conv_state": 1e-2, "rstate": 1e-2}


def bf16r(x: torch.Tensor) -> torch.Tensor:
    return x.to(torch.bfloat16).to(torch.float32)


def exp2(x: torch.Tensor) -> torch.Tensor:
    return torch.exp2(x)


def sigmoid(x: torch.Tensor) -> torch.Tensor:
    """k1_math.sigmoid: 1 / (1 + exp2(-x log2 e))."""
    return 1.0 / (1.0 + exp2(x * -LOG2E))


def rsq(x: torch.Tensor) -> torch.Tensor:
    return torch.rsqrt(x)


def seed_gate(aa: torch.Tensor, g1: torch.Tensor, dtb: torch.Tensor) -> torch.Tensor:
    """k1_kda.kda_gates: lower_bound sigmoid(exp(a_log) (bf16(g1) + dt_bias))."""
    return LOWER_BOUND * sigmoid(aa * (bf16r(g1) + dtb))


def g1_fma(fa: torch.Tensor, fb: torch.Tensor) -> torch.Tensor:
    """g1 = f_a f_b^T [L, HD] in k1_kda's order: each of 4 lane groups FMAs its 32 K in
    turn, then the butterfly adds groups (0 + 1) + (2 + 3)."""
    prods = fa[:, None, :] * fb[None, :, :]  # [L, HD, K]: bf16 x bf16, exact in f32
    g = [prods[..., 32 * q] for q in range(4)]
    for e in range(1, 32):
        g = [g[q] + prods[..., 32 * q + e] for q in range(4)]
    return (g[0] + g[1]) + (g[2] + g[3])


def g1_mfma(fa: torch.Tensor, fb: torch.Tensor) -> torch.Tensor:
    """g1 in the seed's MFMA order (16x16x32 bf16): a K block of 32 a step, each block's
    products summed at once, the 4 blocks accumulated in turn."""
    prods = fa[:, None, :] * fb[None, :, :]
    acc = prods[..., :32].sum(-1)
    for q in range(1, 4):
        acc = acc + prods[..., 32 * q : 32 * (q + 1)].sum(-1)
    return acc


def transcribe(
    inp: dict, cfg: LaunchConfig, gate_of=seed_gate, g1_of=g1_fma
) -> dict[str, torch.Tensor]:
    """k1_kda's tasks on the reference's PROJ: (core_out, conv_state', rstate')."""
    L, sl = cfg.L, cfg.SL
    _, _, proj_rows = front_of(inp)
    proj = proj_rows.reshape(-1)  # PROJ cells: idx.proj(token, row)
    cs = inp["conv_state"].clone()
    rs = inp["rstate"].clone()
    cs_f, rs_f = cs.view(-1), rs.view(-1)
    st_idx = inp["st_idx"][:, :L].contiguous().view(-1)  # what the runner passes
    num_acc = inp["num_acc"]
    conv_w = inp["conv_w"].float().reshape(-1)
    w_fb = inp["w_fb"].float()
    a_log, dt_bias = inp["a_log"].float(), inp["dt_bias"].float()
    on_w = inp["on_w"].float()
    core = torch.zeros(cfg.S * PROJ, dtype=torch.bfloat16)
    qk_cells: dict[int, float] = {}
    onrm_cells: dict[int, float] = {}
    ol: dict[int, torch.Tensor] = {}
    meta: dict[int, tuple[int, int, list[int]]] = {}
    vloc: dict[int, torch.Tensor] = {}
    tasks = range(cfg.n_tasks)
    # k.stage + k.conv of every task (their QK puts are what k.gates polls)
    for i in tasks:
        req, h, ch = idx.task_coords(i)
        acc_idx = int(num_acc[req]) - 1
        slot = [int(st_idx[idx.st_idx_entry(req, j, L)]) for j in range(L)]
        slot_c, slot0 = slot[0], int(st_idx[idx.st_idx_entry(req, acc_idx, L)])
        meta[i] = (acc_idx, slot0, slot)
        v = torch.zeros(L, VCH)
        for ct in range(3 * VCH):
            chan = idx.conv_chan(h, ch, ct)
            co = idx.conv_entry(slot_c, chan, sl)
            win = [float(cs_f[co + acc_idx + j]) for j in range(CONV_W - 1)]
            old = [cs_f[co + acc_idx + 1 + j].clone() for j in range(sl - L)]
            xs = [float(proj[idx.proj(req * L + j, chan)]) for j in range(L)]
            if slot_c > 0:
                new = old + [torch.tensor(x, dtype=torch.bfloat16) for x in xs]
                for j in range(sl):
                    cs_f[co + j] = new[j]
            seq = torch.tensor(win + xs, dtype=torch.float32)
            cw = conv_w[chan * CONV_W : chan * CONV_W + CONV_W]
            part = ct // VCH
            for j in range(L):
                acc = torch.zeros((), dtype=torch.float32)
                for q in range(CONV_W):
                    acc = acc + cw[q] * seq[j + q]
                o = bf16r(acc * sigmoid(acc))
                if part < 2:
                    qk_cells[idx.qk(req, h, j, part, ch * VCH + ct % VCH, L)] = float(o)
                else:
                    v[j, ct % VCH] = o
        vloc[i] = v
    # k.gates + k.recur (their ONRM puts are what k.norm polls)
    for i in tasks:
        req, h, ch = idx.task_coords(i)
        acc_idx, slot0, slot = meta[i]
        n_fa = L * HD
        fa = torch.tensor([float(proj[idx.gates_fa(req, e, L)]) for e in range(n_fa)])
        qkl = torch.tensor(
            [qk_cells[idx.gates_qk(req, h, e, L)] for e in range(n_fa, n_fa + 2 * L * HD)]
        ).view(2 * L, HD)
        beta = sigmoid(torch.stack([proj[idx.beta(req, h, j, L)] for j in range(L)]))
        aa = exp2(a_log[h] * LOG2E)
        fb = bf16r(w_fb[h * HD : (h + 1) * HD])  # bf16 rows, exact in f32
        dtb = dt_bias[h * HD : (h + 1) * HD]
        g1 = g1_of(fa.view(L, HD), fb)  # [L, HD]: exact products, f32 sums
        gate = gate_of(aa, g1, dtb)
        decay = exp2(gate * LOG2E)
        sc = rsq((qkl * qkl).sum(-1, keepdim=True) + L2_EPS)
        sc[0::2] = sc[0::2] * HD**-0.5
        qkl = qkl * sc
        live0 = slot0 > 0
        rows = [idx.state_entry(slot0, h, ch * VCH + r, 0) for r in range(VCH)]
        s = torch.stack([rs_f[a : a + HD] for a in rows]) if live0 else torch.zeros(VCH, HD)
        outs = torch.zeros(L, VCH)
        for j in range(L):
            qv, kv = qkl[2 * j], qkl[2 * j + 1]
            s = s * decay[j]
            p = s @ kv
            vn = (vloc[i][j] - p) * beta[j]
            s = s + vn[:, None] * kv
            o = bf16r(s @ qv)
            outs[j] = o if live0 else torch.zeros(VCH)
            if slot[j] > 0 and live0:
                for r in range(VCH):
                    a = idx.state_entry(slot[j], h, ch * VCH + r, 0)
                    rs_f[a : a + HD] = s[r]
        ol[i] = outs
        for t in range(L):
            onrm_cells[idx.onrm(req, h, t, ch, L)] = float((outs[t] * outs[t]).sum())
    # k.norm
    for i in tasks:
        req, h, ch = idx.task_coords(i)
        for j in range(L):
            ss = sum(onrm_cells[idx.onrm(req, h, j, q, L)] for q in range(NVCH))
            r = 1.0 / math.sqrt(ss * (1.0 / HD) + ONORM_EPS)
            for e in range(VCH):
                vr = ch * VCH + e
                y = ol[i][j, e] * r * on_w[vr] * sigmoid(proj[idx.g2(req, h, j, vr, L)])
                core[idx.core_out_entry(req, j, h, vr, L)] = y.to(torch.bfloat16)
    return {"core_out": core.view(cfg.S, PROJ), "conv_state": cs, "rstate": rs}


def rel_err(a: torch.Tensor, b: torch.Tensor) -> float:
    a64, b64 = a.double(), b.double()
    return float((a64 - b64).norm() / b64.norm().clamp_min(1e-30))


def reference(inp: dict, cfg: LaunchConfig) -> dict[str, torch.Tensor]:
    _, core, cs, rs = kda_pre_reference(**inp, L=cfg.L)
    return {"core_out": core, "conv_state": cs, "rstate": rs}


# (R, L, padding requests, num_acc): a live and a dead request, every num_acc position
CASES = [(1, 1, (), None), (1, 3, (), [2]), (2, 2, (1,), [2, 1])]


@pytest.mark.parametrize(("R", "L", "pad", "acc"), CASES)
def test_transcription_matches_the_reference(R: int, L: int, pad: tuple, acc: list) -> None:
    cfg = LaunchConfig(R, L)
    inp = make_inputs(cfg, seed=3, pad=pad, num_acc=acc, with_delta=False)
    got, ref = transcribe(inp, cfg), reference(inp, cfg)
    for k, tol in TOL.items():
        assert rel_err(got[k].float(), ref[k].float()) < tol, k
    # the bf16 conv state is a copy of bf16 values: exact, and written where the
    # reference writes it (a padding request's slots are left alone)
    assert torch.equal(got["conv_state"], ref["conv_state"])


def test_the_f_b_product_in_either_summation_order_passes() -> None:
    """The FlyDSL K1's f_b product (FMA) and the seed's (MFMA) take the same exact
    products and differ in the f32 summation order only (measured on the g1 below: 36 %
    of its f32 values differ in the last bits, none of its bf16 ones); either order
    passes the reference check."""
    cfg = LaunchConfig(2, 2)
    inp = make_inputs(cfg, seed=3, pad=(1,), num_acc=[2, 1], with_delta=False)
    ref = reference(inp, cfg)
    fma, mfma = transcribe(inp, cfg), transcribe(inp, cfg, g1_of=g1_mfma)
    for got in (fma, mfma):
        for k, tol in TOL.items():
            assert rel_err(got[k].float(), ref[k].float()) < tol, k
    gen = torch.Generator().manual_seed(0)
    fa = torch.randn(4, HD, generator=gen).bfloat16().float()
    fb = torch.randn(HD, HD, generator=gen).bfloat16().float()
    a, b = g1_fma(fa, fb), g1_mfma(fa, fb)
    assert not torch.equal(a, b)  # the orders are not the same sums ...
    assert torch.allclose(a, b, rtol=1e-5, atol=1e-4)  # ... but f32 rounding apart


def test_the_old_gate_form_would_fail() -> None:
    """The check can fail: the gate the kernel had before, ``-exp(a_log) sigmoid(g1 +
    dt_bias)``, is far outside the tolerance."""
    cfg = LaunchConfig(1, 2)
    inp = make_inputs(cfg, seed=3, with_delta=False)
    got = transcribe(inp, cfg, gate_of=lambda aa, g1, dtb: -aa * sigmoid(g1 + dtb))
    ref = reference(inp, cfg)
    assert rel_err(got["core_out"].float(), ref["core_out"].float()) > TOL["core_out"]
