"""The timeline every source produces and every view reads."""

from kda_sim.timeline.model import (
    ROLES,
    STAGES,
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
