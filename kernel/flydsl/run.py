"""``kda-sim kernel run --backend flydsl``: one step of the FlyDSL K1 on a ROCm GPU.

:func:`run` makes the inputs (``kda_kernel.inputs``, the Triton path's, delta
included), the workspace and the argument list (:mod:`kda_kernel.flydsl.host`), compiles
K1 for the device's arch (the bounded-wait build under ``watchdog_ms``), runs the
pre-flight on the compiled kernel's resources and the CU count (refusing a launch whose
256 CTAs cannot all be resident), launches through FlyDSL's runtime, reads the give-up
records of a bounded-wait launch (:mod:`kda_kernel.flydsl.health`), checks against the
reference (the Triton runner's tolerances) and writes the stamps' timeline; with
``ktrace_path``, the ktrace build (``build_k1(..., ktrace=True)``), whose measured step's
FlyDSL ktrace file is written there and read back into the timeline type (its CTAs and
any mismatch with the launch in the result). Every step but the launch goes through a
:class:`Runtime`: tests replace the device.

Nothing here has run on AMD hardware: the first MI355X run is its first test.
"""

from __future__ import annotations

import glob
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any, Protocol

from kda_sim.errors import InvalidInput, KdaSimError
from kda_sim.kernels.k1.config import SCHEDULES, VARIANTS, LaunchConfig
from kda_sim.protocol.space import CellSpace

KFD = Path("/dev/kfd")
ARCHES = ("gfx942", "gfx950")
PROFILE = {"gfx942": "mi300x", "gfx950": "mi355x"}  # kda_sim's machine profile of each arch
UNTESTED = "untested on AMD hardware"
SLOT = 0  # the launch's slot (the seed's ``layer``): one layer a run


class NoRocmGpu(InvalidInput):
    """The kernel cannot run here (no ROCm GPU, a compile-only environment, no ROCm
    torch): it can be compiled, not run."""


def rocm_gpu_present() -> bool:
    """A ROCm GPU needs the KFD device node and at least one render node."""
    return KFD.exists() and bool(glob.glob("/dev/dri/renderD*"))


def unavailable_reason() -> str | None:
    """Why the FlyDSL K1 cannot run on this machine, or None."""
    compile_only = os.environ.get("COMPILE_ONLY") == "1"
    if not rocm_gpu_present():
        also = " (COMPILE_ONLY=1 is set as well)" if compile_only else ""
        return (
            "no ROCm GPU here (no /dev/kfd and /dev/dri/renderD*)" + also + ": the FlyDSL K1 "
            "compiles (kda-sim isa, build_k1) but cannot run; nothing of it has run on AMD "
            "hardware"
        )
    if compile_only:
        return (
            "COMPILE_ONLY=1 is set (the environment `scripts/flydsl_env.sh --print-env` "
            "prints for compile-only builds): FlyDSL would compile and not launch; "
            "`unset COMPILE_ONLY` to run on this ROCm GPU"
        )
    import torch

    if getattr(torch.version, "hip", None) is None:
        return f"torch {torch.__version__} is not a ROCm build (torch.version.hip is None)"
    if not torch.cuda.is_available():
        return "this ROCm torch sees no GPU (torch.cuda.is_available() is False)"
    return None


class Runtime(Protocol):
    """What :func:`run` needs of the device."""

    device: str  # the torch device of the tensors

    def unavailable(self) -> str | None: ...
    def arch(self) -> str: ...
    def cus(self) -> int: ...
    def build(
        self,
        cfg: LaunchConfig,
        arch: str,
        dump_dir: Path,
        *,
        bounded: bool,
        delta: bool,
        ktrace: bool = False,
    ) -> Any: ...
    def launch(self, build: Any, args: list[Any]) -> None: ...
    def synchronize(self) -> None: ...
    def ktrace_clear(self) -> None: ...
    def ktrace_export(self, out_dir: Path, kernel: str) -> Path: ...


