"""What slows a hand-off that no weight stream runs beside: pollers spinning around it,
and the stores its producer issued just before its put.

Two things the H200 traces show and ``lab.poll_probe`` did not explain
(docs/calibration.md, "A put behind the CTA's own stores"): PART's fan-in (56 producers)
takes 0.96 us from the last put to seen at S = 1 and 2.1 us at S = 16, where the probe's
fan-in with the other CTAs idle takes 0.80 to 1.06 us at every S; and k.norm's ONRM
hand-off (its producer's put right after 8 to 32 KiB of k.recur's state) takes 1.38 to
1.82 us where the model gives 0.90 to 1.15. No gemv CTA streams beside either. What does
run beside PART is polls: the 197 gemv CTAs spin on XRDY's 56 flags (4 lines, a 128 ns
back-off) and the attn CTAs past their slice spin on WGT (S x 10 pairs, no back-off) until
the gate CTAs put it. Same ``_put`` and ``_poll`` as the K1, 256 threads, 128-register
cap, one launch of 256 programs, globaltimer stamps kept in registers and stored at the
end (as ``lab.poll_probe``):

* ``storm``: PART's hand-off (producers 0..55 put S x 32 pairs once the S consumers,
  CTAs 192.., have said they poll; consumer c polls token c's [64, 32] pairs), beside
  none, either or both of: ``wgt``, each producer after its put polls the round's WGT
  (S x 10 pairs) that the consumers put once they have seen PART (the K1's chain gate ->
  mix); ``flags``, every other CTA spins on 56 flags (8 replicas of 4 lines, 128 ns
  back-off) released after the last round, as the gemv CTAs' XRDY poll;
* ``stores``: a put right after the producer's own KB KiB of stores (k.recur's state,
  8 to 32 KiB), by 1, 64 or 192 producers at once; consumer c (CTAs 192..) polls
  producer c's 256 pairs. Put to seen from the put's issue, and the stores' own issue;
* ``ring``: the poll of a CTA that has just stored KB KiB and put its own pairs (as every
  kda CTA stores k.recur's state, puts its ONRM and polls another's; and as the gate CTAs
  put their slice's PART and poll everyone's): 64 or 192 CTAs in a ring, each polling the
  next one's 1 or 8 pairs a thread; whether its retries, not only its first try, run
  slower behind its own stores.

Usage, on the GPU: ``python -m lab.storm_probe --out FILE [--rounds 16] [--launches 4]``;
read back here with ``python -m lab.storm_probe --report FILE``.
"""

from __future__ import annotations

import argparse
import json
import sys
from itertools import count
from typing import Any

import numpy as np
import triton
import triton.language as tl

from kda_kernel.triton.machine import now as _now
from lab.gpu_jobs import probe_main
from lab.poll_probe import (
    CELLS,
    GO,
    GRID,
    PART_W,
    _keep,
    _launch,
    _put_pairs,
    _rows,
    _spin_until,
    _wait,
    launch_row,
)

TOKENS = (1, 4, 16)  # PART at S = 1, 4, 16
NPROD = 56  # PART's producers: the 56 slices
CONSUMER0 = 192  # consumers: CTAs 192 .. 192 + S - 1 (storm), 192 .. 255 (stores)
WGT_W = 10  # WGT pairs a token: NS + 1 at nb = 8
BACKDROPS = ((0, 0), (1, 0), (0, 1), (1, 1))  # (wgt, flags)
STORE_KIB = (0, 8, 32)
STORERS = (1, 64, 192)
RING = (64, 192)  # ring: CTAs in the ring
RING_PAIRS = (1, 8)  # ring: pairs a thread (k.norm's ONRM+PROJ 1, gate's PART 8)
PART_ROUND = 64 * 16 * PART_W  # a round's PART pairs at S = 16 at most
FLAG_CELLS = 64  # the spinners' 56 flags (padded)
SLEEP_NS = tl.constexpr(128)  # the K1's back-off in its long polls (XRDY)
C0 = tl.constexpr(CONSUMER0)  # the kernels' own copy (a global must be a constexpr there)


