"""The K1 trace buffer -> the project's timeline, and ``traces/*.json``.

The kernel leaves one record a CTA (``trace_layout.py``, 32-bit words): globaltimer at
every stage boundary of every task it ran, its SM id, and for each poll site its first
issue, the time it was satisfied and its retries. ``widen`` restores the stamps' high
halves; times become ns from the earliest CTA start.
"""

from __future__ import annotations

import platform
import shlex
import sys
from pathlib import Path
from typing import Any

import numpy as np

from kda_kernel.triton import trace_layout as T
from kda_sim.kernels.k1.constants import BLOCKS, GEMV0, HD, N_GEMV, NA, NPROJ, NVCH, VCH
from kda_sim.timeline.chrome import write_chrome
from kda_sim.timeline.model import CellRange, CtaTrack, Meta, PollRecord, StageSpan, Timeline

CLOCK = "globaltimer ns (H200: 32 ns steps), origin the earliest CTA start"


class TraceError(RuntimeError):
    """A trace buffer that is not one complete record a CTA of this launch."""


def role_of(cta: int) -> str:
    if cta < NA:
        return "attn"
    if cta < GEMV0 + N_GEMV:
        return "gemv"
    return "idle"


def _poll_cells(R: int, L: int, nb: int) -> dict[tuple[str, str], int]:
    s, ns = R * L, nb + 1
    return {
        ("gate", "PART"): NA * ns * 2,
        ("mix", "PART"): NA * s * ns * 2,  # gate_local: every token's
        ("mix", "WGT"): s * (ns + 1),
        ("mix", "MSQ"): NA * s,
        ("load_x", "XRDY"): NA,
        ("k.conv", "q/k/v"): 3 * VCH * L,
        ("k.gates", "f_a"): HD * L,
        ("k.gates", "q/k"): 2 * HD * L,
        ("k.gates", "beta"): L,
        ("k.norm", "onrm+g2"): (NVCH + VCH) * L,
    }


def _poll(
    stage: str,
    task: int,
    label: str,
    cells: int,
    w: np.ndarray,
    at: int,
    t0: int,
    region_first: int | None = None,
    batches: int = 1,
) -> PollRecord:
    first, sat, retries = int(w[at]), int(w[at + 1]), int(w[at + 2])
    cr = (
        [CellRange(label.split("+")[0], region_first, region_first + cells - 1, cells)]
        if (region_first is not None)
        else []
    )
    return PollRecord(
        stage=stage,
        task=task,
        label=label,
        n_cells=cells,
        n_batches=batches,
        first_issue=float(first - t0),
        satisfied=float(sat - t0),
        retries=retries,
        cells=cr,
    )


def _attn_role(
    tr: CtaTrack,
    w: np.ndarray,
    t0: int,
    bounds: list[float],
    cells: dict[tuple[str, str], int],
    s: int,
    gate_local: bool,
) -> None:
    """An attn CTA's stages and poll sites. The gate of token t runs on attn CTA t only,
    and with ``gate_local`` on no CTA (``T.ATTN_POLLS_GATE_LOCAL`` says what the record
    holds then): the mix begins where the slice ended, and its PART poll is S batches, one
    a token."""
    gate = tr.cta < s and not gate_local
    for k, name in enumerate(T.ATTN_STAGES):
        if name == "gate" and not gate:
            continue
        start = bounds[1] if name == "mix" and gate_local else bounds[k]  # the slice's end
        tr.stages.append(StageSpan(name, -1, start, bounds[k + 1]))
    for k, site in enumerate(T.ATTN_POLLS_GATE_LOCAL if gate_local else T.ATTN_POLLS):
        if site is None or (site[0] == "gate" and not gate):
            continue
        stage, label = site
        batches = s if site == ("mix", "PART") else 1
        tr.polls.append(
            _poll(stage, -1, label, cells[site], w, T.EV_RPOLL + 3 * k, t0, batches=batches)
        )


def _records(buf: np.ndarray, R: int, tickets: bool = False) -> np.ndarray:
    """``buf`` as int64, if it is one record a CTA of at least the words R needs."""
    out = np.asarray(buf).astype(np.int64)
    need = T.record_words(R, tickets=tickets)
    if out.ndim != 2 or out.shape[0] != BLOCKS or out.shape[1] < need:
        raise TraceError(f"trace buffer of shape {out.shape}, want [{BLOCKS}, >= {need}]")
    return out