class RocmRuntime:
    """A ROCm GPU through torch (HIP) and FlyDSL's runtime. Untested on AMD hardware."""

    device = "cuda"  # a ROCm torch names HIP devices "cuda"

    def unavailable(self) -> str | None:
        return unavailable_reason()

    def arch(self) -> str:
        import torch

        return str(torch.cuda.get_device_properties(0).gcnArchName).split(":")[0]

    def cus(self) -> int:
        import torch

        return int(torch.cuda.get_device_properties(0).multi_processor_count)

    def build(
        self,
        cfg: LaunchConfig,
        arch: str,
        dump_dir: Path,
        *,
        bounded: bool,
        delta: bool,
        ktrace: bool = False,
    ) -> Any:
        from kda_kernel.flydsl.k1 import build_k1

        return build_k1(cfg, arch, dump_dir, bounded=bounded, delta=delta, ktrace=ktrace)

    def launch(self, build: Any, args: list[Any]) -> None:
        import flydsl.compiler as flyc
        import flydsl.expr as fx
        import torch

        # the same argument types as the compile-only build (pointers as raw addresses,
        # None a null one), so the launch compiles the kernel the ISA checks read
        ptrs = [
            flyc.from_c_void_p(fx.Int32, a.data_ptr() if isinstance(a, torch.Tensor) else 0)
            if a is None or isinstance(a, torch.Tensor)
            else a
            for a in args
        ]
        from flydsl.compiler.kernel_function import CompilationContext

        # the launcher traces the kernel again: under the build's ktrace hint, so that it
        # compiles the kernel built (FlyDSL then passes its trace buffer itself)
        with CompilationContext.compile_hints({"ktrace": bool(getattr(build, "ktrace", False))}):
            build.launcher(*ptrs)

    def synchronize(self) -> None:
        import torch

        torch.cuda.synchronize()

    def ktrace_clear(self) -> None:
        """Drop the records of the launches so far (FlyDSL's buffer holds a few launches
        of 256 x 8 waves; a run that needs more is refused, not truncated)."""
        from flydsl.expr import ktrace

        ktrace.capture().clear()

    def ktrace_export(self, out_dir: Path, kernel: str) -> Path:
        """The records since the last clear, as FlyDSL writes them (``.pftrace.gz``)."""
        from flydsl.expr import ktrace

        path = ktrace.collect(kernel=kernel, out_dir=str(out_dir))
        if path is None:
            raise RuntimeError("the ktrace build's launch left no ktrace records")
        return Path(path)