@triton.jit(do_not_specialize=["tag", "lead_ns", "wgt0", "flag0"])
def storm_probe(
    scratch,
    stamps,
    tag,
    lead_ns,
    wgt0,
    flag0,
    ROUNDS: tl.constexpr,
    S: tl.constexpr,
    WGT: tl.constexpr,
    FLAGS: tl.constexpr,
):
    """PART's hand-off with the K1's other pollers beside it or not. Consumer rows: (t0,
    seen, retries, WGT put issued); producer rows: (saw ready, put begun, put issued, WGT
    seen); spinner rows: (begun, released, retries, -)."""
    pid = tl.program_id(0)
    tr = tl.zeros([16], tl.int32)
    k = tl.arange(0, 4 * ROUNDS)
    rec = tl.zeros([4 * ROUNDS], tl.int64)
    one = tl.arange(0, 256)
    src = tl.arange(0, 64)[:, None]
    q = tl.arange(0, 32)[None, :]
    w = tl.arange(0, 16 * 32)
    tt = tl.arange(0, 16)[:, None]
    ws = tl.arange(0, 16)[None, :]
    if (pid >= C0) & (pid < C0 + S):
        c = pid - C0
        for r in range(ROUNDS):
            _put_pairs(scratch, GO + 256 * r + c + one, one < 1, tag)
            t0 = _now(False)
            g = CELLS + (64 * S * 32) * r + (src * S + c) * 32 + q
            _, nr = _wait(scratch, g, (src < 56) & (q >= 0), tag, tr, 0)
            t1 = _now(False)
            t2 = t1
            if WGT:
                _put_pairs(scratch, wgt0 + (S * 16) * r + c * 16 + one, one < 10, tag)
                t2 = _now(False)
            rec = _keep(rec, k, r, t0, t1, nr.to(tl.int64), t2)
        if FLAGS:  # noqa: SIM102 (a constexpr branch: Triton folds it on its own)
            if c == 0:
                _put_pairs(scratch, flag0 + one, one < 56, tag)
    elif pid < 56:
        for r in range(ROUNDS):
            _wait(scratch, GO + 256 * r + one, one < S, tag, tr, 0)
            t_go = _now(False)
            t_put = _spin_until(t_go + lead_ns)
            _put_pairs(scratch, CELLS + (64 * S * 32) * r + pid * S * 32 + w, w < S * 32, tag)
            t_done = _now(False)
            t_wgt = t_done
            if WGT:
                gw = wgt0 + (S * 16) * r + tt * 16 + ws
                _wait(scratch, gw, (tt < S) & (ws < 10), tag, tr, 0)
                t_wgt = _now(False)
            rec = _keep(rec, k, r, t_go, t_put, t_done, t_wgt)
    elif FLAGS:
        t0 = _now(False)
        # the XRDY poll's shape: 56 flags on 256 lanes (8 replicas of 4 lines), back-off
        _, nr = _wait(scratch, flag0 + one % 64, one % 64 < 56, tag, tr, SLEEP_NS)
        t1 = _now(False)
        rec = _keep(rec, k, 0, t0, t1, nr.to(tl.int64), 0)
    tl.store(stamps + pid * (4 * ROUNDS) + k, rec)