def widen(words: np.ndarray, *, R: int, tickets: bool = False) -> np.ndarray:
    """The kernel's records (int32 [BLOCKS, NEV]) -> 64-bit ones, as ``decode`` reads them.

    A record keeps the low half of each stamp, and the high halves of the CTA's start and
    end stamps. A stamp is the start plus its signed 32-bit distance from it, so the
    widening is exact while a CTA runs under 2^31 ns (2.1 s), a stamp read by one warp a
    little before another warp read the start included; a longer CTA is refused.
    ``tickets``: a kda_tickets build's record (its task and take slots)."""
    w = _records(words, R, tickets)  # counts and ids: the int32 words, sign-extended
    lo = w & 0xFFFFFFFF
    start = (w[:, T.EV_START_HI] << 32) | lo[:, T.EV_START]
    end = (w[:, T.EV_END_HI] << 32) | lo[:, T.EV_END]
    long_ = np.nonzero((end < start) | (end - start >= 1 << 31))[0]
    if long_.size:
        c = int(long_[0])
        raise TraceError(
            f"CTA {c} ran from {int(start[c])} to {int(end[c])} ns: its 32-bit stamps can be "
            f"widened only within 2^31 ns of its start"
        )
    stamps = T.stamp_words(R, tickets=tickets)
    d = (lo[:, stamps] - lo[:, [T.EV_START]] + (1 << 31)) % (1 << 32) - (1 << 31)
    w[:, stamps] = start[:, None] + d
    w[:, T.EV_START], w[:, T.EV_END] = start, end
    return w


def decode(
    buf: np.ndarray,
    *,
    R: int,
    L: int,
    nb: int,
    kda0: int = 0,
    gate_local: bool = False,
    tag: int | None = None,
    gpu: str = "unknown",
    extra: dict[str, Any] | None = None,
    nw_first: bool = False,
    onw_first: bool = False,
    kda_tickets: bool = False,
    ticket_unroll: int = 0,
    probe_take: bool = False,
) -> Timeline:
    """One launch's widened records (int64 [BLOCKS, NEV], ``widen``) -> a measured
    Timeline. ``gate_local``: the build's (``Build.gate_local``), whose record has no gate;
    ``nw_first``, ``onw_first``, ``kda_tickets``, ``ticket_unroll``: the build's
    (``Build.cfg``), which the meta carries to the model. Under ``kda_tickets`` the meta's
    ``extra`` holds the takes (``ticket_takes``: [cta, issue ns, return ns, ticket], each
    CTA's in order) and what the record had no slot for (``ticket_unrecorded``: tasks and
    takes, counted). ``probe_take``: the static build with a take before each task
    (``Build.probe`` "take"), its record the ticket build's layout: its takes go to
    ``ticket_takes`` too (one a task, the tickets 0 .. R * 96 - 1)."""
    takes_rec = kda_tickets or probe_take
    buf = _records(buf, R, takes_rec)
    if tag is not None:
        stale = np.nonzero(buf[:, T.EV_TAG] != tag)[0]
        if stale.size:
            raise TraceError(
                f"{stale.size} CTA records are not this launch's (tag "
                f"{tag}): first CTA {int(stale[0])}"
            )
    t0 = int(buf[:, T.EV_START].min())
    cells = _poll_cells(R, L, nb)
    s = R * L
    ctas: list[CtaTrack] = []
    takes: list[list[int]] = []
    unrecorded = {"tasks": 0, "takes": 0}
    for cta in range(BLOCKS):
        w = buf[cta]
        role = role_of(cta)
        start, end = float(w[T.EV_START] - t0), float(w[T.EV_END] - t0)
        tr = CtaTrack(cta=cta, role=role, unit=int(w[T.EV_SMID]), start=start, end=end)
        bounds = [start] + [float(w[T.EV_ROLE + k] - t0) for k in range(T.N_ROLE_STAGES)]
        if role == "attn":
            _attn_role(tr, w, t0, bounds, cells, s, gate_local)
        elif role == "gemv":
            for k, name in enumerate(T.GEMV_STAGES):
                tr.stages.append(StageSpan(name, -1, bounds[k], bounds[k + 1]))
            tr.polls.append(_poll("load_x", -1, "XRDY", NA, w, T.EV_RPOLL, t0))
        ntask = int(w[T.EV_NTASK])
        if takes_rec:
            takes += _takes(cta, w, t0, ntask, unrecorded, past=kda_tickets)
        if not kda_tickets:
            expect = sum(
                1 for n in range(T.max_tasks(R)) if ((cta - kda0) % BLOCKS) + n * BLOCKS < R * 96
            )
            if ntask != expect:
                raise TraceError(f"CTA {cta} ran {ntask} kda tasks, the mapping gives {expect}")
        for n in range(min(ntask, T.task_slots(R, tickets=takes_rec))):
            base = T.EV_TASK0 + n * T.TASK_STRIDE
            task = int(w[base + T.TASK_ID])
            tb = [float(w[base + T.TASK_T + k] - t0) for k in range(T.N_TASK_T)]
            for k, name in enumerate(T.KDA_STAGES):
                tr.stages.append(StageSpan(name, task, tb[k], tb[k + 1]))
            for k, ((stage, region), what) in enumerate(
                zip(T.KDA_POLLS, T.KDA_POLL_CELLS, strict=True)
            ):
                p = _poll(
                    stage, task, region, cells[(stage, what)], w, base + T.TASK_POLL + 3 * k, t0
                )
                tr.polls.append(p)
        ctas.append(tr)
    extra = dict(extra or {})
    params: dict[str, Any] = {}
    if takes_rec:
        ran = sum(int(w[T.EV_NTASK]) for w in buf)
        _check_tickets(takes, unrecorded, R, ran, BLOCKS if kda_tickets else 0)
        extra["ticket_takes"] = takes
        extra["ticket_unrecorded"] = unrecorded
    if kda_tickets:
        params["kda_tickets"] = True
        if ticket_unroll:
            params["ticket_unroll"] = ticket_unroll
    meta = Meta(
        source="measured",
        gpu=gpu,
        R=R,
        L=L,
        nb=nb,
        kda0=kda0,
        gate_local=gate_local,
        blocks=BLOCKS,
        clock=CLOCK,
        extra=extra,
        nw_first=nw_first,
        onw_first=onw_first,
        params=params,
    )
    return Timeline(meta=meta, ctas=ctas)


