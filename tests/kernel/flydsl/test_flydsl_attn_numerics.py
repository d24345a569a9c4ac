"""The FlyDSL K1's attn-role arithmetic (``kernel/flydsl/k1_attn.py``) transcribed to
torch on the CPU, against the reference (``kernel/reference.py``) at the Triton K1's
tolerances: the prefix + delta seam (the sources' prefix and its write-back) and the
gate's softmax weights as ``gate_local`` computes them in every attn CTA.

``gate_local`` and the gate stage call the same code (``k1_attn.gate_weights``); they
differ in where the weights go (LDS ``red`` or WGT, whose cells carry the f32 bits
unchanged), not in arithmetic, so one transcription is both. Transcribed: the slice
partials (sum of squares, dot with ``ares_nw * ares_qk``, f32 over the slice's 128
columns) -> PART, the gate's sums over 8 groups of 7 slices, ``logit = dt rsq(sq / H +
eps) log2 e``, ``exp2(logit - max)`` and their sum, the mix divided by that sum, its
rstd over the 56 slices' MSQ and the bf16 x rows. The f32 sums run in torch's order, not
the lanes' butterflies: orders differ by f32 rounding only. Untested on AMD hardware.
"""

from __future__ import annotations

import pytest
import torch

from kda_kernel.inputs import make_inputs
from kda_kernel.reference import RMS_EPS, attn_res, attn_weights, bf16r, f32, kda_pre_reference
from kda_kernel.triton.run import TOL, rel_err
from kda_sim.kernels.k1.config import LaunchConfig
from kda_sim.kernels.k1.constants import COLS, GSL, HIDDEN, NA

LOG2E = 1.4426950408889634  # k1_math.LOG2E: exp through exp2, as v_exp_f32
GROUPS = NA // GSL  # the gate's poll groups (8 x 7 slices)


def slices(x: torch.Tensor) -> torch.Tensor:
    """[..., H] -> [..., NA, COLS]: the 56 attn CTAs' column slices."""
    return x.reshape(*x.shape[:-1], NA, COLS)


def grouped_sum(part: torch.Tensor) -> torch.Tensor:
    """[..., NA] partials -> their total as the gate sums them: 7 slices a group, then
    the 8 groups in order (``gate_weights``, ``stage_mix``'s MSQ sums)."""
    groups = part.reshape(*part.shape[:-1], GROUPS, GSL).sum(-1)
    total = groups[..., 0]
    for g in range(1, GROUPS):
        total = total + groups[..., g]
    return total


def transcribe(inp: dict, cfg: LaunchConfig, log2e: float = LOG2E) -> dict:
    """k1_attn's slice, gate (or gate_local) and mix on ``inp``: the prefix as written
    back, the weights the mix applies [S, NS] and the x rows (bf16 values in f32).
    ``log2e``: the factor that makes exp2 an exp (1: a softmax in base 2, a bug)."""
    prefix, delta = f32(inp["prefix"]), inp["delta"]
    blocks = f32(inp["blocks"])  # [S, nb, H]
    w, q = f32(inp["ares_nw"]), f32(inp["ares_qk"])
    # source_cols: the prefix source is bf16(prefix + delta), written back as bf16
    pre = bf16r(prefix + f32(delta)) if delta is not None else prefix
    written = pre.to(torch.bfloat16) if delta is not None else inp["prefix"].clone()
    srcs = torch.cat([blocks, pre[:, None, :]], dim=1)  # [S, NS, H], src == nb the prefix
    # stage_slice: per slice, per (token, source), v v and v w q over its columns
    sv = slices(srcs)
    sq_part = (sv * sv).sum(-1)  # [S, NS, NA]
    dt_part = (sv * slices(w) * slices(q)).sum(-1)
    # gate_weights: PART summed 7 slices a group, then the 8 groups
    sq, dt = grouped_sum(sq_part), grouped_sum(dt_part)  # [S, NS]
    logit = dt * torch.rsqrt(sq * (1.0 / HIDDEN) + RMS_EPS) * log2e
    ex = torch.exp2(logit - logit.max(-1, keepdim=True).values)
    den = ex.sum(-1, keepdim=True)
    # stage_mix: sum of weight x source, divided by the sum of weights
    mixed = (ex[..., None] * srcs).sum(1) / den  # [S, H]
    msq = grouped_sum((slices(mixed) ** 2).sum(-1))  # [S]
    rr = torch.rsqrt(msq * (1.0 / HIDDEN) + RMS_EPS)
    x = bf16r(mixed * rr[:, None] * f32(inp["in_nw"]))
    return {"prefix": written, "weights": ex / den, "x": x}


def reference(inp: dict, cfg: LaunchConfig) -> dict:
    """The reference's prefix out (``kda_pre_reference``), weights and x (``attn_res``)."""
    new_prefix, _, _, _ = kda_pre_reference(**inp, L=cfg.L)
    _, x = attn_res(
        inp["prefix"], inp["delta"], inp["blocks"], inp["ares_nw"], inp["ares_qk"],
        inp["in_nw"], RMS_EPS, RMS_EPS,
    )  # fmt: skip
    pre = f32(inp["prefix"])
    if inp["delta"] is not None:
        pre = bf16r(pre + f32(inp["delta"]))
    srcs = torch.cat([f32(inp["blocks"]), pre[:, None, :]], dim=1)
    weights = attn_weights(srcs, inp["ares_nw"], inp["ares_qk"], RMS_EPS)
    return {"prefix": new_prefix, "weights": weights, "x": x}


# (R, L, with delta): gate_local builds, with and without the prefix + delta seam
CASES = [(1, 1, True), (1, 2, True), (2, 2, False), (3, 1, True)]


@pytest.mark.parametrize(("R", "L", "with_delta"), CASES)
def test_attn_transcription_matches_the_reference(R: int, L: int, with_delta: bool) -> None:
    cfg = LaunchConfig(R, L, gate_local=True)
    inp = make_inputs(cfg, seed=5, with_delta=with_delta)
    got, ref = transcribe(inp, cfg), reference(inp, cfg)
    # the runner's check: the prefix out exactly (an elementwise bf16 add)
    assert torch.equal(got["prefix"], ref["prefix"])
    assert got["weights"].shape == (cfg.S, cfg.NS)
    # the weights are f32 as the state is; x is bf16 as core_out is
    assert rel_err(got["weights"], ref["weights"]) < TOL["rstate"]
    assert rel_err(got["x"], ref["x"]) < TOL["core_out"]


def test_the_checks_can_fail() -> None:
    """A prefix written back without the delta, and a softmax taken in base 2 (exp2
    without the log2 e factor), are both caught."""
    cfg = LaunchConfig(1, 2, gate_local=True)
    inp = make_inputs(cfg, seed=5, with_delta=True)
    ref = reference(inp, cfg)
    no_delta = transcribe({**inp, "delta": None}, cfg)
    assert not torch.equal(no_delta["prefix"], ref["prefix"])
    base2 = transcribe(inp, cfg, log2e=1.0)
    assert rel_err(base2["weights"], ref["weights"]) > 10 * TOL["rstate"]
