"""What a poll's time is made of, with the K1's own ``_put`` and ``_poll`` on the GPU.

The nine H200 traces price a retry at 343 ns + 26 ns a pair a thread + 2.1 ns a ns of
back-off (``lab.poll_covariates``), and leave two things unexplained: a first try issued
right after the CTA's own loads or stores runs long (k.conv +239 ns, k.norm +527), and
put to seen grows with the producers of a hand-off (PART 0.96 us at S = 1, 2.1 us at
S = 16). The traces record neither put times nor loads; this probe does, in four
experiments (same ``_poll``, 256 threads, 128-register cap, one launch of 256 programs,
globaltimer stamps in 32 ns steps, kept in registers and stored once at the end so no
stamp store precedes a timed poll):

* ``try``: one try that passes at once (pairs the host wrote with this launch's tag),
  P = 1, 2, 4, 8 pairs a thread; each of 64 CTAs polls its own pairs;
* ``retry``: a poll that retries until a releaser CTA puts its pairs ``delay`` ns after
  seeing the poller's go flag; P pairs a thread, with and without a ``nanosleep`` between
  tries: a retry's cost is the slope of span on retries; put to seen is read off the
  releaser's put stamp;
* ``traffic``: the ``try`` poll (one pair a thread) issued right after the CTA's own KB
  KiB of stores (k.recur's state: 8 to 32 KB) or after KB KiB of loads not yet used
  (k.stage's ``k.in`` and ``k.fb``), against neither;
* ``fanin``: PART's hand-off: N producers (1, 8, 56) each put S x 32 pairs once the S
  consumers have said they poll; consumer c polls token c's [64 producers, 32] pairs
  (8 a thread, as the gate's PART poll). Put to seen from the last producer's put, and
  the producers' skew apart from it.

Usage, on the GPU: ``python -m lab.poll_probe --out FILE [--rounds 16] [--launches 4]``;
read back here with ``python -m lab.poll_probe --report FILE``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Iterator
from itertools import count
from typing import Any

import numpy as np
import triton
import triton.language as tl

from kda_kernel.triton.limits import NUM_WARPS
from kda_kernel.triton.machine import now as _now
from kda_kernel.triton.mailbox import poll as _poll
from kda_kernel.triton.mailbox import put as _put
from lab.gpu_jobs import probe_main
from lab.handoff_probe import quantiles

PAIRS = (1, 2, 4, 8)  # pairs a thread (the K1's sites hold 1 to 8)
SLEEPS = (0, 128)  # the K1's Build.sleep_ns and none
TRAFFIC = (("none", 0), ("stores", 8), ("stores", 16), ("stores", 32), ("loads", 16), ("loads", 32))
PRODUCERS = (1, 8, 56)  # PART: 56 slices
TOKENS = (1, 4, 16)  # PART at S = 1, 4, 16 (a consumer a token)
NPOLL = 64  # polling CTAs of try, retry and traffic
RELEASER0 = 128  # retry: CTA RELEASER0 + i releases poller i
CONSUMER0 = 192  # fanin: consumers CTA CONSUMER0 .. + S - 1
PART_W = 32  # fanin: pairs a producer puts a token (16 sources x 2 sums)
GRID = 256
GO = tl.constexpr(0)  # retry's go flags / fanin's ready flags: round r at GO + 256 r + i
CELLS = tl.constexpr(65536)  # the polled pairs start here (a round's: CELLS + r x ROUND)
ROUND_MAX = 64 * 256 * 8  # a round's pairs at most: retry's 64 pollers at 8 a thread
STOP = tl.constexpr(60000)  # the streaming CTAs stop when this cell holds the launch's tag
CHUNK = 4096  # words a streaming CTA loads at once (16 KB, a gemv CTA's chunk of rg0)
WEIGHT_WORDS = 1 << 26  # 256 MB of weights streamed: past the L2, from HBM


@triton.jit
def _wait(scratch, gidx, live, tag, tr, SLEEP_NS: tl.constexpr):
    """The K1's ``_poll`` with its trace words on (retries in word 2), as the traced K1."""
    w, tr, _ = _poll(
        scratch,
        gidx,
        live,
        tag,
        tag * 0,
        scratch,
        0,
        0,
        -1,
        0,
        0,
        False,
        False,
        False,
        SLEEP_NS,
        True,
        tr,
        0,
        1,
    )
    nr = tl.sum(tl.where(tl.arange(0, 16) == 2, tr, 0))
    return w, nr


