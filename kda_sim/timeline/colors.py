"""Display order and colours of stages and roles, shared by the Gantt figure, the
summary and the app (kept free of plotting imports, so the app's first render does not
pay for matplotlib).

A kernel's own order and colours are its spec's (:func:`display`, from a timeline's
``meta.kernel``). ``STAGES``, ``ROLES``, ``STAGE_COLORS`` and ``ROLE_COLORS`` are the
default kernel's, for views that do not yet pass their timeline's: they are looked up
in the registry when first read, never when this module is imported.
"""

from __future__ import annotations

from typing import Any

from kda_sim.errors import InvalidInput
from kda_sim.kernels.registry import DEFAULT_KERNEL, get

# module attribute -> the default kernel's spec attribute it copies
_DEFAULTS: dict[str, tuple[str, type]] = {
    "STAGES": ("stages", tuple),
    "ROLES": ("roles", tuple),
    "STAGE_COLORS": ("stage_colors", dict),
    "ROLE_COLORS": ("role_colors", dict),
}
PALETTE: tuple[str, ...] = (
    "#1f77b4",
    "#ff7f0e",
    "#2ca02c",
    "#d62728",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#7f7f7f",
    "#bcbd22",
    "#17becf",
)


def __getattr__(name: str) -> Any:
    if name not in _DEFAULTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    attr, kind = _DEFAULTS[name]
    value = kind(getattr(display(DEFAULT_KERNEL), attr))
    globals()[name] = value  # looked up once
    return value


def display(kernel: str) -> Any:
    """The spec of ``kernel`` (roles, stages, their colours); the default kernel's if it is
    not known."""
    try:
        return get(kernel)
    except InvalidInput:
        return get(DEFAULT_KERNEL)


def color_of(name: str, colors: dict[str, str], order: tuple[str, ...]) -> str:
    """``name``'s colour, else one of :data:`PALETTE` by its place in ``order``."""
    if name in colors:
        return colors[name]
    i = order.index(name) if name in order else abs(hash(name))
    return PALETTE[i % len(PALETTE)]


def kernel_order(kernel: str, names: Any, kind: str) -> list[str]:
    """``names`` in ``kernel``'s display order of its ``kind`` ("roles" or "stages"),
    names it does not list after them, sorted (a view shows every role and stage of its
    timeline, whichever kernel ran it)."""
    names = set(names)
    order = tuple(getattr(display(kernel), kind))
    return [n for n in order if n in names] + sorted(names - set(order))


def stage_color(kernel: str, name: str) -> str:
    """The colour of stage ``name`` of ``kernel``."""
    spec = display(kernel)
    return color_of(name, dict(spec.stage_colors), tuple(spec.stages))
