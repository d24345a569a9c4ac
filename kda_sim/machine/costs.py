"""A kernel's costs on a GPU, kept with the kernel, and merged onto a GPU profile.

A GPU profile (``profiles/<gpu>.json``) holds the machine; a kernel's stage costs live in
its own folder (its ``costs_dir`` hook; K1's is ``kda_sim/kernels/k1/costs/``):

* ``<gpu>.json``: the kernel's stock costs on that GPU;
* ``<gpu>.fitted.json``: an overlay ``kda-sim calibrate`` wrote: the fitted costs, the few
  GPU parameters the fit moved (``overrides``: latencies, bandwidths, the measured build's
  resources) and its provenance.

:func:`profile_for` merges them: the fitted overlay where one exists for the GPU, else
the stock costs, else the kernel's ``default_costs`` hook, and says which it used, in
words (``GpuProfile.costs_from``, from the file's ``provenance`` and its ``sources``
entry ``build``; the simulator copies it into the timeline's ``meta.extra['costs']``).
A bundled GPU's name with a kernel means that: ``h200`` runs K1's fitted costs. The name
``<gpu>-stock`` (``h200-stock``) keeps the stock costs reachable where a kernel has both;
``<gpu>-<kernel>`` (``h200-k1``) is a kernel's fitted overlay on the GPU, as one name.
"""

from __future__ import annotations

import os
from dataclasses import replace
from importlib import resources
from pathlib import Path
from typing import Any

from kda_sim.errors import InvalidInput
from kda_sim.jsoncheck import KERNEL_NAME, Schema, json_path
from kda_sim.machine import profile as gp
from kda_sim.machine.profile import GpuProfile

FITTED_SUFFIX = ".fitted.json"
# ``<gpu>-stock``: a kernel's stock costs on a GPU where it also has fitted ones
STOCK_NAME_SUFFIX = "-stock"
# the ``sources`` entry of a costs file that says, in words, which build its costs model
# (``costs_from`` quotes it); a fit never carries its start's over (kda-sim calibrate)
BUILD_SOURCE = "build"
# what a costs file sets in the profile as it is
COST_FIELDS: tuple[str, ...] = (
    "costs",
    "cost_above",
    "unit_shared",
    "unit_share",
    "unit_share_from",
    "unit_share_skew",
    "unit_share_skew_from",
    "unit_share_first_task",
    "cost_growth",
    "cta_spread",
    "compute_front",
    "compute_front_from",
)
STOCK_SUFFIX = ".json"
# the GPU parameters an overlay may set: what a fit moves and what the measured build
# fixes (its resources, its x rows not staged, its weights streamed); never the machine's
# units, memory sizes or memory model
OVERRIDABLE: tuple[str, ...] = (
    "latency_ns",
    "hbm_bytes_per_ns",
    "unit_bytes_per_ns",
    "kernel",
    "x_lds_budget",
    "streamed_weights",
)
_P = gp.PROFILE_SCHEMA["properties"]
COSTS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["kernel", "gpu", "costs"],
    "additionalProperties": False,
    "properties": {
        "kernel": KERNEL_NAME,
        # a bundled GPU's name, or a GPU profile .json (relative to this file's folder)
        "gpu": gp._STR,
        "costs": _P["costs"],
        "cost_above": _P["cost_above"],
        "unit_shared": _P["unit_shared"],
        "unit_share": _P["unit_share"],
        "unit_share_from": _P["unit_share_from"],
        "unit_share_skew": _P["unit_share_skew"],
        "unit_share_skew_from": _P["unit_share_skew_from"],
        "unit_share_first_task": _P["unit_share_first_task"],
        "cost_growth": _P["cost_growth"],
        "cta_spread": _P["cta_spread"],
        "compute_front": _P["compute_front"],
        "compute_front_from": _P["compute_front_from"],
        "overrides": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "latency_ns": {
                    "type": "object",
                    "additionalProperties": False,
                    "properties": {
                        **{n: gp._NS for n in (*gp.LATENCIES, *gp.OPTIONAL_LATENCIES)},
                        "poll": _P["latency_ns"]["properties"]["poll"],
                    },
                },
                **{k: _P[k] for k in OVERRIDABLE if k != "latency_ns"},
                "kernel": {**_P["kernel"], "additionalProperties": False},
            },
        },
        "provenance": {
            "type": "object",
            "required": ["by", "date"],
            "additionalProperties": False,
            "properties": {"by": gp._STR, "date": gp._STR, "detail": gp._STR},
        },
        "sources": _P["sources"],
    },
}
_SCHEMA = Schema(COSTS_SCHEMA)


