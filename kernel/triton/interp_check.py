"""The K1 device code, role by role, under Triton's interpreter, against the reference.

Each role runs as its own launch (``kda_kernel.triton.stage_kernels``) over just its programs, one
thread a program (``kda_kernel.triton.interp``), with the mailboxes it reads filled from the
reference; so the role's spin-waits on its siblings (the attn all-to-all, the kda heads'
QK and ONRM exchanges) really run. Usage (the interpreter must be on before triton is
imported): ``TRITON_INTERPRET=1 python -m kda_kernel.triton.interp_check [GROUP ...] [--full]``
-> JSON of the errors; each configuration's time goes to stderr.
"""

from __future__ import annotations

import functools
import json
import os
import sys
import time
from typing import Any

import torch

from kda_kernel.inputs import clone_inputs, make_inputs
from kda_kernel.reference import front_of, kda_pre_reference
from kda_kernel.triton.launch import Build, Workspace, next_pow2, step_tag
from kda_kernel.triton.trace_layout import TICKET_TASK_SLOTS
from kda_sim.kernels.k1.config import LaunchConfig
from kda_sim.kernels.k1.constants import NPROJ, PROJ

EPOCH, SLOT = 5, 3


@functools.cache
def _drawn(R: int, L: int, nb: int, seed: int, pad: tuple[int, ...] = ()) -> dict[str, Any]:
    """``make_inputs`` at (R, L, nb), drawn once a process: a group's cases share shapes
    and seeds (gemv's 13 cases draw 6), and a draw costs a second or two of CPU (the
    weights alone are NPROJ x HIDDEN normals). Never written: :func:`_inputs` copies it."""
    return make_inputs(LaunchConfig(R, L, nb), seed=seed, pad=pad)


def _inputs(R: int, L: int, nb: int, seed: int, pad: tuple[int, ...] = ()) -> dict[str, Any]:
    """A fresh copy of the draw (a launch updates the prefix and the states in place)."""
    return clone_inputs(_drawn(R, L, nb, seed, pad))


@functools.cache
def _kda_reference(R: int, L: int, nb: int) -> tuple[dict[str, Any], torch.Tensor, Any]:
    """A kda check's inputs, the projections its tasks poll and the reference's outputs
    at (R, L, nb), once a process (the kda_tickets and probe cases share shapes). Only
    read: each launch takes its own copy of the inputs (:func:`_kda_launch`)."""
    inp = _inputs(R, L, nb, 2 * R + L, (1,) if R > 1 else ())
    _, _, proj = front_of(inp)
    return inp, proj, kda_pre_reference(**inp, L=L)


def _kda_args(k: dict[str, Any], core: torch.Tensor, ws: Any) -> list[Any]:
    """The kda stage kernels' leading arguments, as ``kda_only`` and ``kda_tickets_only``
    both take them: the inputs, the states with their strides, the output, the workspace."""
    cs, rs = k["conv_state"], k["rstate"]
    return [
        k["w_fb"],
        k["conv_w"],
        cs,
        cs.stride(0),
        cs.stride(1),
        cs.stride(2),
        k["a_log"],
        k["dt_bias"],
        k["on_w"],
        rs,
        rs.stride(0),
        k["st_idx"],
        k["st_idx"].stride(0),
        k["num_acc"],
        core,
        ws.scratch,
        ws.epoch,
        SLOT,
        ws.alarm,
    ]


def _rel(a: torch.Tensor, b: torch.Tensor) -> float:
    return float((a.double() - b.double()).norm() / b.double().norm().clamp_min(1e-30))


def _pairs(vals: torch.Tensor, tag: int) -> torch.Tensor:
    bits = vals.reshape(-1).float().view(torch.int32).to(torch.int64) & 0xFFFFFFFF
    return (torch.tensor(tag, dtype=torch.int64) << 32) | bits


def _values(words: torch.Tensor) -> torch.Tensor:
    return (words & 0xFFFFFFFF).to(torch.int32).view(torch.float32)