@triton.jit(do_not_specialize=["tag", "n_prod", "lead_ns"])
def stores_probe(
    scratch,
    work,
    stamps,
    tag,
    n_prod,
    lead_ns,
    ROUNDS: tl.constexpr,
    STORE_W: tl.constexpr,
):
    """Producer p (p < n_prod) waits for consumer p % 64's ready flag, lead_ns more, then
    stores STORE_W words of its own and puts 256 pairs (one a thread); consumer c polls
    producer c's pairs. Producer rows: (saw ready, stores begun, put begun, put issued);
    consumer rows: (t0, seen, retries, -)."""
    pid = tl.program_id(0)
    tr = tl.zeros([16], tl.int32)
    k = tl.arange(0, 4 * ROUNDS)
    rec = tl.zeros([4 * ROUNDS], tl.int64)
    one = tl.arange(0, 256)
    if pid >= C0:
        c = pid - C0
        if c < n_prod:
            for r in range(ROUNDS):
                _put_pairs(scratch, GO + 256 * r + c + one, one < 1, tag)
                t0 = _now(False)
                _, nr = _wait(
                    scratch, CELLS + (256 * 256) * r + c * 256 + one, one >= 0, tag, tr, 0
                )
                t1 = _now(False)
                rec = _keep(rec, k, r, t0, t1, nr.to(tl.int64), 0)
    elif pid < n_prod:
        c = pid % 64
        for r in range(ROUNDS):
            _wait(scratch, GO + 256 * r + c + one, one < 1, tag, tr, 0)
            t_go = _now(False)
            t_st = _spin_until(t_go + lead_ns)
            if STORE_W > 0:
                s = tl.arange(0, STORE_W)
                tl.store(work + pid * STORE_W + s, s.to(tl.float32) + r)
            t_put = _now(False)
            _put_pairs(scratch, CELLS + (256 * 256) * r + pid * 256 + one, one >= 0, tag)
            t_done = _now(False)
            rec = _keep(rec, k, r, t_go, t_st, t_put, t_done)
    tl.store(stamps + pid * (4 * ROUNDS) + k, rec)


