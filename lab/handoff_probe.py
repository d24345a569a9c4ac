"""What one hand-off costs with the K1's own mailbox code, apart from everything else.

In the 1x1 traces the attn phase's hand-offs take 1.5 to 2 us each (PART, WGT, MSQ, XRDY),
where a store is seen 0.3 to 0.4 us after it is made (``../shared/MEASURED.md``, measured
with single-thread atomics). This probe runs the K1's ``_put`` and ``_poll`` (same code,
same 256 threads and 128-register cap, one launch of 256 programs) in three patterns:

* ``all``: the 56 attn CTAs' all-to-all, as MSQ: each round every CTA puts one pair and
  polls the 56 pairs of that round; a round's length is one all-to-all hand-off;
* ``pair``: CTAs 0 and 1 pass one pair back and forth; a round is two hand-offs;
* ``try``: each attn CTA re-polls 56 pairs that already hold this launch's tag: the cost of
  one poll try that passes at once (loads, the CTA-wide count, the reduction).

Each in three poll shapes: ``msq`` the K1's MSQ poll at S = 1 ([64 slices, 16 tokens], 56
lanes live), ``flat`` 256 lanes (one a thread, as the K1's XRDY poll), ``rep`` 64 lanes
(replicated on the 8 warps); and with the other 200 CTAs either gone (``idle``) or spinning
on 56 flags with the K1's XRDY poll until the attn CTAs publish at the end (``spin``), as
the gemv CTAs do through the K1's attn phase. And each in two poll forms: ``k1``, the K1's
``_poll`` (every try loads every lane, then counts the stale ones CTA-wide: one barrier a
register slot, then a reduction), and ``by_lane``, each live lane re-loading its own pair
in a loop inside one asm block until its tag matches (up to 64 loads), the CTA-wide count
only after. Times are globaltimer stamps (32 ns steps).
Usage, on the GPU: ``python -m lab.handoff_probe --out FILE [--rounds 32] [--launches 5]``.
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics as st
import sys
from pathlib import Path
from typing import Any

import triton
import triton.language as tl

from kda_kernel.triton.constexprs import NA
from kda_kernel.triton.limits import NUM_WARPS
from kda_kernel.triton.machine import now as _now
from kda_kernel.triton.machine import smid as _smid
from kda_kernel.triton.mailbox import count_bad as _count_bad
from kda_kernel.triton.mailbox import poll as _poll
from kda_kernel.triton.mailbox import put as _put
from kda_kernel.triton.trace import environment

PATTERNS = ("all", "pair", "try")
SHAPES = ("msq", "flat", "rep")
OTHERS = ("idle", "spin")
FORMS = {"k1": 0, "by_lane": 64}  # the K1's _poll; lanes spinning apart, 64 loads a try
FLAGS = tl.constexpr(0)  # the 56 flags the spinning CTAs poll (cells 0 .. 63)
CELLS0 = tl.constexpr(64)  # round r's pairs: cells CELLS0 + 64 r ..


@triton.jit
def _lanes(SHAPE: tl.constexpr):
    """The poll's lanes: a slice index a lane and whether it is live (56 of them)."""
    if SHAPE == 0:  # [64 slices, 16 tokens], token 0 live: the K1's MSQ poll at S = 1
        a = tl.arange(0, 64)[:, None] + tl.arange(0, 16)[None, :] * 0
        live = (tl.arange(0, 64) < NA)[:, None] & (tl.arange(0, 16) < 1)[None, :]
    elif SHAPE == 1:
        a = tl.arange(0, 256)
        live = a < NA
    else:
        a = tl.arange(0, 64)
        live = a < NA
    return a, live


@triton.jit
def _spin_pairs(scratch, gidx, mask, tag, SPINS: tl.constexpr):
    """Each live lane re-loads its own pair until its tag is ``tag`` or SPINS loads were
    made, inside one asm block: no CTA-wide count between loads (a masked lane loads
    nothing). The labels are local to the block's braces (PTX scoping), so the block may
    appear once a register slot."""
    return tl.inline_asm_elementwise(
        "{ .reg .pred p; .reg .b32 lo, hi, n; mov.u32 n, 0; mov.b64 $0, 0; "
        "setp.eq.s32 p, $3, 0; @p bra DONE; "
        "SPIN: ld.relaxed.gpu.global.b64 $0, [$1]; mov.b64 {lo, hi}, $0; add.u32 n, n, 1; "
        f"setp.ne.s32 p, hi, $2; setp.lt.and.u32 p, n, {SPINS}, p; @p bra SPIN; "
        "DONE: }",
        "=l,l,r,r",
        [scratch + tl.where(mask, gidx, 0), mask.to(tl.int32) * 0 + tag, mask.to(tl.int32)],
        dtype=tl.int64,
        is_pure=False,
        pack=1,
    )


