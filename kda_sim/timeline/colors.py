"""The stage and role colours every view uses (kept free of plotting imports, so the
app's first render does not pay for matplotlib)."""

from __future__ import annotations

STAGE_COLORS: dict[str, str] = {
    "slice": "#1f77b4",
    "gate": "#aec7e8",
    "mix": "#17becf",
    "load_x": "#ff7f0e",
    "gemv0": "#2ca02c",
    "gemv1": "#98df8a",
    "k.stage": "#c7c7c7",
    "k.conv": "#9467bd",
    "k.gates": "#c5b0d5",
    "k.recur": "#8c564b",
    "k.norm": "#e377c2",
}
ROLE_COLORS: dict[str, str] = {"attn": "#1f77b4", "gemv": "#2ca02c", "idle": "#7f7f7f"}