def validate_costs_dict(d: Any, where: str, spec: Any | None = None) -> None:
    """Refuse a costs or overlay file that breaks :data:`COSTS_SCHEMA` (NaN, a value out of
    its physical range, an unknown field) or, given the kernel ``spec``, one whose cost
    keys (or ``cta_spread``'s stage kinds) are not the kernel's: the message names the
    file and the key."""
    if not isinstance(d, dict):
        raise InvalidInput("a costs file is a JSON object", where=where)
    gp._refuse_non_finite(d, where)
    gp.refuse_one_spread(d, where)
    err = _SCHEMA.first_error(d)
    if err is not None:
        field_ = json_path(err.absolute_path)
        raise InvalidInput(f"{field_}: {err.message}", what=field_, where=where)
    if spec is None:
        return
    if d["kernel"] != spec.name:
        raise InvalidInput(
            f"kernel: the file is {d['kernel']!r}'s costs, not {spec.name!r}'s",
            what="kernel",
            where=where,
        )
    keys = tuple(spec.cost_keys)
    for k in d["costs"]:
        if k not in keys:
            raise InvalidInput(
                f"costs.{k}: not a cost key of {spec.name} ({', '.join(keys)})",
                what=f"costs.{k}",
                where=where,
            )
    for k in keys:
        if k not in d["costs"]:
            raise InvalidInput(
                f"costs.{k}: missing ({spec.name} computes it)", what=f"costs.{k}", where=where
            )
    for part in (
        "cost_above",
        "unit_shared",
        "unit_share_first_task",
        "cost_growth",
        "compute_front",
        "compute_front_from",
    ):
        for k in d.get(part, ()):
            if k not in keys:
                raise InvalidInput(
                    f"{part}.{k}: not a cost key of {spec.name}", what=f"{part}.{k}", where=where
                )
    stages = tuple(spec.stages)
    for k in d.get("cta_spread", ()):  # a stage kind's, not a cost key's
        if k not in stages:
            raise InvalidInput(
                f"cta_spread.{k}: not a stage kind of {spec.name} ({', '.join(stages)})",
                what=f"cta_spread.{k}",
                where=where,
            )


def _kernel(kernel: str | Any) -> Any:
    from kda_sim.kernels.registry import get  # the registry imports kernels, which import us

    return get(kernel) if isinstance(kernel, str) else kernel


def costs_dir(spec: Any) -> Any:
    """The kernel's costs folder (a path or an importlib resource), None if it has none."""
    from kda_sim.kernels.spec import hook

    return hook(spec, "costs_dir")


def _costs_file(spec: Any, gpu: str, suffix: str) -> Any:
    folder = costs_dir(spec)
    if folder is None or not gpu or "/" in gpu or gpu.endswith(".json"):
        return None
    if isinstance(folder, str | Path):
        folder = Path(folder)
    elif not hasattr(folder, "joinpath"):
        raise InvalidInput(
            f"costs_dir must be a folder's path, not {type(folder).__name__}",
            what="costs_dir",
            where=spec.name,
        )
    f = folder / f"{gpu}{suffix}"
    return f if f.is_file() else None


def read_costs(f: Any, where: str, spec: Any | None = None, gpu: str = "") -> dict[str, Any]:
    """A costs or overlay file's contents, checked (see :func:`validate_costs_dict`);
    with ``gpu``, the GPU its name says it is for must be the one it names."""
    if isinstance(f, Path):  # a file on disk (a user's): refused over --max-input-mb unread
        from kda_sim.importers.caps import read_capped  # importers import the machine

        raw = read_capped(f)
    else:  # a resource inside the package (a zip)
        try:
            raw = f.read_bytes()
        except OSError as e:
            raise InvalidInput(f"cannot read costs file: {e}", where=where) from e
    d = gp.parse_profile_json(raw, where)
    validate_costs_dict(d, where, spec)
    if gpu and d["gpu"] != gpu:
        raise InvalidInput(
            f"gpu: {d['gpu']!r}, in the file kept for {gpu!r}", what="gpu", where=where
        )
    return d


