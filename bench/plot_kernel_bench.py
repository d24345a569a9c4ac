"""The GPU benchmark as one figure: per shape, the fused K1 (untraced and traced), the
three unfused paths, the in_proj GEMM alone and the HBM bound, us a launch.

Usage: ``python bench/plot_kernel_bench.py BENCH.json [--out PNG] [--force]`` (BENCH.json:
``bench/kernel_bench.py``'s result; the figure defaults to BENCH.png beside it, and an
existing one is kept unless ``--force``).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

# (json key, legend, colour): bars left to right in each shape's group
SERIES = (
    ("fused_us", "fused K1", "#1f77b4"),
    ("traced_us", "fused K1, traced", "#aec7e8"),
    ("unfused_fla_compiled_us", "unfused: compiled front + fla", "#2ca02c"),
    ("unfused_fla_us", "unfused: torch front + fla", "#98df8a"),
    ("unfused_us", "unfused: torch", "#d62728"),
    ("in_proj_gemm_us", "in_proj GEMM alone (cuBLAS)", "#7f7f7f"),
)


def plot(rows: list[dict], out: Path, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    n = len(SERIES)
    width = 0.8 / n
    fig, ax = plt.subplots(figsize=(11, 5.4))
    for k, (key, label, colour) in enumerate(SERIES):
        xs = [i + (k - (n - 1) / 2) * width for i in range(len(rows)) if key in rows[i]]
        ys = [r[key] for r in rows if key in r]
        ax.bar(xs, ys, width, label=label, color=colour)
    for i, r in enumerate(rows):
        ax.hlines(
            r["bound_us"],
            i - 0.45,
            i + 0.45,
            colors="black",
            linestyles="--",
            label="HBM bound (bytes / 4.8 TB/s)" if i == 0 else None,
        )
    ax.set_xticks(range(len(rows)), [f"R={r['R']} L={r['L']}" for r in rows])
    ax.set_ylabel("us a launch (CUDA graph replay, median)")
    ax.set_yscale("log")
    ticks = [20, 30, 50, 70, 100, 150, 200, 300, 450]
    ax.set_yticks(ticks, [str(t) for t in ticks])
    ax.minorticks_off()
    ax.set_title(title)
    ax.legend(fontsize=8, ncol=4, loc="upper center", bbox_to_anchor=(0.5, -0.08))
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("bench", type=Path, help="bench/kernel_bench.py's result JSON")
    ap.add_argument("--out", type=Path, help="the figure (default: BENCH.png)")
    ap.add_argument("--force", action="store_true", help="overwrite an existing figure")
    a = ap.parse_args(argv)
    try:
        d = json.loads(a.bench.read_text())
        rows = d["rows"]
        env = d["env"]
    except (OSError, ValueError, KeyError) as e:
        print(f"plot_kernel_bench: {a.bench}: not a kernel_bench result ({e})", file=sys.stderr)
        return 2
    out = a.out or a.bench.with_suffix(".png")
    if out.exists() and not a.force:
        print(f"plot_kernel_bench: {out}: exists; pass --force to overwrite it", file=sys.stderr)
        return 2
    plot(rows, out, f"Triton K1 on {env.get('gpu', 'a GPU')}: fused against unfused")
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
