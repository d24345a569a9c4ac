"""Where kernels are found: the built-in ones, those of installed packages (the entry-point
group ``kda_sim.kernels``, each entry a kernel object) and a file given by path.

``get(name)`` takes a registered name or a path to a ``.py`` file that defines
``KERNEL``; ``spec_for(cfg)`` is the kernel whose configuration type ``cfg`` has. A file
that cannot be imported, or defines no usable ``KERNEL``, is an ``InvalidInput`` naming
the file and line, never a traceback; so is an exception its ``build`` or ``regions``
raises.
"""

from __future__ import annotations

import ast
import hashlib
import importlib
import importlib.util
import math
import sys
import traceback
from collections.abc import Mapping
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

from kda_sim.errors import InvalidInput, KdaSimError

ENTRY_POINT_GROUP = "kda_sim.kernels"
DEFAULT_KERNEL = "k1"  # the kernel a command, a view or a timeline means when none is named
# the bug corpus (kda_sim/kernels/bugs/, docs/bugs.md): each module's name is its kernel's
BUG_KERNELS: tuple[str, ...] = (
    "flashmoe_h20",
    "mirage_b200",
    "cuml_gridsync",
    "aiter_splitk",
    "deepgemm_gridid",
    "cub_gridbarrier",
    "punica_gridsync",
    "fuser_gridsync",
    "tilelang_gridsync",
    "aiter_flydsl_splitk",
)
# built-in kernels: name -> "module:attribute", imported when first asked for
BUILTIN: dict[str, str] = {
    "k1": "kda_sim.kernels.k1.spec:KERNEL",
    "pingpong": "kda_sim.kernels.examples.pingpong:KERNEL",
    "gridbarrier": "kda_sim.kernels.examples.gridbarrier:KERNEL",
    "ticketqueue": "kda_sim.kernels.examples.ticketqueue:KERNEL",
    "monomoe": "kda_sim.kernels.monomoe.spec:KERNEL",
    "splitk": "kda_sim.kernels.examples.splitk:KERNEL",
    "schedworker": "kda_sim.kernels.examples.schedworker:KERNEL",
    **{name: f"kda_sim.kernels.bugs.{name}:KERNEL" for name in BUG_KERNELS},
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
_files: dict[str, str] = {}  # a kernel loaded from a file: its name -> the file


def _names(value: Any, field: str, where: str) -> tuple[str, ...]:
    """``value`` as the tuple of distinct non-empty strings ``field`` must be."""
    if not isinstance(value, tuple):
        raise InvalidInput(
            f"{field} must be a tuple of strings, got {type(value).__name__}",
            what=field,
            where=where,
        )
    for i, v in enumerate(value):
        if not isinstance(v, str) or not v:
            raise InvalidInput(
                f"{field}[{i}] must be a non-empty string, got {v!r}", what=field, where=where
            )
    dup = sorted({v for v in value if value.count(v) > 1})
    if dup:
        raise InvalidInput(f"{field} names {dup} more than once", what=field, where=where)
    return value


def _colors(value: Any, field: str, among: tuple[str, ...], of: str, where: str) -> None:
    if not isinstance(value, Mapping):
        raise InvalidInput(
            f"{field} must be a mapping, got {type(value).__name__}", what=field, where=where
        )
    unknown = [k for k in value if k not in among]
    if unknown:
        raise InvalidInput(
            f"{field} keys {unknown!r} are not among the {of} {list(among)}",
            what=field,
            where=where,
        )
    for k, v in value.items():
        if not isinstance(v, str):
            raise InvalidInput(f"{field}[{k!r}] must be a colour string", what=field, where=where)


def check_regions(sizes: Any, where: str) -> Mapping[str, int]:
    """What ``regions(cfg)`` returns: region name -> an integer size >= 0."""
    if not isinstance(sizes, Mapping):
        raise InvalidInput(
            f"regions() must return a mapping, got {type(sizes).__name__}",
            what="regions",
            where=where,
        )
    for name, size in sizes.items():
        if not isinstance(name, str) or not name:
            raise InvalidInput(
                f"region name {name!r} must be a non-empty string", what="regions", where=where
            )
        if isinstance(size, bool) or not isinstance(size, int) or size < 0:
            raise InvalidInput(
                f"region {name!r} has size {size!r}: sizes are integers >= 0",
                what="regions",
                where=where,
            )
    return sizes


def _default_costs(value: Any, where: str) -> None:
    """``default_costs`` as a profile's ``costs`` must be (one schema: the profile's): a
    mapping of cost key -> (base, per-unit part) in ns, finite and in range."""
    from kda_sim.machine.profile import COSTS_MAP

    if value is None:
        return
    if not isinstance(value, Mapping):
        raise InvalidInput(
            f"default_costs must be a mapping, got {type(value).__name__}",
            what="default_costs",
            where=where,
        )
    as_json = {k: list(v) if isinstance(v, tuple | list) else v for k, v in value.items()}
    for k, v in as_json.items():
        parts = v if isinstance(v, list) else ()
        bad = not isinstance(k, str) or any(
            isinstance(x, float) and not math.isfinite(x) for x in parts
        )
        if bad:
            raise InvalidInput(
                f"default_costs[{k!r}] = {v!r}: a key string, finite numbers",
                what="default_costs",
                where=where,
            )
    # the fast test first: jsonschema is imported only to say why a hook is refused
    if COSTS_MAP.test(as_json):
        return
    err = next(iter(COSTS_MAP.validator.iter_errors(as_json)), None)
    if err is not None:
        at = "".join(f"[{p!r}]" for p in err.absolute_path)
        raise InvalidInput(f"default_costs{at}: {err.message}", what="default_costs", where=where)


def check_resources(res: Any, where: str) -> Any:
    """What ``resources(cfg, gpu)`` returns: threads and registers a thread in a profile's
    ranges (the profile schema's), LDS bytes None or an integer >= 0 in its range."""
    from kda_sim.machine.profile import PROFILE_SCHEMA

    bounds = PROFILE_SCHEMA["properties"]["kernel"]["properties"]
    for name in ("threads", "regs_per_thread", "lds_bytes"):
        v = getattr(res, name, None)
        b = bounds[name] if name != "lds_bytes" else bounds[name]["anyOf"][1]
        lo = 0 if name == "lds_bytes" else b["minimum"]
        if name == "lds_bytes" and v is None:
            continue
        if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= b["maximum"]:
            raise InvalidInput(
                f"resources(): {name} = {v!r}, not an integer in {lo}..{b['maximum']}",
                what=name,
                where=where,
            )
    return res


def _check(spec: Any, where: str) -> Any:
    missing = [a for a in REQUIRED if not hasattr(spec, a)]
    if missing:
        raise InvalidInput(f"the kernel lacks {missing}", what="kernel", where=where)
    if not isinstance(spec.name, str) or not spec.name:
        raise InvalidInput("the kernel's name must be a non-empty string", where=where)
    roles = _names(spec.roles, "roles", where)
    stages = _names(spec.stages, "stages", where)
    _colors(getattr(spec, "role_colors", {}), "role_colors", roles, "roles", where)
    _colors(getattr(spec, "stage_colors", {}), "stage_colors", stages, "stages", where)
    _names(spec.cost_keys, "cost_keys", where)
    _default_costs(getattr(spec, "default_costs", None), where)
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
    """Import the file ``path`` and register its ``KERNEL``. A built-in kernel's own
    module file gives that kernel (imported once, so one configuration type); another
    file may not take a built-in or installed kernel's name: everything that looks a
    timeline's kernel up by name would get the wrong one."""
    p = Path(path).expanduser().resolve()
    if not p.is_file():
        raise InvalidInput("no such kernel file", what="kernel", where=str(path))
    for name, target in BUILTIN.items():
        found = importlib.util.find_spec(target.split(":")[0])
        if found is not None and found.origin and Path(found.origin).resolve() == p:
            return get(name)
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
    where = _definition(p)
    name = getattr(kernel, "name", None)
    # another file of the same name replaces the one loaded before (the app's reloads)
    taken = isinstance(name, str) and (  # a name of another type: _check says so
        name in BUILTIN or name in _entry_points() or (name in _loaded and name not in _files)
    )
    if taken:
        raise InvalidInput(
            f"KERNEL's name {name!r} is a built-in or installed kernel's: give this one a "
            "name of its own",
            what="kernel",
            where=where,
        )
    guarded = _Guarded(kernel, p, where)
    # its regions at its default configuration, checked now rather than mid-simulation
    check_regions(guarded.regions(guarded.default_config()), where)
    _files[guarded.name] = str(p)
    return register(guarded, where)


def sources() -> tuple[tuple[Path, ...], tuple[str, ...]]:
    """Where this process's kernels beyond the built-in ones came from: the files
    :func:`load_kernel` read, and the modules of kernels registered by code (their
    configuration types' modules). A worker process (:mod:`kda_sim.parallel`) loads and
    imports them again, so that their names resolve and their configurations unpickle
    there."""
    builtin = {v.split(":")[0] for v in BUILTIN.values()}
    modules = {
        spec.config_type.__module__: None
        for spec in _loaded.values()
        if not isinstance(spec, _Guarded)
    }
    files = tuple(dict.fromkeys(Path(f) for f in _files.values()))
    return files, tuple(m for m in modules if m not in builtin and m != "__main__")


def _definition(path: Path) -> str:
    """``file:line`` of the last top-level assignment to ``KERNEL`` (the file, if the
    name is bound otherwise): where a fault in the kernel's fields is to be mended."""
    try:
        tree = ast.parse(path.read_bytes(), str(path))
    except (SyntaxError, ValueError, OSError):
        return str(path)
    line = None
    for node in tree.body:
        targets = (
            node.targets
            if isinstance(node, ast.Assign)
            else [node.target]
            if isinstance(node, ast.AnnAssign)
            else []
        )
        if any(isinstance(t, ast.Name) and t.id == "KERNEL" for t in targets):
            line = node.lineno
    return f"{path}:{line}" if line is not None else str(path)


class _Guarded:
    """A kernel from a file, whose errors in its own code are said as the user's input
    (``InvalidInput`` with its file and line), never a traceback."""

    _GUARDED = frozenset(
        {"build", "regions", "resources", "validate", "config_from_args", "default_config"}
    )

    def __init__(self, kernel: Any, path: Path, where: str) -> None:
        _check(kernel, where)
        self._kernel = kernel
        self._path = path
        self._where = where

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._kernel, name)
        if name not in self._GUARDED or not callable(value):
            return value
        path = self._path

        def guarded(*args: Any, **kwargs: Any) -> Any:
            try:
                out = value(*args, **kwargs)
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
            if name == "regions":
                check_regions(out, self._where)
            elif name == "resources":
                check_resources(out, self._where)
            return out

        return guarded