def _run_attn(
    R: int, L: int, nb: int, source_form: bool, **build: Any
) -> tuple[Build, dict[str, Any], torch.Tensor, Workspace]:
    """The attn role of a build on all 56 attn CTAs: (build, inputs, p', workspace)."""
    from kda_kernel.triton.interp import run_threaded
    from kda_kernel.triton.stage_kernels import attn_only

    inp = _inputs(R, L, nb, R + L + nb)
    b = Build.default(R, L, nb, **build).validate()
    ws = Workspace.create([b], "cpu")
    ws.epoch.fill_(EPOCH)
    pre = inp["prefix"].clone()
    bl = inp["blocks"]
    run_threaded(
        attn_only,
        56,
        pre,
        inp["delta"],
        bl,
        bl.stride(0),
        bl.stride(1),
        inp["ares_nw"],
        inp["ares_qk"],
        inp["in_nw"],
        ws.scratch,
        ws.xbuf,
        ws.epoch,
        SLOT,
        ws.alarm,
        R,
        nb,
        1e-5,
        1e-5,
        L=L,
        HAS_DELTA=True,
        NEV=64,
        WATCHDOG=True,
        TB=b.TB,
        SRC_MIN_S=1 if source_form else 17,
        ALIGN=b.align,
        GATE_LOCAL=b.gate_local,
        BLK_FIRST=b.blk_first,
        MSQ_SP=b.constexprs()["MSQ_SP"],
        MIX_MIN_S=b.MIX_MIN_S,
        NW_FIRST=b.NW_FIRST,
    )
    return b, inp, pre, ws


def _attn_errors(b: Build, inp: dict[str, Any], pre: torch.Tensor, ws: Workspace) -> dict[str, Any]:
    p, x, _ = front_of(inp)
    off = b.offsets()
    tag = step_tag(EPOCH, SLOT)
    xr = (ws.scratch[off["XRDY"] : off["XRDY"] + 56] >> 32) == tag
    return {
        "prefix_exact": bool(torch.equal(pre, p.to(torch.bfloat16))),
        "x_rel": _rel(ws.xbuf[: b.S].float(), x),
        "xrdy_all": bool(xr.all()),
    }


def check_attn(R: int, L: int, nb: int, source_form: bool = True, **build: Any) -> dict[str, Any]:
    return _attn_errors(*_run_attn(R, L, nb, source_form, **build))


def check_attn_variant(
    R: int, L: int, nb: int, source_form: bool = True, **build: Any
) -> dict[str, Any]:
    """check_attn of a variant build, and its x rows and MSQ pairs against the default
    build's on the same inputs (``same_x``, ``same_msq``: bit for bit; gate_local computes
    the weights with the gate stage's own arithmetic); ``wgt_put``: whether any WGT pair
    was written (gate_local has no WGT hand-off)."""
    run = _run_attn(R, L, nb, source_form, **build)
    b, ws = run[0], run[3]
    d, _, _, dws = _run_attn(R, L, nb, source_form)
    off, doff = b.offsets(), d.offsets()
    n = 56 * b.S
    return _attn_errors(*run) | {
        "same_x": bool(torch.equal(ws.xbuf[: b.S], dws.xbuf[: d.S])),
        "same_msq": bool(
            torch.equal(
                ws.scratch[off["MSQ"] : off["MSQ"] + n], dws.scratch[doff["MSQ"] : doff["MSQ"] + n]
            )
        ),
        "wgt_put": bool(ws.scratch[off["WGT"] : off["MSQ"]].any()),
    }


