"""The timeline build's stamp layout: one int64 row a CTA, ``s_memrealtime`` ticks
(100 MHz), written to LDS as the CTA goes and flushed to global memory once at the end
(a global store per stamp would sit on every later vmcnt wait).

Columns 0..11 are the public twin's [256, 15] layout exactly, and 12..14, which the twin
never stamps, hold the launch, so the project's importer (:mod:`kda_sim.kernels.k1.stamps`)
reads ``stamps[:, :15]`` as it reads the twin's and refuses it read as another launch:

====  =====================================================================
0     start (kernel entry)
1..6  as the CTA leaves slice, gate, mix (attn CTAs; gate by every attn CTA,
      right after slice where it has no gate work), load_x, gemv0, gemv1
7..11 as it leaves k.stage .. k.norm of its LAST kda task
12-14 the launch record (R, L, nb, kda0, variants, format;
      :mod:`kda_sim.kernels.k1.stamp_launch`), written with 16 and 17
====  =====================================================================

Our extension from column 15 covers EVERY kda task:

====  =====================================================================
15    end (after the CTA's last stage, before the flush)
16    the CTA's id (written by the kernel: the flush landed in its row)
17    kda tasks the CTA ran
18+   ``18 + 5 n + p``: as the CTA leaves point p (k.stage .. k.norm) of its
      n-th task (kda task (cta - kda0) mod 256 + 256 n)
====  =====================================================================

A point a CTA never passes stays 0. The project's importer owns the format
(:mod:`kda_sim.kernels.k1.stamps`: its columns, every task's spans, the refusals);
:func:`timeline` is that importer at a launch configuration. Pure Python.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kda_sim.kernels.k1.config import LaunchConfig
from kda_sim.kernels.k1.stamp_launch import COLUMNS as RECORD
from kda_sim.kernels.k1.stamp_launch import launch_record
from kda_sim.kernels.k1.stamps import CTA_ID, END, EXT_BASE, POINTS, TASKS_RUN, stamps_timeline
from kda_sim.timeline.model import Timeline

ROLE_POINTS: tuple[str, ...] = ("start", "slice", "gate", "mix", "load_x", "gemv0", "gemv1")
KDA_POINTS: tuple[str, ...] = ("k.stage", "k.conv", "k.gates", "k.recur", "k.norm")
TWIN_POINTS: tuple[str, ...] = ROLE_POINTS + KDA_POINTS
TWIN_WIDTH = POINTS
__all__ = [
    "CTA_ID",
    "END",
    "EXT_BASE",
    "RECORD",
    "TASKS_RUN",
    "StampLayout",
    "launch_record",
    "tasks_per_cta",
    "timeline",
]


@dataclass(frozen=True)
class StampLayout:
    tasks_per_cta: int  # most kda tasks one CTA runs: ceil(R 96 / 256)

    @property
    def width(self) -> int:
        return EXT_BASE + len(KDA_POINTS) * self.tasks_per_cta

    @staticmethod
    def role(point: str) -> int:
        return ROLE_POINTS.index(point)

    @staticmethod
    def last_task(point: str) -> int:
        return len(ROLE_POINTS) + KDA_POINTS.index(point)

    @staticmethod
    def task_base(n: object) -> object:
        return EXT_BASE + len(KDA_POINTS) * n  # type: ignore[operator]


def tasks_per_cta(n_tasks: int, blocks: int) -> int:
    return max(1, -(-n_tasks // blocks))


def timeline(stamps: np.ndarray, cfg: LaunchConfig, *, gpu: str = "mi355x") -> Timeline:
    """Our stamps -> Timeline with every task's spans (the project's importer)."""
    return stamps_timeline(
        np.asarray(stamps, dtype=np.int64), R=cfg.R, L=cfg.L, nb=cfg.nb, kda0=cfg.kda0,
        gate_local=cfg.gate_local, nw_first=cfg.nw_first, onw_first=cfg.onw_first,
        gpu=gpu, source="flydsl k1 stamps",
    )  # fmt: skip