def _takes(
    cta: int, w: np.ndarray, t0: int, ntask: int, unrecorded: dict[str, int], past: bool = True
) -> list[list[int]]:
    """A CTA's recorded takes, [cta, issue, return, ticket] (ns from t0); the tasks and
    takes past the record's slots are counted into ``unrecorded``. ``past``: a
    kda_tickets CTA, which ends on one take past the items (the "take" probe makes one a
    task, none past)."""
    ntake = int(w[T.EV_NTAKE])
    if ntake != ntask + past:
        want = "one more" if past else "as many"
        raise TraceError(f"CTA {cta} made {ntake} takes for {ntask} kda tasks, want {want}")
    unrecorded["tasks"] += max(0, ntask - T.TICKET_TASK_SLOTS)
    unrecorded["takes"] += max(0, ntake - T.TICKET_TAKE_SLOTS)
    out = []
    for m in range(min(ntake, T.TICKET_TAKE_SLOTS)):
        b = T.EV_TAKE0 + m * T.TAKE_STRIDE
        issue, ret = int(w[b + T.TAKE_ISSUE]) - t0, int(w[b + T.TAKE_RETURN]) - t0
        out.append([cta, issue, ret, int(w[b + T.TAKE_TICKET])])
    return out


def _check_tickets(
    takes: list[list[int]], unrecorded: dict[str, int], R: int, ran: int, past: int = BLOCKS
) -> None:
    """Every kda task ran once and every CTA ended on one ticket past the items: the
    tasks counted make R * 96 and no recorded ticket repeats (with every take recorded,
    the tickets are exactly 0 .. R * 96 + ``past`` - 1: ``past`` takes past the items,
    one a CTA under kda_tickets, none under the "take" probe)."""
    items = R * 96
    if ran != items:
        raise TraceError(f"the CTAs ran {ran} kda tasks, want {items}")
    tickets = [t[3] for t in takes]
    if len(set(tickets)) != len(tickets):
        raise TraceError("a ticket was taken twice")
    if not unrecorded["takes"] and sorted(tickets) != list(range(items + past)):
        raise TraceError(f"the tickets taken are not 0 .. {items + past - 1}")


def environment() -> dict[str, Any]:
    """Where a trace was made: versions, GPU, driver, the command line."""
    info: dict[str, Any] = {
        "python": platform.python_version(),
        "command": " ".join(shlex.quote(a) for a in sys.argv),
        "nproj": NPROJ,
    }
    try:
        import torch

        info["torch"] = torch.__version__
        if torch.cuda.is_available():
            p = torch.cuda.get_device_properties(0)
            info["gpu"] = p.name
            info["sms"] = p.multi_processor_count
            info["cuda"] = torch.version.cuda
    except ImportError:  # the CPU-only decode needs no torch
        pass
    try:
        import triton

        info["triton"] = triton.__version__
    except ImportError:
        pass
    try:
        import subprocess

        out = subprocess.run(
            ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
        if out.returncode == 0:
            info["driver"] = out.stdout.strip().splitlines()[0]
    except (OSError, subprocess.SubprocessError):
        pass
    return info


def write(tl: Timeline, path: str | Path) -> Path:
    """``traces/*.json``: the Chrome trace JSON the project's readers load."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    write_chrome(tl, p)
    return p
