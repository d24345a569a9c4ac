"""K1 as the generic layers see it: :data:`KERNEL`."""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from typing import Any

from kda_sim.kernels.k1.config import SCHEDULES, VARIANT_HELP, VARIANTS, LaunchConfig
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
# the stage costs every GPU profile holds for K1 (a Compute's cost key)
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


class K1:
    name = "k1"
    description = "K1 kda_pre: the fused Kimi-K3 KDA layer (256 CTAs: attn, gemv, kda tasks)"
    config_type = LaunchConfig
    roles = ROLES
    stages = STAGES
    role_colors = ROLE_COLORS
    stage_colors = STAGE_COLORS
    cost_keys = COSTS

    def default_config(self) -> LaunchConfig:
        return LaunchConfig(2, 2)

    def validate(self, cfg: LaunchConfig) -> LaunchConfig:
        return cfg.validate()

    def add_flags(self, parser: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
        parser.add_argument("--R", type=int, default=2, help="requests (default 2)")
        parser.add_argument("--L", type=int, default=2, help="tokens a request (default 2)")
        parser.add_argument("--nb", type=int, default=8, help="AttnRes blocks (default 8)")
        parser.add_argument("--kda0", type=int, default=0, help="CTA of kda task 0 (default 0)")
        for name in (*VARIANTS, *SCHEDULES):
            parser.add_argument(
                f"--{name.replace('_', '-')}", action="store_true", help=VARIANT_HELP[name]
            )

    def config_from_args(self, args: argparse.Namespace) -> LaunchConfig:
        variants = {name: getattr(args, name) for name in (*VARIANTS, *SCHEDULES)}
        return LaunchConfig(args.R, args.L, args.nb, args.kda0, **variants).validate()

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

        return build_launch(cfg)

    def resources(self, cfg: LaunchConfig, gpu: GpuProfile) -> KernelResources:
        """The build's threads and registers (the profile's, as the build on that GPU has
        them) and the LDS the shape takes."""
        from kda_sim.kernels.k1.resources import lds_bytes

        k = gpu.kernel
        return KernelResources(k.threads, k.regs_per_thread, lds_bytes(cfg, gpu))

    def check_fits(self, cfg: LaunchConfig, gpu: GpuProfile) -> None:
        from kda_sim.kernels.k1.resources import check_fits

        check_fits(cfg, gpu)

    # -- optional hooks: imported when asked for (the layers that hold them import K1) ----
    @property
    def mutations(self) -> dict[str, Any]:
        """The fault catalogue, by name (``kda-sim check --mutant``)."""
        from kda_sim.checks.mutations import BY_NAME

        return dict(BY_NAME)

    @property
    def tag_schemes(self) -> tuple[str, ...]:
        """The tag schemes ``kda-sim check --tags`` compares (``make_scheme`` builds one)."""
        from kda_sim.checks.tags.schemes import SCHEMES

        return tuple(SCHEMES)

    @property
    def trace_decoders(self) -> dict[str, Any]:
        """Readers of the real K1's own trace formats, by kind: the twin's stamp tensor and
        FlyDSL's ktrace (``--R``/``--L`` given, they do not record the shape)."""
        from kda_sim.importers.ktrace import read_ktrace
        from kda_sim.importers.stamps import read_stamps

        return {"stamps": read_stamps, "ktrace": read_ktrace}

    @property
    def isa_presets(self) -> dict[str, Any]:
        """The ISA analyzer's presets for K1's builds (``kda-sim isa --preset``)."""
        from kda_sim.isa.presets import PRESETS

        return dict(PRESETS)


KERNEL = K1()