def check_gemv(R: int, L: int, nb: int, g0: int = 190, **build: Any) -> dict[str, Any]:
    """The gemv role of a build (Build's defaults, overridden by ``build``) on the last
    CTAs, with x published: PROJ against the reference."""
    from kda_kernel.triton.interp import run_threaded
    from kda_kernel.triton.stage_kernels import gemv_only

    sh = LaunchConfig(R, L, nb)
    inp = _inputs(R, L, nb, R + L)
    _, x, proj = front_of(inp)
    b = Build.default(R, L, nb, **build).validate()
    ws = Workspace.create([b], "cpu")
    ws.epoch.fill_(EPOCH)
    off, tag = b.offsets(), step_tag(EPOCH, SLOT)
    ws.xbuf[: sh.S] = x.to(torch.bfloat16)
    ws.scratch[off["XRDY"] : off["XRDY"] + 56] = (tag << 32) | 1
    n = 197 - g0  # the last CTAs: their second group runs past the end on CTA 196
    run_threaded(
        gemv_only,
        n,
        inp["w_in"],
        ws.scratch,
        ws.xbuf,
        ws.epoch,
        SLOT,
        ws.alarm,
        R,
        nb,
        g0,
        L=L,
        NEV=64,
        BK=b.bk,
        FMA=b.fma,
        TC_SPLIT=b.tc_split,
        FMA_MAX_S=b.fma_max_s,
        FMA_BY_S=b.fma_by_s,
        ALIGN=b.align,
        TMA_NS=b.tma_ns,
    )
    words = ws.scratch[off["PROJ"] : off["PROJ"] + sh.S * NPROJ].view(sh.S, NPROJ)
    lo = 32 * g0
    got = _values(words)[:, lo:]
    return {
        "proj_max_abs": float((got - proj[:, lo:]).abs().max()),
        "tags_all": bool(((words[:, lo:] >> 32) == tag).all()),
    }


def _kda_setup(b: Build) -> tuple[dict[str, Any], torch.Tensor, Any, Workspace]:
    """A kda check's inputs, the projections its tasks poll, the reference and a CPU
    workspace for build ``b``."""
    inp, proj, ref = _kda_reference(b.cfg.R, b.cfg.L, b.cfg.nb)
    return inp, proj, ref, Workspace.create([b], "cpu")


def _kda_launch(
    b: Build, ws: Workspace, inp: dict[str, Any], proj: torch.Tensor, epoch: int
) -> tuple[dict[str, Any], torch.Tensor]:
    """One launch's epoch, the projections put under its tag, fresh copies of the inputs
    the tasks write and the output (NaN until written)."""
    ws.epoch.fill_(epoch)
    off, tag = b.offsets(), step_tag(epoch, SLOT)
    ws.scratch[off["PROJ"] : off["PROJ"] + proj.numel()] = _pairs(proj, tag)
    core = torch.full((b.cfg.S, PROJ), float("nan"), dtype=torch.bfloat16)
    return clone_inputs(inp), core


def _kda_errors(k: dict[str, Any], core: torch.Tensor, ref: Any) -> dict[str, Any]:
    """The kda outputs (core, conv state, recurrent state) against the reference."""
    return {
        "core_rel": _rel(core.float(), ref[1].float()),
        "core_finite": bool(torch.isfinite(core.float()).all()),
        "conv_rel": _rel(k["conv_state"].float(), ref[2].float()),
        "rstate_rel": _rel(k["rstate"], ref[3]),
    }


def check_kda(R: int, L: int, nb: int, **build: Any) -> dict[str, Any]:
    from kda_kernel.triton.interp import run_threaded
    from kda_kernel.triton.stage_kernels import kda_only

    b = Build.default(R, L, nb, **build).validate()
    inp, proj, ref, ws = _kda_setup(b)
    k, core = _kda_launch(b, ws, inp, proj, EPOCH)
    run_threaded(
        kda_only,
        R * 96,
        *_kda_args(k, core, ws),
        R,
        nb,
        1e-5,
        -5.0,
        L=L,
        LP=next_pow2(L),
        SL=b.SL,
        SLP=next_pow2(max(b.SL - L, 1)),
        NEV=64,
        ALIGN=b.align,
        RECUR_ROLLED=b.recur_rolled,
    )
    return _kda_errors(k, core, ref)


