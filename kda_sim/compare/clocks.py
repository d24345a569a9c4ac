"""Per-SM (per-CU / per-XCD on AMD) clock offsets estimated from causality.

A poll cannot be satisfied before its producer's put: in true time
``put_p <= sat_c``. Each unit u reads a clock that is off by ``e_u``
(observed = true + e_u), so every hand-off of the trace bounds a difference of
offsets: ``e_c - e_p <= sat_c - put_p`` (observed times; bounds where the trace
has no exact record, see :mod:`kda_sim.compare.model`). Only the tightest hand-off
of each ordered unit pair matters, so the problem is a system of difference
constraints, solved as two linear programs (``scipy.optimize.linprog``, HiGHS):

1. **consistency (L1)**: minimise the total slack ``sum s_pq`` that the pair
   constraints ``e_q - e_p <= m_pq + s_pq`` need. A trace whose hand-offs all agree
   with some offsets needs none; L1 keeps a hand-off no offset can explain on its
   own pair(s) instead of spreading it over every clock. The largest slack is the
   **residual**: what no per-unit offset removes.
2. **estimate**, among offsets that need no more slack than that, by the clock kind
   (``meta.clock``):

   - a *device-wide* clock (``globaltimer``, ``s_memrealtime``): the offsets nearest
     0 (L1) -- the clocks agree unless causality proves they do not; on AMD (``group=
     "xcd"``) the per-XCD offsets below are estimated too and reported, not applied
     (``ClockFit.estimate``): ktrace takes ``s_memrealtime`` as one clock, ROCm's
     TransferBench says each XCC's may be slightly uncoordinated, and only a trace
     tells which (``--clock-mode per_unit`` applies them);
   - a *per-unit* clock (``clock64``, ``s_memtime``, anything else): a poll that
     retried was spinning on its last producer, so its tightest hand-off took about
     the hand-off latency ``lam``; minimise ``sum |gap - lam|`` over those polls,
     ``lam`` the median of such gaps whose two ends share a clock (no offset
     needed). Ties are broken by maximising every unit's smallest hand-off margin
     (capped at a typical gap): for two units with hand-offs both ways, the
     midpoint of the feasible interval (NTP's estimate).

   Measured on a simulated launch put on per-SM clocks off by up to +-5 us (H200,
   R=2 L=2, jitter seed 1, offsets seed 0, as ``tests/compare/test_clocks.py``):
   median error 27 ns, largest 182 ns.

   - *per-XCD* clocks (``group="xcd"``, AMD; a per-unit clock kind): every XCD at the
     centre of its **bracket**. A hand-off p -> u bounds ``e_u <= e_p + m_pu - F`` and one
     u -> q bounds ``e_u >= e_q - m_uq + F``, ``m`` the tightest gap of the ordered pair
     (over every hand-off, waited or not) and ``F`` the cross-XCD hand-off latency's
     floor; the centre of ``[max lo, min hi]`` does not depend on ``F``. The offsets are
     the fixed point of those centres (swept, 8 XCDs settle in a few sweeps); an XCD
     with hand-offs one way only sits ``F`` (estimated as the smallest half bracket)
     from its tightest one; the nearest offsets that keep every hand-off causal (with
     phase 1's slack) are taken after. **Assumption**: one cross-XCD latency floor, the
     same both ways and between every pair of XCDs (the profiles' single
     ``visibility_cross_xcd``); a faster pair of XCDs reads as an offset of half the
     difference. The roles make the hand-off graph one-sided (at R=1 L=2 XCD 7's puts
     end 38 to 41 waits on each other XCD, 3 to 7 of its own are ended by each of five),
     so pairwise NTP estimates (the smallest gap each way) are few and loose; the floor
     is what ties the pairs together. Measured
     (``scripts/xcd_clock_recovery.py``, docs/calibration.md): errors of 2 to 13 ns
     with exact latencies, 24 to 81 ns with latencies jittered +-15 %, whose brackets
     are 47 to 185 ns wide on median.

Per-unit offsets are defined up to a constant: they sum to zero. A unit with no
hand-off to another gets 0.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from kda_sim.compare.model import ModelView, model_view, shifted
from kda_sim.errors import InvalidInput
from kda_sim.timeline.model import Timeline

# clocks every unit reads alike: NVIDIA's globaltimer, AMD's s_memrealtime (a constant
# 100 MHz counter); s_memtime / clock64 are per unit
GLOBAL_CLOCKS = ("globaltimer", "memrealtime")
_RESOLUTION_BY_CLOCK = (("globaltimer", 32.0), ("memrealtime", 10.0), ("simulated", 0.0))
# the per-XCD bracket centre's sweeps (in units of the largest gap: 1e-7 of 10 us is 1 ps);
# 8 XCDs settle in 6 to 13 sweeps on the simulated launches of docs/calibration.md
MAX_SWEEPS = 1000
SWEEP_TOL = 1e-7


def clock_resolution(tl: Timeline) -> float:
    """The tick of the trace's clock in ns (meta.extra, else from the clock's name)."""
    v = tl.meta.extra.get("clock_resolution_ns") if isinstance(tl.meta.extra, dict) else None
    if isinstance(v, int | float) and not isinstance(v, bool) and v >= 0:
        return float(v)
    name = tl.meta.clock.lower()
    for key, res in _RESOLUTION_BY_CLOCK:
        if key in name:
            return res
    return 0.0


def default_group(tl: Timeline) -> str:
    """ "xcd" on AMD (a CU's clock is its XCD's), "unit" (the SM) elsewhere."""
    try:
        from kda_sim.machine.profile import load_profile

        vendor = load_profile(tl.meta.gpu).vendor
    except Exception:  # a GPU with no bundled profile: one clock a unit is the safe side
        return "unit"
    return "xcd" if vendor == "amd" and any(c.xcd is not None for c in tl.ctas) else "unit"


def unit_keys(tl: Timeline, group: str = "unit") -> list[int]:
    """The clock each CTA reads: its unit (SM / CU) or, ``group="xcd"``, its XCD; a CTA
    whose unit (XCD) was not recorded is its own clock, ``-(cta + 1)``."""
    if group not in ("unit", "xcd"):
        raise InvalidInput(f"clock group {group!r}: 'unit' or 'xcd'", what="group")
    out = []
    for c in tl.ctas:
        k = c.unit if group == "unit" else c.xcd
        out.append(k if k is not None else -(c.cta + 1))
    return out


@dataclass
class ClockFit:
    units: list[int]  # unit keys (negative: a CTA with no unit recorded, -(cta + 1))
    offsets: np.ndarray  # [units] ns, observed - true
    cta_offset: np.ndarray  # [ctas] the offset of each CTA's unit
    residual_ns: float  # largest slack no offset removes (0: the hand-offs agree)
    total_slack_ns: float
    margin_ns: float  # smallest hand-off margin after alignment (over units with hand-offs)
    resolution_ns: float
    n_handoffs: int
    n_pairs: int
    inconsistent_pairs: list[tuple[int, int, float]] = field(default_factory=list)
    same_unit_violations: int = 0
    mode: str = "per_unit"
    group: str = "unit"
    # per-XCD clocks read as device-wide (``s_memrealtime``): the bracket-centre offsets
    # the hand-offs point to, reported and not applied (empty otherwise); ROCm's
    # TransferBench warns that each XCC's wall clock may be slightly uncoordinated
    estimate: np.ndarray = field(default_factory=lambda: np.zeros(0))

    def offset_of(self, unit: int) -> float:
        return float(self.offsets[self.units.index(unit)])

    def summary(self) -> dict:
        real = [(u, float(o)) for u, o in zip(self.units, self.offsets, strict=True)]
        return {
            "units": len(self.units),
            "handoffs": self.n_handoffs,
            "unit_pairs": self.n_pairs,
            "residual_ns": self.residual_ns,
            "total_slack_ns": self.total_slack_ns,
            "margin_ns": self.margin_ns,
            "resolution_ns": self.resolution_ns,
            "offset_range_ns": [min(o for _, o in real), max(o for _, o in real)] if real else [],
            "inconsistent_pairs": self.inconsistent_pairs[:20],
            "same_unit_violations": self.same_unit_violations,
            "mode": self.mode,
            "group": self.group,
            "estimate_ns": (
                {
                    str(u): float(o)
                    for u, o in zip(self.units, self.estimate, strict=True)
                    if u >= 0  # a CTA that recorded no XCD has no XCD's clock
                }
                if self.estimate.size
                else {}
            ),
        }


def _pairs(mv: ModelView, cta_unit: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    e = mv.edges
    ok = np.isfinite(e.put_lb) & np.isfinite(e.sat_ub)
    p = cta_unit[e.prod[ok]]
    q = cta_unit[e.cons[ok]]
    gap = (e.sat_ub - e.put_lb)[ok]
    same = p == q
    same_bad = int((gap[same] < 0).sum())
    p, q, gap = p[~same], q[~same], gap[~same]
    if p.size == 0:
        return p, q, gap, same_bad
    # the tightest hand-off of each ordered pair is the only one that binds
    key = p.astype(np.int64) * (cta_unit.max() + 1) + q
    order = np.lexsort((gap, key))
    key, p, q, gap = key[order], p[order], q[order], gap[order]
    first = np.concatenate([[True], key[1:] != key[:-1]])
    return p[first], q[first], gap[first], same_bad


def _waited(
    mv: ModelView, cta_unit: np.ndarray, tl: Timeline
) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """(producer unit, consumer unit, gap, lam) of the tightest hand-off of every recorded
    poll that retried; lam from such polls whose ends share a clock (their gap needs no
    offset), else the profile-free fallback: the smallest such gap over all units."""
    e = mv.edges
    retried = np.zeros(len(e), dtype=bool)
    for i in range(len(e)):
        c, k = int(e.cons[i]), int(e.cons_op[i])
        j = mv.views[c].poll_rec.get(k)
        if j is not None:
            r = tl.ctas[c].polls[j].retries
            retried[i] = bool(r) and r > 0
    ok = retried & np.isfinite(e.put_lb) & np.isfinite(e.sat_ub)
    if not ok.any():
        return (np.zeros(0, np.int64),) * 2 + (np.zeros(0), 0.0)  # type: ignore[return-value]
    idx = np.nonzero(ok)[0]
    gap = (e.sat_ub - e.put_lb)[idx]
    poll_key = e.cons[idx] * 1_000_000 + e.cons_op[idx]
    order = np.lexsort((gap, poll_key))
    idx, gap, poll_key = idx[order], gap[order], poll_key[order]
    first = np.concatenate([[True], poll_key[1:] != poll_key[:-1]])
    idx, gap = idx[first], gap[first]
    pu, qu = cta_unit[e.prod[idx]], cta_unit[e.cons[idx]]
    same = pu == qu
    lam = float(np.median(gap[same])) if same.any() else float(max(0.0, gap.min()))
    return pu[~same], qu[~same], gap[~same], lam


def clock_mode(tl: Timeline) -> str:
    """ "global" for a device-wide clock (its offsets are 0 unless causality says
    otherwise), else "per_unit"."""
    name = tl.meta.clock.lower()
    return "global" if any(k in name for k in GLOBAL_CLOCKS) else "per_unit"


def fit_clocks(
    tl: Timeline, mv: ModelView | None = None, mode: str | None = None, group: str | None = None
) -> ClockFit:
    """Offsets of every unit's clock from the trace's hand-offs (module docstring)."""
    mv = mv or model_view(tl)
    mode = mode or clock_mode(tl)
    if mode not in ("global", "per_unit"):
        raise InvalidInput(f"clock mode {mode!r}: 'global' or 'per_unit'", what="mode")
    group = group or default_group(tl)
    keys = unit_keys(tl, group)
    units = sorted(set(keys))
    index = {u: i for i, u in enumerate(units)}
    cta_unit = np.array([index[k] for k in keys], dtype=np.int64)
    n = len(units)
    p, q, m, same_bad = _pairs(mv, cta_unit)
    npair = int(p.size)
    res = clock_resolution(tl)
    offsets = np.zeros(n)
    if npair == 0:
        return ClockFit(
            units,
            offsets,
            offsets[cta_unit],
            0.0,
            0.0,
            0.0,
            res,
            len(mv.edges),
            0,
            [],
            same_bad,
            mode=mode,
            group=group,
        )
    # scipy is imported where it is needed: its import costs 0.6 s, which a page that
    # only reads a trace (the app's first render) need not pay
    from scipy.optimize import linprog
    from scipy.sparse import coo_matrix, vstack

    scale = float(max(1.0, np.abs(m).max()))
    mm = m / scale  # solve in units of the largest gap: HiGHS tolerances are absolute
    rows = np.arange(npair)
    # phase 1: x = [e (n), s (npair)]; e_q - e_p - s <= m
    a1 = coo_matrix(
        (
            np.concatenate([np.ones(npair), -np.ones(npair), -np.ones(npair)]),
            (np.concatenate([rows, rows, rows]), np.concatenate([q, p, n + rows])),
        ),
        shape=(npair, n + npair),
    ).tocsr()
    c1 = np.concatenate([np.zeros(n), np.ones(npair)])
    eq = np.concatenate([np.ones(n), np.zeros(npair)])[None, :]
    bounds1 = [(None, None)] * n + [(0, None)] * npair
    r1 = linprog(c1, A_ub=a1, b_ub=mm, A_eq=eq, b_eq=[0.0], bounds=bounds1, method="highs")
    if r1.status != 0:
        raise RuntimeError(f"clock fit (phase 1) failed: {r1.message}")
    slack = np.maximum(r1.x[n:], 0.0)
    slack[slack < 1e-9] = 0.0
    mm2 = mm + slack
    if mode == "global":
        offsets = _least_correction(n, p, q, mm2) * scale
        fit = _result(units, offsets, cta_unit, slack, scale, p, q, mm2, res, mv, same_bad, mode)
        fit.group = group
        if group == "xcd":
            fit.estimate = _xcd_offsets(n, p, q, mm2) * scale
        return fit
    if group == "xcd":
        offsets = _xcd_offsets(n, p, q, mm2) * scale
        fit = _result(units, offsets, cta_unit, slack, scale, p, q, mm2, res, mv, same_bad, mode)
        fit.group = group
        return fit
    # phase 2: x = [e (n), t (n), d+ (w), d- (w)]
    # a) every unit's smallest margin t_u (capped) -- the centring, weight eps;
    # b) polls that waited (retried): their tightest hand-off is the one they spun on,
    #    whose latency is about lam; |gap - lam| is minimised for those (weight 1).
    involved = np.zeros(n, dtype=bool)
    involved[p] = involved[q] = True
    cap = float(np.median(mm2))  # a typical hand-off gap bounds a unit's margin
    wp, wq, wg, lam = _waited(mv, cta_unit, tl)
    w = int(wp.size)
    lam_s = lam / scale
    r2rows = np.concatenate([rows, rows + npair])
    nv = 2 * n + 2 * w
    a_pairs = coo_matrix(
        (
            np.concatenate([np.ones(2 * npair), -np.ones(2 * npair), np.ones(2 * npair)]),
            (
                np.concatenate([r2rows, r2rows, r2rows]),
                np.concatenate([q, q, p, p, n + p, n + q]),
            ),
        ),
        shape=(2 * npair, nv),
    )
    b2 = np.concatenate([mm2, mm2])
    wr = np.arange(w)
    # gap_w / scale - (e_q - e_p) - lam = d+ - d-  ->  -e_q + e_p - d+ + d- = lam - gap
    a_w = coo_matrix(
        (
            np.concatenate([-np.ones(w), np.ones(w), -np.ones(w), np.ones(w)]),
            (
                np.concatenate([wr, wr, wr, wr]),
                np.concatenate([wq, wp, 2 * n + wr, 2 * n + w + wr]),
            ),
        ),
        shape=(w, nv),
    )
    eq2 = coo_matrix((np.ones(n), (np.zeros(n, dtype=np.int64), np.arange(n))), shape=(1, nv))
    a_eq = vstack([eq2, a_w]).tocsr()
    b_eq = np.concatenate([[0.0], lam_s - wg / scale])
    eps = 1e-3 if w else 1.0
    c2 = np.concatenate([np.zeros(n), -eps * involved.astype(float), np.ones(2 * w)])
    lo_t = 0.0  # every hand-off keeps the margin phase 1 found possible
    bounds2 = (
        [(None, None) if involved[i] else (0.0, 0.0) for i in range(n)]
        + [(lo_t, cap) if involved[i] else (0.0, 0.0) for i in range(n)]
        + [(0.0, None)] * (2 * w)
    )
    r2 = linprog(
        c2, A_ub=a_pairs.tocsr(), b_ub=b2, A_eq=a_eq, b_eq=b_eq, bounds=bounds2, method="highs"
    )
    if r2.status != 0:
        raise RuntimeError(f"clock fit (phase 2) failed: {r2.message}")
    offsets = r2.x[:n] * scale
    offsets -= offsets[involved].mean() if involved.any() else 0.0
    offsets[~involved] = 0.0
    fit = _result(units, offsets, cta_unit, slack, scale, p, q, mm2, res, mv, same_bad, mode)
    fit.group = group
    return fit


def _xcd_offsets(n: int, p: np.ndarray, q: np.ndarray, m: np.ndarray) -> np.ndarray:
    """Per-XCD offsets in units of the gaps ``m``: the brackets' centres, then the nearest
    offsets that keep every hand-off causal (the centre keeps it where no bracket is
    inverted), summing to zero over the XCDs with hand-offs."""
    e = _bracket_centre(n, p, q, m)
    e = e + _least_correction(n, p, q, m - (e[q] - e[p]))
    involved = np.zeros(n, dtype=bool)
    involved[p] = involved[q] = True
    e -= e[involved].mean()
    e[~involved] = 0.0
    return e


def _bracket_centre(n: int, p: np.ndarray, q: np.ndarray, m: np.ndarray) -> np.ndarray:
    """Per-XCD offsets, each at the centre of the bracket its tightest hand-offs leave it
    (module docstring): the fixed point of ``e_u = (min_in(e_p + m_pu) + max_out(e_q -
    m_uq)) / 2``, swept until no offset moves by ``SWEEP_TOL`` of the largest gap. A
    unit with hand-offs one way only sits the floor ``F`` (the smallest half bracket)
    from its tightest one."""
    into = [np.nonzero(q == u)[0] for u in range(n)]
    outof = [np.nonzero(p == u)[0] for u in range(n)]
    both = [u for u in range(n) if into[u].size and outof[u].size]
    e = np.zeros(n)

    def bracket(u: int) -> tuple[float, float]:
        i, o = into[u], outof[u]
        hi = float((e[p[i]] + m[i]).min()) if i.size else np.inf
        lo = float((e[q[o]] - m[o]).max()) if o.size else -np.inf
        return hi, lo

    for _ in range(MAX_SWEEPS):
        moved = 0.0
        for u in both:
            hi, lo = bracket(u)
            c = 0.5 * (hi + lo)
            moved = max(moved, abs(c - e[u]))
            e[u] = c
        if both:
            e[both] -= e[both].mean()
        if moved < SWEEP_TOL:
            break
    half = [0.5 * (hi - lo) for hi, lo in map(bracket, both)]
    floor = max(0.0, min(half)) if half else 0.0
    for u in range(n):
        if u in both or not (into[u].size or outof[u].size):
            continue
        hi, lo = bracket(u)
        e[u] = hi - floor if into[u].size else lo + floor
    return e


def _least_correction(n: int, p: np.ndarray, q: np.ndarray, mm2: np.ndarray) -> np.ndarray:
    """A device-wide clock: the offsets closest to 0 (L1) that causality allows."""
    from scipy.optimize import linprog
    from scipy.sparse import coo_matrix, vstack

    npair = int(p.size)
    rows = np.arange(npair)
    # x = [e (n), a (n)], a >= |e|; e_q - e_p <= m'
    a_pairs = coo_matrix(
        (
            np.concatenate([np.ones(npair), -np.ones(npair)]),
            (np.concatenate([rows, rows]), np.concatenate([q, p])),
        ),
        shape=(npair, 2 * n),
    )
    ri = np.arange(n)
    a_abs = coo_matrix(
        (
            np.concatenate([np.ones(n), -np.ones(n), -np.ones(n), -np.ones(n)]),
            (np.concatenate([ri, ri, n + ri, n + ri]), np.concatenate([ri, n + ri, ri, n + ri])),
        ),
        shape=(2 * n, 2 * n),
    )
    a = vstack([a_pairs, a_abs]).tocsr()
    b = np.concatenate([mm2, np.zeros(2 * n)])
    c = np.concatenate([np.zeros(n), np.ones(n)])
    r = linprog(c, A_ub=a, b_ub=b, bounds=[(None, None)] * n + [(0, None)] * n, method="highs")
    if r.status != 0:
        raise RuntimeError(f"clock fit (least correction) failed: {r.message}")
    e = r.x[:n]
    e[np.abs(e) < 1e-9] = 0.0
    return e


def _result(
    units: list[int],
    offsets: np.ndarray,
    cta_unit: np.ndarray,
    slack: np.ndarray,
    scale: float,
    p: np.ndarray,
    q: np.ndarray,
    mm2: np.ndarray,
    res: float,
    mv: ModelView,
    same_bad: int,
    mode: str,
) -> ClockFit:
    e = offsets / scale
    margin_pair = mm2 - (e[q] - e[p])
    bad = np.nonzero(slack > 0)[0]
    worst = sorted(
        ((units[int(p[i])], units[int(q[i])], float(slack[i] * scale)) for i in bad),
        key=lambda x: -x[2],
    )
    return ClockFit(
        units=units,
        offsets=offsets,
        cta_offset=offsets[cta_unit],
        residual_ns=float(slack.max() * scale) if slack.size else 0.0,
        total_slack_ns=float(slack.sum() * scale),
        margin_ns=float(margin_pair.min() * scale) if margin_pair.size else 0.0,
        resolution_ns=res,
        n_handoffs=len(mv.edges),
        n_pairs=int(p.size),
        inconsistent_pairs=worst,
        same_unit_violations=same_bad,
        mode=mode,
    )


def clock_offsets(tl: Timeline) -> ClockFit:
    """The fit (the name the app looks up)."""
    return fit_clocks(tl)


def aligned(tl: Timeline, fit: ClockFit) -> Timeline:
    """The trace on one clock: every CTA's times less its unit's offset."""
    return shifted(tl, fit.cta_offset)
