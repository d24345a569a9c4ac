"""Runner API for the Triton K1 on a CUDA GPU: what ``kda-sim kernel run`` calls.

``run`` builds inputs for a shape, compiles, runs the co-residency pre-flight, launches
(plainly or as a CUDA graph of whole steps), and on request checks against the torch
reference, reads the watchdog and writes the trace.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import torch

from kda_kernel import preflight
from kda_kernel.backend import Result
from kda_kernel.faults import FAULTS, INJECT_CODES
from kda_kernel.inputs import clone_inputs, make_inputs
from kda_kernel.reference import kda_pre_reference
from kda_kernel.triton import trace as ktrace
from kda_kernel.triton import watchdog as wd
from kda_kernel.triton.launch import (
    Build,
    Workspace,
    compile_only,
    launch,
    options_only,
    step_tag,
)
from kda_sim.kernels.k1.config import LaunchConfig
from kda_sim.kernels.k1.constants import HD, NA, NPROJ, PROJ, VCH
from kda_sim.timeline.model import Timeline


class KernelUnavailable(RuntimeError):
    """No CUDA GPU here (the kernel needs one; the reference and the decoders do not)."""


class CheckFailed(AssertionError):
    """The kernel's outputs differ from the reference by more than bf16 rounding."""


# tolerances: bf16 outputs one rounding apart (split-K order differs), fp32 state
TOL = {"core_out": 2e-2, "conv_state": 1e-2, "rstate": 1e-2}


def need_gpu() -> None:
    if not torch.cuda.is_available():
        raise KernelUnavailable(
            "no CUDA GPU: the Triton K1 runs on an NVIDIA GPU (written for the H200; the "
            "AMD build is untested). The reference (kda_kernel.reference) runs on the CPU."
        )


def rel_err(a: torch.Tensor, b: torch.Tensor) -> float:
    a64, b64 = a.double(), b.double()
    return float((a64 - b64).norm() / b64.norm().clamp_min(1e-30))


def compare(got: dict[str, torch.Tensor], ref: dict[str, torch.Tensor]) -> dict[str, float]:
    """Relative errors; raises CheckFailed naming every output over its tolerance."""
    errs: dict[str, float] = {}
    bad: list[str] = []
    if not torch.equal(got["prefix"].cpu(), ref["prefix"].cpu()):
        bad.append("prefix differs (an elementwise bf16 add must be exact)")
    for k, tol in TOL.items():
        g, r = got[k].float().cpu(), ref[k].float().cpu()
        if not torch.isfinite(g).all():
            bad.append(f"{k} has non-finite values (unwritten?)")
            continue
        errs[k] = rel_err(g, r)
        if errs[k] > tol:
            bad.append(f"{k}: relative error {errs[k]:.3g} > {tol}")
    if bad:
        raise CheckFailed("; ".join(bad))
    return errs


def reference_step(inp: dict[str, Any], L: int) -> dict[str, torch.Tensor]:
    """The reference on the inputs' device (fp32 matmuls: TF32 stays off)."""
    torch.backends.cuda.matmul.allow_tf32 = False
    p, core, cs, rs = kda_pre_reference(**inp, L=L)
    return {"prefix": p, "core_out": core, "conv_state": cs, "rstate": rs}


def fault_cell(b: Build) -> int:
    """The scratch word a 'drop' / 'corrupt' fault hits: the PROJ pair of token 0's first
    k channel of head 0, chunk 4 (a gemv group's put that kda tasks wait for)."""
    off = b.offsets()
    return off["PROJ"] + PROJ + 4 * VCH


@dataclass
class Layer:
    build: Build
    inp: dict[str, Any]
    core: torch.Tensor
    slot: int


def _got(ly: Layer) -> dict[str, torch.Tensor]:
    return {
        "prefix": ly.inp["prefix"],
        "core_out": ly.core,
        "conv_state": ly.inp["conv_state"],
        "rstate": ly.inp["rstate"],
    }


def _layers(shape: LaunchConfig, nbs: list[int], build: Build, seed: int) -> list[Layer]:
    out = []
    for k, nb in enumerate(nbs):
        sh = replace(shape, nb=nb)
        inp = make_inputs(
            sh, seed=seed + k, pad=(1,) if shape.R > 1 else (), num_acc=None, device="cuda"
        )
        core = torch.full((sh.S, PROJ), float("nan"), dtype=torch.bfloat16, device="cuda")
        out.append(Layer(build.with_(nb=nb), inp, core, k))
    return out