@triton.jit
def _put_pairs(scratch, gidx, live, tag):
    return _put(scratch, gidx, gidx * 0.0, live, tag, 0, scratch, 0, -1, 0, -1, False, False)


@triton.jit
def _spin_until(t_end):
    t = _now(False)
    while t < t_end:
        t = _now(False)
    return t


@triton.jit
def _keep(rec, k, r, a, b, c, d):
    """Round r's four stamps into the register record (stored once, at the end)."""
    rec = tl.where(k == 4 * r, a, rec)
    rec = tl.where(k == 4 * r + 1, b, rec)
    rec = tl.where(k == 4 * r + 2, c, rec)
    return tl.where(k == 4 * r + 3, d, rec)


@triton.jit
def _stream(scratch, weights, n_chunks, pid, tag):
    """A gemv CTA's weight stream: 16 KB loads from HBM, chunk after chunk, until the stop
    cell holds the tag. Returns the sum (stored, so the loads are not dropped)."""
    s = tl.arange(0, 4096)
    acc = tl.zeros([4096], tl.float32)
    i = pid
    stop = tl.load(scratch + STOP, volatile=True)
    while (stop >> 32).to(tl.int32) != tag:
        acc += tl.load(weights + (i % n_chunks) * 4096 + s)
        i += 256
        stop = tl.load(scratch + STOP, volatile=True)
    return tl.sum(acc)


@triton.jit
def _stop(scratch, tag):
    """Stop the streaming CTAs (release: after this CTA's own stamps are made)."""
    tl.atomic_xchg(scratch + STOP, tag.to(tl.int64) << 32, sem="release", scope="gpu")


@triton.jit(do_not_specialize=["tag"])
def try_probe(scratch, stamps, tag, ROUNDS: tl.constexpr, P: tl.constexpr):
    """Pollers 0 .. NPOLL-1 re-poll their own P x 256 pairs, which hold the tag already."""
    pid = tl.program_id(0)
    tr = tl.zeros([16], tl.int32)
    k = tl.arange(0, 4 * ROUNDS)
    rec = tl.zeros([4 * ROUNDS], tl.int64)
    a = tl.arange(0, 256 * P)
    if pid < 64:
        for r in range(ROUNDS):
            t0 = _now(False)
            _, nr = _wait(scratch, CELLS + pid * 256 * P + a, a >= 0, tag, tr, 0)
            t1 = _now(False)
            rec = _keep(rec, k, r, t0, t1, nr.to(tl.int64), 0)
    tl.store(stamps + pid * (4 * ROUNDS) + k, rec)