def statement(d: dict[str, Any], fitted: bool, where: str = "", build: str = "") -> str:
    """What :attr:`GpuProfile.costs_from` says of a costs file, in words: ``k1 costs
    fitted on h200 by kda-sim calibrate (2026-12-04 22:24 UTC): <build>``, ``k1 stock
    costs for h200: <build>`` or, a build's own overlay, ``k1 (kda_tickets build) costs
    fitted on h200 ...``, the build quoted from the file's ``sources``."""
    k, g = d["kernel"], d["gpu"]
    if build:
        k = f"{k} ({build} build)"
    prov = d.get("provenance")
    if fitted:
        text = f"{k} costs fitted on {g}"
        if prov:
            text += f" by {prov['by']} ({prov['date']})"
    else:
        text = f"{k} stock costs for {g}"
    said = d.get("sources", {}).get(BUILD_SOURCE)
    if said:
        text += f": {said}"
    return text + (f"; from {where}" if where else "")


def apply_costs(
    gpu: GpuProfile, d: dict[str, Any], where: str, costs_from: str, name: str | None = None
) -> GpuProfile:
    """``gpu`` with the costs file ``d`` merged on: its costs replace the profile's, its
    ``overrides`` set those GPU parameters; checked as a profile file is."""
    p = gpu.to_dict()
    for k in COST_FIELDS:
        if k in d:
            p[k] = d[k]
    for k, v in d.get("overrides", {}).items():
        p[k] = {**p[k], **v} if k == "latency_ns" else v
    p["name"] = name or gpu.name
    src = {**p.get("sources", {}), **d.get("sources", {})}
    if d.get("provenance", {}).get("detail"):
        src["calibration"] = d["provenance"]["detail"]
    p["sources"] = src
    prof = gp.profile_from_dict(p, where)
    return replace(prof, gpu=gpu.gpu, costs_from=costs_from)


def _default(gpu: GpuProfile, spec: Any, missing: list[str]) -> GpuProfile:
    from kda_sim.kernels.spec import hook

    defaults = hook(spec, "default_costs") or {}
    lacking = [k for k in missing if k not in defaults]
    if lacking:
        raise InvalidInput(
            f"no costs of {spec.name} for GPU {gpu.gpu or gpu.name!r} (profile name "
            f"{gpu.name!r}): "
            f"{', '.join(lacking)} missing (the kernel has no costs file for it and its "
            f"default_costs lack them)",
            what=f"costs.{lacking[0]}",
            where=gpu.name,
        )
    got = {k: (float(defaults[k][0]), float(defaults[k][1])) for k in missing}
    costs = {**gpu.costs, **got}
    said = f"{spec.name} default_costs (no {spec.name} costs for {gpu.gpu or gpu.name})"
    return replace(gpu, costs=costs, costs_from=said)


def fitted_file(spec: Any, gpu: str, build: str = "") -> Any:
    """The kernel's fitted overlay for the bundled GPU ``gpu``, or None; with ``build``
    (a build of the kernel with its own code, its ``cost_build`` hook's name), that
    build's: ``<gpu>.<build>.fitted.json``."""
    if build and not build.replace("_", "").isalnum():
        raise InvalidInput(f"build {build!r}: letters, digits and _ only", what="build")
    return _costs_file(spec, gpu, f".{build}{FITTED_SUFFIX}" if build else FITTED_SUFFIX)


def builds_fitted(spec: Any, gpu: str) -> list[str]:
    """The builds of the kernel with a fitted overlay of their own for ``gpu``."""
    folder = costs_dir(spec)
    if folder is None:
        return []
    folder = Path(folder) if isinstance(folder, str) else folder
    out = []
    for f in folder.iterdir():
        name = f.name
        if name.startswith(f"{gpu}.") and name.endswith(FITTED_SUFFIX):
            build = name[len(gpu) + 1 : -len(FITTED_SUFFIX)]
            if build and "." not in build:
                out.append(build)
    return sorted(out)


