"""The torch reference at the real sizes, checked against an independent token-at-a-time
formulation and against the semantics MATH.md states (padding, conv shift, state slots)."""

from __future__ import annotations

import math

import pytest
import torch

from kda_kernel.inputs import make_inputs, state_slots
from kda_kernel.reference import kda_pre_reference
from kda_sim.kernels.k1.config import LaunchConfig
from kda_sim.kernels.k1.constants import BETA_0, CONV_W, FA_0, G2_0, HD, HIDDEN, NH, PROJ, V_0


def naive_layer(inp: dict, L: int) -> tuple[torch.Tensor, ...]:
    """Token by token, head by head, written without reusing the reference's helpers."""
    f = lambda t: t.double()  # noqa: E731 (a one-line cast)
    rnd = lambda t: t.to(torch.bfloat16).double()  # noqa: E731
    prefix, delta, blocks = inp["prefix"], inp["delta"], inp["blocks"]
    s, nb = prefix.shape[0], blocks.shape[1]
    cs, rs = inp["conv_state"].clone(), inp["rstate"].clone()
    new_prefix = prefix.clone()
    core = torch.zeros(s, PROJ, dtype=torch.float64)
    proj = torch.zeros(s, inp["w_in"].shape[0], dtype=torch.float64)
    wq = f(inp["ares_nw"]) * f(inp["ares_qk"])
    for t in range(s):
        p = rnd(f(prefix[t]) + f(delta[t])) if delta is not None else f(prefix[t])
        new_prefix[t] = p.to(torch.bfloat16)
        srcs = [f(blocks[t, i]) for i in range(nb)] + [p]
        logits = [float((v * wq).sum()) / math.sqrt(float((v * v).mean()) + 1e-5) for v in srcs]
        m = max(logits)
        e = [math.exp(z - m) for z in logits]
        mixed = sum(ei * v for ei, v in zip(e, srcs, strict=True)) / sum(e)
        x = rnd(mixed / math.sqrt(float((mixed * mixed).mean()) + 1e-5) * f(inp["in_nw"]))
        proj[t] = rnd(f(inp["w_in"]) @ x)
    for r in range(s // L):
        acc = int(inp["num_acc"][r])
        slot_c = int(inp["st_idx"][r, 0])
        slot0 = int(inp["st_idx"][r, acc - 1])
        old = f(inp["conv_state"][max(slot_c, 0)])
        sl = old.shape[1]
        hist = [old[:, acc - 1 + i] for i in range(CONV_W - 1)]
        conv_out = []
        for j in range(L):
            xj = proj[r * L + j, : 3 * PROJ]
            hist.append(xj)
            a = sum(f(inp["conv_w"][:, i]) * hist[-CONV_W + i] for i in range(CONV_W))
            conv_out.append(rnd(a / (1 + torch.exp(-a))))
        if slot_c > 0:
            # a shift register: the accepted history, then the L new inputs; keep the last SL
            hist_in = [old[:, i] for i in range(acc + sl - L)]
            hist_in += [proj[r * L + j, : 3 * PROJ] for j in range(L)]
            for i in range(sl):
                cs[slot_c, :, i] = hist_in[len(hist_in) - sl + i].to(torch.bfloat16)
        for h in range(NH):
            st = f(inp["rstate"][slot0, h]) if slot0 > 0 else torch.zeros(HD, HD).double()
            for j in range(L):
                row = proj[r * L + j]
                q = conv_out[j][h * HD : (h + 1) * HD]
                k = conv_out[j][PROJ + h * HD : PROJ + (h + 1) * HD]
                v = conv_out[j][V_0 + h * HD : V_0 + (h + 1) * HD]
                q = q / torch.sqrt((q * q).sum() + 1e-6) / math.sqrt(HD)
                k = k / torch.sqrt((k * k).sum() + 1e-6)
                g1 = rnd(f(inp["w_fb"][h * HD : (h + 1) * HD]) @ row[FA_0 : FA_0 + HD])
                dtb = f(inp["dt_bias"][h * HD : (h + 1) * HD])
                z = math.exp(float(inp["a_log"][h])) * (g1 + dtb)
                decay = torch.exp(-5.0 / (1 + torch.exp(-z)))
                beta = 1 / (1 + math.exp(-float(row[BETA_0 + h])))
                st = st * decay[None, :]
                st = st + beta * torch.outer(v - st @ k, k)
                o = rnd(st @ q) if slot0 > 0 else torch.zeros(HD).double()
                slot = int(inp["st_idx"][r, j])
                if slot0 > 0 and slot > 0:
                    rs[slot, h] = st.float()
                g2 = row[G2_0 + h * HD : G2_0 + (h + 1) * HD]
                y = o / torch.sqrt((o * o).mean() + 1e-5) * f(inp["on_w"]) / (1 + torch.exp(-g2))
                core[r * L + j, h * HD : (h + 1) * HD] = y
    return new_prefix, core, cs, rs


def rel(a: torch.Tensor, b: torch.Tensor) -> float:
    return float((a.double() - b.double()).norm() / b.double().norm().clamp_min(1e-30))


SHAPES = [
    (LaunchConfig(1, 1, 8), (), None),
    (LaunchConfig(2, 2, 3), (1,), [2, 1]),
    (LaunchConfig(1, 4, 1), (), [2]),  # num_acc < L
    (LaunchConfig(4, 1, 8), (0, 3), None),
]


@pytest.mark.parametrize(("shape", "pad", "acc"), SHAPES)
def test_reference_matches_naive(
    shape: LaunchConfig, pad: tuple[int, ...], acc: list[int] | None
) -> None:
    inp = make_inputs(shape, seed=shape.R * 10 + shape.L, pad=pad, num_acc=acc)
    keep = {k: v.clone() for k, v in inp.items() if v is not None}
    pre, core, cs, rs = kda_pre_reference(**inp, L=shape.L)
    for k, v in keep.items():  # inputs untouched
        assert torch.equal(v, inp[k]), k
    npre, ncore, ncs, nrs = naive_layer(inp, shape.L)
    assert torch.equal(pre, npre)  # an elementwise bf16 add: exact
    live = [r for r in range(shape.R) if r not in pad]
    rows = [r * shape.L + j for r in live for j in range(shape.L)]
    # the bf16 roundings can flip one ulp apart between the fp32 and fp64 paths
    assert rel(core[rows].float(), ncore[rows]) < 2e-2
    assert (core.float()[rows].abs().sum(-1) > 0).all()
    assert rel(cs.float(), ncs.float()) < 1e-2
    assert rel(rs, nrs) < 1e-3
    for r in pad:
        assert not core[r * shape.L : (r + 1) * shape.L].any(), "padding rows must be zero"


def test_padding_touches_no_state() -> None:
    shape = LaunchConfig(2, 2, 2)
    inp = make_inputs(shape, seed=7, pad=(0, 1))
    _, core, cs, rs = kda_pre_reference(**inp, L=shape.L)
    assert torch.equal(cs, inp["conv_state"])
    assert torch.equal(rs, inp["rstate"])
    assert not core.any()


def test_conv_state_shifts_by_accepted_tokens() -> None:
    shape = LaunchConfig(1, 4, 1)
    for acc in (1, 2, 4):
        inp = make_inputs(shape, seed=3, num_acc=[acc])
        _, _, cs, _ = kda_pre_reference(**inp, L=shape.L)
        slot = int(inp["st_idx"][0, 0])
        old = inp["conv_state"][slot]
        sl = shape.SL
        # the kept history starts right after the accepted window's first entry
        assert torch.equal(cs[slot, :, : sl - shape.L], old[:, acc : acc + sl - shape.L])
        new_x = cs[slot, :, sl - shape.L :]
        assert not torch.equal(new_x, old[:, sl - shape.L :])
        # other slots untouched
        others = [i for i in range(state_slots(shape)) if i != slot]
        assert torch.equal(cs[others], inp["conv_state"][others])


def test_states_written_to_each_tokens_slot_only() -> None:
    shape = LaunchConfig(2, 2, 1)
    inp = make_inputs(shape, seed=11, num_acc=[1, 2])
    _, _, _, rs = kda_pre_reference(**inp, L=shape.L)
    written = {int(i) for i in inp["st_idx"].flatten() if int(i) > 0}
    for slot in range(state_slots(shape)):
        same = torch.equal(rs[slot], inp["rstate"][slot])
        assert same == (slot not in written), slot


def test_softmax_not_degenerate() -> None:
    """The inputs' scales keep AttnRes in its live range (else the test proves little)."""
    from kda_kernel.reference import attn_res

    inp = make_inputs(LaunchConfig(1, 1, 8), seed=5)
    srcs = torch.cat([inp["blocks"].float(), inp["prefix"].float()[:, None]], 1)
    logit = (srcs * (inp["ares_nw"].float() * inp["ares_qk"].float())).sum(-1)
    logit = logit * torch.rsqrt(srcs.pow(2).mean(-1) + 1e-5)
    w = torch.softmax(logit, -1)
    assert 0.02 < float(w.max()) < 0.95
    _, x = attn_res(
        inp["prefix"],
        inp["delta"],
        inp["blocks"],
        inp["ares_nw"],
        inp["ares_qk"],
        inp["in_nw"],
        1e-5,
        1e-5,
    )
    assert x.shape == (1, HIDDEN)
