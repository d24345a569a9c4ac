"""Where kernels are found: the built-in ones, those of installed packages (the entry-point
group ``kda_sim.kernels``, each entry a kernel object) and a file given by path.

``get(name)`` takes a registered name or a path to a ``.py`` file that defines
``KERNEL``; ``spec_for(cfg)`` is the kernel whose configuration type ``cfg`` has. A file
that cannot be imported, or defines no usable ``KERNEL``, is an ``InvalidInput`` naming
the file and line, never a traceback; so is an exception its ``build`` or ``regions``
raises.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import sys
import traceback
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

from kda_sim.errors import InvalidInput, KdaSimError

ENTRY_POINT_GROUP = "kda_sim.kernels"
DEFAULT_KERNEL = "k1"  # the kernel a command, a view or a timeline means when none is named
# built-in kernels: name -> "module:attribute", imported when first asked for
BUILTIN: dict[str, str] = {
    "k1": "kda_sim.kernels.k1.spec:KERNEL",
    "pingpong": "kda_sim.kernels.examples.pingpong:KERNEL",
    "gridbarrier": "kda_sim.kernels.examples.gridbarrier:KERNEL",
    "ticketqueue": "kda_sim.kernels.examples.ticketqueue:KERNEL",
    "monomoe": "kda_sim.kernels.monomoe.spec:KERNEL",
    "splitk": "kda_sim.kernels.examples.splitk:KERNEL",
    "schedworker": "kda_sim.kernels.examples.schedworker:KERNEL",
}
REQUIRED: tuple[str, ...] = (
    "name",
    "config_type",
    "roles",
    "stages",
    "cost_keys",
    "regions",
    "build",
    "resources",
    "validate",
    "add_flags",
    "config_from_args",
    "config_to_dict",
    "config_from_dict",
    "default_config",
    "label",
)

_loaded: dict[str, Any] = {}
_by_config: dict[type, Any] = {}


def _check(spec: Any, where: str) -> Any:
    missing = [a for a in REQUIRED if not hasattr(spec, a)]
    if missing:
        raise InvalidInput(f"the kernel lacks {missing}", what="kernel", where=where)
    if not isinstance(spec.name, str) or not spec.name:
        raise InvalidInput("the kernel's name must be a non-empty string", where=where)
    if getattr(spec.config_type, "__hash__", None) is None:
        raise InvalidInput(
            "the configuration type must be hashable (a frozen dataclass): launches are cached",
            what="kernel",
            where=where,
        )
    return spec


def register(spec: Any, where: str = "") -> Any:
    """Make ``spec`` known by its name and its configuration type."""
    _check(spec, where or repr(spec))
    _loaded[spec.name] = spec
    _by_config[spec.config_type] = spec
    return spec


def _entry_points() -> dict[str, Any]:
    return {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)}


def names() -> list[str]:
    """Every kernel a name finds: built-in, then installed, then registered here."""
    return list(dict.fromkeys([*BUILTIN, *_entry_points(), *_loaded]))


def get(name: str) -> Any:
    """The kernel named ``name`` (built-in, installed or registered) or at the path
    ``name`` (a ``.py`` file defining ``KERNEL``)."""
    hit = _loaded.get(name)
    if hit is not None:
        return hit
    if name in BUILTIN:
        module, attr = BUILTIN[name].split(":")
        return register(getattr(importlib.import_module(module), attr), BUILTIN[name])
    eps = _entry_points()
    if name in eps:
        try:
            spec = eps[name].load()
        except Exception as e:  # an installed package's error, said as the user's input
            raise InvalidInput(
                f"entry point {eps[name].value}: {type(e).__name__}: {e}", what="kernel"
            ) from e
        return register(spec, f"entry point {eps[name].value}")
    if name.endswith(".py") or "/" in name:
        return load_kernel(name)
    raise InvalidInput(
        f"no kernel {name!r} (known: {', '.join(names())}; or a path to a .py file)",
        what="kernel",
    )


def spec_for(cfg: Any) -> Any:
    """The kernel whose configuration type ``cfg`` has."""
    hit = _by_config.get(type(cfg))
    if hit is None:
        for name in BUILTIN:
            get(name)
        hit = _by_config.get(type(cfg))
    if hit is None:
        raise InvalidInput(
            f"{type(cfg).__name__} is no registered kernel's configuration", what="kernel"
        )
    return hit


def _where_in(path: Path, tb: Any) -> str:
    """``file:line`` of the deepest frame in ``path`` (the file, if none is)."""
    line = None
    for frame in traceback.extract_tb(tb):
        if Path(frame.filename).resolve() == path:
            line = frame.lineno
    return f"{path}:{line}" if line is not None else str(path)


def load_kernel(path: str | Path) -> Any:
    """Import the file ``path`` and register its ``KERNEL``."""
    p = Path(path).expanduser().resolve()
    if not p.is_file():
        raise InvalidInput("no such kernel file", what="kernel", where=str(path))
    digest = hashlib.sha1(str(p).encode()).hexdigest()[:12]
    mod_name = f"kda_sim_user_kernel_{digest}"
    spec = importlib.util.spec_from_file_location(mod_name, p)
    if spec is None or spec.loader is None:
        raise InvalidInput("not a Python file", what="kernel", where=str(p))
    module = importlib.util.module_from_spec(spec)
    sys.modules[mod_name] = module
    try:
        spec.loader.exec_module(module)
    except SyntaxError as e:
        sys.modules.pop(mod_name, None)
        raise InvalidInput(f"SyntaxError: {e.msg}", what="kernel", where=f"{p}:{e.lineno}") from e
    except KdaSimError:
        sys.modules.pop(mod_name, None)
        raise
    except Exception as e:
        sys.modules.pop(mod_name, None)
        where = _where_in(p, e.__traceback__)
        raise InvalidInput(f"{type(e).__name__}: {e}", what="kernel", where=where) from e
    kernel = getattr(module, "KERNEL", None)
    if kernel is None:
        raise InvalidInput("defines no KERNEL", what="kernel", where=str(p))
    return register(_Guarded(kernel, p), str(p))


class _Guarded:
    """A kernel from a file, whose errors in its own code are said as the user's input
    (``InvalidInput`` with its file and line), never a traceback."""

    _GUARDED = frozenset({"build", "regions", "resources", "validate", "config_from_args"})

    def __init__(self, kernel: Any, path: Path) -> None:
        _check(kernel, str(path))
        self._kernel = kernel
        self._path = path

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._kernel, name)
        if name not in self._GUARDED or not callable(value):
            return value
        path = self._path

        def guarded(*args: Any, **kwargs: Any) -> Any:
            try:
                return value(*args, **kwargs)
            except KdaSimError as e:
                if isinstance(e, InvalidInput) and not e.where:
                    where = _where_in(path, e.__traceback__)
                    raise InvalidInput(str(e), what=e.what, where=where) from e
                raise
            except Exception as e:
                where = _where_in(path, e.__traceback__)
                raise InvalidInput(
                    f"{name}: {type(e).__name__}: {e}", what="kernel", where=where
                ) from e

        return guarded