def check_kda_tickets(
    R: int, L: int, nb: int, nprog: int = 16, unroll: int = 0, probe: str = "", kda0: int = 0
) -> dict[str, Any]:
    """kda_tickets' loop (``stage_kernels.kda_tickets_only``) over ``nprog`` programs, two
    launches on one workspace (the counter never cleared by the host): each launch's
    outputs against the reference, every task run once, the counter back to 0. With
    ``unroll`` a program's first takes run the unrolled copies and the rest the loop.
    ``probe`` "static_item" (``Build.probe``): each take runs the task the static
    placement over ``nprog`` programs from ``kda0`` gives (``placed_static`` says whether
    every program ran exactly those)."""
    from kda_kernel.triton import trace_layout as T
    from kda_kernel.triton.interp import run_threaded
    from kda_kernel.triton.stage_kernels import kda_tickets_only

    b = Build.default(R, L, nb, kda_tickets=True, ticket_unroll=unroll, probe=probe).validate()
    inp, proj, ref, ws = _kda_setup(b)
    nev = T.record_words(R, tickets=True)
    out: dict[str, Any] = {}
    for launch in range(2):
        k, core = _kda_launch(b, ws, inp, proj, EPOCH + launch)
        trace = torch.zeros(nprog, nev, dtype=torch.int32)
        run_threaded(
            kda_tickets_only,
            nprog,
            *_kda_args(k, core, ws),
            trace,
            R,
            nb,
            1e-5,
            -5.0,
            NPROG=nprog,
            L=L,
            LP=next_pow2(L),
            SL=b.SL,
            SLP=next_pow2(max(b.SL - L, 1)),
            NEV=nev,
            ALIGN=b.align,
            UNROLL=unroll,
            KDA0=kda0,
            PROBE_STATIC_ITEM=probe == "static_item",
        )
        tr = trace.numpy()
        ntask = tr[:, T.EV_NTASK]
        ran = sorted(
            int(tr[p, T.EV_TASK0 + n * T.TASK_STRIDE + T.TASK_ID])
            for p in range(nprog)
            for n in range(min(int(ntask[p]), T.TICKET_TASK_SLOTS))
        )
        tickets = sorted(
            int(tr[p, T.EV_TAKE0 + m * T.TAKE_STRIDE + T.TAKE_TICKET])
            for p in range(nprog)
            for m in range(min(int(tr[p, T.EV_NTAKE]), T.TICKET_TAKE_SLOTS))
        )
        out[f"launch {launch}"] = {
            **_kda_errors(k, core, ref),
            "tasks_run": int(ntask.sum()),
            "tasks_each_once": ran == list(range(R * 96)) if ntask.max() <= 8 else None,
            "tickets_each_once": tickets == list(range(R * 96 + nprog))
            if tr[:, T.EV_NTAKE].max() <= T.TICKET_TAKE_SLOTS
            else None,
            "tasks_by_program": [int(x) for x in ntask],
            "placed_static": _task_ids(tr) == _static_tasks(R, nprog, kda0),
            "counter_after": int(ws.counter.item()),
        }
    return out


def _task_ids(tr: Any) -> list[list[int]]:
    """Each program's recorded task ids, in the order it ran them."""
    from kda_kernel.triton import trace_layout as T

    return [
        [
            int(w[T.EV_TASK0 + n * T.TASK_STRIDE + T.TASK_ID])
            for n in range(min(int(w[T.EV_NTASK]), T.TICKET_TASK_SLOTS))
        ]
        for w in tr
    ]


def _static_tasks(R: int, nprog: int, kda0: int) -> list[list[int]]:
    """The static placement's tasks of each of ``nprog`` programs: task i on program
    (i + kda0) mod nprog, in order."""
    return [
        list(range((p - kda0) % nprog, R * 96, nprog))[:TICKET_TASK_SLOTS] for p in range(nprog)
    ]


