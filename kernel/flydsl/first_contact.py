"""The first run of the FlyDSL K1 on an MI355X, recorded once: every shape the build
allows (R, L in {1, 2, 4}), first a bounded-wait launch (``--watchdog-ms``: a wait that
never ends gives up and names itself), then a cold and a warm launch each with its
stamps' timeline and the reference check, then a warm launch of the ktrace build
(``--ktrace``: FlyDSL's ktrace file of the step, read back as the launch), then a fit of
the mi355x profile on the warm traces (``kda-sim calibrate``); one folder (and a tarball
beside it) to bring back.

``scripts/first_contact_mi355x.sh`` runs ``python -m kda_kernel.flydsl.first_contact``.
Every step is a ``kda-sim`` (or probe) subprocess with a time limit, its output logged and
its outcome a line of ``steps.jsonl``; a failed step does not stop the others. A shape
whose bounded-wait launch gave up (its give-up records in the step's log) is not launched
without the bound: that launch would hang. A launch that still runs out of time is killed
with its process group and no further launch is made, so a hang costs one time limit,
not one a shape; the steps that need no GPU still run. The runner's own pre-flight
refuses a launch whose CTAs could not all be resident (exit 2).

The folder::

    manifest.json        what was asked, the shapes run and refused (with the build's
                         reason), what the ktrace files are and every step's outcome
    steps.jsonl          one line a step: name, argv, rc, seconds, timed_out, skipped
    logs/NN_<step>.out   its stdout (kernel runs: the result as JSON)
    logs/NN_<step>.err   its stderr (a bounded-wait launch that gave up: its records)
    results/<shape>_<cold|warm>.json   a launch's result (resources, pre-flight, errors)
    traces/<shape>_<cold|warm>.json    its timeline (the stamps of every task)
    ktrace/<shape>_ktrace.pftrace.gz   the ktrace build's warm step (results/<shape>_ktrace.json
                         names the CTAs it recorded, or why it is not the launch)
    fit/mi355x_fit.json  the fitted overlay; fit/report.json the fit's report

Nothing here has run on AMD hardware.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import signal
import subprocess
import sys
import tarfile
import time
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from kda_kernel.flydsl.k1_lds import refusal
from kda_kernel.flydsl.run import ARCHES, PROFILE, RocmRuntime, unavailable_reason
from kda_kernel.flydsl.stamps import StampLayout, tasks_per_cta
from kda_kernel.flydsl.toolchain import missing
from kda_sim.errors import InvalidInput
from kda_sim.kernels.k1.config import LaunchConfig

AXIS = (1, 2, 4)  # R and L of the shapes tried
ARCH = "gfx950"  # the MI355X
WARMUP = 3  # eager steps before a warm launch
WATCHDOG_MS = 2000.0  # the bounded-wait launch's bound: far above any step's time
GAVE_UP = "FlyDSL K1 watchdog:"  # how the runner's give-up error begins (health.KernelStuck)
KTRACE = (
    "ktrace/<shape>_ktrace.pftrace.gz: a warm launch of the ktrace build (FlyDSL ktrace "
    "events at every stage, poll and put site; kda-sim compare FILE --R R --L L reads it). "
    "Its records are scalar stores that move the schedule they record: the cold and warm "
    "launches' stamps are the untraced timeline"
)
NO_KTRACE = "not recorded (--no-ktrace)"
UNTESTED = "nothing of the FlyDSL K1 has run on AMD hardware before this record"
KILL_GRACE_S = 10.0  # SIGTERM, then SIGKILL after this long


@dataclass
class Step:
    name: str
    argv: list[str]
    rc: int | None = None
    seconds: float = 0.0
    timed_out: bool = False
    skipped: str | None = None  # why it was not run
    out: str = ""  # log files, relative to the folder
    err: str = ""


@dataclass
class Record:
    """The folder being written and the steps so far."""

    root: Path
    steps: list[Step] = field(default_factory=list)
    launch_hung: bool = False

    def path(self, *parts: str) -> Path:
        p = self.root.joinpath(*parts)
        p.parent.mkdir(parents=True, exist_ok=True)
        return p

    def run(self, name: str, argv: list[str], timeout_s: float, *, launches: bool) -> Step:
        """``argv`` with a time limit, logged; never raises for the step's failure."""
        n = len(self.steps)
        step = Step(name, argv, out=f"logs/{n:02d}_{name}.out", err=f"logs/{n:02d}_{name}.err")
        self.steps.append(step)
        if launches and self.launch_hung:
            step.skipped = "an earlier launch ran out of time: no further launch is made"
        else:
            self._execute(step, timeout_s)
            if launches and step.timed_out:
                self.launch_hung = True
        with self.path("steps.jsonl").open("a") as f:
            f.write(json.dumps(asdict(step)) + "\n")
        state = "skipped" if step.skipped else "timed out" if step.timed_out else f"rc {step.rc}"
        print(f"[{n:02d}] {name}: {state} ({step.seconds:.1f} s)", file=sys.stderr, flush=True)
        return step

    def skip(self, name: str, why: str) -> Step:
        """A step not run, logged as such."""
        step = Step(name, [], skipped=why)
        self.steps.append(step)
        with self.path("steps.jsonl").open("a") as f:
            f.write(json.dumps(asdict(step)) + "\n")
        print(f"[{len(self.steps) - 1:02d}] {name}: skipped", file=sys.stderr, flush=True)
        return step

    def _execute(self, step: Step, timeout_s: float) -> None:
        t0 = time.perf_counter()
        with self.path(step.out).open("wb") as out, self.path(step.err).open("wb") as err:
            try:
                proc = subprocess.Popen(
                    step.argv, stdout=out, stderr=err, stdin=subprocess.DEVNULL,
                    start_new_session=True,  # its own process group: killed whole on timeout
                )  # fmt: skip
            except OSError as e:  # no such program
                err.write(f"{e}\n".encode())
                step.rc = 127
            else:
                try:
                    step.rc = proc.wait(timeout=timeout_s)
                except subprocess.TimeoutExpired:
                    step.timed_out = True
                    step.rc = _kill(proc)
                    err.write(f"\n[first_contact] killed after {timeout_s:g} s\n".encode())
        step.seconds = round(time.perf_counter() - t0, 2)


