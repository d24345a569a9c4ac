"""The LDS of a FlyDSL K1 CTA: its arrays, the role each belongs to, where each lies
(the seed's per-role union) and the seed's budget rule. Pure Python (no FlyDSL).

A CTA runs its roles one after another (attn or gemv, then its kda tasks) with a barrier
after each role's last LDS access, so the roles' arrays alias: a CTA takes the stamps
(kept for the whole launch) plus the largest role's arrays, not the sum of every array.
The seed asserts besides that the x rows stay within 136 KiB (``X_LDS_LIMIT``: S <= 9).

Where the gemv role's x rows and reduction array do not fit the target's LDS a
workgroup (gfx942's 64 KiB from S = 4), the gemv holds a window of x rows at a time
(``x_window``: the most rows that fit, the windowed gemv of ``k1_gemv``); where they
fit (gfx950 at every S <= 9) the window is all S rows, the seed's layout.
"""

from __future__ import annotations

from dataclasses import dataclass

from kda_sim.kernels.k1.config import LaunchConfig
from kda_sim.kernels.k1.constants import (
    COLS,
    HD,
    HIDDEN,
    LDS_PAD,
    VCH,
    WAVE_LANES,
    WAVES,
    X_LDS_LIMIT,
    x_lds_bytes,
)

LDS_LIMIT = {"gfx942": 64 * 1024, "gfx950": 160 * 1024}  # bytes a workgroup may allocate
ALIGN = 16  # bytes: every array starts 16-byte aligned (dwordx4 LDS accesses)
STAMPS = "stamps"  # the timeline's int64 row: written from kernel entry to the flush

# the arrays each role touches, in layout order; an array of several roles (``red``)
# comes first in each so that it has one place
ROLE_ARRAYS: dict[str, tuple[str, ...]] = {
    "gemv": ("red", "x"),
    "attn": ("red", "vals"),
    "kda": ("vloc", "fa", "qkl", "decay", "beta", "ol"),
}


def lds_words(cfg: LaunchConfig, x_rows: int | None = None) -> dict[str, int]:
    """Elements of each role array (4 bytes each); ``x`` holds ``x_rows`` token rows
    (the gemv's window; all S when None)."""
    s, L = cfg.S, cfg.L
    rows = s if x_rows is None else x_rows
    return {
        "red": max(WAVES * WAVE_LANES * 4, 128 + 8 * s, s * (cfg.NS + 1)),
        "x": rows * (HIDDEN + LDS_PAD) // 2,
        "vals": s * cfg.NS * COLS,  # the slice's sources, which the mix reads (the seed's)
        "vloc": L * VCH,
        "fa": L * HD,
        "qkl": 2 * L * HD,
        "decay": L * HD,
        "beta": max(L, 1),
        "ol": L * VCH,
    }


def _aligned(nbytes: int) -> int:
    return -(-nbytes // ALIGN) * ALIGN


@dataclass(frozen=True)
class LdsLayout:
    """Byte offset and size of every array in the CTA's one LDS block."""

    offsets: dict[str, int]
    sizes: dict[str, int]
    total: int  # bytes the block takes

    def role_bytes(self, role: str) -> int:
        return sum(self.sizes[a] for a in ROLE_ARRAYS[role])


def lds_layout(cfg: LaunchConfig, stamp_width: int, x_rows: int | None = None) -> LdsLayout:
    """The stamps (``stamp_width`` int64, none when 0) first, then each role's arrays from
    one base: an array keeps the place an earlier role gave it, a role's new arrays go
    after its placed ones. The total is stamps + the largest role (the union). ``x``
    holds ``x_rows`` token rows (all S when None)."""
    sizes = {k: _aligned(4 * n) for k, n in lds_words(cfg, x_rows).items()}
    offsets: dict[str, int] = {}
    base = 0
    if stamp_width:
        sizes[STAMPS] = _aligned(8 * stamp_width)
        offsets[STAMPS] = 0
        base = sizes[STAMPS]
    for arrays in ROLE_ARRAYS.values():
        cursor = max([base] + [offsets[a] + sizes[a] for a in arrays if a in offsets])
        for a in arrays:
            if a not in offsets:
                offsets[a], cursor = cursor, cursor + sizes[a]
    total = max(offsets[a] + sizes[a] for a in offsets)
    return LdsLayout(offsets, sizes, total)


def _limit(arch: str) -> int:
    return LDS_LIMIT.get(arch, min(LDS_LIMIT.values()))


def x_window(cfg: LaunchConfig, arch: str, stamp_width: int) -> int:
    """Token rows of x the gemv holds in LDS at once on ``arch``: all S where the union
    fits the target's LDS a workgroup, else the most rows with which it fits (the
    windowed gemv). S when no window fits: ``refusal`` then names the role that does not."""
    limit = _limit(arch)
    for rows in range(cfg.S, 0, -1):
        if lds_layout(cfg, stamp_width, rows).total <= limit:
            return rows
    return cfg.S


def windows(s: int, rows: int) -> list[tuple[int, int]]:
    """(first token, token count) of each x window, in token order: ``rows`` a window,
    the last one the rest."""
    return [(first, min(rows, s - first)) for first in range(0, s, rows)]


def refusal(cfg: LaunchConfig, arch: str, stamp_width: int) -> str | None:
    """Why ``build_k1`` refuses ``cfg`` on ``arch`` for LDS, or None: the seed's rule (x
    rows within 136 KiB), then the union, with the gemv's x window, against the target's
    LDS a workgroup."""
    x = x_lds_bytes(cfg.S)
    if x > X_LDS_LIMIT:
        most = X_LDS_LIMIT // x_lds_bytes(1)
        return (
            f"{cfg.label()}: the x rows of S = {cfg.S} tokens take {x} B of LDS, over the "
            f"seed's {X_LDS_LIMIT // 1024} KiB (S <= {most}); the seed refuses it too"
        )
    limit = _limit(arch)
    lay = lds_layout(cfg, stamp_width, x_window(cfg, arch, stamp_width))
    if lay.total <= limit:
        return None
    role = max(ROLE_ARRAYS, key=lay.role_bytes)
    return (
        f"{cfg.label()} needs {lay.total} B of LDS (the stamps and the {role} role's arrays, "
        f"{lay.role_bytes(role)} B), over {arch}'s {limit // 1024} KiB a workgroup"
    )