def _timeline(ws: Workspace, b: Build, slot: int, extra: dict[str, Any]) -> Timeline:
    """The trace record of the workspace's last launch (build ``b``, tag slot ``slot``);
    its meta holds ``b.cfg``, what ran."""
    buf = ktrace.widen(ws.trace.cpu().numpy(), R=b.R, tickets=b.takes)
    return ktrace.decode(
        buf,
        R=b.R,
        L=b.L,
        nb=b.nb,
        kda0=b.kda0,
        gate_local=b.gate_local,
        tag=step_tag(int(ws.epoch.item()), slot),
        gpu=extra.get("gpu", "cuda"),
        extra=extra,
        nw_first=b.cfg.nw_first,
        onw_first=b.cfg.onw_first,
        kda_tickets=b.cfg.kda_tickets,
        ticket_unroll=b.cfg.ticket_unroll,
        probe_take=b.probe == "take",
    )


def run_inputs(
    inputs: dict[str, Any],
    cfg: LaunchConfig,
    *,
    trace: bool = False,
    watchdog_ms: float | None = None,
    simulate_preflight: bool = True,
    **options: Any,
) -> Result:
    """One step of K1 on ``inputs`` at ``cfg`` (the entry point's ``triton`` backend):
    compiled, pre-flighted, launched once on copies of the inputs (the caller's stay as
    they were), the watchdog read where ``watchdog_ms`` bounds the waits. ``options``:
    ``Build`` options (``cfg`` says the variants; a ``LaunchConfig`` written without them
    runs the seed's order, which this kernel builds for in_nw only: see
    ``triton.defaults.recommended``). Raises as ``run``."""
    delta, cs = inputs.get("delta"), inputs["conv_state"]
    options = options_only(options)
    b = Build(
        cfg,
        watchdog=watchdog_ms is not None,
        trace=trace,
        has_delta=delta is not None,
        sl=int(cs.shape[2]),
        **options,
    ).validate()
    need_gpu()
    inp = clone_inputs({k: v.to("cuda") if v is not None else v for k, v in inputs.items()})
    core = torch.full((b.S, PROJ), float("nan"), dtype=torch.bfloat16, device="cuda")
    ws = Workspace.create([b], "cuda")
    compiled = compile_only(b, inp, core, ws)
    res = preflight.of_compiled(compiled, preflight.SmLimits.of_device())
    verdict = preflight.check(b.cfg, res, simulate=simulate_preflight)
    ws.epoch.add_(1)
    budget = {"budget_ns": int(watchdog_ms * 1e6)} if watchdog_ms is not None else {}
    launch(b, inp, core, ws, 0, **budget)
    torch.cuda.synchronize()
    if b.watchdog:
        wd.check(ws.alarm.cpu().numpy(), [(b, 0, step_tag(int(ws.epoch.item()), 0))])
    ly = Layer(b, inp, core, 0)
    tl = _timeline(ws, b, 0, ktrace.environment() | {"build": options}) if trace else None
    return Result(_got(ly), tl, {"preflight": verdict})