def profile_for(
    gpu: str | GpuProfile, kernel: str | Any, *, fitted: bool = True, build: str = ""
) -> GpuProfile:
    """The GPU profile with the kernel's costs merged: its fitted overlay for that GPU
    (``build``'s, where given and one exists, else the kernel's) where one exists (and
    ``fitted``), else its stock costs, else its ``default_costs`` hook. ``costs_from`` on
    the result says which."""
    spec = _kernel(kernel)
    prof = gp.load_gpu(gpu) if isinstance(gpu, str) else gpu
    base = prof.gpu or prof.name
    f = (fitted_file(spec, base, build) if build else None) if fitted else None
    said = build if f is not None else ""
    if f is None and fitted:
        f = fitted_file(spec, base)
    if f is not None:
        where = str(f)
        d = read_costs(f, where, spec, base)
        return apply_costs(prof, d, where, statement(d, True, build=said))
    f = _costs_file(spec, base, STOCK_SUFFIX)
    if f is not None:
        where = str(f)
        d = read_costs(f, where, spec, base)
        return apply_costs(prof, d, where, statement(d, False))
    return _default(prof, spec, list(spec.cost_keys))


def with_kernel_costs(prof: GpuProfile, kernel: str | Any) -> GpuProfile:
    """``prof`` as it is when it holds every cost key of the kernel; a bundled GPU alone,
    as :func:`profile_for` gives it; else with the kernel's stock costs for its GPU (a
    profile file's: the bundled GPU its ``name`` says), or its ``default_costs``, where it
    has none."""
    spec = _kernel(kernel)
    from kda_sim.kernels.spec import hook

    # the keys it declares, and those its default_costs give (a kernel may declare none)
    keys = dict.fromkeys([*spec.cost_keys, *(hook(spec, "default_costs") or {})])
    missing = [k for k in keys if k not in prof.costs]
    if not missing:
        return prof
    # a bundled GPU as loaded (``load_gpu("h200")``) means what its name means: the
    # kernel's fitted overlay where it has one, as ``--gpu h200`` does
    if not prof.costs and prof.gpu in gp.gpu_names() and prof == gp.load_gpu(prof.gpu):
        return profile_for(prof, spec)
    # a profile file stands on the bundled GPU its name says ("h200"), if one does
    base = prof.gpu if prof.gpu in gp.gpu_names() else prof.name
    f = _costs_file(spec, base, STOCK_SUFFIX)
    if f is not None:
        where = str(f)
        d = read_costs(f, where, spec, base)
        costs = {
            **prof.costs,
            **{k: (float(d["costs"][k][0]), float(d["costs"][k][1])) for k in missing},
        }
        out = replace(prof, costs=costs, costs_from=statement(d, False))
    else:
        out = _default(prof, spec, missing)
    if prof.costs_from and len(missing) == len(keys):
        # another kernel's profile (``load_profile("h200")`` is K1's, with the latencies
        # and build its fit set): say so, not only the costs filled in
        out = replace(
            out, costs_from=f"{out.costs_from}; on {prof.name}, made for {prof.costs_from}"
        )
    return out


def load_overlay(path: Path, d: dict[str, Any]) -> GpuProfile:
    """An overlay file the user gave (``--profile fit.json``): its kernel's costs and
    overrides on the GPU it names (a bundled GPU, or a GPU profile file beside it)."""
    where = str(path)
    validate_costs_dict(d, where)
    try:
        spec = _kernel(d["kernel"])
    except InvalidInput as e:
        raise InvalidInput(f"kernel: {e}", what="kernel", where=where) from e
    validate_costs_dict(d, where, spec)
    base = d["gpu"]
    if base in gp.gpu_names():
        gpu = gp.load_gpu(base)
    else:
        target = (path.parent / base) if not Path(base).is_absolute() else Path(base)
        try:
            found = target.is_file()
        except OSError as e:  # a name too long, a symlink loop
            raise InvalidInput(f"gpu: {e.strerror or e}", what="gpu", where=where) from e
        if not found:
            raise InvalidInput(
                f"gpu: {base!r} is neither a bundled GPU ({', '.join(gp.gpu_names())}) nor a "
                f"profile file",
                what="gpu",
                where=where,
            )
        gpu = gp.load_profile(str(target), kernel=None)
    fitted = "overrides" in d or "provenance" in d
    name = f"{gpu.name}-{d['kernel']}-{'fitted' if fitted else 'costs'}"
    return apply_costs(gpu, d, where, statement(d, fitted, where), name=name)


def is_costs_dict(d: Any) -> bool:
    """A costs or overlay file's contents, not a GPU profile's (it names its GPU, and has
    no ``units``)."""
    return isinstance(d, dict) and "gpu" in d and "units" not in d


