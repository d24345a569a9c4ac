"""The timeline every source produces and every view reads."""

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