def _kill(proc: subprocess.Popen[bytes]) -> int:
    """The step's process group: SIGTERM, then SIGKILL; its exit status."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            break
        try:
            return proc.wait(timeout=KILL_GRACE_S)
        except subprocess.TimeoutExpired:
            continue
    return proc.wait()


def shape_name(cfg: LaunchConfig) -> str:
    return f"R{cfg.R}L{cfg.L}"


def plan(arch: str, pairs: list[tuple[int, int]]) -> tuple[list[LaunchConfig], dict[str, str]]:
    """The shapes of ``pairs`` (R, L) the build allows on ``arch``; the others with the
    build's reason."""
    run, refused = [], {}
    for r, l_ in pairs:
        cfg = LaunchConfig(r, l_).validate()
        why = refusal(cfg, arch, StampLayout(tasks_per_cta(cfg.n_tasks, cfg.blocks)).width)
        if why is None:
            run.append(cfg)
        else:
            refused[shape_name(cfg)] = why
    return run, refused


def parse_pairs(text: str) -> list[tuple[int, int]]:
    """``RxL,RxL,..`` -> [(R, L), ..]; InvalidInput naming a bad one."""
    out = []
    for item in filter(None, (v.strip() for v in text.split(","))):
        r, x, l_ = item.partition("x")
        if not (x and r.isdigit() and l_.isdigit()):
            raise InvalidInput(f"--shapes {item!r}: RxL, e.g. 2x1", what="--shapes")
        out.append((int(r), int(l_)))
    return out


def not_ready(arch: str) -> str | None:
    """Why this machine can make no launch of the record, or None: no ROCm GPU (or a
    torch that is not ROCm's, or sees none), no FlyDSL or linker, a GPU of another arch.
    Asked before the folder is written, so a wrong machine costs no record."""
    try:
        why = unavailable_reason() or missing()
    except ImportError as e:  # no torch at all
        return f"{e.name or e} is not installed (a ROCm build of torch is needed)"
    if why is not None:
        return why
    gpu = RocmRuntime().arch()
    if gpu == arch:
        return None
    if gpu in ARCHES:
        return f"this GPU is {gpu}, not {arch}: pass --arch {gpu}"
    return f"this GPU is {gpu}; the FlyDSL K1 builds for {', '.join(ARCHES)}"


