"""The unfused path the benchmark times against the fused K1 computes the same layer as the
reference, so its time is a like-for-like comparison (fla's back needs a GPU: the benchmark
checks it against this path on the H200 and records the error)."""

from __future__ import annotations

import pytest
import torch

from bench.kernel_unfused import unfused_layer
from kda_kernel.inputs import clone_inputs, make_inputs
from kda_kernel.reference import kda_pre_reference
from kda_sim.kernels.k1.config import LaunchConfig
from kda_sim.kernels.k1.constants import PROJ


def _rel(a: torch.Tensor, b: torch.Tensor) -> float:
    a, b = a.float(), b.float()
    return float((a - b).abs().max() / b.abs().max().clamp_min(1e-30))


@pytest.mark.parametrize(("R", "L", "pad", "acc"), [(1, 1, (), None), (2, 2, (1,), [1, 2])])
def test_unfused_torch_path_matches_reference(
    R: int, L: int, pad: tuple[int, ...], acc: list[int] | None
) -> None:
    shape = LaunchConfig(R, L, 8)
    inp = make_inputs(shape, seed=3, pad=pad, num_acc=acc)
    pre, core, cs, rs = kda_pre_reference(**inp, L=L)
    mine = clone_inputs(inp)
    out = torch.empty(shape.S, PROJ, dtype=torch.bfloat16)
    unfused_layer(mine, L, out)
    live = [r for r in range(R) if r not in pad]
    rows = torch.tensor([r * L + j for r in live for j in range(L)])
    assert torch.equal(mine["prefix"], pre)
    assert _rel(out[rows], core[rows]) < 2e-2
    assert _rel(mine["conv_state"], cs) < 1e-2
    assert _rel(mine["rstate"], rs) < 1e-2


def test_compiled_front_is_never_timed_eagerly() -> None:
    """At the bench's ninth shape dynamo hits its default recompile limit and runs the front
    eagerly, and a bench would time that as the compiled path. The limit must cover every
    shape the bench runs, and a hit must raise (fla_path then records the path as failed)."""
    import torch._dynamo.config as dc

    from bench.kernel_bench import SHAPES, parse_shapes
    from bench.kernel_unfused import _compiled_front

    with dc.patch(recompile_limit=8, fail_on_recompile_limit_hit=False):
        _compiled_front.cache_clear()
        _compiled_front()
        assert dc.fail_on_recompile_limit_hit
        assert dc.recompile_limit >= len(parse_shapes(SHAPES))
    _compiled_front.cache_clear()
