"""K1 on the GPU, side by side in one run: the fused Triton kernel (untraced and traced),
two unfused paths (torch pieces + cuBLAS GEMMs, and the same front with
flash-linear-attention's recurrent KDA and gated-norm kernels as the back, when fla-core is
installed), the in_proj GEMM alone, and the HBM bound.

Every timing is the median of ``triton.testing.do_bench`` over CUDA-graph replays of a
step of ``LAYERS`` launches (the epoch bumped once a step, in the graph), with the layers
cycling over ``SETS`` distinct weight sets so the 90 MB in_proj weight is not served from
the L2 (60 MB on the H200). Per-launch time = step time / LAYERS (the bump amortised,
included). The untraced and traced builds, on one workspace, alternate ``ROUNDS`` times a
shape with an A/A control: the untraced build again on a workspace of its own.
Usage: ``python -m bench.kernel_bench --out FILE [--force] [--shapes 1x1,2x2]
[--variants JSON --variant-shapes 1x1]``; ``--add-configs OLD --out NEW`` (no GPU) gives an
older result's variant rows the launch configuration each build runs (``config``), which
``kda-sim variants`` reads.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import torch

from bench.kernel_unfused import (
    in_proj_only,
    unfused_layer,
    unfused_layer_fla,
    unfused_layer_fla_compiled,
)
from kda_kernel.inputs import clone_inputs, make_inputs
from kda_kernel.triton.launch import Build, Workspace, compile_only, launch
from kda_kernel.triton.trace import environment
from kda_sim.commands.common import refuse_overwrite
from kda_sim.errors import InvalidInput
from kda_sim.kernels.k1 import config
from kda_sim.kernels.k1.config import LaunchConfig as Shape
from kda_sim.kernels.k1.constants import CONV_W, HD, HIDDEN, NH, NPROJ, PROJ

HBM_BYTES_PER_S = 4.8e12  # the H200's datasheet figure (MATH.md's bound uses it)
LAYERS = 8
SETS = 4
ROUNDS = 3  # untraced / traced pairs a shape
WEIGHTS = ("w_in", "w_fb", "conv_w", "a_log", "dt_bias", "on_w", "ares_nw", "ares_qk", "in_nw")


def hbm_bytes(R: int, L: int, nb: int) -> int:
    """Fewest bytes one launch moves: every input read once, every output written once."""
    s = R * L
    b = NPROJ * HIDDEN * 2 + PROJ * HD * 2 + 3 * PROJ * CONV_W * 4  # in_proj, f_b, conv_w
    b += NH * 4 + PROJ * 4 + HD * 2 + 3 * HIDDEN * 2  # a_log, dt_bias, on_w, three norms
    b += s * nb * HIDDEN * 2 + s * HIDDEN * 2 * 3  # blocks; prefix in + out, delta
    b += R * 3 * PROJ * (CONV_W - 1 + L - 1) * 2 * 2  # conv state in + out
    b += R * NH * HD * HD * 4 * (1 + L)  # state in, a state a token out
    b += s * PROJ * 2 + R * L * 4 * 2  # core_out, st_idx / num_acc
    return b


def bench_graph(fn: Any, n_rep_ms: int = 400) -> float:
    """Median ms of one replay of the graph that ``fn`` records."""
    import triton.testing

    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        fn()  # warm the launch path outside the capture
    torch.cuda.current_stream().wait_stream(s)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        fn()
    return float(triton.testing.do_bench(g.replay, warmup=100, rep=n_rep_ms, return_mode="median"))


def make_sets(shape: Shape) -> list[dict[str, Any]]:
    sets = []
    for k in range(SETS):
        sets.append(
            make_inputs(shape, seed=1000 + k, pad=(1,) if shape.R > 1 else (), device="cuda")
        )
    return sets


def make_layers(
    shape: Shape, sets_w: list[dict[str, Any]], device: str = "cuda"
) -> tuple[list[dict[str, Any]], list[torch.Tensor]]:
    """LAYERS layers' inputs with distinct weights, cycling over the sets (drawn once, on
    the GPU already), and their core_out buffers."""
    layers = [
        make_inputs(
            shape,
            seed=k,
            pad=(1,) if shape.R > 1 else (),
            device=device,
            reuse={w: sets_w[k % SETS][w] for w in WEIGHTS},
        )
        for k in range(LAYERS)
    ]
    cores = [torch.empty(shape.S, PROJ, dtype=torch.bfloat16, device=device) for _ in layers]
    return layers, cores


def fused_step(
    b: Build, ws: Workspace, layers: list[dict[str, Any]], cores: list[torch.Tensor]
) -> Any:
    """One step of the fused build: the epoch bumped, then a launch a layer (a slot each)."""

    def step() -> None:
        ws.epoch.add_(1)
        for i, inp in enumerate(layers):
            launch(b, inp, cores[i], ws, i)

    return step


def variants(
    R: int,
    L: int,
    nb: int,
    sets_w: list[dict[str, Any]],
    kws: list[dict[str, Any]],
) -> list[dict[str, Any]]:
    """Untraced per-launch time of build variants (gemv form, tile, prefetch, back-off)."""
    layers, cores = make_layers(Shape(R, L, nb), sets_w)
    builds = [Build.default(R, L, nb, **kw).validate() for kw in kws]
    ws = Workspace.create(builds, "cuda")  # one for all: only the code differs
    built = []
    for kw, b in zip(kws, builds, strict=True):
        k = compile_only(b, layers[0], cores[0], ws)
        k._init_handles()
        built.append((kw, k, fused_step(b, ws, layers, cores)))
    # the variants alternate ROUNDS times, as the traced / untraced pair does
    times: list[list[float]] = [[] for _ in built]
    for _ in range(ROUNDS):
        for i, (_, _, step) in enumerate(built):
            times[i].append(bench_graph(step, 200) * 1e3 / LAYERS)
    rows = []
    for (kw, k, _), b, us in zip(built, builds, times, strict=True):
        rows.append(
            {
                "R": R,
                "L": L,
                "variant": kw,
                # the launch configuration the build runs: what kda-sim variants simulates
                "config": b.cfg.to_dict(),
                "us": statistics.median(us),
                "rounds_us": us,
                "regs": int(k.n_regs),
                "spills": int(k.n_spills),
                "shared": int(k.metadata.shared),
            }
        )
        print(json.dumps(rows[-1]), flush=True)
    return rows


def bench_shape(R: int, L: int, nb: int, sets_w: list[dict[str, Any]]) -> dict[str, Any]:
    shape = Shape(R, L, nb)
    layers, cores = make_layers(shape, sets_w)
    out: dict[str, Any] = {"R": R, "L": L, "nb": nb, "S": shape.S}
    nbytes = hbm_bytes(R, L, nb)
    out["hbm_mb"] = nbytes / 1e6
    out["bound_us"] = nbytes / HBM_BYTES_PER_S * 1e6
    builds = {
        "fused": Build.default(R, L, nb).validate(),
        "traced": Build.default(R, L, nb, trace=True).validate(),
    }
    # one workspace for both builds, so only their code differs: two graphs of the same
    # untraced build on two workspaces differed by up to 4 % on the H200. "fused_aa" is that
    # control, the untraced build on a workspace of its own; its difference is the floor
    # under which a tracing overhead cannot be told from where the mailboxes landed
    ws = Workspace.create(list(builds.values()), "cuda")
    steps = {}
    for name, b in builds.items():
        t = time.perf_counter()
        k = compile_only(b, layers[0], cores[0], ws)
        if name == "fused":
            k._init_handles()
            out["regs"], out["spills"] = int(k.n_regs), int(k.n_spills)
            out["shared"] = int(k.metadata.shared)
        out[f"{name}_compile_s"] = round(time.perf_counter() - t, 1)
        steps[name] = fused_step(b, ws, layers, cores)
    steps["fused_aa"] = fused_step(
        builds["fused"], Workspace.create([builds["fused"]], "cuda"), layers, cores
    )
    # the three alternate, ROUNDS times: the overhead is the median of the paired ratios,
    # so a drift of the machine between two timings does not read as it
    times: dict[str, list[float]] = {name: [] for name in steps}
    for _ in range(ROUNDS):
        for name, step in steps.items():
            times[name].append(bench_graph(step) * 1e3 / LAYERS)
    fused, traced = times["fused"], times["traced"]
    out["fused_rounds_us"], out["traced_rounds_us"] = fused, traced
    out["fused_aa_rounds_us"] = times["fused_aa"]
    out["fused_us"], out["traced_us"] = statistics.median(fused), statistics.median(traced)

    def pct(other: list[float]) -> float:
        return 100.0 * (statistics.median(o / f for f, o in zip(fused, other, strict=True)) - 1)

    out["trace_overhead_pct"] = pct(traced)
    out["aa_pct"] = pct(times["fused_aa"])

    def unfused() -> None:
        for i, inp in enumerate(layers):
            unfused_layer(inp, L, cores[i])

    out["unfused_us"] = bench_graph(unfused) * 1e3 / LAYERS
    out.update(fla_path(layers, L, cores, [w for w in (1,) if R > 1]))
    xs = [torch.randn(shape.S, HIDDEN, device="cuda").to(torch.bfloat16) for _ in layers]
    outs = [torch.empty(shape.S, NPROJ, dtype=torch.bfloat16, device="cuda") for _ in layers]

    def gemm() -> None:
        for i, inp in enumerate(layers):
            in_proj_only({"prefix": xs[i], "w_in": inp["w_in"]}, outs[i])

    out["in_proj_gemm_us"] = bench_graph(gemm) * 1e3 / LAYERS
    f = out["fused_us"]
    out["x_bound"] = f / out["bound_us"]
    out["speedup_vs_unfused_torch"] = out["unfused_us"] / f
    best = min(
        out[k] for k in ("unfused_us", "unfused_fla_us", "unfused_fla_compiled_us") if k in out
    )
    out["speedup_vs_unfused"] = best / f  # against the faster unfused path
    return out


def fla_path(
    layers: list[dict[str, Any]], L: int, cores: list[torch.Tensor], pad: list[int]
) -> dict[str, Any]:
    """Time the unfused paths with fla's back (eager and compiled front), each after
    checking it computes the torch path's layer (live requests' core_out, states) on
    copies of the first layer's inputs."""
    try:
        import fla
    except ImportError:
        return {"unfused_fla": "fla-core not installed"}
    out: dict[str, Any] = {"fla_version": getattr(fla, "__version__", "?")}
    for name, fn in (("fla", unfused_layer_fla), ("fla_compiled", unfused_layer_fla_compiled)):
        a, b = clone_inputs(layers[0]), clone_inputs(layers[0])
        ca, cb = torch.empty_like(cores[0]), torch.empty_like(cores[0])
        unfused_layer(a, L, ca)
        try:
            fn(b, L, cb)  # compiles the compiled front, once a shape
        except Exception as e:  # an optional competitor: record why it is absent
            out[f"unfused_{name}"] = f"failed: {type(e).__name__}: {str(e)[:300]}"
            continue
        live = [t for t in range(ca.shape[0]) if t // L not in pad]
        ref, got = ca[live].float(), cb[live].float()
        out[f"{name}_core_rel_err"] = float((got - ref).abs().max() / ref.abs().max())
        # slot 0 is the padding requests' scratch slot in fla's path (unfused_layer_fla)
        ra, rb = a["rstate"][1:], b["rstate"][1:]
        out[f"{name}_rstate_rel_err"] = float((rb - ra).abs().max() / ra.abs().max())

        def step(fn: Any = fn) -> None:
            for i, inp in enumerate(layers):
                fn(inp, L, cores[i])

        out[f"unfused_{name}_us"] = bench_graph(step) * 1e3 / LAYERS
    return out


# every R x L in {1, 2, 4}: the shapes the K1 is checked at (each fits: S <= 16)
SHAPES = "1x1,1x2,1x4,2x1,2x2,2x4,4x1,4x2,4x4"


def parse_shapes(text: str) -> list[tuple[int, int]]:
    """Shapes as R x L pairs: "1x1,2x2" -> [(1, 1), (2, 2)]; "" -> none (variants only)."""
    return list(config.parse_shapes(text)) if text else []


def add_configs(doc: dict[str, Any], nb: int = 8) -> dict[str, Any]:
    """``doc`` (a kernel_bench result) with each variant row's launch configuration
    (``config``) where it has none, as its build runs it: for files written before the rows
    carried it. Raises InvalidInput naming a row whose variant is not a build of its shape."""
    rows = doc.get("variants") if isinstance(doc, dict) else None
    if not isinstance(rows, list):
        raise InvalidInput("not a kernel_bench file with variants", what="variants")
    for r in rows:
        if "config" in r:
            continue
        try:
            build = Build.default(r["R"], r["L"], nb, **r["variant"]).validate()
        except (KeyError, TypeError, ValueError) as e:
            raise InvalidInput(f"not a build of its shape: {e}", where=f"row {r}") from e
        r["config"] = build.cfg.to_dict()
    return doc


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path, required=True, help="the result JSON")
    ap.add_argument("--force", action="store_true", help="overwrite an existing --out")
    ap.add_argument(
        "--shapes", default=SHAPES, help='shapes for the full comparison ("": none, variants only)'
    )
    ap.add_argument("--nb", type=int, default=8)
    ap.add_argument(
        "--variants",
        help="JSON list of dicts of LaunchConfig variants and Build options to time first "
        '(a lab probe too: {"probe": "take"}; see Build.probe)',
    )
    ap.add_argument("--variant-shapes", help="shapes for --variants (default: the first)")
    ap.add_argument(
        "--add-configs",
        type=Path,
        metavar="FILE",
        help="no GPU: FILE's variant rows with their launch configurations, to --out",
    )
    a = ap.parse_args(argv)
    try:
        refuse_overwrite(a.out, a.force)
        if a.add_configs:
            doc = add_configs(json.loads(a.add_configs.read_text()), a.nb)
            a.out.write_text(json.dumps(doc, indent=1))
            return 0
    except (OSError, ValueError, InvalidInput) as e:
        print(f"kernel_bench: {e}", file=sys.stderr)
        return 2
    if not torch.cuda.is_available():
        print("kernel_bench: needs a CUDA GPU", file=sys.stderr)
        return 2
    shapes = parse_shapes(a.shapes)
    sets_w = make_sets(Shape(1, 1, a.nb))
    var_rows = []
    if a.variants:
        vshapes = parse_shapes(a.variant_shapes) if a.variant_shapes else shapes[:1]
        if not vshapes:
            print("kernel_bench: --variants needs --variant-shapes or --shapes", file=sys.stderr)
            return 2
        for r, n in vshapes:
            var_rows += variants(r, n, a.nb, sets_w, json.loads(a.variants))
    rows = []
    for r, n in shapes:
        row = bench_shape(r, n, a.nb, sets_w)
        rows.append(row)
        print(json.dumps(row), flush=True)
    env = environment()
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(
        json.dumps(
            {"env": env, "layers": LAYERS, "weight_sets": SETS, "variants": var_rows, "rows": rows},
            indent=1,
        )
    )
    print(
        f"\n{'RxL':>5} {'bound':>7} {'fused':>7} {'x bnd':>6} {'traced':>7} {'ovh%':>6} "
        f"{'A/A%':>5} {'torch':>7} {'fla':>7} {'fla+c':>7} {'gemm':>7} {'speedup':>7}"
        "  (us a launch; unfused: torch back, fla back, fla back + compiled front;"
        " speedup vs the fastest; A/A: the untraced build on another workspace)"
    )
    for x in rows:
        best = x["fused_us"]
        print(
            f"{x['R']}x{x['L']:<3} {x['bound_us']:7.1f} {best:7.1f} "
            f"{x['x_bound']:6.2f} {x['traced_us']:7.1f} {x['trace_overhead_pct']:6.1f} "
            f"{x['aa_pct']:5.1f} "
            f"{x['unfused_us']:7.1f} {x.get('unfused_fla_us', float('nan')):7.1f} "
            f"{x.get('unfused_fla_compiled_us', float('nan')):7.1f} "
            f"{x['in_proj_gemm_us']:7.1f} {x['speedup_vs_unfused']:7.2f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
