"""One entry point, ``kda_kernel.kda_pre``, over the backend interface: the torch reference
as a backend, the GPU backends saying why they cannot run here, and the entry points
``kda-sim kernel run`` finds."""

from __future__ import annotations

from dataclasses import replace
from importlib.metadata import entry_points

import pytest

from kda_kernel import BACKENDS, Backend, BackendUnavailable, get_backend, kda_pre
from kda_sim.errors import InvalidInput
from kda_sim.kernels.k1.config import LaunchConfig

torch = pytest.importorskip("torch")


def test_every_backend_offers_the_interface() -> None:
    for name in BACKENDS:
        be = get_backend(name)
        assert isinstance(be, Backend) and be.name == name
        ok, why = be.available()
        assert ok or why


def test_the_entry_points_are_the_backends() -> None:
    found = {ep.name: ep for ep in entry_points(group="kda_sim.backends")}
    assert set(found) >= set(BACKENDS), "reinstall (pip install -e .) to register them"
    for name in BACKENDS:
        assert found[name].load() is get_backend(name)


def test_the_torch_backend_is_the_reference() -> None:
    from kda_kernel.inputs import make_inputs
    from kda_kernel.reference import kda_pre_reference

    cfg = LaunchConfig(2, 1, 3)
    inp = make_inputs(cfg, seed=3, pad=(1,))
    res = kda_pre(inp, cfg)
    want = kda_pre_reference(**inp, L=cfg.L)
    assert res.trace is None
    for name, w in zip(("prefix", "core_out", "conv_state", "rstate"), want, strict=True):
        assert torch.equal(res.outputs[name], w)


def test_an_unknown_backend_is_named() -> None:
    with pytest.raises(ValueError, match="backend 'cuda': one of torch, triton, flydsl"):
        kda_pre({}, LaunchConfig(1, 1), backend="cuda")


def test_flydsl_is_compile_only_here() -> None:
    from kda_kernel.flydsl.run import rocm_gpu_present

    if rocm_gpu_present():
        pytest.skip("a ROCm GPU is here")
    ok, why = get_backend("flydsl").available()
    assert not ok and "no ROCm GPU" in why
    with pytest.raises(BackendUnavailable, match="flydsl: no ROCm GPU"):
        kda_pre({}, LaunchConfig(1, 1), backend="flydsl")


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the answer without a GPU")
def test_triton_without_a_gpu_says_so() -> None:
    ok, why = get_backend("triton").available()
    assert not ok and "no CUDA GPU" in why


def test_the_triton_build_serves_the_configuration() -> None:
    pytest.importorskip("triton")
    be = get_backend("triton")
    cfg = be.default_config(2, 1, 4, 56, gate_local=True)
    b = be.build(cfg, {"prefetch": 2})
    assert b.cfg == cfg and b.prefetch == 2
    assert (b.R, b.L, b.nb, b.kda0, b.gate_local) == (2, 1, 4, 56, True)
    assert cfg.nw_first and cfg.onw_first  # the recommendation, said in the configuration
    off = be.default_config(1, 1, nw_first=False)
    assert be.build(off).cfg.nw_first is False  # run as given
    assert be.build(be.default_config(1, 4, nw_first=True)).cfg.nw_first
    with pytest.raises(ValueError, match="blocks = 300"):
        be.build(replace(be.default_config(1, 1), blocks=300))


@pytest.mark.parametrize(
    ("cfg", "options", "field"),
    [
        (LaunchConfig(1, 1, nw_first=True), None, "onw_first"),
        (LaunchConfig(1, 1, onw_first=True), {"nw_first": True}, "nw_first"),
    ],
)
def test_a_variant_the_backend_cannot_build_is_refused_naming_the_field(
    cfg: LaunchConfig, options: dict | None, field: str
) -> None:
    """The Triton K1 asks for on_w in k.stage only: a configuration asking for the seed's
    order is refused, not run otherwise; nor may an option override the configuration."""
    pytest.importorskip("triton")
    with pytest.raises(InvalidInput, match=field) as e:
        get_backend("triton").build(cfg, options)
    assert e.value.what == field


def test_backends_recommend_a_configuration_keeping_what_is_given() -> None:
    for name in BACKENDS:
        be = get_backend(name)
        cfg = be.default_config(2, 2, nw_first=False, onw_first=True)
        assert (cfg.R, cfg.L, cfg.nw_first, cfg.onw_first) == (2, 2, False, True)
    assert get_backend("torch").default_config(1, 1) == LaunchConfig(1, 1)


def test_importing_the_packages_imports_no_toolkit() -> None:
    """The CLI loads a backend's entry point to ask it; that must not cost torch, Triton
    or FlyDSL."""
    import subprocess
    import sys

    code = (
        "import sys, kda_kernel, kda_kernel.triton, kda_kernel.flydsl; "
        "print([m for m in ('torch', 'triton', 'flydsl') if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
