"""The checks', importers' and comparisons' calls as the page makes them: a failure
becomes a message the page shows (never a traceback), and a result becomes data the
page can show whatever its type."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, is_dataclass
from typing import Any


@dataclass(frozen=True)
class Outcome:
    ok: bool
    value: Any = None
    message: str = ""


def name_of(func: Callable[..., Any]) -> str:
    """``module.function``, as the page names where a figure came from."""
    return f"{func.__module__}.{getattr(func, '__qualname__', repr(func))}"


def guarded(func: Callable[..., Any], *args: Any, **kwargs: Any) -> Outcome:
    """``func(*args, **kwargs)``; any failure becomes a message naming the function."""
    try:
        return Outcome(True, func(*args, **kwargs), name_of(func))
    except Exception as e:  # the page shows what the module said, not a traceback
        return Outcome(False, None, f"{name_of(func)} failed: {type(e).__name__}: {e}")


def plain(obj: Any, depth: int = 0) -> Any:
    """A result as JSON-like data the page can show whatever its type (its own
    ``summary()`` where it has one: that is what its CLI prints)."""
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
