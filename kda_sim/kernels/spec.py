"""The one interface a kernel implements for the generic layers.

A kernel is an object with the attributes of :class:`KernelSpec`: its name, its
configuration type (validated; its command-line flags), its regions and their sizes,
``build(cfg) -> Launch``, its roles and stages in display order with their colours, its
cost keys and its resources for residency. Optional hooks are attributes the generic
layers look up with :func:`hook` (absent: the layer does without): ``check_fits(cfg,
gpu)`` (a limit beyond residency, raising ``InvalidInput``), ``costs_dir`` (the folder
of its costs on each GPU: ``<gpu>.json``, and ``<gpu>.fitted.json`` a fit wrote;
:mod:`kda_sim.machine.costs`), ``default_costs`` ({cost key: (base, per unit) ns} for a
GPU it has no costs file for), ``tag_model`` (a :class:`TagModel`: the tag check,
``check --tags``), ``mutations``, ``trace_decoders``, ``isa_presets``, and the checks'
kernel knowledge:

- ``task_rotation(cfg)``: ``(cfg0, shift)`` when ``cfg``'s launch is ``cfg0``'s with
  every task segment (a CTA's ops from its first ``Begin`` with a task) moved ``shift``
  CTAs on, and every task polls before it puts: the wait-for structure is relabelled,
  not rebuilt; None otherwise;
- ``placement_fixes(cfg, slots)``: other placements a deadlock fix tries, in order, as
  ``(cfg', knob, setting)``, e.g. ``(cfg', "kda0", "kda0 = 56")``;
- ``accepted_waits``: the :class:`AcceptedWait` cases the role rule reports instead of
  failing;
- ``name_flagged(region, index, producer)``: a :class:`FlaggedData`, the visibility
  check's words for flagged data;
- ``load_switches``: {load name: the configuration switch that issues it early}, named
  by the late-load advice;
- ``sweep_axes``: the two configuration fields the safety map (``kda-sim sweep``) spans;
- ``real_backends``: a :class:`RealBackends`, what ``kda-sim kernel run`` offers for the
  kernel the ``kda_sim.backends`` entry points run (its fault names, its schedule flags);
- ``config_form``: a :class:`ConfigForm`, how the app's what-if view shows the
  configuration (its fields' labels and bounds, the on/off fields it combines);
- ``name_cell(cfg, region, index)``: the data-flow checks' words for one cell
  (``REGION[terms]``; without it ``REGION[index]``);
- ``expected_writers(cfg, region, indices)``: the unit (the CTA, or
  :func:`kda_sim.protocol.access.item_unit` of a ticket item) whose put the kernel's
  layout gives each cell, ``NO_UNIT`` where none: a put that lands on another unit's
  cells is found, and a missing put names who should have made it;
- ``work_items(cfg)``: {stage: the task ids its ``Begin`` must carry exactly once a
  launch}, over programs and ticket items alike.
- ``place_takes(cfg, takes)``: ``cfg`` with its ticket items placed where a run took
  them (``takes``: CTA -> its tickets in order, :func:`kda_sim.protocol.tickets.takes_of`),
  so that a traced ticket launch is compared on static programs;
- ``launch_size(cfg)``: ``(ops, fields)``, an upper bound on the ops of ``cfg``'s launch,
  summed over its CTAs, and the configuration fields that scale it, computed without
  building it: a launch past :data:`MAX_LAUNCH_OPS` is refused before it is built
  (:func:`check_launch_size`; :func:`launch_terms` sums a launch's parts and names the
  largest's fields). Without it the bound applies to the launch's cells (the sum of its
  regions, as cheap to know), naming the largest region.
- ``check_trace(cfg, timeline, programs, where)``: the kernel's own evidence that a trace
  is a run of ``cfg`` beyond its CTAs, stages and poll counts
  (:mod:`kda_sim.importers.claimed_launch`), raising ``TraceFormatError`` naming the
  field (K1: ``nb`` from its PART and WGT polls' cell counts);
- ``cost_build(cfg)``: the name of the build whose stage costs ``cfg``'s launch runs
  ("" the kernel's usual build): a build with its own code (K1's kda_tickets loop) has
  its own fitted overlay, ``<gpu>.<build>.fitted.json`` (:mod:`kda_sim.machine.costs`).

:class:`Kernel` implements it for a kernel whose configuration is a dataclass: its
flags are the dataclass's fields (``--name value``).
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from kda_sim.errors import InvalidInput
from kda_sim.machine.profile import GpuProfile, KernelResources
from kda_sim.protocol.program import Launch

HOOKS: tuple[str, ...] = (
    "check_fits",
    "costs_dir",
    "default_costs",
    "tag_model",
    "mutations",
    "trace_decoders",
    "isa_presets",
    "task_rotation",
    "placement_fixes",
    "accepted_waits",
    "name_flagged",
    "load_switches",
    "sweep_axes",
    "real_backends",
    "config_form",
    "name_cell",
    "expected_writers",
    "work_items",
    "place_takes",
    "cost_build",
    "launch_size",
    "check_trace",
)
# the most ops a launch may hold, over its CTAs (and, for a kernel without a
# ``launch_size`` hook, the most cells its regions may hold): K1's default launch holds
# about 13,000 ops, the bug corpus's at most about 5,000; building 10^6 ops takes seconds
# and hundreds of MB, 10^7 half a minute and GBs
MAX_LAUNCH_OPS = 1_000_000


@dataclass(frozen=True)
class AcceptedWait:
    """A poll issued with weight loads in flight that the kernel's design accepts: the
    role rule reports these (a note with their cost) instead of failing them."""

    accepts: Callable[[str, Any], bool]  # (the CTA's role, its PollRecord) -> accepted
    what: str  # the case, as the note says it: "gemv CTAs poll XRDY (load_x) with ..."
    producers: str  # who would set the poll's time without the weights: "the attn CTAs"


@dataclass(frozen=True)
class FlaggedData:
    """How a kernel names one unit of flagged data read before it landed (the
    visibility check's words)."""

    data: str  # what was read: "the x rows of slice 3 (X[3], flagged by ...)"
    flag: str  # the flag pair that let it be read: "XRDY[3]"
    writer: str  # the CTA whose stores had not landed: "attn CTA 3"
    unit: str = "flagged cells"  # what distinct ones are counted as: "slices"
    fix: str = (
        "drain the CTA's stores before the flag (s_waitcnt vmcnt(0), barrier, then the "
        "flag's put: Publish(drain=True)) and keep the data's stores before the publish"
    )


@dataclass(frozen=True)
class RealBackends:
    """What ``kda-sim kernel run`` offers for a kernel its registered backends run."""

    faults: tuple[str, ...]  # the faults a backend can plant (``--inject``)
    schedules: Mapping[str, str]  # boolean configuration switches, off unless given: help


@dataclass(frozen=True)
class FormField:
    """One configuration field as a form shows it."""

    name: str  # the field, as ``config_to_dict`` names it
    label: str
    lo: int | None = None  # an integer field's bounds (both or neither)
    hi: int | None = None
    help: str = ""
    choices: tuple[str, str] | None = None  # an on/off field as two words: (off, on)


@dataclass(frozen=True)
class ConfigForm:
    """How the what-if view shows a kernel's configuration (without one: every field by
    its type, named as it is, and every on/off field combined)."""

    fields: tuple[FormField, ...]  # in display order; the fields left out take their defaults
    switches: tuple[str, ...]  # the on/off fields whose every combination it tables
    switches_title: str  # the table's checkbox: "Every protocol variant at this shape"
    switches_column: str = "on"  # the column naming the fields a row turns on
    none_on: str = "none"  # that column where none is on
    switch_help: Mapping[str, str] = field(default_factory=dict)  # said under the table
    file_label: Callable[[Any], str] | None = None  # a configuration in a file name (label)


class TagModel(Protocol):
    """A kernel's tag check (its ``tag_model`` hook; ``kda-sim check --tags`` and the
    app's Tags view): the tag its launches carry and which scratch pairs each launch of
    a step writes and polls. A step is launches in slot order sharing one scratch buffer;
    a step *shape* is what the kernel's configuration says of a launch's size (K1: its
    ``(R, L)``), ``nb`` the parameter a slot may vary (K1: its AttnRes blocks)."""

    schemes: tuple[str, ...]  # the tag schemes it compares (kda_sim.checks.tags.schemes)
    # the shipped tag: launch slots a step, epoch bits it keeps, the integer it is made in
    tag_slots: int
    epoch_bits: int
    tag_bits: int

    def parse_shapes(self, text: str) -> tuple[tuple[int, ...], ...]:
        """``--shapes`` text as step shapes, or ``InvalidInput`` naming the bad one."""

    def shape_of(self, cfg: Any) -> tuple[int, ...]:
        """The step shape of a configuration (``--shapes`` by default)."""

    def nb_of(self, cfg: Any) -> int:
        """The slot parameter of a configuration (every slot's by default)."""

    def step_model(
        self,
        shapes: tuple[tuple[int, ...], ...],
        nb_per_slot: tuple[int, ...],
        layout: Any,
        cfg: Any,
    ) -> Any:
        """The :class:`kda_sim.checks.tags.footprint.StepModel` of steps of ``shapes``
        whose slot s has ``nb_per_slot[s]``, the rest of each launch's configuration
        ``cfg``'s, its scratch laid out as ``layout`` (a ``Layout``); ``InvalidInput``
        naming a shape and nb that make no valid launch."""


@runtime_checkable
class KernelSpec(Protocol):
    name: str
    description: str
    config_type: type
    roles: tuple[str, ...]  # display order
    stages: tuple[str, ...]  # display order
    role_colors: Mapping[str, str]
    stage_colors: Mapping[str, str]
    cost_keys: tuple[str, ...]  # every Compute's cost key, as its costs files hold them

    def default_config(self) -> Any: ...

    def validate(self, cfg: Any) -> Any:
        """``cfg``, or ``InvalidInput`` naming the first constraint it breaks."""

    def add_flags(self, parser: argparse.ArgumentParser | argparse._ArgumentGroup) -> None: ...

    def config_from_args(self, args: argparse.Namespace) -> Any: ...

    def config_to_dict(self, cfg: Any) -> dict[str, Any]: ...

    def label(self, cfg: Any) -> str:
        """The configuration in one line, as reports name it."""

    def config_from_dict(self, d: Mapping[str, Any]) -> Any: ...

    def regions(self, cfg: Any) -> Mapping[str, int]:
        """Every region's cells, by name, in the order that gives their ids."""

    def build(self, cfg: Any) -> Launch: ...

    def resources(self, cfg: Any, gpu: GpuProfile) -> KernelResources:
        """Threads, registers a thread and LDS bytes a CTA of this launch takes on ``gpu``."""


def hook(spec: Any, name: str) -> Any:
    """An optional hook of ``spec`` (one of :data:`HOOKS`), None when it has none."""
    if name not in HOOKS:
        raise ValueError(f"not a kernel hook: {name}")
    return getattr(spec, name, None)


def require_hook(spec: Any, name: str, what: str) -> Any:
    """The hook ``name`` of ``spec``, or ``InvalidInput`` naming the kernel and the hook
    (``what``: what the caller needs it for)."""
    value = hook(spec, name)
    if value is None:
        raise InvalidInput(f"{spec.name} defines no {name} ({what})", what="kernel")
    return value


def check_launch_size(spec: Any, cfg: Any) -> None:
    """Refuse ``cfg`` when its launch would pass :data:`MAX_LAUNCH_OPS`, before it is
    built: by the kernel's ``launch_size`` hook (naming the fields that scale it), else by
    its regions' cells (naming the largest region)."""
    size = hook(spec, "launch_size")
    if size is not None:
        ops, fields = size(cfg)
        if ops > MAX_LAUNCH_OPS:
            named = ", ".join(f"{f} = {_said(getattr(cfg, f, '?'))}" for f in fields)
            raise InvalidInput(
                f"{named}: a launch of about {ops:,} ops, past the bound of "
                f"{MAX_LAUNCH_OPS:,} (kda_sim.kernels.spec.MAX_LAUNCH_OPS)",
                what=", ".join(fields),
            )
        return
    sizes = spec.regions(cfg)
    cells = sum(n for n in sizes.values() if isinstance(n, int))
    if cells > MAX_LAUNCH_OPS:
        big = max(sizes, key=lambda k: sizes[k] if isinstance(sizes[k], int) else 0)
        raise InvalidInput(
            f"a launch of {cells:,} cells (region {big}: {sizes[big]:,}), past the bound "
            f"of {MAX_LAUNCH_OPS:,} (kda_sim.kernels.spec.MAX_LAUNCH_OPS)",
            what=f"region {big}",
        )


def launch_terms(terms: Mapping[tuple[str, ...], int]) -> tuple[int, tuple[str, ...]]:
    """A ``launch_size`` hook's answer from its terms ({the fields that scale a part of
    the launch: that part's ops}): their sum and the fields of the largest, the ones to
    shrink."""
    fields = max(terms, key=lambda k: terms[k])
    return sum(terms.values()), fields


def _said(value: Any) -> str:
    """A configuration field's value as a refusal names it: a sequence by its length
    (a ticket launch's ``placed`` takes), anything else as it is."""
    if isinstance(value, tuple | list):
        return f"{len(value):,} entries"
    return str(value)


def _parse_bool(text: str) -> bool:
    low = text.lower()
    if low in ("1", "true", "yes", "on"):
        return True
    if low in ("0", "false", "no", "off"):
        return False
    raise argparse.ArgumentTypeError(f"{text!r}: true or false")


@dataclass(frozen=True)
class Kernel:
    """A kernel from its parts; ``config_type`` a dataclass whose fields all have
    defaults and that may define ``validate()`` (returning itself)."""

    name: str
    config_type: type
    build_fn: Callable[[Any], Launch]
    regions_fn: Callable[[Any], Mapping[str, int]]
    roles: tuple[str, ...]
    stages: tuple[str, ...]
    role_colors: Mapping[str, str] = field(default_factory=dict)
    stage_colors: Mapping[str, str] = field(default_factory=dict)
    cost_keys: tuple[str, ...] = ()
    default_costs: Mapping[str, tuple[float, float]] = field(default_factory=dict)
    costs_dir: str | Path | None = None  # <gpu>.json costs files; None: default_costs only
    threads: int = 256
    regs_per_thread: int = 32
    lds_bytes: int = 0
    # a CTA's footprint where it depends on the configuration (grids of one kernel that
    # differ, launched together); None: threads, regs_per_thread and lds_bytes above
    resources_fn: Callable[[Any], KernelResources] | None = None
    description: str = ""
    # the data-flow checks' optional hooks (see the module's docstring); None: without
    name_cell: Callable[[Any, str, int], str] | None = None
    expected_writers: Callable[[Any, str, Any], Any] | None = None
    work_items: Callable[[Any], Mapping[str, Any]] | None = None
    # (ops, fields) of a launch, without building it (see check_launch_size); None: cells
    launch_size: Callable[[Any], tuple[int, tuple[str, ...]]] | None = None

    def default_config(self) -> Any:
        return self.config_type()

    def validate(self, cfg: Any) -> Any:
        check = getattr(cfg, "validate", None)
        cfg = check() if check is not None else cfg
        check_launch_size(self, cfg)  # an unbounded launch is refused before it is built
        return cfg

    def _fields(self) -> tuple[dataclasses.Field, ...]:
        return dataclasses.fields(self.config_type)

    def add_flags(self, parser: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
        cfg = self.default_config()
        for f in self._fields():
            default = getattr(cfg, f.name)
            kind = _parse_bool if isinstance(default, bool) else type(default)
            parser.add_argument(
                f"--{f.name.replace('_', '-')}",
                dest=f"{self.name}_{f.name}",
                type=kind,
                default=default,
                help=f"{self.name}: {f.name} (default {default})",
            )

    def config_from_args(self, args: argparse.Namespace) -> Any:
        given = {f.name: getattr(args, f"{self.name}_{f.name}") for f in self._fields()}
        return self.validate(self.config_type(**given))

    def config_to_dict(self, cfg: Any) -> dict[str, Any]:
        return dataclasses.asdict(cfg)

    def label(self, cfg: Any) -> str:
        return " ".join([self.name, *(f"{k}={v}" for k, v in self.config_to_dict(cfg).items())])

    def config_from_dict(self, d: Mapping[str, Any]) -> Any:
        names = {f.name for f in self._fields()}
        return self.config_type(**{k: v for k, v in d.items() if k in names})

    def regions(self, cfg: Any) -> Mapping[str, int]:
        return self.regions_fn(cfg)

    def build(self, cfg: Any) -> Launch:
        return self.build_fn(self.validate(cfg))

    def resources(self, cfg: Any, gpu: GpuProfile) -> KernelResources:
        if self.resources_fn is not None:
            return self.resources_fn(cfg)
        return KernelResources(self.threads, self.regs_per_thread, self.lds_bytes)


def require_at_least(cfg: Any, *names: str, lo: int = 1) -> None:
    """A configuration's ``validate()`` helper: each named field at least ``lo``, else
    ``InvalidInput`` naming the field (``blocks = 0: at least 1``)."""
    for name in names:
        if getattr(cfg, name) < lo:
            raise InvalidInput(f"{name} = {getattr(cfg, name)}: at least {lo}", what=name)