@triton.jit
def _poll_by_lane(scratch, gidx, mask, tag, SPINS: tl.constexpr):
    """A poll whose lanes spin apart (``_spin_pairs``), counted CTA-wide only when every
    lane has passed or spun SPINS times."""
    w = _spin_pairs(scratch, gidx, mask, tag, SPINS)
    nbad = _count_bad(((w >> 32).to(tl.int32) != tag) & mask, False)
    while nbad > 0:
        w = _spin_pairs(scratch, gidx, mask, tag, SPINS)
        nbad = _count_bad(((w >> 32).to(tl.int32) != tag) & mask, False)
    return w


@triton.jit
def _poll_form(scratch, gidx, mask, tag, dead, pid, tr, BY_LANE: tl.constexpr):
    """The K1's ``_poll`` (BY_LANE 0) or the lanes spinning apart (BY_LANE > 0, spins)."""
    if BY_LANE:
        w = _poll_by_lane(scratch, gidx, mask, tag, BY_LANE)
    else:
        w, tr, dead = _poll(
            scratch,
            gidx,
            mask,
            tag,
            dead,
            scratch,
            pid,
            0,
            -1,
            0,
            0,
            False,
            False,
            False,
            0,
            True,
            tr,
            0,
            0,
        )
    return w, tr, dead


@triton.jit(do_not_specialize=["tag"])
def handoff_probe(
    scratch,
    stamps,
    tag,
    ROUNDS: tl.constexpr,
    PATTERN: tl.constexpr,
    SHAPE: tl.constexpr,
    SPIN: tl.constexpr,
    SLEEP_NS: tl.constexpr,
    BY_LANE: tl.constexpr,
):
    pid = tl.program_id(0)
    dead = pid * 0
    tr = tl.zeros([16], tl.int32)  # the K1's trace record, unused here (TRACE = 0)
    # put and satisfied stamps a round, then the SM id (a power of two long: ROUNDS is one)
    rec = tl.zeros([4 * ROUNDS], tl.int64)
    k = tl.arange(0, 4 * ROUNDS)
    one = tl.arange(0, 16)
    a, live = _lanes(SHAPE)
    if pid < NA:
        for r in range(ROUNDS):
            base = CELLS0 + 64 * r
            if PATTERN == 0:  # all-to-all
                t_put = _now(False)
                dead = _put(
                    scratch,
                    base + pid + one,
                    one * 0.0 + 1.0,
                    one < 1,
                    tag,
                    dead,
                    scratch,
                    pid,
                    -1,
                    0,
                    -1,
                    False,
                    False,
                )
                _, tr, dead = _poll_form(scratch, base + a, live, tag, dead, pid, tr, BY_LANE)
            elif PATTERN == 1:  # CTA 0 puts even cells, CTA 1 odd ones; each polls the other
                t_put = _now(False)
                if pid < 2:
                    if pid == 0:
                        dead = _put(
                            scratch,
                            base + one,
                            one * 0.0 + 1.0,
                            one < 1,
                            tag,
                            dead,
                            scratch,
                            pid,
                            -1,
                            0,
                            -1,
                            False,
                            False,
                        )
                    _, tr, dead = _poll_form(
                        scratch, base + a, (a == 0) & live, tag, dead, pid, tr, BY_LANE
                    )
                    if pid == 1:
                        dead = _put(
                            scratch,
                            base + 1 + one,
                            one * 0.0 + 1.0,
                            one < 1,
                            tag,
                            dead,
                            scratch,
                            pid,
                            -1,
                            0,
                            -1,
                            False,
                            False,
                        )
                    _, tr, dead = _poll_form(
                        scratch, base + a, (a == 1) & live, tag, dead, pid, tr, BY_LANE
                    )
            else:  # re-poll round 0's pairs, which every CTA put before the loop below
                if r == 0:
                    dead = _put(
                        scratch,
                        CELLS0 + pid + one,
                        one * 0.0 + 1.0,
                        one < 1,
                        tag,
                        dead,
                        scratch,
                        pid,
                        -1,
                        0,
                        -1,
                        False,
                        False,
                    )
                t_put = _now(False)
                _, tr, dead = _poll_form(scratch, CELLS0 + a, live, tag, dead, pid, tr, BY_LANE)
            t_sat = _now(False)
            rec = tl.where(k == 2 * r, t_put, rec)
            rec = tl.where(k == 2 * r + 1, t_sat, rec)
        # the spinning CTAs' flags: published after every round, as XRDY after the mix
        tl.debug_barrier()
        tl.atomic_xchg(
            scratch + FLAGS + pid, (tag.to(tl.int64) << 32) | 1, sem="release", scope="gpu"
        )
    elif SPIN:  # the K1's XRDY poll, as the gemv CTAs run it
        ap = tl.arange(0, 256)
        _, tr, dead = _poll(
            scratch,
            FLAGS + ap,
            ap < NA,
            tag,
            dead,
            scratch,
            pid,
            0,
            -1,
            0,
            0,
            True,
            False,
            False,
            SLEEP_NS,
            True,
            tr,
            0,
            0,
        )
    rec = tl.where(k == 2 * ROUNDS, _smid(False), rec)
    tl.store(stamps + pid * (4 * ROUNDS) + k, rec)