@triton.jit(do_not_specialize=["tag", "n", "lead_ns"])
def ring_probe(
    scratch,
    work,
    stamps,
    tag,
    n,
    lead_ns,
    ROUNDS: tl.constexpr,
    STORE_W: tl.constexpr,
    P: tl.constexpr,
):
    """CTA i (i < n) waits lead_ns (0.5 to 2 times, by i % 4) after its last poll, stores
    STORE_W words of its own, puts its P x 256 pairs and polls CTA i + 1's (mod n), as
    every kda CTA stores k.recur's state, puts its ONRM and polls another's. Rows: (stores
    begun, put issued, seen, retries)."""
    pid = tl.program_id(0)
    tr = tl.zeros([16], tl.int32)
    k = tl.arange(0, 4 * ROUNDS)
    rec = tl.zeros([4 * ROUNDS], tl.int64)
    a = tl.arange(0, 256 * P)
    if pid < n:
        nxt = (pid + 1) % n
        t_seen = _now(False)
        for r in range(ROUNDS):
            base = CELLS + (n * 256 * P) * r
            t_st = _spin_until(t_seen + (lead_ns * (1 + pid % 4)) // 2)
            if STORE_W > 0:
                s = tl.arange(0, STORE_W)
                tl.store(work + pid * STORE_W + s, s.to(tl.float32) + r)
            _put_pairs(scratch, base + pid * 256 * P + a, a >= 0, tag)
            t_done = _now(False)
            _, nr = _wait(scratch, base + nxt * 256 * P + a, a >= 0, tag, tr, 0)
            t_seen = _now(False)
            rec = _keep(rec, k, r, t_st, t_done, t_seen, nr.to(tl.int64))
    tl.store(stamps + pid * (4 * ROUNDS) + k, rec)


# --- reading the stamps (host, no GPU) -------------------------------------------------


def read_storm(stamps: np.ndarray, rounds: int, S: int, wgt: bool, skip: int = 2) -> dict:
    """PART's last put to seen a consumer and round, the consumers' spans and retries,
    the producers' skew; with ``wgt`` WGT's put to seen (the last consumer's put to each
    producer's seen)."""
    c = _rows(stamps, range(CONSUMER0, CONSUMER0 + S), rounds, skip)
    p = _rows(stamps, range(NPROD), rounds, skip)
    last_put = p[..., 2].max(axis=0)
    out = {
        "span": (c[..., 1] - c[..., 0]).ravel().tolist(),
        "retries": c[..., 2].ravel().tolist(),
        "last_put_to_seen": (c[..., 1] - last_put[None, :]).ravel().tolist(),
        "producer_skew": (p[..., 1].max(axis=0) - p[..., 1].min(axis=0)).tolist(),
    }
    if wgt:
        last_wgt = c[..., 3].max(axis=0)
        out["wgt_put_to_seen"] = (p[..., 3] - last_wgt[None, :]).ravel().tolist()
    return out


def read_stores(stamps: np.ndarray, rounds: int, n_prod: int, skip: int = 2) -> dict:
    """Put to seen (consumer c's seen less producer c's put issued) and the stores' issue."""
    n = min(n_prod, 64)
    c = _rows(stamps, range(CONSUMER0, CONSUMER0 + n), rounds, skip)
    p = _rows(stamps, range(n), rounds, skip)
    every = _rows(stamps, range(n_prod), rounds, skip)
    return {
        "put_to_seen": (c[..., 1] - p[..., 3]).ravel().tolist(),
        "span": (c[..., 1] - c[..., 0]).ravel().tolist(),
        "retries": c[..., 2].ravel().tolist(),
        "store_issue": (every[..., 2] - every[..., 1]).ravel().tolist(),
        "put_issue": (every[..., 3] - every[..., 2]).ravel().tolist(),
    }


def read_ring(stamps: np.ndarray, rounds: int, n: int, skip: int = 2) -> dict:
    """A poll's span from its own put's issue, put to seen (its neighbour's put issued to
    seen), its retries, and the stores' and put's issue."""
    p = _rows(stamps, range(n), rounds, skip)
    nxt = np.roll(p, -1, axis=0)  # row i: CTA i + 1's
    span = (p[..., 2] - p[..., 1]).ravel()
    retries = p[..., 3].ravel()
    # put to seen only where the poll began before the put it waits for: a poll that
    # begins later (its own lead was the longer) measures its lead, not the hand-off
    late = (p[..., 1] < nxt[..., 1]).ravel()
    return {
        "span": span.tolist(),
        "put_to_seen": (p[..., 2] - nxt[..., 1]).ravel()[late].tolist(),
        "retries": retries.tolist(),
        "per_try": (span / (retries + 1)).tolist(),  # back to back: no back-off
        "once": span[retries == 0].tolist(),  # a try that passed at once
        "store_put_issue": (p[..., 1] - p[..., 0]).ravel().tolist(),
    }


# --- running it (GPU) ------------------------------------------------------------------


def run(rounds: int, launches: int, lead_ns: int) -> list[dict[str, Any]]:
    import torch

    wgt0 = CELLS.value + PART_ROUND * rounds
    flag0 = wgt0 + 16 * 16 * rounds
    ring = max(RING) * 256 * max(RING_PAIRS)  # a round's ring pairs at most
    n_cells = max(flag0 + FLAG_CELLS, CELLS.value + max(256 * 256, ring) * rounds)
    scratch = torch.zeros(n_cells, dtype=torch.int64, device="cuda")
    work = torch.ones(GRID * max(STORE_KIB) * 256, dtype=torch.float32, device="cuda")
    stamps = torch.zeros(GRID, 4 * rounds, dtype=torch.int64, device="cuda")
    tags = count(2)
    rows: list[dict[str, Any]] = []

    def each(what: dict[str, Any], call: Any, read: Any) -> None:
        row, _ = launch_row(
            what, call, read, launches=launches, scratch=scratch, stamps=stamps, tags=tags
        )
        print(json.dumps(row), flush=True)
        rows.append(row)

    for s in TOKENS:
        for wg, fl in BACKDROPS:
            each(
                {"experiment": "storm", "tokens": s, "wgt": wg, "flags": fl, "lead_ns": lead_ns},
                lambda tg, s=s, wg=wg, fl=fl: _launch(
                    storm_probe,
                    (scratch, stamps, tg, lead_ns, wgt0, flag0),
                    ROUNDS=rounds,
                    S=s,
                    WGT=wg,
                    FLAGS=fl,
                ),
                lambda h, s=s, wg=wg: read_storm(h, rounds, s, bool(wg)),
            )
    for kib in STORE_KIB:
        for n in STORERS:
            each(
                {"experiment": "stores", "kib": kib, "producers": n, "lead_ns": lead_ns},
                lambda tg, kib=kib, n=n: _launch(
                    stores_probe,
                    (scratch, work, stamps, tg, n, lead_ns),
                    ROUNDS=rounds,
                    STORE_W=kib * 256,
                ),
                lambda h, n=n: read_stores(h, rounds, n),
            )
    for kib in STORE_KIB:
        for pairs in RING_PAIRS:
            for n in RING:
                each(
                    {
                        "experiment": "ring",
                        "kib": kib,
                        "pairs": pairs,
                        "ctas": n,
                        "lead_ns": lead_ns,
                    },
                    lambda tg, kib=kib, pairs=pairs, n=n: _launch(
                        ring_probe,
                        (scratch, work, stamps, tg, n, lead_ns),
                        ROUNDS=rounds,
                        STORE_W=kib * 256,
                        P=pairs,
                    ),
                    lambda h, n=n: read_ring(h, rounds, n),
                )
    return rows


def report(doc: dict[str, Any]) -> str:
    """The run's tables (medians, ns), as ``docs/calibration.md`` quotes them."""
    rows = doc["rows"]
    out = [f"rounds {doc['rounds']}, launches {doc['launches']}, {doc['env'].get('gpu', '?')}"]
    out.append(
        "\nstorm: tokens, beside | PART last put to seen | consumer span | retries | "
        "producers' skew | WGT put to seen"
    )
    names = {(0, 0): "nothing", (1, 0): "wgt", (0, 1): "flags", (1, 1): "wgt+flags"}
    for r in rows:
        if r["experiment"] == "storm":
            wgt = r.get("wgt_put_to_seen", {}).get("median", "-")
            out.append(
                f"  {r['tokens']}, {names[(r['wgt'], r['flags'])]} | "
                f"{r['last_put_to_seen']['median']} | {r['span']['median']} | "
                f"{r['retries']['median']} | {r['producer_skew']['median']} | {wgt}"
            )
    out.append(
        "\nstores: KiB, producers | put to seen median (p10..p90) | stores' issue | put issue"
    )
    for r in rows:
        if r["experiment"] == "stores":
            s = r["put_to_seen"]
            out.append(
                f"  {r['kib']}, {r['producers']} | {s['median']} ({s['p10']}..{s['p90']}) | "
                f"{r['store_issue']['median']} | {r['put_issue']['median']}"
            )
    out.append(
        "\nring: KiB, pairs a thread, CTAs | a try passed at once (p10) | a try, retrying "
        "(span / tries) | put to seen, polls begun before the put | retries | stores and put issue"
    )
    for r in rows:
        if r["experiment"] == "ring":
            once = r.get("once", {})  # runs before the reader kept them have neither
            per = r.get("per_try", {})
            out.append(
                f"  {r['kib']}, {r['pairs']}, {r['ctas']} | {once.get('median', '-')} "
                f"({once.get('p10', '-')}) | {per.get('median', '-')} | "
                f"{r['put_to_seen']['median']} | {r['retries']['median']} | "
                f"{r['store_put_issue']['median']}"
            )
    return "\n".join(out)


def _args(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("--lead-ns", type=int, default=2000, help="producers' wait before the put")


def _bad(a: argparse.Namespace) -> str | None:
    return "--lead-ns not negative" if a.lead_ns < 0 else None


def _run(a: argparse.Namespace) -> dict[str, Any]:
    rows = run(a.rounds, a.launches, a.lead_ns)
    return {"rounds": a.rounds, "launches": a.launches, "lead_ns": a.lead_ns, "rows": rows}


def main(argv: list[str] | None = None) -> int:
    return probe_main(
        argv,
        name="storm_probe",
        doc=__doc__ or "",
        add_args=_args,
        bad_args=_bad,
        run=_run,
        report=report,
    )


if __name__ == "__main__":
    sys.exit(main())
