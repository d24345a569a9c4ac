"""Stamp tensor files: an integer array of clock stamps, one row a CTA, saved by torch
(``.pt``) or numpy (``.npy``), loaded as int64 and refused when it is not one plain
integer tensor. What its columns mean is the kernel's: its ``trace_decoders`` hook
(:mod:`kda_sim.kernels.spec`) reads the array this module loads (K1's twin and FlyDSL
layouts: ``kernels/k1/stamps.py``).
"""

from __future__ import annotations

import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from kda_sim.errors import TraceFormatError
from kda_sim.importers.caps import check_size


def _load_pt(path: Path) -> Any:
    import torch  # only for .pt files; the rest of the package does not need torch

    try:
        obj = torch.load(path, map_location="cpu", weights_only=True)
    except (RuntimeError, ValueError, EOFError, OSError, zipfile.BadZipFile) as e:
        raise TraceFormatError(f"not a torch tensor file: {e}", where=str(path)) from e
    except Exception as e:  # weights_only refuses pickled objects with its own types
        raise TraceFormatError(
            f"refused (only plain tensors load): {type(e).__name__}: {e}", where=str(path)
        ) from e
    if isinstance(obj, dict) and len(obj) == 1:
        obj = next(iter(obj.values()))  # {"tl": tensor}: a saved state dict of one entry
    if not isinstance(obj, torch.Tensor):
        raise TraceFormatError(f"holds a {type(obj).__name__}, not a tensor", where=str(path))
    if obj.is_floating_point() or obj.is_complex() or obj.dtype == torch.bool:
        raise TraceFormatError(f"dtype {obj.dtype}: stamps are int64", where=str(path))
    return obj.to(torch.int64).numpy()


def _load_npy(path: Path) -> np.ndarray:
    try:
        arr = np.load(path, allow_pickle=False)
    except Exception as e:  # a corrupt header reaches numpy's literal_eval: any error
        raise TraceFormatError(f"not a .npy array: {type(e).__name__}: {e}", where=str(path)) from e
    if not isinstance(arr, np.ndarray):
        raise TraceFormatError("an .npz archive, not one array", where=str(path))
    if arr.dtype.kind not in "iu":
        raise TraceFormatError(f"dtype {arr.dtype}: stamps are int64", where=str(path))
    return arr.astype(np.int64)


def load_stamp_array(path: str | Path) -> np.ndarray:
    p = Path(path)
    check_size(p)
    if p.suffix == ".npy":
        return _load_npy(p)
    if p.suffix in (".pt", ".pth"):
        return _load_pt(p)
    raise TraceFormatError("a stamp tensor is a .pt or .npy file", where=str(p))
