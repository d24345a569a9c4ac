"""The modules other issues add (checks, importers, compare), found at run time.

Each view asks here whether its module exists and, if so, for the function it needs.
The names looked up are listed in ``WANTED``: the one place to change when those
modules settle on their names. A module that is present but lacks every listed name,
or that raises, is reported in the page as such (never as a traceback).
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable
from dataclasses import asdict, dataclass, is_dataclass
from typing import Any

# feature -> (module, what it brings, the issue that builds it)
FEATURES: dict[str, tuple[str, str, int]] = {
    "checks": ("kda_sim.checks", "deadlock verdicts with wait-for chains, tag check, role rule", 3),
    "importers": ("kda_sim.importers", "FlyDSL ktrace .pftrace.gz and stamp tensor importers", 5),
    "compare": ("kda_sim.compare", "error table, clock offsets, conformance findings", 5),
}

# feature -> (modules, function names) tried in order; the first that exists is used
WANTED: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "check": (("kda_sim.checks.launch_check", "kda_sim.checks"), ("check_launch",)),
    "sweep": (("kda_sim.checks.sweep",), ("sweep",)),
    "import": (("kda_sim.importers",), ("load_trace",)),
    "compare": (("kda_sim.compare.diff", "kda_sim.compare"), ("compare", "compare_timelines")),
    "offsets": (("kda_sim.compare.clocks", "kda_sim.compare"), ("clock_offsets", "fit_clocks")),
    "conformance": (
        ("kda_sim.compare.conformance", "kda_sim.compare"),
        ("conformance", "check_conformance"),
    ),
    "model_view": (("kda_sim.compare.model",), ("model_view",)),
    "annotate": (("kda_sim.compare.diff",), ("annotate_producers",)),
}


def has_module(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):  # a parent package missing or half-written
        return False


def available(feature: str) -> bool:
    return has_module(FEATURES[feature][0])


def missing_note(feature: str) -> str:
    mod, what, issue = FEATURES[feature]
    return f"Not available yet: {what} come with `{mod}` (issue {issue}), not in this checkout."


@dataclass(frozen=True)
class Found:
    func: Callable[..., Any] | None
    where: str  # "module.function", or why nothing was found


def lookup(want: str) -> Found:
    modules, names = WANTED[want]
    tried: list[str] = []
    for m in modules:
        if not has_module(m):
            continue
        try:
            mod = importlib.import_module(m)
        except Exception as e:  # a module under construction may not import yet
            return Found(None, f"`{m}` is present but does not import: {type(e).__name__}: {e}")
        for n in names:
            f = getattr(mod, n, None)
            if callable(f):
                return Found(f, f"{m}.{n}")
        tried.append(m)
    if not tried:
        return Found(None, "")
    return Found(None, f"`{', '.join(tried)}` present, but without any of {', '.join(names)} (yet)")


@dataclass(frozen=True)
class Outcome:
    ok: bool
    value: Any = None
    message: str = ""


def call(want: str, *args: Any, **kwargs: Any) -> Outcome:
    """Call the plugin function for ``want``; any failure becomes a message."""
    found = lookup(want)
    if found.func is None:
        return Outcome(False, None, found.where or "not available yet")
    try:
        return Outcome(True, found.func(*args, **kwargs), found.where)
    except Exception as e:  # the page shows what the module said, not a traceback
        return Outcome(False, None, f"{found.where} failed: {type(e).__name__}: {e}")


def plain(obj: Any, depth: int = 0) -> Any:
    """A plugin's result as JSON-like data the page can show whatever its type
    (its own ``summary()`` where it has one: that is what its CLI prints)."""
    if depth == 0 and callable(getattr(obj, "summary", None)):
        try:
            return plain(obj.summary(), 1)
        except Exception:  # a summary that needs arguments: fall back to the fields
            pass
    if depth > 6:
        return repr(obj)
    if is_dataclass(obj) and not isinstance(obj, type):
        return plain(asdict(obj), depth + 1)
    if isinstance(obj, dict):
        return {str(k): plain(v, depth + 1) for k, v in obj.items()}
    if isinstance(obj, list | tuple | set):
        return [plain(v, depth + 1) for v in list(obj)[:500]]
    if hasattr(obj, "tolist"):
        return obj.tolist()
    if isinstance(obj, str | int | float | bool) or obj is None:
        return obj
    if hasattr(obj, "__dict__"):
        return plain(vars(obj), depth + 1)
    return str(obj)