def check_kda_static(
    R: int, L: int, nb: int, nprog: int = 16, kda0: int = 0, probe: str = ""
) -> dict[str, Any]:
    """The static placement (``stage_kernels.kda_static_only``) over ``nprog`` programs,
    two launches on one workspace; with ``probe`` "take" (``Build.probe``) a take before
    each task. Each launch's outputs against the reference, each program's tasks the
    placement's, the tickets taken 0 .. R * 96 - 1 once each and the counter back to 0."""
    from kda_kernel.triton import trace_layout as T
    from kda_kernel.triton.interp import run_threaded
    from kda_kernel.triton.stage_kernels import kda_static_only

    b = Build.default(R, L, nb, probe=probe).validate()
    inp, proj, ref, ws = _kda_setup(b)
    nev = T.record_words(R, tickets=True)
    maxt = -(-R * 96 // nprog)
    out: dict[str, Any] = {}
    for launch in range(2):
        k, core = _kda_launch(b, ws, inp, proj, EPOCH + launch)
        trace = torch.zeros(nprog, nev, dtype=torch.int32)
        run_threaded(
            kda_static_only,
            nprog,
            *_kda_args(k, core, ws),
            trace,
            R,
            nb,
            1e-5,
            -5.0,
            NPROG=nprog,
            KDA0=kda0,
            MAXT=maxt,
            L=L,
            LP=next_pow2(L),
            SL=b.SL,
            SLP=next_pow2(max(b.SL - L, 1)),
            NEV=nev,
            ALIGN=b.align,
            PROBE_TAKE=probe == "take",
        )
        tr = trace.numpy()
        tickets = sorted(
            int(w[T.EV_TAKE0 + m * T.TAKE_STRIDE + T.TAKE_TICKET])
            for w in tr
            for m in range(min(int(w[T.EV_NTAKE]), T.TICKET_TAKE_SLOTS))
        )
        out[f"launch {launch}"] = {
            **_kda_errors(k, core, ref),
            "tasks_run": int(tr[:, T.EV_NTASK].sum()),
            "placed_static": _task_ids(tr) == _static_tasks(R, nprog, kda0),
            "takes_by_program": [int(w[T.EV_NTAKE]) for w in tr],
            "tickets_each_once": tickets == list(range(R * 96)) if maxt <= 8 else None,
            "counter_after": int(ws.counter.item()),
        }
    return out


# Every configuration a group runs: (name, check, args, kwargs, core). The core ones cover
# every form of each role (the slice and mix by source and by token, both layouts,
# gate-local, every projection form, the kda exchange at L = 1 and L = 2, tickets over
# two launches) and are what the tests run, about 180 s of CPU, and the probes'
# (``Build.probe``) 180 s more (25 to 63 s a case); ``--full`` adds the wider shapes and
# the other orders (443 s in all without the probes: the attn and kda cases cost 8 to
# 43 s each).
Case = tuple[str, Any, tuple[Any, ...], dict[str, Any], bool]


def _cases() -> dict[str, list[Case]]:
    return {
        "attn": [
            ("attn 1x1 nb8", check_attn, (1, 1, 8), {}, True),
            ("attn 2x2 nb3", check_attn, (2, 2, 3), {}, False),
            ("attn 4x4 nb14", check_attn, (4, 4, 14), {}, False),
            # the slice by token, the mix by source (the default below S = src_min_s) and
            # the mix by token too
            ("attn 2x2 nb3 by token", check_attn, (2, 2, 3, False), {}, False),
            ("attn 2x1 nb5 all by token", check_attn, (2, 1, 5, False), {"mix_min_s": 17}, True),
            ("attn 2x1 nb5 dense", check_attn, (2, 1, 5, False), {"align": 1}, True),
            # the block rows asked for after p' (blk_first off), the token form's other order
            (
                "attn 1x1 nb8 by token, blocks after p'",
                check_attn,
                (1, 1, 8, False),
                {"blk_first": False},
                False,
            ),
            # in_nw asked after the MSQ poll (the L = 4 builds' order; 1x1's default: first)
            ("attn 1x1 nb8 in_nw last", check_attn, (1, 1, 8), {"nw_first": False}, False),
        ],
        "attn_gate_local": [
            # the protocol's variant: every attn CTA polls PART for every token (S batches)
            (
                "attn 1x1 nb8 gate_local by token",
                check_attn_variant,
                (1, 1, 8, False),
                {"gate_local": True},
                True,
            ),
            ("attn 2x1 nb5 gate_local", check_attn_variant, (2, 1, 5), {"gate_local": True}, False),
        ],
        "gemv": [
            # the build's forms: FMA with an accumulator a token at S = 1, 2; tensor cores
            # at S = 4 (L = 1 and 2) and above
            ("gemv 1x1", check_gemv, (1, 1, 8), {}, True),
            ("gemv 2x1", check_gemv, (2, 1, 8), {}, True),
            ("gemv 4x1", check_gemv, (4, 1, 8), {}, True),
            ("gemv 2x2", check_gemv, (2, 2, 8), {}, True),
            ("gemv 2x4", check_gemv, (2, 4, 8), {}, True),
            # the other forms: four FMA accumulators at S = 1 and S = 4; the dot unsplit and
            # in 8 slices
            ("gemv 1x1 fma of 4", check_gemv, (1, 1, 8), {"fma_by_s": False}, True),
            ("gemv 2x2 fma of 4", check_gemv, (2, 2, 8), {"fma_max_s": 4}, True),
            ("gemv 4x4 dot unsplit", check_gemv, (4, 4, 8), {"tc_split": 1}, True),
            ("gemv 2x4 dot in 8", check_gemv, (2, 4, 8), {"tc_split": 8}, True),
            ("gemv 1x1 aligned", check_gemv, (1, 1, 8), {"align": 16}, True),
            # the copy engine's form (tma_ns), with and without the early step, and at two
            # tokens, where it falls back to plain loads
            ("gemv 1x1 tma", check_gemv, (1, 1, 8), {"tma_ns": 4}, True),
            (
                "gemv 1x1 tma, not early",
                check_gemv,
                (1, 1, 8),
                {"tma_ns": 3, "early": False},
                True,
            ),
            ("gemv 2x1 tma", check_gemv, (2, 1, 8), {"tma_ns": 4}, True),
        ],
        "kda": [
            # L = 1: the beta poll on 16 lanes, one live
            ("kda 2x1", check_kda, (2, 1, 8), {}, False),
            ("kda 1x2", check_kda, (1, 2, 8), {}, True),
            ("kda 2x2", check_kda, (2, 2, 3), {}, False),
            ("kda 2x1 aligned", check_kda, (2, 1, 8), {"align": 16}, True),
            # a lab build: k.recur's token loop rolled (Build.recur_rolled), the same results
            ("kda 1x2 rolled", check_kda, (1, 2, 8), {"recur_rolled": 1}, True),
        ],
        "kda_tickets": [
            ("kda_tickets 1x1", check_kda_tickets, (1, 1, 8), {}, True),
            # 16 programs, 96 items: two items each in the copies, the rest in the loop
            ("kda_tickets 1x1 unroll 2", check_kda_tickets, (1, 1, 8), {"unroll": 2}, True),
            ("kda_tickets 2x1", check_kda_tickets, (2, 1, 8), {"nprog": 32}, False),
        ],
        # Build.probe's lab experiments (docs/whatif/ticket_k1.md, "The experiment, built")
        "probe": [
            ("static 1x1 take", check_kda_static, (1, 1, 8), {"kda0": 3, "probe": "take"}, True),
            (
                "static 2x2 take",
                check_kda_static,
                (2, 2, 8),
                {"nprog": 32, "kda0": 3, "probe": "take"},
                True,
            ),
            (
                "kda_tickets 1x1 unroll 2 static_item",
                check_kda_tickets,
                (1, 1, 8),
                {"unroll": 2, "kda0": 3, "probe": "static_item"},
                True,
            ),
            (
                "kda_tickets 2x2 unroll 3 static_item",
                check_kda_tickets,
                (2, 2, 8),
                {"nprog": 32, "unroll": 3, "kda0": 3, "probe": "static_item"},
                True,
            ),
        ],
    }


def main() -> int:
    if os.environ.get("TRITON_INTERPRET") != "1":
        print("set TRITON_INTERPRET=1", file=sys.stderr)
        return 2
    sys.setswitchinterval(1e-3)
    args = sys.argv[1:]
    full = "--full" in args
    names = [a for a in args if a != "--full"] or ["all"]
    cases = _cases()
    unknown = [n for n in names if n != "all" and n not in cases]
    if unknown:
        print(f"unknown group {unknown[0]!r}: one of all, {', '.join(cases)}", file=sys.stderr)
        return 2
    out: dict[str, Any] = {}
    for group, rows in cases.items():
        if "all" not in names and group not in names:
            continue
        for name, check, a, kw, core in rows:
            if core or full:
                t0 = time.perf_counter()
                out[name] = check(*a, **kw)
                print(f"[interp_check] {name}: {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