def record(args: argparse.Namespace) -> int:
    """Write the folder; 0 when every step that ran exited 0, else 1."""
    root: Path = args.out
    if root.exists() and any(root.iterdir()):
        print(f"first_contact: {root} exists and is not empty", file=sys.stderr)
        return 2
    # launches by this python's kda-sim run on this machine: check it first (a
    # --kda-sim command's device is its own to refuse, step by step)
    why = None if args.kda_sim else not_ready(args.arch)
    if why is not None:
        msg = f"first_contact: no launch can be made here: {why}; nothing recorded"
        print(msg, file=sys.stderr)
        return 2
    rec = Record(root)
    kda = shlex.split(args.kda_sim) if args.kda_sim else [sys.executable, "-m", "kda_sim.cli"]
    gpu = PROFILE[args.arch]
    shapes, refused = plan(args.arch, parse_pairs(args.shapes))
    started = datetime.now(UTC).isoformat(timespec="seconds")
    py = [sys.executable, "-c"]
    rec.run("versions", [*py, _VERSIONS], args.probe_timeout, launches=False)
    src = Path(__file__).resolve().parents[1]  # the checkout (an editable install's)
    rec.run("git", ["git", "-C", str(src), "log", "-1", "--format=%H %cI %s"],
            args.probe_timeout, launches=False)  # fmt: skip
    rec.run("rocminfo", ["rocminfo"], args.probe_timeout, launches=False)
    rec.run("rocm_smi", ["rocm-smi", "--showproductname", "--showclocks"],
            args.probe_timeout, launches=False)  # fmt: skip

    warm_traces: list[tuple[LaunchConfig, Path]] = []
    for cfg in shapes:
        dims = ["--R", str(cfg.R), "--L", str(cfg.L)]
        base = [*kda, "kernel", "run", "--backend", "flydsl", "--arch", args.arch, *dims]
        bounded = rec.run(f"{shape_name(cfg)}_watchdog",
                          [*base, "--watchdog-ms", str(args.watchdog_ms), "--check", "--json"],
                          args.timeout, launches=True)  # fmt: skip
        gave_up = (
            bounded.skipped is None
            and bounded.rc == 1
            and GAVE_UP in (rec.root / bounded.err).read_text()
        )
        for kind, warmup in (("cold", 0), ("warm", args.warmup)):
            name = f"{shape_name(cfg)}_{kind}"
            if gave_up:
                rec.skip(name, "its bounded-wait launch gave up (see its log): this one would hang")
                continue
            trace = rec.path("traces", f"{name}.json")
            argv = [*base, "--warmup", str(warmup), "--check", "--json", "--trace", str(trace)]
            step = rec.run(name, argv, args.timeout, launches=True)
            if step.rc == 0:
                _keep_result(rec, step, name)
                if kind == "warm":
                    warm_traces.append((cfg, trace))
        if args.ktrace:
            name = f"{shape_name(cfg)}_ktrace"
            if gave_up:
                rec.skip(name, "its bounded-wait launch gave up (see its log): this one would hang")
                continue
            kt = rec.path("ktrace", f"{name}.pftrace.gz")
            argv = [*base, "--warmup", str(args.warmup), "--check", "--json", "--ktrace", str(kt)]
            step = rec.run(name, argv, args.timeout, launches=True)
            if step.rc == 0:
                _keep_result(rec, step, name)

    fit_rc = _fit(rec, kda, warm_traces, gpu, args)
    finished = datetime.now(UTC).isoformat(timespec="seconds")
    manifest = {
        "what": "the first run of the FlyDSL K1 on an MI355X (kernel/flydsl/first_contact.py)",
        "note": UNTESTED,
        "started": started,
        "finished": finished,
        "arch": args.arch,
        "gpu_profile": gpu,
        "warmup": args.warmup,
        "timeout_s": args.timeout,
        "watchdog_ms": args.watchdog_ms,
        "shapes": [shape_name(c) for c in shapes],
        "refused_by_the_build": refused,
        "ktrace": KTRACE if args.ktrace else NO_KTRACE,
        "launch_hung": rec.launch_hung,
        "fit": fit_rc,
        "steps": [asdict(s) for s in rec.steps],
    }
    rec.path("manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    if not args.no_tar:
        tar = root.with_name(root.name + ".tar.gz")
        with tarfile.open(tar, "w:gz") as t:
            t.add(root, arcname=root.name)
        print(f"first_contact: wrote {root} and {tar}", file=sys.stderr)
    ok = all(s.rc == 0 for s in rec.steps if s.skipped is None)
    return 0 if ok and not rec.launch_hung else 1


def _keep_result(rec: Record, step: Step, name: str) -> None:
    """The launch's ``--json`` result into results/ (the log keeps it as printed)."""
    text = (rec.root / step.out).read_text()
    try:
        json.loads(text)
    except ValueError:
        return  # printed something else: the log has it
    rec.path("results", f"{name}.json").write_text(text)


def _fit(
    rec: Record,
    kda: list[str],
    traces: list[tuple[LaunchConfig, Path]],
    gpu: str,
    args: argparse.Namespace,
) -> dict[str, object]:
    """``kda-sim calibrate`` of ``gpu``'s profile (mi355x) on the warm traces, every third shape
    held out to test the fit (none with fewer than three)."""
    if not traces:
        return {"skipped": "no warm trace to fit on"}
    hold = [p for i, (_, p) in enumerate(traces) if len(traces) >= 3 and i % 3 == 2]
    train = [p for _, p in traces if p not in hold]
    argv = [*kda, "calibrate", *map(str, train), "--gpu", gpu,
            "--out", str(rec.path("fit", f"{gpu}_fit.json")),
            "--budget", str(args.fit_budget), "--json", "--no-progress"]  # fmt: skip
    if hold:
        argv += ["--holdout", *map(str, hold)]
    step = rec.run("calibrate", argv, args.fit_timeout, launches=False)
    if step.rc in (0, 1):  # 1: held-out shapes miss the criteria; the report says by how much
        rec.path("fit", "report.json").write_text((rec.root / step.out).read_text())
    return {"rc": step.rc, "train": [p.name for p in train], "holdout": [p.name for p in hold]}


# what ran it: python, the ROCm / HIP / FlyDSL environment, torch (HIP or not), flydsl,
# the GPU torch sees
_VERSIONS = """
import json, os, platform, sys
out = {"python": sys.version.split()[0], "platform": platform.platform()}
out["env"] = {k: v for k, v in os.environ.items()
              if k.startswith(("ROCM", "HIP", "HSA", "FLYDSL", "KDA_"))
              or k in ("ARCH", "COMPILE_ONLY")}
try:
    import torch
    out["torch"] = torch.__version__
    out["hip"] = getattr(torch.version, "hip", None)
    if torch.cuda.is_available():
        p = torch.cuda.get_device_properties(0)
        out["gpu"] = {"name": p.name, "arch": getattr(p, "gcnArchName", None),
                      "cus": p.multi_processor_count, "bytes": p.total_memory}
except Exception as e:
    out["torch_error"] = repr(e)
try:
    import flydsl
    out["flydsl"] = getattr(flydsl, "__version__", "?")
except Exception as e:
    out["flydsl_error"] = repr(e)
print(json.dumps(out, indent=1))
"""


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="first_contact_mi355x.sh", description=__doc__.split("\n")[0])
    p.add_argument(
        "--out", type=Path, default=None, help="the folder (default first_contact_<UTC>)"
    )
    p.add_argument("--arch", default=ARCH, choices=ARCHES, help=f"the GPU's arch ({ARCH})")
    p.add_argument(
        "--shapes",
        default=",".join(f"{r}x{l_}" for r in AXIS for l_ in AXIS),
        help="RxL,.. (default: R, L in 1, 2, 4; a shape the build refuses is recorded, not run)",
    )
    p.add_argument("--warmup", type=int, default=WARMUP, help="eager steps before a warm launch")
    p.add_argument("--timeout", type=float, default=600.0, help="seconds a launch step")
    p.add_argument(
        "--watchdog-ms", type=float, default=WATCHDOG_MS,
        help=f"the bounded-wait launch's bound a wait ({WATCHDOG_MS:g})",
    )  # fmt: skip
    p.add_argument("--probe-timeout", type=float, default=120.0, help="seconds a probe step")
    p.add_argument("--fit-timeout", type=float, default=3600.0, help="seconds for the fit")
    p.add_argument("--fit-budget", type=int, default=60, help="calibrate's --budget")
    p.add_argument(
        "--kda-sim",
        default="",
        help="the kda-sim command (default: this python's, whose machine is checked for a "
        "ROCm GPU of --arch, FlyDSL and a linker before anything is recorded)",
    )
    p.add_argument("--no-tar", action="store_true", help="no tarball beside the folder")
    p.add_argument(
        "--no-ktrace",
        dest="ktrace",
        action="store_false",
        help="no launch of the ktrace build (default: one warm launch a shape)",
    )
    args = p.parse_args(argv)
    if args.out is None:
        args.out = Path(f"first_contact_{datetime.now(UTC):%Y%m%dT%H%M%SZ}")
    try:
        return record(args)
    except InvalidInput as e:
        print(f"first_contact: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
