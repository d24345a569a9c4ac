"""The host side of one FlyDSL K1 launch: the workspace (scratch, x rows, epoch, stamps,
core_out, the bounded-wait build's health records) and the kernel's argument list in
``kda_sim.isa.presets.K1_ARGS`` order, each input checked against the layout the kernel
reads (dtype, shape, contiguity). Pure torch: the same code runs on a ROCm GPU and, with
a fake launch, on the CPU in tests.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

from kda_kernel.flydsl import health
from kda_kernel.flydsl.stamps import StampLayout, tasks_per_cta
from kda_sim.errors import InvalidInput
from kda_sim.isa.presets import K1_ARGS
from kda_sim.kernels.k1.config import LaunchConfig
from kda_sim.kernels.k1.constants import (
    BLOCKS,
    CONV_W,
    HD,
    HIDDEN,
    NH,
    NPROJ,
    PROJ,
    TAG_SLOTS,
)
from kda_sim.protocol.space import CellSpace

BF, F32, I32 = torch.bfloat16, torch.float32, torch.int32
PAIR_WORDS = 2  # a mailbox pair: (value, tag), two dwords


def expected(cfg: LaunchConfig) -> dict[str, tuple[torch.dtype, tuple[int | None, ...]]]:
    """The inputs' dtype and shape as the kernel reads them (None: any size)."""
    s = cfg.S
    return {
        "prefix": (BF, (s, HIDDEN)),
        "blocks": (BF, (s, cfg.nb, HIDDEN)),
        "ares_nw": (BF, (HIDDEN,)),
        "ares_qk": (BF, (HIDDEN,)),
        "in_nw": (BF, (HIDDEN,)),
        "w_in": (BF, (NPROJ, HIDDEN)),
        "w_fb": (BF, (PROJ, HD)),
        "conv_w": (F32, (3 * PROJ, CONV_W)),
        "conv_state": (BF, (None, 3 * PROJ, cfg.SL)),
        "a_log": (F32, (NH,)),
        "dt_bias": (F32, (PROJ,)),
        "on_w": (BF, (HD,)),
        "rstate": (F32, (None, NH, HD, HD)),
        "st_idx": (I32, (cfg.R, cfg.L)),
        "num_acc": (I32, (cfg.R,)),
        "delta": (BF, (s, HIDDEN)),  # optional: None builds without the prefix + delta seam
    }


def _check(name: str, t: Any, dtype: torch.dtype, shape: tuple[int | None, ...]) -> None:
    if not isinstance(t, torch.Tensor):
        raise InvalidInput(f"{name} is {type(t).__name__}, not a tensor", what=name)
    if t.dtype != dtype:
        raise InvalidInput(f"{name} is {t.dtype}; the FlyDSL K1 reads {dtype}", what=name)
    ok = len(t.shape) == len(shape) and all(
        want is None or have == want for have, want in zip(t.shape, shape, strict=True)
    )
    if not ok:
        want = "[" + ", ".join("*" if w is None else str(w) for w in shape) + "]"
        raise InvalidInput(f"{name} has shape {list(t.shape)}; expected {want}", what=name)
    if not t.is_contiguous():
        raise InvalidInput(f"{name} is not contiguous (the kernel reads no strides)", what=name)


OPTIONAL = ("delta",)  # inputs the kernel runs without (a null pointer, a build without)


def kernel_inputs(inp: dict[str, Any], cfg: LaunchConfig) -> dict[str, torch.Tensor | None]:
    """The inputs as the kernel reads them: ``st_idx[:, :L]`` made contiguous (a copy:
    the kernel only reads it), the rest checked and passed as they are (the kernel
    updates prefix, conv_state and rstate in place). ``delta`` may be None (the build
    without the prefix + delta seam)."""
    out = dict(inp)
    st = inp.get("st_idx")
    if isinstance(st, torch.Tensor) and st.dim() == 2 and st.shape[1] >= cfg.L:
        out["st_idx"] = st[:, : cfg.L].contiguous()
    for name, (dtype, shape) in expected(cfg).items():
        if name in OPTIONAL and out.get(name) is None:
            out[name] = None
            continue
        _check(name, out.get(name), dtype, shape)
    return {k: out[k] for k in expected(cfg)}


@dataclass
class Workspace:
    """The buffers a launch needs besides the layer's tensors."""

    scratch: torch.Tensor  # int32 [cells x 2]: the mailbox pairs, zeroed once
    xbuf: torch.Tensor  # bf16 [S, HIDDEN]: the x rows
    epoch: torch.Tensor  # int32 [1]: bumped once a step (the tag's epoch)
    stamps: torch.Tensor  # int64 [BLOCKS, 18 + 5 T]: the timeline build's stamps
    core_out: torch.Tensor  # bf16 [S, PROJ]
    health: torch.Tensor  # int32: the bounded-wait build's abort word and give-up records

    @classmethod
    def create(cls, cfg: LaunchConfig, device: str) -> Workspace:
        layout = StampLayout(tasks_per_cta(cfg.n_tasks, cfg.blocks))
        cells = CellSpace.of(cfg).total
        return cls(
            scratch=torch.zeros(cells * PAIR_WORDS, dtype=I32, device=device),
            xbuf=torch.zeros(cfg.S, HIDDEN, dtype=BF, device=device),
            epoch=torch.zeros(1, dtype=I32, device=device),
            stamps=torch.zeros(BLOCKS, layout.width, dtype=torch.int64, device=device),
            core_out=torch.full((cfg.S, PROJ), float("nan"), dtype=BF, device=device),
            health=torch.zeros(health.words(BLOCKS), dtype=I32, device=device),
        )


def argument_list(
    kin: dict[str, torch.Tensor | None], ws: Workspace, slot: int, alarm: int = 0
) -> list[torch.Tensor | int | None]:
    """The launch's arguments in ``K1_ARGS`` order (tensors for pointers, None for a
    null one, ``slot`` and ``alarm``: the bounded-wait build's bound in ticks, unread by
    the other builds)."""
    if not 0 <= slot < TAG_SLOTS:
        raise InvalidInput(f"slot {slot} is not in 0..{TAG_SLOTS - 1}", what="slot")
    if not 0 <= alarm <= health.ALARM_MAX:
        raise InvalidInput(f"alarm {alarm} is not in 0..{health.ALARM_MAX}", what="alarm")
    have: dict[str, torch.Tensor | int | None] = dict(kin)
    have |= {
        "core_out": ws.core_out,
        "xbuf": ws.xbuf,
        "scratch": ws.scratch,
        "epoch": ws.epoch,
        "stamps": ws.stamps,
        "slot": slot,
        "health": ws.health,
        "alarm": alarm,
    }
    return [have[name] for name, _ in K1_ARGS]
