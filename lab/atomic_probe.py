"""What a device-scope atomic costs on the GPU: the figures the engine's ``atomic`` and
``atomic_serial`` latencies stand for (a ticket take, an arrival on a barrier counter).

The engine charges a counter op the profile's ``atomic`` round trip (the ``poll`` one
where a profile has none) and serializes a word's writes ``atomic_serial`` apart
(0 where unmeasured); the ticket what-if (``docs/whatif/ticket_k1.md``) rests on both.
This probe measures them with one launch a pattern, each active CTA's one thread making
a chain of ``K`` dependent ``atomic_add`` (relaxed, GPU scope, the take the Triton
ticket build makes), each add's value depending on the previous add's return so none
overlaps:

* ``load``: the same chain of relaxed GPU-scope loads of one word (a poll try's load),
  for the ratio to a load;
* ``one``: one CTA, one word: the uncontended round trip;
* ``own``: G CTAs, each its own word on its own 128-byte line: the round trip when
  the L2 is busy with others' atomics but no word is shared;
* ``same``: G CTAs on one word (a ticket counter every CTA takes from): the round trip
  under contention, and the word's service rate (all adds / the span from the first
  issue to the last return), whose inverse is the time one add holds the word.

Times are ``%globaltimer`` stamps (32 ns steps on the H200), over a chain of K adds.
Usage, on the GPU: ``python -m lab.atomic_probe --out FILE [--k 256] [--launches 5]``.
"""

from __future__ import annotations

import argparse
import json
import statistics as st
import sys
from pathlib import Path
from typing import Any

import triton
import triton.language as tl

from kda_kernel.triton.machine import now as _now
from kda_kernel.triton.machine import smid as _smid

LINE = tl.constexpr(32)  # int32 words a 128-byte line
NST = tl.constexpr(4)  # stamps a CTA: first issue, last return, the last value, the SM


@triton.jit
def _load_relaxed(p):
    return tl.inline_asm_elementwise(
        "ld.relaxed.gpu.global.b32 $0, [$1];", "=r,l", [p], dtype=tl.int32, is_pure=False, pack=1
    )


@triton.jit
def atomic_probe(words, stamps, active, K: tl.constexpr, OWN: tl.constexpr, LOAD: tl.constexpr):
    pid = tl.program_id(0)
    if pid < active:
        word = words + (pid * LINE if OWN else 0)
        v = tl.full([], 0, tl.int32)
        t0 = _now(False)
        for _ in range(K):
            # the address or addend depends on the previous return: no two overlap
            if LOAD:
                v = _load_relaxed(word + (v >> 30))
            else:
                v = tl.atomic_add(word, 1 + (v >> 30), sem="relaxed", scope="gpu")
        t1 = _now(False)
        base = stamps + pid * NST
        tl.store(base + 0, t0)
        tl.store(base + 1, t1)
        tl.store(base + 2, v.to(tl.int64))
        tl.store(base + 3, _smid(False).to(tl.int64))


def _q(xs: list[float]) -> dict[str, float]:
    xs = sorted(xs)
    return {
        "min": xs[0],
        "median": st.median(xs),
        "p90": xs[int(0.9 * (len(xs) - 1))],
        "max": xs[-1],
    }


def one_launch(pattern: str, ctas: int, k: int) -> dict[str, Any]:
    import torch

    words = torch.zeros(max(ctas, 1) * LINE.value, dtype=torch.int32, device="cuda")
    stamps = torch.zeros(ctas * NST.value, dtype=torch.int64, device="cuda")
    grid = (ctas,)
    atomic_probe[grid](
        words, stamps, ctas, K=k, OWN=pattern == "own", LOAD=pattern == "load", num_warps=8
    )
    torch.cuda.synchronize()
    s = stamps.view(ctas, NST.value).cpu().tolist()
    per_op = [(r[1] - r[0]) / k for r in s]
    span = max(r[1] for r in s) - min(r[0] for r in s)
    out: dict[str, Any] = {
        "pattern": pattern,
        "ctas": ctas,
        "k": k,
        "round_trip_ns": _q(per_op),
        "span_ns": span,
        "sms": len({r[3] for r in s}),
    }
    if pattern == "same":
        total = ctas * k
        out["word_value"] = int(words[0].item())
        out["ns_per_add_on_the_word"] = span / total
        if out["word_value"] != total:
            out["error"] = f"the word holds {out['word_value']}, {total} adds were made"
    return out


PLAN: tuple[tuple[str, int], ...] = (
    ("load", 1),
    ("one", 1),
    ("own", 132),
    ("own", 256),
    ("same", 2),
    ("same", 8),
    ("same", 32),
    ("same", 132),
    ("same", 256),
)


def run(k: int, launches: int) -> dict[str, Any]:
    import torch

    rows = []
    for pattern, ctas in PLAN:
        one_launch(pattern, ctas, 8)  # compile and warm
        runs = [one_launch(pattern, ctas, k) for _ in range(launches)]
        med = [r["round_trip_ns"]["median"] for r in runs]
        row: dict[str, Any] = {
            "pattern": pattern,
            "ctas": ctas,
            "k": k,
            "launches": launches,
            "round_trip_median_ns": _q(med),
            "runs": runs,
        }
        if pattern == "same":
            row["ns_per_add_on_the_word"] = _q([r["ns_per_add_on_the_word"] for r in runs])
        rows.append(row)
        print(
            f"{pattern:5s} {ctas:4d} CTAs: round trip median {st.median(med):7.1f} ns"
            + (
                f", {row['ns_per_add_on_the_word']['median']:6.2f} ns an add on the word"
                if pattern == "same"
                else ""
            ),
            flush=True,
        )
    return {"gpu": torch.cuda.get_device_name(), "rows": rows}


def main(argv: list[str] | None = None) -> int:
    from lab.gpu_jobs import before_launches

    p = argparse.ArgumentParser(prog="python -m lab.atomic_probe", description=__doc__)
    p.add_argument("--out", type=Path, help="the JSON report")
    p.add_argument("--k", type=int, default=256, help="dependent adds a CTA (default 256)")
    p.add_argument("--launches", type=int, default=5, help="launches a pattern (default 5)")
    p.add_argument("--force", action="store_true", help="overwrite --out")
    args = p.parse_args(argv)
    if args.k < 1 or args.launches < 1:
        print("--k and --launches: at least 1", file=sys.stderr)
        return 2
    before_launches([args.out] if args.out else [], args.force)
    rep = run(args.k, args.launches)
    if args.out:
        args.out.write_text(json.dumps(rep, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
