"""The FlyDSL runner's host side on the CPU: the device replaced by a fake whose launch
writes the reference's outputs and stamps laid out as the kernel writes them, the build
by a recorded ISA (``docs/isa/k1_*.s``) or, where FlyDSL is installed, a real
compile-only build. What it checks: the argument list reaches the launch in the
kernel's order with the kernel's layouts, the epoch and stamps are handled per step, the
pre-flight reads the ISA and the CU count, the reference check and the trace, and every
refusal (exit 2, named)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import torch
from test_flydsl_stamps import stamped_like_the_kernel

from kda_kernel.flydsl import health, residency
from kda_kernel.flydsl import run as frun
from kda_kernel.flydsl.run import NoRocmGpu, run
from kda_kernel.preflight import UnsafeLaunch
from kda_kernel.reference import kda_pre_reference
from kda_kernel.triton.launch import step_tag
from kda_kernel.triton.run import CheckFailed
from kda_sim.errors import InvalidInput
from kda_sim.importers import load_trace
from kda_sim.importers.chrome import read_kernel_trace
from kda_sim.isa.parser import parse
from kda_sim.isa.presets import K1_ARGS
from kda_sim.kernels.k1.config import LaunchConfig
from kda_sim.kernels.k1.constants import BLOCKS, TAG_SLOTS

DOCS = Path(__file__).resolve().parents[3] / "docs" / "isa"
IMPORTERS = Path(__file__).resolve().parents[2] / "importers"


def ktrace_dump(out_dir: Path, **kw: Any) -> Path:
    """``make_ktrace_fixture.build``: a simulated launch as a FlyDSL ktrace file (needs
    flydsl's writer)."""
    pytest.importorskip("flydsl")
    import sys

    sys.path.insert(0, str(IMPORTERS))
    try:
        from make_ktrace_fixture import build
    finally:
        sys.path.pop(0)
    return build(out_dir, **kw)


NAMES = [n for n, _ in K1_ARGS]


@dataclass
class RecordedBuild:
    built: Any  # .isa: a recorded ISA file


@dataclass
class Recorded:
    isa: Path


@dataclass(frozen=True)
class Missing:
    """A put that never lands: the bounded-wait kernel's records as it would write them
    (CTA ``cta`` times out at ``site`` on ``cell``; every other CTA is released at its
    first poll)."""

    cta: int
    site: int
    cell: int
    task: int = health.NO_TASK


class FakeRuntime:
    """A device that launches nothing: the launch computes the reference on the very
    tensors it is handed (by K1_ARGS position) and writes the stamps; with ``missing``,
    a bounded-wait launch writes give-up records instead (as the kernel does when a
    producer never puts)."""

    device = "cpu"

    def __init__(
        self,
        arch: str = "gfx950",
        cus: int = 256,
        corrupt: bool = False,
        missing: Missing | None = None,
        ktrace_shape: tuple[int, int] | None = None,
    ) -> None:
        self._arch, self._cus, self.corrupt, self.missing = arch, cus, corrupt, missing
        self.epochs: list[int] = []
        self.builds: list[dict[str, bool]] = []
        self.cleared = 0  # ktrace buffer clears
        self.ktrace_shape = ktrace_shape  # the launch the ktrace file is of (default: run's)
        self.cfg: LaunchConfig | None = None

    def unavailable(self) -> str | None:
        return None

    def arch(self) -> str:
        return self._arch

    def cus(self) -> int:
        return self._cus

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
        self.builds.append({"bounded": bounded, "delta": delta, "ktrace": ktrace})
        return RecordedBuild(Recorded(DOCS / f"k1_{arch}.s"))

    def launch(self, build: Any, args: list[Any]) -> None:
        a = dict(zip(NAMES, args, strict=True))
        cfg = LaunchConfig(a["num_acc"].shape[0], a["st_idx"].shape[1], a["blocks"].shape[1])
        assert isinstance(a["slot"], int) and a["stamps"].shape[0] == BLOCKS
        assert isinstance(a["alarm"], int) and a["alarm"] >= 0
        assert not a["stamps"].any(), "stamps are zeroed before every launch"
        self.epochs.append(int(a["epoch"][0]))
        self.cfg = cfg
        if self.missing is not None:
            # without the bound (alarm 0: not the bounded-wait build) the kernel would hang
            assert a["alarm"] > 0, "a missing put without the bounded-wait build hangs"
            self._give_up(a, cfg)
            return
        names = ("prefix", "blocks", "ares_nw", "ares_qk", "in_nw", "w_in", "w_fb", "conv_w")
        inp = {k: a[k] for k in names}
        inp |= {k: a[k] for k in ("conv_state", "a_log", "dt_bias", "on_w", "rstate")}
        inp |= {"st_idx": a["st_idx"], "num_acc": a["num_acc"], "delta": a["delta"]}
        p, core, cs, rs = kda_pre_reference(**inp, L=cfg.L)
        a["prefix"].copy_(p)  # the prefix + delta write-back (unchanged without delta)
        a["core_out"].copy_(core if not self.corrupt else core.flip(0))
        a["conv_state"].copy_(cs)
        a["rstate"].copy_(rs)
        a["stamps"].copy_(torch.from_numpy(stamped_like_the_kernel(cfg)))

    def _give_up(self, a: dict[str, Any], cfg: LaunchConfig) -> None:
        """The records the bounded-wait kernel writes (k1_ctx.Ctx._give_up): the missing
        put's consumer times out, then sets the abort word; every other CTA is released
        (its stale pair: the first it polls, here its first PART / XRDY cell)."""
        m, h = self.missing, a["health"]
        assert m is not None
        tag = step_tag(int(a["epoch"][0]), a["slot"])
        h[health.ABORT] = tag
        for cta in range(BLOCKS):
            timeout = cta == m.cta
            rec = h[health.REC0 + cta * health.REC_WORDS :][: health.REC_WORDS]
            rec[health.F_TAG] = tag
            rec[health.F_KIND] = health.KIND_TIMEOUT if timeout else health.KIND_RELEASED
            rec[health.F_CELL] = m.cell if timeout else 0
            rec[health.F_SEEN] = tag - TAG_SLOTS  # the previous step's tag
            rec[health.F_SITE] = m.site if timeout else 0
            rec[health.F_TASK] = m.task if timeout else health.NO_TASK
            rec[health.F_TIME_LO] = 1000 + (0 if timeout else 5 + cta)

    def synchronize(self) -> None:
        pass

    def ktrace_clear(self) -> None:
        self.cleared += 1

    def ktrace_export(self, out_dir: Path, kernel: str) -> Path:
        """The ktrace file of the launch's shape (or ``ktrace_shape``'s) as FlyDSL writes
        it from the records the K1's ktrace build leaves: the simulated launch laid out
        in the buffer (tests/importers/make_ktrace_fixture.py)."""
        assert self.cfg is not None
        r, l_ = self.ktrace_shape or (self.cfg.R, self.cfg.L)
        return ktrace_dump(out_dir, all_ctas=True, R=r, L=l_)


SHAPES = [(1, 1), (2, 2), (3, 1)]  # (3, 1): CTAs 0..31 run two kda tasks


@pytest.mark.parametrize(("R", "L"), SHAPES)
def test_a_step_is_checked_and_traced(tmp_path: Path, R: int, L: int) -> None:
    cfg = LaunchConfig(R, L)
    rt = FakeRuntime()
    out = run(cfg, tmp_path / "t.json", check=True, warmup=1, runtime=rt, dump_dir=tmp_path)
    assert rt.epochs == [1, 2] and out["steps"] == 2  # one epoch a step
    # the Triton path's inputs, delta included: the prefix + delta build, no bound
    assert rt.builds == [{"bounded": False, "delta": True, "ktrace": False}] and out["delta"]
    assert rt.cleared == 0 and not out["ktrace_build"] and "ktrace" not in out
    assert not out["bounded_wait"] and "alarm_ticks" not in out
    assert all(e < 1e-6 for e in out["errors"].values()), out["errors"]
    assert out["preflight"].startswith("safe") and out["resources"]["ctas_per_cu"] >= 1
    tl = read_kernel_trace(tmp_path / "t.json")
    norms = [s.task for c in tl.ctas for s in c.stages if s.name == "k.norm"]
    assert sorted(norms) == list(range(cfg.n_tasks))  # every task of every CTA


def test_ktrace_runs_the_ktrace_build_and_reads_its_file(tmp_path: Path) -> None:
    """``ktrace_path``: the ktrace build, the buffer cleared before every step (it keeps
    only the measured one), the file moved where asked and read back as the launch:
    every CTA, every task."""
    pytest.importorskip("flydsl")
    cfg, dest = LaunchConfig(2, 1), tmp_path / "out" / "k1.pftrace.gz"
    rt = FakeRuntime()
    out = run(cfg, check=True, warmup=2, runtime=rt, dump_dir=tmp_path / "d", ktrace_path=dest)
    assert rt.builds == [{"bounded": False, "delta": True, "ktrace": True}]
    assert rt.cleared == 3 and rt.epochs == [1, 2, 3] and out["ktrace_build"]
    assert out["ktrace"] == str(dest) and out["ktrace_ctas"] == BLOCKS
    assert "ktrace_error" not in out
    tl = load_trace(dest, R=2, L=1)
    norms = [s.task for c in tl.ctas for s in c.stages if s.name == "k.norm"]
    assert sorted(norms) == list(range(cfg.n_tasks))


def test_a_ktrace_file_of_another_launch_is_named_in_the_result(tmp_path: Path) -> None:
    """A file that is not the launch run (here: R = 1's, run at R = 2) is kept and the
    mismatch named, not raised: the file is the record either way."""
    pytest.importorskip("flydsl")
    dest = tmp_path / "k1.pftrace.gz"
    rt = FakeRuntime(ktrace_shape=(1, 1))
    out = run(LaunchConfig(2, 1), runtime=rt, dump_dir=tmp_path / "d", ktrace_path=dest)
    assert dest.is_file() and "ktrace_ctas" not in out
    assert "not the launch its header names" in out["ktrace_error"]


def test_the_cli_refuses_ktrace_by_name(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """--ktrace: a .pftrace.gz name, an existing file kept unless --force, the flydsl
    backend only: each refused with exit 2 before any GPU work."""
    from kda_sim.cli import main

    assert main(["kernel", "run", "--ktrace", str(tmp_path / "k.json")]) == 2
    assert "a ktrace file ends in .pftrace.gz" in capsys.readouterr().err
    there = tmp_path / "k.pftrace.gz"
    there.write_bytes(b"")
    assert main(["kernel", "run", "--backend", "flydsl", "--ktrace", str(there)]) == 2
    assert "--ktrace" in capsys.readouterr().err
    free = str(tmp_path / "new.pftrace.gz")
    assert main(["kernel", "run", "--backend", "torch", "--ktrace", free]) == 2
    assert "--ktrace is not served by the torch backend" in capsys.readouterr().err


def test_a_wrong_output_fails_the_check(tmp_path: Path) -> None:
    from kda_kernel.flydsl import backend

    with pytest.raises(CheckFailed, match="core_out") as e:
        run(LaunchConfig(2, 1), check=True, runtime=FakeRuntime(corrupt=True), dump_dir=tmp_path)
    assert backend.exit_code(e.value) == 1


def test_too_few_cus_are_refused_before_the_launch(tmp_path: Path) -> None:
    from kda_kernel.flydsl import backend

    rt = FakeRuntime(cus=128)  # a partitioned MI355X: 256 CTAs at one a CU do not fit
    with pytest.raises(UnsafeLaunch, match="128 CTAs could never be resident") as e:
        run(LaunchConfig(1, 1), runtime=rt, dump_dir=tmp_path)
    assert rt.epochs == [] and backend.exit_code(e.value) == 2


@pytest.mark.parametrize(
    ("flag", "request_"),
    [
        ("--graph", {"graph": True}),
        ("--inject", {"inject": "drop"}),
        ("--prefetch-weights", {"build": {"prefetch": 1}}),
        ("--warmup", {"warmup": -1}),
        ("--arch", {"arch": "gfx90a"}),
    ],
)
def test_unserved_flags_are_refused_by_name(flag: str, request_: dict) -> None:
    rt = FakeRuntime()
    with pytest.raises(InvalidInput, match=flag):
        run(LaunchConfig(1, 1), runtime=rt, **request_)
    assert rt.epochs == []


@pytest.mark.parametrize("schedule", ["kda_tickets", "gemv_tickets"])
def test_a_ticket_launch_is_refused_by_name(schedule: str) -> None:
    """The FlyDSL K1 is the static placement: a ticket config must not run it."""
    rt = FakeRuntime()
    flag = "--" + schedule.replace("_", "-")
    with pytest.raises(InvalidInput, match=f"{flag} is not served by the flydsl backend"):
        run(LaunchConfig(1, 1, **{schedule: True}), runtime=rt)
    assert rt.epochs == []


@pytest.mark.parametrize(
    "argv",
    [
        ["--kda-tickets"],
        ["--gemv-tickets"],
        ["--inject", "drop"],
        ["--replays", "5"],  # without --graph, it would count nothing
        ["--prefetch-weights", "1"],
        ["--arch", "gfx90a"],
        ["--watchdog-ms", "30000"],
    ],
)
def test_the_cli_names_each_refused_flag(argv: list[str], capsys: pytest.CaptureFixture) -> None:
    """Refused by name before the machine is asked (here: no ROCm GPU), exit 2."""
    from kda_sim.cli import main

    assert main(["kernel", "run", "--backend", "flydsl", *argv]) == 2
    err = capsys.readouterr().err
    assert argv[0] in err and "no ROCm GPU" not in err


def test_an_arch_other_than_the_gpus_is_refused() -> None:
    with pytest.raises(InvalidInput, match="--arch gfx942: this GPU is gfx950"):
        run(LaunchConfig(1, 1), arch="gfx942", runtime=FakeRuntime())


def test_compile_only_is_named_as_the_reason(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(frun, "rocm_gpu_present", lambda: True)
    monkeypatch.setenv("COMPILE_ONLY", "1")
    why = frun.unavailable_reason()
    assert why is not None and "COMPILE_ONLY=1" in why and "no ROCm GPU" not in why
    monkeypatch.setattr(frun, "rocm_gpu_present", lambda: False)
    why = frun.unavailable_reason()
    assert why is not None and why.startswith("no ROCm GPU")
    monkeypatch.delenv("COMPILE_ONLY")
    with pytest.raises(NoRocmGpu, match="no ROCm GPU"):
        run(LaunchConfig(1, 1))


def test_the_cli_refuses_with_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    from kda_sim.cli import main

    assert main(["kernel", "run", "--backend", "flydsl", "--graph"]) == 2
    assert "--graph" in capsys.readouterr().err
    assert main(["kernel", "run", "--backend", "flydsl", "--check"]) == 2
    assert "flydsl" in capsys.readouterr().err
    # --watchdog-ms is served: what stops it here is the machine, not the flag
    assert main(["kernel", "run", "--backend", "flydsl", "--watchdog-ms", "5"]) == 2
    err = capsys.readouterr().err
    assert "not served" not in err and "no ROCm GPU" in err


def test_a_strided_or_misshapen_input_is_refused_and_delta_is_optional() -> None:
    from kda_kernel.flydsl import host
    from kda_kernel.inputs import make_inputs

    cfg = LaunchConfig(1, 2)
    assert host.kernel_inputs(make_inputs(cfg), cfg)["delta"] is not None
    assert host.kernel_inputs(make_inputs(cfg, with_delta=False), cfg)["delta"] is None
    inp = make_inputs(cfg)
    inp["delta"] = inp["delta"][:1]
    with pytest.raises(InvalidInput, match=r"delta has shape \[1, 7168\]"):
        host.kernel_inputs(inp, cfg)
    inp = make_inputs(cfg, with_delta=False)
    inp["rstate"] = inp["rstate"].transpose(2, 3)
    with pytest.raises(InvalidInput, match="rstate is not contiguous"):
        host.kernel_inputs(inp, cfg)
    inp = make_inputs(cfg, with_delta=False)
    inp["conv_state"] = inp["conv_state"].float()
    with pytest.raises(InvalidInput, match=r"conv_state is torch\.float32"):
        host.kernel_inputs(inp, cfg)


def test_the_watchdog_runs_the_bounded_wait_build(tmp_path: Path) -> None:
    """--watchdog-ms: the bounded-wait build, its bound in s_memrealtime ticks passed as
    ``alarm``; a clean launch leaves no record and passes the check."""
    rt = FakeRuntime()
    out = run(LaunchConfig(2, 1), check=True, watchdog_ms=5.0, runtime=rt, dump_dir=tmp_path)
    assert rt.builds == [{"bounded": True, "delta": True, "ktrace": False}]
    assert out["bounded_wait"] and out["alarm_ticks"] == 5 * health.TICKS_PER_MS


@pytest.mark.parametrize("warmup", [0, 2])
def test_a_missing_put_is_named_by_the_give_up_records(tmp_path: Path, warmup: int) -> None:
    """A put that never lands: the runner reads the records after the step, names the CTA
    that timed out, its stage and the pair, before the CTAs it released; exit 1."""
    from kda_kernel.flydsl import backend
    from kda_sim.kernels.k1.regions import Region
    from kda_sim.protocol.space import CellSpace

    cfg = LaunchConfig(1, 1)
    cell = int(CellSpace.of(cfg).gid(Region.PROJ, 37))
    miss = Missing(cta=9, site=health.site("k.conv", "PROJ"), cell=cell, task=9)
    rt = FakeRuntime(missing=miss)
    with pytest.raises(health.KernelStuck) as e:
        run(cfg, watchdog_ms=2.0, warmup=warmup, runtime=rt, dump_dir=tmp_path)
    assert rt.epochs == [1]  # the first step gave up: no later step was launched
    first, *released = e.value.records
    assert (first.cta, first.kind, first.stage, first.region, first.index) == (
        9,
        "timeout",
        "k.conv",
        "PROJ",
        37,
    )
    assert first.task == 9 and first.expected_tag == step_tag(1, 0)
    assert len(released) == BLOCKS - 1 and {r.kind for r in released} == {"released"}
    assert "CTA   9 task 9 k.conv [PROJ] timeout: PROJ[37]" in str(e.value)
    assert backend.exit_code(e.value) == 1


@pytest.mark.parametrize("ms", [1e6, 1e-6])
def test_a_bound_outside_the_alarm_word_is_refused(ms: float) -> None:
    rt = FakeRuntime()
    with pytest.raises(InvalidInput, match="--watchdog-ms"):
        run(LaunchConfig(1, 1), watchdog_ms=ms, runtime=rt)
    assert rt.epochs == []


def test_residency_of_the_recorded_isa() -> None:
    """docs/isa's gfx950 K1: 512 threads (2 waves a SIMD), its VGPRs and LDS; gfx942's
    64 KiB of LDS a CU."""
    [k] = parse((DOCS / "k1_gfx950.s").read_text()).kernels
    res = residency.cu_residency(k, "gfx950", 256)
    regs = residency.unified_vgprs(k.vgprs, k.agprs)
    assert res.threads == 512 and res.regs_per_thread == regs
    assert res.per_sm == min(512 // regs // 2, 4, 160 * 1024 // k.lds_bytes)
    big = residency.cu_residency(k, "gfx942", 256)
    assert big.per_sm == min(512 // regs // 2, 64 * 1024 // k.lds_bytes)


@pytest.mark.flydsl
@pytest.mark.parametrize(
    ("arch", "watchdog_ms", "ktrace"),
    [
        ("gfx942", None, False),
        ("gfx950", 50.0, False),
        ("gfx950", None, True),
        ("gfx950", 50.0, True),  # both: LLVM copies the pops' event words between SGPRs
    ],
)
def test_a_real_build_reaches_the_fake_launch(
    tmp_path: Path, arch: str, watchdog_ms: float | None, ktrace: bool
) -> None:
    """The build the runner would launch, compiled (the prefix + delta build, the
    bounded-wait one under --watchdog-ms, the ktrace one under --ktrace), passes the ISA
    checks: no finding, with the bound every poll loop bounded (kda-sim isa --bounded),
    with ktrace every poll in its ktrace range (the name table beside the ISA)."""
    from kda_kernel.flydsl.toolchain import missing
    from kda_sim.cli import main

    if missing() is not None:
        pytest.skip(str(missing()))
    isas: list[Path] = []

    class Built(FakeRuntime):
        def build(self, cfg: LaunchConfig, arch: str, dump_dir: Path, **kw: bool) -> Any:
            b = frun.RocmRuntime().build(cfg, arch, dump_dir, **kw)
            assert (b.bounded, b.delta, b.ktrace) == (kw["bounded"], kw["delta"], kw["ktrace"])
            isas.append(b.built.isa)
            return b

    rt = Built(arch=arch)
    kt = tmp_path / "k1.pftrace.gz" if ktrace else None
    out = run(LaunchConfig(1, 1), check=True, watchdog_ms=watchdog_ms, runtime=rt,
              dump_dir=tmp_path, ktrace_path=kt)  # fmt: skip
    assert out["resources"]["lds_bytes"] > 0 and rt.epochs == [1]
    bounded = ["--bounded"] if watchdog_ms is not None else []
    assert main(["isa", "--preset", "k1", *bounded, str(isas[0])]) == 0
    if ktrace:
        assert Path(f"{isas[0]}.ktrace.json").is_file() and out["ktrace_ctas"] == BLOCKS
        from kda_sim.isa import analyze_path

        notes = analyze_path(isas[0], bounded=watchdog_ms is not None).notes
        assert not [n for n in notes if "ktrace" in n], notes  # every range read and closed