@triton.jit(do_not_specialize=["tag", "delay_ns"])
def retry_probe(
    scratch,
    stamps,
    tag,
    delay_ns,
    ROUNDS: tl.constexpr,
    P: tl.constexpr,
    SLEEP_NS: tl.constexpr,
):
    """Poller i raises its go flag and polls P x 256 pairs that releaser i puts (i % 4 + 1)
    delay_ns / 2 after it saw the flag. Poller rows: (t0, t1, retries, -); releaser rows:
    (saw go, put begun, put issued, -)."""
    pid = tl.program_id(0)
    tr = tl.zeros([16], tl.int32)
    k = tl.arange(0, 4 * ROUNDS)
    rec = tl.zeros([4 * ROUNDS], tl.int64)
    a = tl.arange(0, 256 * P)
    one = tl.arange(0, 256)
    if pid < 64:
        for r in range(ROUNDS):
            _put_pairs(scratch, GO + 256 * r + pid + one, one < 1, tag)
            t0 = _now(False)
            _, nr = _wait(
                scratch, CELLS + (64 * 256 * P) * r + pid * 256 * P + a, a >= 0, tag, tr, SLEEP_NS
            )
            t1 = _now(False)
            rec = _keep(rec, k, r, t0, t1, nr.to(tl.int64), 0)
    elif (pid >= 128) & (pid < 192):
        i = pid - 128
        for r in range(ROUNDS):
            _wait(scratch, GO + 256 * r + i + one, one < 1, tag, tr, 0)
            t_go = _now(False)
            # delays of 0.5, 1, 1.5 and 2 delay_ns, so retries spread and fit a slope
            t_put = _spin_until(t_go + (delay_ns * (1 + i % 4)) // 2)
            _put_pairs(scratch, CELLS + (64 * 256 * P) * r + i * 256 * P + a, a >= 0, tag)
            t_done = _now(False)
            rec = _keep(rec, k, r, t_go, t_put, t_done, 0)
    tl.store(stamps + pid * (4 * ROUNDS) + k, rec)


@triton.jit(do_not_specialize=["tag"])
def traffic_probe(
    scratch,
    work,
    stamps,
    weights,
    n_chunks,
    tag,
    ROUNDS: tl.constexpr,
    STORE_W: tl.constexpr,
    LOAD_W: tl.constexpr,
    STREAM: tl.constexpr,
):
    """The ``try`` poll (one pair a thread) right after STORE_W words of the CTA's own
    stores or LOAD_W words of loads used only after the poll (0: neither); with STREAM
    the other 192 CTAs stream weights meanwhile, as the gemv CTAs do."""
    pid = tl.program_id(0)
    tr = tl.zeros([16], tl.int32)
    k = tl.arange(0, 4 * ROUNDS)
    rec = tl.zeros([4 * ROUNDS], tl.int64)
    a = tl.arange(0, 256)
    acc = tl.zeros([], tl.float32)
    if pid < 64:
        for r in range(ROUNDS):
            if STORE_W > 0:
                s = tl.arange(0, STORE_W)
                tl.store(work + pid * STORE_W + s, s.to(tl.float32) + r)
            if LOAD_W > 0:
                s = tl.arange(0, LOAD_W)
                x = tl.load(work + ((pid + r) % 64) * LOAD_W + s)
            t0 = _now(False)
            _, nr = _wait(scratch, CELLS + pid * 256 + a, a >= 0, tag, tr, 0)
            t1 = _now(False)
            if LOAD_W > 0:
                acc += tl.sum(x)
            rec = _keep(rec, k, r, t0, t1, nr.to(tl.int64), 0)
        if LOAD_W > 0:  # the loads are used, after every poll: they cannot be dropped
            rec = tl.where(k == 3, acc.to(tl.int64, bitcast=False), rec)
        if STREAM:  # noqa: SIM102 (a constexpr branch: Triton folds it on its own)
            if pid == 0:
                _stop(scratch, tag)
    elif STREAM:
        rec = tl.where(k == 3, _stream(scratch, weights, n_chunks, pid, tag).to(tl.int64), rec)
    tl.store(stamps + pid * (4 * ROUNDS) + k, rec)


@triton.jit(do_not_specialize=["tag", "n_prod", "lead_ns"])
def fanin_probe(
    scratch,
    stamps,
    weights,
    n_chunks,
    tag,
    n_prod,
    lead_ns,
    ROUNDS: tl.constexpr,
    S: tl.constexpr,
    STREAM: tl.constexpr,
):
    """PART's hand-off. Consumer c (CTA CONSUMER0 + c, c < S) raises its ready flag and
    polls token c's pairs of every producer; producer p (CTA p < n_prod) waits for the S
    ready flags, then lead_ns more, and puts its S x 32 pairs in one store; with STREAM the
    other CTAs stream weights meanwhile. Consumer rows: (t0, seen, retries, -); producer
    rows: (saw ready, put begun, put issued, -)."""
    pid = tl.program_id(0)
    tr = tl.zeros([16], tl.int32)
    k = tl.arange(0, 4 * ROUNDS)
    rec = tl.zeros([4 * ROUNDS], tl.int64)
    one = tl.arange(0, 256)
    src = tl.arange(0, 64)[:, None]
    q = tl.arange(0, 32)[None, :]
    w = tl.arange(0, 16 * 32)
    if (pid >= 192) & (pid < 192 + S):
        c = pid - 192
        for r in range(ROUNDS):
            _put_pairs(scratch, GO + 256 * r + c + one, one < 1, tag)
            t0 = _now(False)
            g = CELLS + (64 * S * 32) * r + (src * S + c) * 32 + q
            _, nr = _wait(scratch, g, (src < n_prod) & (q >= 0), tag, tr, 0)
            t1 = _now(False)
            rec = _keep(rec, k, r, t0, t1, nr.to(tl.int64), 0)
        if STREAM:  # noqa: SIM102 (a constexpr branch: Triton folds it on its own)
            if c == 0:
                _stop(scratch, tag)
    elif pid < n_prod:
        for r in range(ROUNDS):
            _wait(scratch, GO + 256 * r + one, one < S, tag, tr, 0)
            t_go = _now(False)
            t_put = _spin_until(t_go + lead_ns)
            _put_pairs(scratch, CELLS + (64 * S * 32) * r + pid * S * 32 + w, w < S * 32, tag)
            t_done = _now(False)
            rec = _keep(rec, k, r, t_go, t_put, t_done, 0)
    elif STREAM:
        rec = tl.where(k == 3, _stream(scratch, weights, n_chunks, pid, tag).to(tl.int64), rec)
    tl.store(stamps + pid * (4 * ROUNDS) + k, rec)


# --- reading the stamps (host, no GPU) -------------------------------------------------


def _rows(stamps: np.ndarray, ctas: range, rounds: int, skip: int) -> np.ndarray:
    """[ctas, rounds - skip, 4] of one launch's stamps (the first rounds warm up)."""
    return stamps[ctas.start : ctas.stop].reshape(len(ctas), rounds, 4)[:, skip:]


def read_try(stamps: np.ndarray, rounds: int, skip: int = 2) -> dict[str, list[float]]:
    p = _rows(stamps, range(NPOLL), rounds, skip)
    return {"span": (p[..., 1] - p[..., 0]).ravel().tolist(), "retries": p[..., 2].ravel().tolist()}


def read_retry(stamps: np.ndarray, rounds: int, skip: int = 2) -> dict[str, list[float]]:
    p = _rows(stamps, range(NPOLL), rounds, skip)
    rel = _rows(stamps, range(RELEASER0, RELEASER0 + NPOLL), rounds, skip)
    return {
        "span": (p[..., 1] - p[..., 0]).ravel().tolist(),
        "retries": p[..., 2].ravel().tolist(),
        "put_to_seen": (p[..., 1] - rel[..., 2]).ravel().tolist(),
        "go_to_seen_by_releaser": (rel[..., 0] - p[..., 0]).ravel().tolist(),
        "put_issue": (rel[..., 2] - rel[..., 1]).ravel().tolist(),
    }


def read_fanin(
    stamps: np.ndarray, rounds: int, n_prod: int, S: int, skip: int = 2
) -> dict[str, list[float]]:
    c = _rows(stamps, range(CONSUMER0, CONSUMER0 + S), rounds, skip)
    p = _rows(stamps, range(n_prod), rounds, skip)
    last_put = p[..., 2].max(axis=0)  # [rounds]: the last producer's put issued
    first_put = p[..., 1].min(axis=0)
    return {
        "span": (c[..., 1] - c[..., 0]).ravel().tolist(),
        "retries": c[..., 2].ravel().tolist(),
        "last_put_to_seen": (c[..., 1] - last_put[None, :]).ravel().tolist(),
        "producer_skew": (p[..., 1].max(axis=0) - first_put).tolist(),
        "put_issue": (p[..., 2] - p[..., 1]).ravel().tolist(),
    }


def retry_cost(span: list[float], retries: list[float]) -> dict[str, float] | None:
    """Least squares span = a + b retries over the polls that retried at least once: b
    is one retry's cost (the release's phase within a try spreads the spans about it)."""
    x = np.asarray(retries, float)
    y = np.asarray(span, float)
    keep = x > 0
    if keep.sum() < 3 or np.ptp(x[keep]) == 0:
        return None
    b, a = np.polyfit(x[keep], y[keep], 1)
    return {"per_retry": round(float(b), 1), "intercept": round(float(a), 1)}


# --- running it (GPU) ------------------------------------------------------------------


def _launch(kernel: Any, grid_args: tuple, **cx: Any) -> None:
    kernel[(GRID,)](*grid_args, num_warps=NUM_WARPS, maxnreg=128, **cx)


def launch_row(
    what: dict[str, Any],
    call: Callable[[int], None],
    read: Callable[[np.ndarray], dict[str, list[float]]],
    *,
    launches: int,
    scratch: Any,
    stamps: Any,
    tags: Iterator[int],
    prefill: Callable[[int], None] | None = None,
) -> tuple[dict[str, Any], dict[str, list[float]]]:
    """One experiment's row: ``launches`` + 1 launches of ``call(tag)`` (the first compiles
    and warms), each with a tag of its own and the scratch zeroed (then ``prefill(tag)``);
    what ``read`` takes from each launch's stamps, as quantiles beside ``what``, and the
    values themselves."""
    import torch

    acc: dict[str, list[float]] = {}
    t = time.perf_counter()
    for n in range(launches + 1):
        tag = next(tags)
        scratch.zero_()
        if prefill is not None:
            prefill(tag)
        call(tag)
        torch.cuda.synchronize()
        if n == 0:
            continue
        for key, vals in read(stamps.cpu().numpy()).items():
            acc.setdefault(key, []).extend(vals)
    row = what | {k: quantiles(v, 1) for k, v in acc.items()}
    row["seconds"] = round(time.perf_counter() - t, 2)
    return row, acc


def run(rounds: int, launches: int, delay_ns: int, lead_ns: int) -> list[dict[str, Any]]:
    import torch

    scratch = torch.zeros(CELLS.value + ROUND_MAX * rounds, dtype=torch.int64, device="cuda")
    work = torch.ones(64 * 8192, dtype=torch.float32, device="cuda")
    weights = torch.ones(WEIGHT_WORDS, dtype=torch.float32, device="cuda")
    n_chunks = WEIGHT_WORDS // CHUNK
    stamps = torch.zeros(GRID, 4 * rounds, dtype=torch.int64, device="cuda")
    tags = count(2)
    rows: list[dict[str, Any]] = []

    def held(tag: int) -> None:  # the pairs a try passes on hold the launch's tag already
        scratch[CELLS.value : CELLS.value + ROUND_MAX] = tag << 32

    def each(what: dict[str, Any], call: Any, read: Any) -> None:
        prefill = held if what["experiment"] in ("try", "traffic") else None
        at = {"launches": launches, "scratch": scratch, "stamps": stamps, "tags": tags}
        row, acc = launch_row(what, call, read, prefill=prefill, **at)
        if "retries" in acc and what["experiment"] in ("retry", "fanin"):
            row["retry_fit"] = retry_cost(acc["span"], acc["retries"])
        print(json.dumps(row), flush=True)
        rows.append(row)

    for p in PAIRS:
        each(
            {"experiment": "try", "pairs": p},
            lambda tg, p=p: _launch(try_probe, (scratch, stamps, tg), ROUNDS=rounds, P=p),
            lambda h: read_try(h, rounds),
        )
    for p in PAIRS:
        for sl in SLEEPS:
            each(
                {"experiment": "retry", "pairs": p, "sleep_ns": sl, "delay_ns": delay_ns},
                lambda tg, p=p, sl=sl: _launch(
                    retry_probe,
                    (scratch, stamps, tg, delay_ns),
                    ROUNDS=rounds,
                    P=p,
                    SLEEP_NS=sl,
                ),
                lambda h: read_retry(h, rounds),
            )
    for stream in (0, 1):  # the other CTAs idle, or streaming weights as the gemv CTAs do
        for kind, kb in TRAFFIC:
            sw = kb * 256 if kind == "stores" else 0
            lw = kb * 256 if kind == "loads" else 0
            each(
                {"experiment": "traffic", "kind": kind, "kib": kb, "stream": stream},
                lambda tg, sw=sw, lw=lw, st=stream: _launch(
                    traffic_probe,
                    (scratch, work, stamps, weights, n_chunks, tg),
                    ROUNDS=rounds,
                    STORE_W=sw,
                    LOAD_W=lw,
                    STREAM=st,
                ),
                lambda h: read_try(h, rounds),
            )
        for s in TOKENS:
            for n in PRODUCERS:
                each(
                    {
                        "experiment": "fanin",
                        "producers": n,
                        "tokens": s,
                        "lead_ns": lead_ns,
                        "stream": stream,
                    },
                    lambda tg, n=n, s=s, st=stream: _launch(
                        fanin_probe,
                        (scratch, stamps, weights, n_chunks, tg, n, lead_ns),
                        ROUNDS=rounds,
                        S=s,
                        STREAM=st,
                    ),
                    lambda h, n=n, s=s: read_fanin(h, rounds, n, s),
                )
    return rows


def report(doc: dict[str, Any]) -> str:
    """The run's tables (medians, ns), as ``docs/calibration.md`` quotes them."""
    rows = doc["rows"]
    out = [f"rounds {doc['rounds']}, launches {doc['launches']}, {doc['env'].get('gpu', '?')}"]
    out.append("\ntry, passed at once: pairs a thread | span median (p10..p90)")
    for r in rows:
        if r["experiment"] == "try":
            s = r["span"]
            out.append(f"  {r['pairs']} | {s['median']} ({s['p10']}..{s['p90']}) n={s['n']}")
    once = {r["pairs"]: r["span"]["median"] for r in rows if r["experiment"] == "try"}
    out.append(
        "\nretry: pairs, sleep | retries median | per retry (fit) | per retry ((span - "
        "one try) / retries, medians) | put to seen median"
    )
    for r in rows:
        if r["experiment"] == "retry":
            f = r.get("retry_fit") or {}
            per = "-"
            if r["pairs"] in once and r["retries"]["median"]:
                per = round((r["span"]["median"] - once[r["pairs"]]) / r["retries"]["median"], 1)
            out.append(
                f"  {r['pairs']}, {r['sleep_ns']} | {r['retries']['median']} | "
                f"{f.get('per_retry', '-')} | {per} | {r['put_to_seen']['median']}"
            )
    out.append("\ntraffic before a try: kind KiB, others | span median (p10..p90)")
    others = ("idle", "streaming")
    for r in rows:
        if r["experiment"] == "traffic":
            s = r["span"]
            o = others[r.get("stream", 0)]
            out.append(f"  {r['kind']} {r['kib']}, {o} | {s['median']} ({s['p10']}..{s['p90']})")
    out.append(
        "\nfanin: producers x tokens, others | last put to seen | producers' skew | span | retries"
    )
    for r in rows:
        if r["experiment"] == "fanin":
            o = others[r.get("stream", 0)]
            out.append(
                f"  {r['producers']} x {r['tokens']}, {o} | {r['last_put_to_seen']['median']} | "
                f"{r['producer_skew']['median']} | {r['span']['median']} | "
                f"{r['retries']['median']}"
            )
    return "\n".join(out)


def _args(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("--delay-ns", type=int, default=3000, help="retry: the releaser's wait")
    ap.add_argument("--lead-ns", type=int, default=2000, help="fanin: producers' wait")


def _bad(a: argparse.Namespace) -> str | None:
    return "--delay-ns and --lead-ns not negative" if a.delay_ns < 0 or a.lead_ns < 0 else None


def _run(a: argparse.Namespace) -> dict[str, Any]:
    rows = run(a.rounds, a.launches, a.delay_ns, a.lead_ns)
    return {
        "rounds": a.rounds,
        "launches": a.launches,
        "delay_ns": a.delay_ns,
        "lead_ns": a.lead_ns,
        "rows": rows,
    }


def main(argv: list[str] | None = None) -> int:
    return probe_main(
        argv,
        name="poll_probe",
        doc=__doc__ or "",
        add_args=_args,
        bad_args=_bad,
        run=_run,
        report=report,
    )


if __name__ == "__main__":
    sys.exit(main())