def aliases() -> dict[str, tuple[str, str, str]]:
    """``<gpu>-<kernel>`` -> (gpu, kernel, "") for every built-in kernel's fitted overlay
    on a bundled GPU, and ``<gpu>-<kernel>-<build>`` -> (gpu, kernel, build) for a build's
    own (``<gpu>.<build>.fitted.json``)."""
    from kda_sim.kernels.registry import BUILTIN, get

    out: dict[str, tuple[str, str, str]] = {}
    gpus = gp.gpu_names()
    for name in BUILTIN:
        spec = get(name)
        for g in gpus:
            if fitted_file(spec, g) is not None:
                out[f"{g}-{name}"] = (g, name, "")
            for build in builds_fitted(spec, g):
                out[f"{g}-{name}-{build}"] = (g, name, build)
    return out


def stock_file(spec: Any, gpu: str) -> Any:
    """The kernel's stock costs for the bundled GPU ``gpu``, or None."""
    return _costs_file(spec, gpu, STOCK_SUFFIX)


def stock_names(kernel: str | Any | None = None) -> list[str]:
    """``<gpu>-stock`` for every bundled GPU where ``kernel`` (None: any built-in kernel)
    has both stock and fitted costs: there the GPU's own name runs the fitted ones."""
    from kda_sim.kernels.registry import BUILTIN

    specs = [_kernel(n) for n in BUILTIN] if kernel is None else [_kernel(kernel)]
    gpus = gp.gpu_names()
    return sorted(
        {
            f"{g}{STOCK_NAME_SUFFIX}"
            for spec in specs
            for g in gpus
            if fitted_file(spec, g) is not None and stock_file(spec, g) is not None
        }
    )


def stock_gpu(name: str) -> str | None:
    """The bundled GPU a ``<gpu>-stock`` name stands on, None for another name."""
    base = name.removesuffix(STOCK_NAME_SUFFIX)
    return base if base != name and base in gp.gpu_names() else None


def stock_for(gpu: GpuProfile, kernel: str | Any) -> GpuProfile:
    """``gpu`` (named ``<gpu>-stock``) with the kernel's stock costs; refused where the
    kernel has no fitted costs for it (its GPU's own name runs the stock ones already) or
    no stock ones."""
    spec = _kernel(kernel)
    base = gpu.gpu
    f = stock_file(spec, base)
    if f is None or fitted_file(spec, base) is None:
        has = "no stock costs" if f is None else "no fitted costs"
        runs = profile_for(base, spec).costs_from if f is not None else ""
        raise InvalidInput(
            f"{spec.name} has {has} for {base}"
            + (f", so --gpu {base} runs its stock ones ({runs})" if runs else "")
            + f"; {spec.name}'s stock names: {', '.join(stock_names(spec)) or 'none'}",
            what="gpu",
            where=gpu.name,
        )
    where = str(f)
    d = read_costs(f, where, spec, base)
    return apply_costs(gpu, d, where, statement(d, False))


def files_stamp(name_or_path: str, kernel: str | Any) -> tuple[tuple[str, int, int], ...]:
    """(path, mtime ns, size) of every file the profile ``name_or_path`` with ``kernel``'s
    costs is read from (the GPU's, the kernel's stock and fitted costs for it; a profile
    file itself), a missing one as (path, 0, 0): a key that changes whenever what the
    name means may, without loading the profile (the app keys its memo of
    :meth:`GpuProfile.identity` on it)."""
    gpus = gp.gpu_names()
    gpu = stock_gpu(name_or_path) or next(
        (g for g in gpus if name_or_path == g or name_or_path.startswith(f"{g}-")), None
    )
    if gpu is None:
        paths: list[Any] = [Path(name_or_path)]
    else:
        plain = name_or_path == gpu or stock_gpu(name_or_path) is not None
        alias = None if plain else aliases().get(name_or_path)
        spec = _kernel(alias[1] if alias else kernel)
        folder = costs_dir(spec)
        folder = Path(folder) if isinstance(folder, str) else folder
        paths = [resources.files("kda_sim.machine").joinpath(f"profiles/{gpu}.json")]
        if folder is not None:
            paths += [folder / f"{gpu}{STOCK_SUFFIX}", folder / f"{gpu}{FITTED_SUFFIX}"]
    out = []
    for f in paths:
        try:
            st = os.stat(str(f))
            out.append((str(f), st.st_mtime_ns, st.st_size))
        except OSError:
            out.append((str(f), 0, 0))
    return tuple(out)
