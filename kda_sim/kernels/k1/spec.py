"""K1 as the generic layers see it: :data:`KERNEL`."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterator, Mapping
from dataclasses import replace
from importlib import resources
from typing import Any

from kda_sim.errors import InvalidInput
from kda_sim.kernels.k1.config import SCHEDULES, VARIANT_HELP, VARIANTS, LaunchConfig
from kda_sim.kernels.spec import (
    AcceptedWait,
    ConfigForm,
    FlaggedData,
    FormField,
    RealBackends,
    check_launch_size,
    launch_terms,
)
from kda_sim.machine.profile import GpuProfile, KernelResources
from kda_sim.protocol.program import Launch

# display order: the attn roles' stages, the gemv CTAs', then a kda task's
STAGES: tuple[str, ...] = (
    "slice",
    "gate",
    "mix",
    "load_x",
    "gemv0",
    "gemv1",
    "k.stage",
    "k.conv",
    "k.gates",
    "k.recur",
    "k.norm",
)
ROLES: tuple[str, ...] = ("attn", "gemv", "idle")
SHAPE_KEYS: tuple[str, ...] = ("R", "L")  # what a stamp tensor or ktrace file cannot tell
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
# K1's stage costs (a Compute's cost key), as its costs files (costs/<gpu>.json) hold them
COSTS: tuple[str, ...] = (
    "slice",
    "gate",
    "mix",
    "norm",
    "gemv",
    "k.stage",
    "k.conv",
    "k.gates",
    "k.recur",
    "k.norm",
)


def _file_label(cfg: LaunchConfig) -> str:
    gate = "gate_local" if cfg.gate_local else "gate stage"
    return f"R{cfg.R}-L{cfg.L}-nb{cfg.nb}-kda0{cfg.kda0}-{'-'.join((gate, *cfg.variants()))}"


# the what-if view's form: shape, kda0 and the protocol variants, named as the docs name
# them; the schedules and blocks take their defaults (the ticket what-if is its own table)
CONFIG_FORM = ConfigForm(
    fields=(
        FormField(
            "gate_local",
            "Gate variant",
            help=f"gate_local: {VARIANT_HELP['gate_local']}",
            choices=("gate stage", "gate_local"),
        ),
        FormField("kda0", "kda0", 0, 255),
        FormField("R", "R (requests)", 1, 16),
        FormField("L", "L (tokens a request)", 1, 8),
        FormField("nb", "nb (AttnRes blocks)", 1, 31),
        FormField("nw_first", "in_nw with the slice", help=f"nw_first: {VARIANT_HELP['nw_first']}"),
        FormField("onw_first", "on_w in k.stage", help=f"onw_first: {VARIANT_HELP['onw_first']}"),
    ),
    switches=VARIANTS,
    switches_title="Every protocol variant at this shape",
    switches_column="variants",
    none_on="none (the seed's protocol)",
    switch_help={name: VARIANT_HELP[name] for name in VARIANTS},
    file_label=_file_label,
)


class K1:
    name = "k1"
    description = "K1 kda_pre: the fused Kimi-K3 KDA layer (256 CTAs: attn, gemv, kda tasks)"
    config_type = LaunchConfig
    roles = ROLES
    stages = STAGES
    role_colors = ROLE_COLORS
    stage_colors = STAGE_COLORS
    cost_keys = COSTS
    # stock costs a GPU, and the overlay kda-sim calibrate fitted (h200.fitted.json)
    costs_dir = resources.files("kda_sim.kernels.k1").joinpath("costs")

    def default_config(self) -> LaunchConfig:
        return LaunchConfig(2, 2)

    def validate(self, cfg: LaunchConfig) -> LaunchConfig:
        cfg = cfg.validate()
        check_launch_size(self, cfg)  # a launch of 10^7 CTAs is refused before it is built
        return cfg

    def launch_size(self, cfg: LaunchConfig) -> tuple[int, tuple[str, ...]]:
        """The ops :func:`build` makes, without building: the attn CTAs' and the gemv
        CTAs' (unless their groups are ticket items) and every kda task's; a ticket
        launch's loop (one op a CTA) holds the gemv items and the tasks once; a launch
        with its items placed holds a take a ticket and the last taker's reset besides.
        Every CTA of a static launch is a program built, empty or not: one op each."""
        from kda_sim.kernels.k1.attn import attn_ops
        from kda_sim.kernels.k1.constants import N_GEMV, NA
        from kda_sim.kernels.k1.gemv import gemv_ops
        from kda_sim.kernels.k1.kda import KDA_TASK_OPS
        from kda_sim.kernels.k1.tickets import GEMV_ITEM_OPS, n_gemv_items

        work = attn_ops(cfg) + (0 if cfg.gemv_tickets else gemv_ops())
        if cfg.take_ahead:  # a take ahead in each role: the attn CTAs' and the gemv CTAs'
            work += NA + (0 if cfg.gemv_tickets else N_GEMV)
        work += KDA_TASK_OPS * cfg.n_tasks + GEMV_ITEM_OPS * n_gemv_items(cfg)
        takes = sum(len(t) for t in cfg.placed) + 1 if cfg.placed else 0
        return launch_terms({("R", "L"): work, ("blocks",): cfg.blocks, ("placed",): takes})

    def add_flags(self, parser: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
        parser.add_argument("--R", type=int, default=2, help="requests (default 2)")
        parser.add_argument("--L", type=int, default=2, help="tokens a request (default 2)")
        parser.add_argument("--nb", type=int, default=8, help="AttnRes blocks (default 8)")
        parser.add_argument("--kda0", type=int, default=0, help="CTA of kda task 0 (default 0)")
        for name in (*VARIANTS, *SCHEDULES):
            parser.add_argument(
                f"--{name.replace('_', '-')}", action="store_true", help=VARIANT_HELP[name]
            )
        parser.add_argument(
            "--ticket-unroll",
            type=int,
            default=0,
            metavar="N",
            help="with --kda-tickets: a CTA's first N items run unrolled copies of the kda "
            "task before the loop's own (the build that does not spill; default 0)",
        )
        parser.add_argument(
            "--take-ahead",
            action="store_true",
            help="with a ticket schedule: a CTA's first take is issued before its role's "
            "last hand-off and waited for after the role (the Triton build takes after it)",
        )

    def config_from_args(self, args: argparse.Namespace) -> LaunchConfig:
        variants = {name: getattr(args, name) for name in (*VARIANTS, *SCHEDULES)}
        unroll = getattr(args, "ticket_unroll", 0)
        ahead = bool(getattr(args, "take_ahead", False))
        return LaunchConfig(
            args.R, args.L, args.nb, args.kda0, **variants, ticket_unroll=unroll, take_ahead=ahead
        ).validate()

    def config_to_dict(self, cfg: LaunchConfig) -> dict[str, Any]:
        return cfg.to_dict()

    def label(self, cfg: LaunchConfig) -> str:
        return cfg.label()

    def config_from_dict(self, d: Mapping[str, Any]) -> LaunchConfig:
        return LaunchConfig.from_dict(dict(d))

    def regions(self, cfg: LaunchConfig) -> dict[str, int]:
        from kda_sim.kernels.k1.regions import regions

        return regions(cfg)

    def build(self, cfg: LaunchConfig) -> Launch:
        from kda_sim.kernels.k1.program import build_launch

        return build_launch(self.validate(cfg))

    def place_takes(self, cfg: LaunchConfig, takes: tuple[tuple[int, ...], ...]) -> LaunchConfig:
        """A ticket launch with its items where a run took them (LaunchConfig.placed)."""
        return replace(cfg, placed=tuple(takes)).validate()

    def cost_build(self, cfg: LaunchConfig) -> str:
        """A ticket schedule is its own build (a loop over one copy of the task code,
        compiled apart, and it spills), with its own costs; so is the loop whose items
        run unrolled copies of the task (``ticket_unroll``): the copies are the static
        placement's code, but the kernel around them spills and runs slower (measured on
        the H200, docs/whatif/ticket_k1.md), its own costs the static ones plus its code
        share (code_share.py). The variants are no build of their own."""
        if not cfg.tickets:
            return ""
        return f"{cfg.schedule()}_unrolled" if cfg.ticket_unroll else cfg.schedule()

    def resources(self, cfg: LaunchConfig, gpu: GpuProfile) -> KernelResources:
        """The build's threads and registers (the profile's, as the build on that GPU has
        them) and the LDS the shape takes."""
        from kda_sim.kernels.k1.resources import lds_bytes

        k = gpu.kernel
        return KernelResources(k.threads, k.regs_per_thread, lds_bytes(cfg, gpu))

    def check_fits(self, cfg: LaunchConfig, gpu: GpuProfile) -> None:
        from kda_sim.kernels.k1.resources import check_fits

        check_fits(cfg, gpu)

    def check_trace(self, cfg: LaunchConfig, tl: Any, programs: tuple, where: str) -> None:
        """A trace's header's nb against its PART and WGT polls (trace_evidence.py)."""
        from kda_sim.kernels.k1.trace_evidence import check_trace

        check_trace(cfg, tl, programs, where)

    # -- optional hooks: imported when asked for (the layers that hold them import K1) ----
    @property
    def mutations(self) -> dict[str, Any]:
        """The fault catalogue, by name (``kda-sim check --mutant``)."""
        from kda_sim.kernels.k1.mutations import BY_NAME

        return dict(BY_NAME)

    @property
    def tag_model(self) -> Any:
        """The tag check (``kda-sim check --tags``): the shipped tag, the step shapes
        ``R x L`` and each launch's footprint in the scratch."""
        from kda_sim.kernels.k1.tags import TAGS

        return TAGS

    @property
    def trace_decoders(self) -> dict[str, Any]:
        """Readers of the real K1's own trace formats, by kind: the twin's stamp tensor and
        FlyDSL's ktrace (``R``/``L`` given, they do not record the shape)."""
        from kda_sim.kernels.k1.ktrace import read_ktrace
        from kda_sim.kernels.k1.stamps import read_stamps

        return {"stamps": _shaped("stamps", read_stamps), "ktrace": _shaped("ktrace", read_ktrace)}

    @property
    def isa_presets(self) -> dict[str, Any]:
        """The ISA analyzer's presets for K1's builds (``kda-sim isa --preset``): by name,
        (argument classes by position, accepted poll labels, the configuration whose
        model's polls behind weights are accepted too, or None). The k1 preset takes the
        model's own answer at R = L = 1 (every role runs), not only its list."""
        from kda_sim.isa.presets import PRESETS

        out: dict[str, Any] = {name: (*p, None) for name, p in PRESETS.items()}
        out["k1"] = (*PRESETS["k1"], LaunchConfig(1, 1))
        return out

    @property
    def real_backends(self) -> RealBackends:
        """``kda-sim kernel run``'s faults (``--inject``) and schedule flags."""
        from kda_sim.kernels.k1.constants import FAULTS

        return RealBackends(FAULTS, {name: VARIANT_HELP[name] for name in SCHEDULES})

    # -- the checks' hooks ----------------------------------------------------------------
    def task_rotation(self, cfg: LaunchConfig) -> tuple[LaunchConfig, int] | None:
        """kda task i runs on CTA (i + kda0) mod blocks: a launch with kda0 = k is the
        kda0 = 0 launch with its task segments moved k CTAs on."""
        return None if cfg.kda0 == 0 else (replace(cfg, kda0=0), cfg.kda0)

    def placement_fixes(
        self, cfg: LaunchConfig, slots: int
    ) -> Iterator[tuple[LaunchConfig, str, str]]:
        """Other kda0s a deadlock fix tries: the first task just past the resident slots,
        past the gemv CTAs, past the attn CTAs, on the last CTAs, half way."""
        from kda_sim.kernels.k1.constants import GEMV0, N_GEMV, NA

        tried = {cfg.kda0}
        for k in (slots, GEMV0 + N_GEMV, NA, cfg.blocks - cfg.n_tasks, cfg.blocks // 2):
            k %= cfg.blocks
            if k not in tried:
                tried.add(k)
                yield replace(cfg, kda0=k), "kda0", f"kda0 = {k}"

    @property
    def accepted_waits(self) -> tuple[AcceptedWait, ...]:
        """The design: a gemv CTA polls XRDY with rg0's weights (one group) in flight."""
        from kda_sim.kernels.k1.gemv import GROUP_BYTES
        from kda_sim.kernels.k1.program import Role

        def gemv_xrdy(role: str, rec: Any) -> bool:
            return (
                role == Role.GEMV.value
                and rec.stage == "load_x"
                and rec.label == "XRDY"
                and (rec.behind_weight_bytes or 0) <= GROUP_BYTES
            )

        return (
            AcceptedWait(
                gemv_xrdy,
                "gemv CTAs poll XRDY (load_x) with their first group's weights in flight",
                "the attn CTAs",
            ),
        )

    def name_flagged(self, region: str | None, index: int, producer: int) -> FlaggedData:
        """K1's flagged data is X, one slice's x rows a cell, flagged by XRDY[slice] and
        written by the attn CTA of that slice (``region`` None: the cell is not known, the
        producer names the slice)."""
        sl = index if region is not None else producer
        return FlaggedData(
            f"the x rows of slice {sl} (X[{sl}], flagged by XRDY[{sl}] with this launch's tag)",
            f"XRDY[{sl}]",
            f"attn CTA {sl}",
            "slices",
            "drain the CTA's stores before the flag (s_waitcnt vmcnt(0), barrier, then "
            "the XRDY put: Publish(drain=True)) and keep the x stores before the publish",
        )

    # the what-if view's widgets and its variant table
    config_form: ConfigForm = CONFIG_FORM

    def name_cell(self, cfg: LaunchConfig, region: str, index: int) -> str:
        """A cell as K1's layout holds it: region, slice, request, head, chunk, row."""
        from kda_sim.kernels.k1.cells import name_cell

        return name_cell(cfg, region, index)

    def expected_writers(self, cfg: LaunchConfig, region: str, index: Any) -> Any:
        """The CTA or ticket item whose put the layout gives each cell."""
        from kda_sim.kernels.k1.cells import expected_writers

        return expected_writers(cfg, region, index)

    def work_items(self, cfg: LaunchConfig) -> dict[str, range]:
        """Every kda stage runs each task once a launch."""
        from kda_sim.kernels.k1.cells import work_items

        return work_items(cfg)

    # the safety map's axes (``kda-sim sweep``): requests x tokens a request
    sweep_axes: tuple[str, str] = ("R", "L")

    # late loads a launch-configuration switch already moves (shared/PROTOCOL.md's variants)
    load_switches: Mapping[str, str] = {"mix.in_nw": "nw_first", "k.on_w": "onw_first"}


def _shaped(kind: str, read: Callable[..., Any]) -> Callable[..., Any]:
    """``read``, refusing a call without the launch's shape (the file does not record it)."""

    def read_shaped(path: Any, **cfg: Any) -> Any:
        missing = [k for k in SHAPE_KEYS if k not in cfg]
        if missing:
            raise InvalidInput(
                f"a {kind} file does not record the launch's shape: give {missing}", what="R/L"
            )
        return read(path, **cfg)

    return read_shaped


KERNEL = K1()
