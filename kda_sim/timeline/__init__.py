"""The timeline every source produces and every view reads."""

from kda_sim.timeline.colors import ROLES, STAGES
from kda_sim.timeline.model import (
    CellRange,
    CtaTrack,
    LoadSpan,
    Meta,
    PollRecord,
    PutRecord,
    StageSpan,
    StuckWait,
    Timeline,
)

__all__ = [
    "ROLES",
    "STAGES",
    "CellRange",
    "CtaTrack",
    "LoadSpan",
    "Meta",
    "PollRecord",
    "PutRecord",
    "StageSpan",
    "StuckWait",
    "Timeline",
]