def quantiles(xs: list[float], digits: int = 3) -> dict[str, float]:
    """Median, p10, p90 (rounded to ``digits``) and count; a count alone for none."""
    xs = sorted(xs)
    n = len(xs)
    if not n:
        return {"n": 0}
    return {
        "median": round(st.median(xs), digits),
        "p10": round(xs[n // 10], digits),
        "p90": round(xs[(9 * n) // 10], digits),
        "n": n,
    }


def summarise(stamps: Any, pattern: str, rounds: int, skip: int = 2) -> dict[str, Any]:
    """Round lengths (us) from one launch's stamps [256, 4 rounds] (ns)."""
    s = stamps[:NA]
    put, sat = s[:, 0 : 2 * rounds : 2], s[:, 1 : 2 * rounds : 2]
    ctas = [0] if pattern == "pair" else range(NA)
    out: dict[str, Any] = {}
    if pattern == "try":
        out["try_us"] = [
            float(sat[c, r] - put[c, r]) / 1e3 for c in ctas for r in range(skip, rounds)
        ]
        return out
    # a round from the previous round's satisfaction to this one's (the put is in it)
    out["round_us"] = [
        float(sat[c, r] - sat[c, r - 1]) / 1e3 for c in ctas for r in range(skip, rounds)
    ]
    if pattern == "all":
        # from the round's last put (any CTA) to each CTA's satisfaction
        out["last_put_to_seen_us"] = [
            float(sat[c, r] - put[:, r].max()) / 1e3 for c in ctas for r in range(skip, rounds)
        ]
    return out


def run(rounds: int, launches: int, sleep_ns: int) -> list[dict[str, Any]]:
    import torch

    scratch = torch.zeros(CELLS0.value + 64 * (rounds + 1), dtype=torch.int64, device="cuda")
    stamps = torch.zeros(256, 4 * rounds, dtype=torch.int64, device="cuda")
    tag = 1
    rows = []
    for (form, by_lane), (pi, pat), (si, shp), (oi, oth) in itertools.product(
        FORMS.items(), enumerate(PATTERNS), enumerate(SHAPES), enumerate(OTHERS)
    ):
        acc: dict[str, list[float]] = {}
        sms: set[int] = set()
        for n in range(launches + 1):  # the first compiles and warms
            tag += 1
            handoff_probe[(256,)](
                scratch,
                stamps,
                tag,
                ROUNDS=rounds,
                PATTERN=pi,
                SHAPE=si,
                SPIN=oi,
                SLEEP_NS=sleep_ns,
                BY_LANE=by_lane,
                num_warps=NUM_WARPS,
                maxnreg=128,
            )
            torch.cuda.synchronize()
            if n == 0:
                continue
            h = stamps.cpu().numpy()
            sms.update(int(x) for x in h[:2, 2 * rounds])
            for key, vals in summarise(h, pat, rounds).items():
                acc.setdefault(key, []).extend(vals)
        row = {
            "form": form,
            "pattern": pat,
            "shape": shp,
            "others": oth,
            **{k: quantiles(v) for k, v in acc.items()},
            "sms_of_ctas_0_1": sorted(sms),
        }
        print(json.dumps(row), flush=True)
        rows.append(row)
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--rounds", type=int, default=32)
    ap.add_argument("--launches", type=int, default=5)
    ap.add_argument("--sleep-ns", type=int, default=128, help="the spinning CTAs' back-off")
    a = ap.parse_args(argv)
    import torch

    if not torch.cuda.is_available():
        print(
            "handoff_probe: no CUDA GPU here (it times the K1's mailbox code on one)",
            file=sys.stderr,
        )
        return 2
    if a.out.exists():
        print(f"handoff_probe: {a.out} exists; not overwriting it", file=sys.stderr)
        return 2
    if a.rounds not in (4, 8, 16, 32, 64, 128) or a.launches < 1:
        print(
            "handoff_probe: --rounds a power of two, 4 to 128; --launches at least 1",
            file=sys.stderr,
        )
        return 2
    rows = run(a.rounds, a.launches, a.sleep_ns)
    a.out.write_text(
        json.dumps(
            {
                "env": environment(),
                "rounds": a.rounds,
                "launches": a.launches,
                "sleep_ns": a.sleep_ns,
                "rows": rows,
            },
            indent=1,
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