def run(
    cfg: LaunchConfig,
    trace_path: str | Path | None = None,
    check: bool = False,
    graph: bool = False,
    watchdog_ms: float | None = None,
    inject: str | None = None,
    *,
    replays: int = 20,
    warmup: int = 0,
    seed: int = 0,
    simulate_preflight: bool = True,
    build: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Run K1 at ``cfg`` (its shape, kda0 and variants, as given: ``triton.defaults``
    recommends them); returns what happened. Raises KernelUnavailable without a
    GPU, preflight.UnsafeLaunch for a launch that could not finish, watchdog.KernelStuck
    when a wait gave up, CheckFailed when ``check`` finds a difference, ``launch.Unsupported``
    for a ``cfg`` this kernel cannot build. ``build``: ``Build`` options (align, sleep_ns,
    gemv form, ...). ``warmup``: eager steps
    before the one measured (the trace holds the last launch: a warm one, as in a
    replayed decode step, where the first launch after the inputs are made is not)."""
    if inject is not None and inject not in FAULTS:
        raise ValueError(f"inject must be one of {FAULTS}")
    if warmup < 0 or (warmup and graph):
        raise ValueError(
            "warmup: eager steps >= 0 before the measured one (not with graph, "
            "whose replays follow a warm-up step already)"
        )
    if inject is not None and watchdog_ms is None:
        watchdog_ms = 500.0  # a fault without the watchdog would hang the GPU
    b = Build(
        cfg,
        watchdog=watchdog_ms is not None,
        trace=trace_path is not None,
        **options_only(dict(build or {})),
    ).validate()
    R, L, nb, kda0 = cfg.R, cfg.L, cfg.nb, cfg.kda0
    if b.trace and b.trace_level != 1:
        raise ValueError(
            f"trace_level = {b.trace_level}: a trace file needs the full record (level 1); "
            f"the lighter levels time the tracing itself (bench/trace_stages.py)"
        )
    need_gpu()  # after the checks above: a bad request is named even without a GPU
    budget_ns = int((watchdog_ms or 0) * 1e6)
    nbs = [nb, max(1, nb // 2), 1] if graph else [nb]
    layers = _layers(cfg, nbs, b, seed)
    ws = Workspace.create([ly.build for ly in layers], "cuda")
    result: dict[str, Any] = {"R": R, "L": L, "nb": nb, "kda0": kda0, "graph": graph}
    result["config"] = cfg.to_dict()

    # compile (no launch) and the pre-flight
    t = time.perf_counter()
    compiled = compile_only(b, layers[0].inp, layers[0].core, ws)
    result["compile_s"] = round(time.perf_counter() - t, 2)
    res = preflight.of_compiled(compiled, preflight.SmLimits.of_device())
    result["resources"] = {
        "regs_per_thread": res.regs_per_thread,
        "shared_bytes": res.shared_bytes,
        "threads": res.threads,
        "ctas_per_sm": res.per_sm,
        "limited_by": res.limited_by,
        "sms": res.sms,
        "spills": int(getattr(compiled, "n_spills", -1)),
    }
    result["preflight"] = preflight.check(b.cfg, res, simulate=simulate_preflight)

    ref_inp = [clone_inputs(ly.inp) for ly in layers]
    kw: dict[str, Any] = {"budget_ns": budget_ns} if budget_ns else {}
    if inject in ("drop", "corrupt"):
        kw |= {"inj_mode": INJECT_CODES[inject], "inj_gidx": fault_cell(b)}

    def step(bump: bool = True) -> None:
        if bump:
            ws.epoch.add_(1)
        for ly in layers:
            launch(ly.build, ly.inp, ly.core, ws, ly.slot, **kw)

    launches = lambda: [  # noqa: E731 (read after the step: the epoch it ran at)
        (ly.build, ly.slot, step_tag(int(ws.epoch.item()), ly.slot)) for ly in layers
    ]
    n_steps = 1
    if graph:
        step()  # one eager step, outside the graph: warms the launch path
        torch.cuda.synchronize()
        if b.watchdog:
            wd.check(ws.alarm.cpu().numpy(), launches())
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            step(bump=inject != "skip-bump")
        worst: dict[str, float] = {}
        for _ in range(replays):
            # each replay is checked against the reference applied to the state it started
            # from (a one-step error: rounding differences do not compound across steps)
            before = [clone_inputs(ly.inp) for ly in layers] if check else []
            g.replay()
            torch.cuda.synchronize()
            if b.watchdog:  # each replay's tags: check every step, not only the last
                wd.check(ws.alarm.cpu().numpy(), launches())
            for k, ly in enumerate(layers if check else []):
                out = reference_step(before[k], L)
                errs = compare(_got(ly), out)
                for name, e in errs.items():
                    worst[name] = max(worst.get(name, 0.0), e)
        n_steps = 1 + replays
        if check:
            result["errors"] = {"worst over replays and slots": worst}
            check = False  # done, step by step
    else:
        for _ in range(warmup):
            step()
        step()
        n_steps = 1 + warmup
        if inject == "skip-bump":
            torch.cuda.synchronize()
            step(bump=False)  # the same tags again: every put finds its own tag
            n_steps += 1
    torch.cuda.synchronize()
    result["steps"] = n_steps
    if b.takes:  # the last taker of each launch resets it: 0 between launches
        result["counter_after"] = int(ws.counter.item())
    if b.watchdog:
        wd.check(ws.alarm.cpu().numpy(), launches())

    if check:
        errs = {}
        for k, ly in enumerate(layers):
            cur = ref_inp[k]
            for _ in range(n_steps):
                out = reference_step(cur, L)
                cur = cur | {
                    "prefix": out["prefix"],
                    "conv_state": out["conv_state"],
                    "rstate": out["rstate"],
                }
            errs[f"slot{k}"] = compare(_got(ly), out)
        result["errors"] = errs

    if trace_path is not None:
        extra = ktrace.environment() | {
            "resources": result["resources"],
            "replays": n_steps,
            "warmup": warmup,
            "slot": layers[-1].slot,
            "nproj": NPROJ,
            "na": NA,
            "hd": HD,
            "build": build or {},
        }
        tl = _timeline(ws, layers[-1].build, layers[-1].slot, extra)
        result["trace"] = str(ktrace.write(tl, trace_path))
        result["makespan_us"] = (tl.makespan or 0.0) / 1000.0
    return result