def refuse_unsupported(
    *,
    graph: bool,
    watchdog_ms: float | None,
    inject: str | None,
    build: dict[str, Any] | None,
    warmup: int,
    arch: str | None,
    cfg: LaunchConfig | None = None,
) -> None:
    """Every ``kernel run`` flag this backend does not serve, refused by name (exit 2)."""
    no = {
        # the FlyDSL K1 is the seed's static placement: a ticket launch is not built
        **{
            "--" + k.replace("_", "-"): cfg is not None
            and getattr(cfg, k)
            and "the FlyDSL K1 builds the static placement only (no ticket counter)"
            for k in reversed(SCHEDULES)  # --gemv-tickets (implying kda) named first
        },
        "--graph": graph and "the FlyDSL runner launches eagerly (no HIP graph capture)",
        "--inject": inject is not None and "the FlyDSL K1 plants no faults",
        "--prefetch-weights": bool(build) and f"a Triton build option ({sorted(build or {})})",
        "--warmup": warmup < 0 and f"{warmup} eager steps",
        "--arch": arch is not None
        and arch not in ARCHES
        and f"{arch!r} is not one of {', '.join(ARCHES)}",
    }
    for flag, why in no.items():
        if why:
            raise InvalidInput(f"{flag} is not served by the flydsl backend: {why}", what=flag)


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
    build: dict[str, Any] | None = None,
    arch: str | None = None,
    runtime: Runtime | None = None,
    dump_dir: Path | None = None,
    ktrace_path: str | Path | None = None,
) -> dict[str, Any]:
    """One step (after ``warmup`` eager ones) of K1 at ``cfg``; what happened. Raises
    :class:`NoRocmGpu` where it cannot run, ``InvalidInput`` for a flag it does not serve,
    ``preflight.UnsafeLaunch`` for a launch that could not finish, ``health.KernelStuck``
    when a bounded wait (``watchdog_ms``) gave up, ``CheckFailed`` when ``check`` finds a
    difference. ``replays`` belongs to ``--graph`` (refused). ``ktrace_path``: run the
    ktrace build and write the measured step's ktrace file there."""
    refuse_unsupported(
        graph=graph,
        watchdog_ms=watchdog_ms,
        inject=inject,
        build=build,
        warmup=warmup,
        arch=arch,
        cfg=cfg,
    )
    from kda_kernel.flydsl import health

    alarm = health.alarm_ticks(watchdog_ms) if watchdog_ms is not None else 0
    cfg.validate()
    rt: Runtime = runtime or RocmRuntime()
    why = rt.unavailable()
    if why is not None:
        raise NoRocmGpu(why, what="backend", where="flydsl")
    dev_arch = rt.arch()
    if dev_arch not in ARCHES:
        raise NoRocmGpu(f"this GPU is {dev_arch}; the FlyDSL K1 builds for {', '.join(ARCHES)}")
    if arch is not None and arch != dev_arch:
        raise InvalidInput(f"--arch {arch}: this GPU is {dev_arch}", what="--arch")

    from kda_kernel import preflight
    from kda_kernel.flydsl import host, residency
    from kda_kernel.flydsl.stamps import timeline
    from kda_kernel.inputs import clone_inputs, make_inputs
    from kda_kernel.triton.launch import step_tag  # the kernel's tag, on the host
    from kda_kernel.triton.run import compare, reference_step
    from kda_sim.timeline.chrome import write_chrome

    result: dict[str, Any] = {"backend": "flydsl", "arch": dev_arch, "note": UNTESTED}
    result |= {"R": cfg.R, "L": cfg.L, "nb": cfg.nb, "kda0": cfg.kda0, "config": cfg.to_dict()}
    # as the Triton runner: request 1 pads where there are two; the prefix + delta seam
    inp = make_inputs(cfg, seed=seed, pad=(1,) if cfg.R > 1 else (), device=rt.device)
    ref_inp = clone_inputs(inp) if check else None
    kin = host.kernel_inputs(inp, cfg)
    ws = host.Workspace.create(cfg, rt.device)
    args = host.argument_list(kin, ws, slot=SLOT, alarm=alarm)
    bounded, has_delta = watchdog_ms is not None, kin["delta"] is not None
    result |= {"bounded_wait": bounded, "delta": has_delta}
    if bounded:
        result["alarm_ticks"] = alarm

    t = time.perf_counter()
    dump = dump_dir or Path(tempfile.mkdtemp(prefix="kda_flydsl_"))
    traced = ktrace_path is not None
    built = rt.build(cfg, dev_arch, dump, bounded=bounded, delta=has_delta, ktrace=traced)
    result["ktrace_build"] = traced
    result["compile_s"] = round(time.perf_counter() - t, 2)
    res = residency.of_isa(built.built.isa, dev_arch, rt.cus())
    result["resources"] = {
        "vgprs": res.regs_per_thread,
        "lds_bytes": res.shared_bytes,
        "threads": res.threads,
        "ctas_per_cu": res.per_sm,
        "limited_by": res.limited_by,
        "cus": res.sms,
    }
    # the simulator's profile is the H200's: the residency count is the AMD check
    result["preflight"] = preflight.check(cfg, res, simulate=False)

    space = CellSpace.of(cfg)
    for _ in range(warmup + 1):
        ws.epoch.add_(1)
        ws.stamps.zero_()
        if traced:  # the buffer keeps only this step's records: the last is the file's
            rt.ktrace_clear()
        rt.launch(built, args)
        if bounded:  # every step's records: a warm-up step that gave up is named too
            rt.synchronize()
            tag = step_tag(int(ws.epoch[0].item()), SLOT)
            health.check(ws.health.cpu().numpy(), space, tag)
    rt.synchronize()
    result["steps"] = warmup + 1
    got = {"prefix": inp["prefix"], "core_out": ws.core_out}
    got |= {"conv_state": inp["conv_state"], "rstate": inp["rstate"]}

    if check:
        assert ref_inp is not None
        cur = ref_inp
        for _ in range(warmup + 1):
            out = reference_step(cur, cfg.L)
            cur = cur | {k: out[k] for k in ("prefix", "conv_state", "rstate")}
        result["errors"] = compare(got, out)

    if trace_path is not None:
        tl = timeline(ws.stamps.cpu().numpy(), cfg, gpu=PROFILE[dev_arch])
        tl.meta.extra.update(resources=result["resources"], warmup=warmup, slot=SLOT, arch=dev_arch)
        p = Path(trace_path)
        p.parent.mkdir(parents=True, exist_ok=True)
        write_chrome(tl, p)
        result["trace"] = str(p)
        result["makespan_us"] = (tl.makespan or 0.0) / 1000.0
    if ktrace_path is not None:
        result |= _ktrace_file(rt, cfg, dump, Path(ktrace_path), PROFILE[dev_arch])
    return result


def _ktrace_file(rt: Runtime, cfg: LaunchConfig, dump: Path, dest: Path, gpu: str) -> dict:
    """The measured step's ktrace file, moved to ``dest`` and read back as the launch it
    is of: the CTAs it recorded, or why it is not that launch (kept, not raised: the
    file is the record to bring back either way)."""
    from kda_sim.importers.claimed_launch import check_claimed_launch
    from kda_sim.kernels.k1.ktrace import read_ktrace

    made = rt.ktrace_export(dump / "ktrace", f"k1_R{cfg.R}_L{cfg.L}")
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.move(made, dest)
    out: dict[str, Any] = {"ktrace": str(dest)}
    variants = {k: True for k in VARIANTS if getattr(cfg, k, False)}
    try:
        tl = read_ktrace(dest, R=cfg.R, L=cfg.L, nb=cfg.nb, kda0=cfg.kda0, gpu=gpu, **variants)
        check_claimed_launch(tl, str(dest))
    except KdaSimError as e:
        return out | {"ktrace_error": str(e)}
    return out | {"ktrace_ctas": len(tl.meta.extra["ctas_recorded"])}
