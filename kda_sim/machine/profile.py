"""GPU profiles: machine facts and model parameters, loaded from JSON data files.

The bundled GPUs live in ``profiles/*.json``, each with a ``sources`` table saying where
every default comes from; they hold no kernel's costs. A kernel's stage costs are kept
with the kernel and merged on by :mod:`kda_sim.machine.costs`: :func:`load_profile`
gives a GPU with a kernel's costs (``h200``: the kernel's fitted overlay on the H200
where it has one, else its stock costs; ``h200-stock``: its stock costs, the seed's
build; ``h200-k1``: K1's fitted overlay), :func:`load_gpu` the GPU alone. ``--profile
FILE`` loads a profile file or a costs overlay ``kda-sim calibrate`` wrote.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import re
from dataclasses import asdict, dataclass, field, replace
from importlib import resources
from pathlib import Path
from typing import Any

from kda_sim.errors import InvalidInput
from kda_sim.jsoncheck import Schema, json_hooks, json_path, refuse_non_finite
from kda_sim.kernels.registry import DEFAULT_KERNEL

LATENCIES = (
    "hbm_load",
    "l2_load",
    "poll",
    "store_ack",
    "visibility_same_xcd",
    "visibility_cross_xcd",
    "retry",
    "dispatch",
    "barrier",
)
# latencies a profile may leave out (0 then), so a profile file without them loads
OPTIONAL_LATENCIES = (
    # each stage of a CTA's second and later kda task: a build that unrolls its task slots
    # runs that code for the first time there (instruction fetch). In the Triton K1's
    # H200 traces such stages take 0.1 to 1.1 us longer than the first task's
    "cold_code",
    # from a ticket take's return to its item's first op: the loop's per-item prologue
    # (the item's indices, what the build keeps on its stack); K1's kda_tickets build's
    # figures are in docs/whatif/ticket_k1.md
    "ticket_item",
    # a poll try's cost beyond the round trip, priced by the kernel's poll site (Poll.lanes,
    # Poll.backoff): ns a try for each pair a thread beyond the first (the CTA-wide stale
    # count's barrier a register slot), and ns a back-off (a sleep between tries) adds to
    # a retry. In the Triton K1's H200 traces 26 and 270 (docs/calibration.md, "What a
    # poll's time is made of")
    "poll_lane",
    "backoff",
    # a poll's first try waits behind the CTA's own memory traffic still in the SM's pipe
    # (kda_sim.engine.cta, ``CtaRun._traffic_wait``): ns where stores are in flight, ns a
    # KiB of those stores, and ns a KiB of loads issued and not yet used. The H200's probe
    # with the other CTAs idle (the H100's the same): 88 + 9.9 a KiB of stores, 4.0 a KiB
    # of loads (docs/calibration.md, "A first try behind the CTA's own traffic")
    "first_try_stores",
    "first_try_store_kib",
    "first_try_load_kib",
    # a put's pairs leave the SM behind the CTA's own stores ahead of them (plain stores
    # and earlier puts' pairs since its last drain or poll), so they are visible that much
    # later (kda_sim.engine.cta, ``CtaRun._put``): ns where there are any, ns a KiB of them.
    # Not measured for a put: the store pipe's figures above (a load behind stores, 88 +
    # 9.9 a KiB) stand for it (docs/calibration.md, "A put behind the CTA's own stores")
    "put_stores",
    "put_store_kib",
    # a put's wait behind its CTA's stores (put_stores, put_store_kib) is longer where other
    # polls wait on it as it lands: for each other cell set that began waiting on the put
    # before it landed (any width; each set once), the wait grows by this fraction of itself
    # (a factor, not ns; kda_sim.engine.cta, ``CtaRun._poll``). The Triton K1 on an H100:
    # k.norm's hand-off (the 8 chunk tasks of a head poll the same ONRM flags, 1 pair a
    # thread) is 1,056 ns put to seen as shipped, 608 with chunk 0 polling alone and 416
    # with the state's stores drained before the put (docs/calibration.md, "k.norm's
    # ONRM+PROJ poll"). Not jittered; nothing without the put's wait
    "put_crowd",
)
FIRST_TRY = ("first_try_stores", "first_try_store_kib", "first_try_load_kib")
PUT_BEHIND = ("put_stores", "put_store_kib")
KIB = 1024  # bytes a KiB: the *_kib latencies above are ns a KiB


# The physical ranges a profile's numbers may take, declared once and checked on load
# (jsonschema; finiteness, which it cannot say, by ``_refuse_non_finite``). The bounds keep
# the engine's work and memory small: it builds a list a unit, and a time near 1e30 ns no
# longer advances by a latency.
MIN_POLL_NS = 1e-3  # a poll's round trip: the engine divides by it
# put_crowd is a factor: each other poller at most this many times the put's wait again
MAX_CROWD = 4.0
# cost_growth is a factor a unit of the launch's work: at most this much
MAX_GROWTH = 1.0
# each sd of cta_spread (of a factor's log): at most this much (e to the 1 is 2.7 times)
MAX_SPREAD = 1.0
MAX_NS = 1e8  # a latency or a stage cost's base or per-unit part: 0.1 s
_INT_DIGITS = 12  # an integer in a profile: at most this many digits
_JSON_HOOKS = json_hooks(_INT_DIGITS)


def _int(lo: int, hi: int) -> dict[str, Any]:
    return {"type": "integer", "minimum": lo, "maximum": hi}


def _num(lo: float, hi: float) -> dict[str, Any]:
    return {"type": "number", "minimum": lo, "maximum": hi}


_NS = _num(0, MAX_NS)
_BOOL = {"type": "boolean"}
_STR = {"type": "string"}
PROFILE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": [
        "name",
        "vendor",
        "units",
        "threads_per_unit",
        "regs_per_unit",
        "lds_per_unit",
        "x_lds_budget",
        "in_order_loads",
        "hbm_bytes_per_ns",
        "unit_bytes_per_ns",
        "kernel",
        "latency_ns",
    ],
    "properties": {
        "name": _STR,
        "vendor": _STR,
        "unit_name": _STR,
        "units": _int(1, 4096),
        "xcds": _int(1, 64),
        "threads_per_unit": _int(1, 1 << 16),
        "regs_per_unit": _int(1, 1 << 24),
        "lds_per_unit": _int(1, 1 << 26),
        "max_ctas_per_unit": _int(1, 1024),
        "lds_reserve": _int(0, 1 << 26),
        "x_lds_budget": _int(1, (1 << 31) - 1),  # 2**31 - 1: no budget
        "in_order_loads": _BOOL,
        "stores_in_vmcnt": _BOOL,
        "streamed_weights": _BOOL,
        # divisors of the engine: > 0 (B/ns)
        "hbm_bytes_per_ns": _num(1e-3, 1e6),
        "hbm_peak_bytes_per_ns": {"anyOf": [{"type": "null"}, _num(1e-3, 1e6)]},
        "unit_bytes_per_ns": _num(1e-3, 1e6),
        "kernel": {
            "type": "object",
            "required": ["threads", "regs_per_thread"],
            "properties": {
                "threads": _int(1, 4096),
                "regs_per_thread": _int(1, 4096),
                "lds_bytes": {"anyOf": [{"type": "null"}, _int(1, 1 << 26)]},
            },
        },
        "latency_ns": {
            "type": "object",
            "required": list(LATENCIES),
            "additionalProperties": _NS,
            # the engine divides by a poll's round trip (the tries until a flag is seen):
            # 0 is no round trip, and a tiny one overflows the count of tries
            "properties": {"poll": _num(MIN_POLL_NS, MAX_NS), "put_crowd": _num(0.0, MAX_CROWD)},
        },
        # a kernel's costs: none in a bundled GPU's file; a profile file written whole
        # (before the split, or by with_params and to_dict) may hold them
        "costs": {
            "type": "object",
            "additionalProperties": {
                "type": "array",
                "prefixItems": [_NS, _NS],
                "minItems": 2,
                "maxItems": 2,
            },
        },
        "cost_above": {
            "type": "object",
            "additionalProperties": {
                "type": "array",
                "prefixItems": [_num(0, 1e9), _NS, _NS],
                "minItems": 3,
                "maxItems": 3,
            },
        },
        "unit_shared": {"type": "array", "items": _STR},
        "unit_share": _num(0, 100),
        "unit_share_from": _num(0, 1e9),
        "unit_share_skew": _num(0, 1),
        "unit_share_skew_from": _num(0, 1e9),
        # a stage cost's compute in the first task of the earlier of two CTAs sharing a unit
        # (GpuProfile.unit_share_first_task): stage cost -> the factor on its cost
        "unit_share_first_task": {"type": "object", "additionalProperties": _num(0, 100)},
        # a stage cost's growth with its launch's work (GpuProfile.cost_growth): a factor a
        # unit of it; at most 1 (the K1's k.recur grows by some 0.05 a token)
        "cost_growth": {"type": "object", "additionalProperties": _num(0, MAX_GROWTH)},
        # each CTA's own factor on a stage kind's computes (GpuProfile.cta_spread): stage
        # kind -> its log's sd
        "cta_spread": {"type": "object", "additionalProperties": _num(0, MAX_SPREAD)},
        # a stage cost whose computes begun together end together (GpuProfile.compute_front):
        # stage cost -> what a follower's compute takes of its cost, 0 to 1
        "compute_front": {"type": "object", "additionalProperties": _num(0, 1)},
        # the least cost (ns) of a compute that opens or follows its stage cost's front
        # (GpuProfile.compute_front_from): stage cost -> ns
        "compute_front_from": {"type": "object", "additionalProperties": _num(0, MAX_NS)},
        "sources": {"type": "object", "additionalProperties": _STR},
    },
}
_SCHEMA = Schema(PROFILE_SCHEMA)
# a kernel's ``default_costs`` hook, checked as a profile's ``costs`` (kernels/registry.py)
COSTS_MAP = Schema(PROFILE_SCHEMA["properties"]["costs"])


def _refuse_non_finite(v: Any, where: str) -> None:
    refuse_non_finite(v, where, int_digits=_INT_DIGITS, error=InvalidInput)


def refuse_one_spread(d: dict[str, Any], where: str) -> None:
    """Refuse ``cta_spread`` given as one number, naming the form it takes: the launches
    spread stage kind by stage kind, so a profile says which kinds it spreads."""
    v = d.get("cta_spread")
    if isinstance(v, int | float) and not isinstance(v, bool):
        raise InvalidInput(
            f"cta_spread: {v!r} is one number; it is a map of stage kind -> the sd of the "
            'log of each CTA\'s factor, e.g. {"gemv0": 0.025, "gemv1": 0.025}',
            what="cta_spread",
            where=where,
        )


def validate_profile_dict(d: Any, where: str = "profile") -> None:
    """Refuse a profile whose fields are missing, of the wrong type or out of their
    physical range (:data:`PROFILE_SCHEMA`), naming the field and the constraint."""
    if not isinstance(d, dict):
        raise InvalidInput("a profile is a JSON object", where=where)
    _refuse_non_finite(d, where)
    refuse_one_spread(d, where)
    err = _SCHEMA.first_error(d)
    if err is not None:
        field_ = json_path(err.absolute_path)
        raise InvalidInput(f"{field_}: {err.message}", what=field_, where=where)


def parse_profile_json(text: str | bytes, where: str) -> Any:
    """A profile file's JSON: NaN, Infinity, huge integers, bad bytes and deep nesting
    refused with the file named."""
    try:
        return json.loads(text, **_JSON_HOOKS)
    except (ValueError, RecursionError) as e:  # JSONDecodeError, UnicodeDecodeError included
        raise InvalidInput(f"not a profile's JSON: {e}", where=where) from e


@dataclass(frozen=True)
class KernelResources:
    threads: int
    regs_per_thread: int
    lds_bytes: int | None = None  # None: derived from the shape


# ``with_params``'s name for a cost's growth: ``growth_k.recur``
GROWTH_PREFIX = "growth_"
# ``with_params``'s name for a stage kind's spread between CTAs: ``spread_gemv0``
SPREAD_PREFIX = "spread_"
# the profile's own numbers a fit or ``with_params`` may set by name
_TOP_PARAMS = (
    "hbm_bytes_per_ns",
    "unit_bytes_per_ns",
    "unit_share",
    "unit_share_from",
    "unit_share_skew",
    "unit_share_skew_from",
)


@dataclass(frozen=True)
class GpuProfile:
    name: str
    vendor: str
    unit_name: str
    units: int
    xcds: int
    threads_per_unit: int
    regs_per_unit: int
    lds_per_unit: int
    max_ctas_per_unit: int
    lds_reserve: int
    x_lds_budget: int
    in_order_loads: bool
    stores_in_vmcnt: bool
    hbm_bytes_per_ns: float
    unit_bytes_per_ns: float
    kernel: KernelResources
    latency_ns: dict[str, float]
    # a kernel's stage costs merged on (kda_sim.machine.costs); {} for a GPU alone
    costs: dict[str, tuple[float, float]] = field(default_factory=dict)
    sources: dict[str, str] = field(default_factory=dict)
    # a stage whose code changes with its work: above ``units`` it costs (base, per)
    # instead (the Triton K1's gemv is an FMA loop for S <= 3, tensor-core dots above)
    cost_above: dict[str, tuple[float, float, float]] = field(default_factory=dict)
    # weights streamed, not held: a weight load issues when the stage that uses it asks
    # for it, and that stage's compute runs alongside the stream (its time is the longer
    # of the two). The Triton K1 on the H200 streams each gemv group through its loop
    # (registers hold 16 KB of a 229 KB group); the seed's build holds the first group in
    # registers from the kernel's start
    streamed_weights: bool = False
    # a compute of one of these stage costs takes (1 + unit_share) times its cost while
    # another CTA resident on its unit computes the same stage (in the Triton K1's H200
    # traces a gemv CTA beside another takes 6 % longer at S = 1 and 13 to 24 % at S >= 2
    # than one beside an attn CTA, as if they split the SM's issue slots;
    # docs/calibration.md, "What the model has")
    unit_shared: tuple[str, ...] = ()
    unit_share: float = 0.0
    # the fewest units a shared compute must have to be slowed (0: any). The same traces
    # show two gemv CTAs on one SM ending 3.7 to 5.0 us after the rest from two tokens on
    # and 0.4 us at one: at one token the FMA loop leaves the SM's issue slots to spare
    # (docs/calibration.md, "The gemv CTAs' ends, and a unit shared from two tokens on")
    unit_share_from: float = 0.0
    # how the slowing splits between the CTAs sharing a unit: the one resident there first
    # takes (1 + unit_share * (1 - skew)), a later one (1 + unit_share * (1 + skew)); the
    # mean of two is unit_share's. In the same traces the later of two gemv CTAs on an SM
    # (the higher CTA number, dispatched second) ends gemv1 1.8 to 2.3 us after the
    # earlier at every S >= 2, at every one of 67 SMs a launch: the SM's warp scheduler
    # issues the older CTA's warps first (docs/calibration.md, "The earlier of two gemv
    # CTAs on an SM"). 0: both alike, as before the field existed
    unit_share_skew: float = 0.0
    # the fewest units a shared compute must have for ``unit_share_skew`` to split it (0:
    # every shared compute is split). In the traces the order shows clearly from a few
    # tokens on and hardly below: the weight stream, which the two share evenly, still
    # outweighs the FMAs there. Below it a shared compute takes the one factor,
    # unit_share's, whatever its order (docs/calibration.md, "The path's entry into the
    # first kda task")
    unit_share_skew_from: float = 0.0
    # stage cost -> a factor on a compute of it in the first task of the earlier of two
    # CTAs sharing a unit where ``unit_share_skew`` splits their shared compute: the later
    # one's shared compute still runs then. In the traces a gemv CTA's first k.stage,
    # begun as its gemv1 ends, is longer where the later gemv CTA on its SM still runs
    # gemv1 than for that later one, once its partner is done (docs/calibration.md, "A
    # gemv CTA's first k.stage"). {}: none
    unit_share_first_task: dict[str, float] = field(default_factory=dict)
    # a stage cost that grows with the launch's work beside it: a compute of cost ``key``
    # takes (1 + cost_growth[key] * its ``launch_units``) times its cost. In the Triton
    # K1's H200 traces k.recur's duration at one L grows with R within one build (at
    # L = 4: 4.48 us at R = 1, 4.74 at 2, 6.50 at 4), where a line in L cannot follow
    # it; of the forms tried on the durations, a cost line in L times (1 + g S) holds
    # out best (docs/calibration.md, "k.recur's cost growing with the launch"). {}: none
    cost_growth: dict[str, float] = field(default_factory=dict)
    # a spread between CTAs, stage kind -> sd: in a seeded run each CTA's computes in a
    # stage kind named here take one factor drawn for that CTA and kind, exp(sd * z), z
    # standard normal (its median 1), drawn once a launch. A factor a stage kind, not one
    # a CTA, drawn afresh each launch, and set kind by kind, because that is how the traced
    # launches spread: each gemv stage's compute on its own, the kda stages' spread holding
    # their loads' latency too (docs/calibration.md, "A spread between CTAs, and the path
    # as a distribution").
    # {}: none (and a nominal run draws none)
    cta_spread: dict[str, float] = field(default_factory=dict)
    # a front of computes, stage cost -> a follower's fraction f: a compute of cost ``key``
    # begun while another CTA's compute of ``key`` that opened a front runs (began no
    # later, ends later) ends at the later of that one's end and its own start plus f
    # times its cost; one begun with no front open opens one and takes its cost. Where a
    # GPU's traces show the tasks running a stage at once ending it together, whenever
    # each began, a late one's the shorter (docs/calibration.md, "A head's chunks at
    # k.recur's end"). {}: none (and f = 1 ends every compute as without it)
    compute_front: dict[str, float] = field(default_factory=dict)
    # where a front opens: stage cost -> the least cost (ns) of a compute of ``key`` that
    # opens or follows its front; a cheaper one runs as without the front. The traced
    # launches end k.recur together where its code is unrolled into the most copies and
    # the most CTAs run it at once (cold L = 4 at every S, warm only 4 x 4; a build with
    # the token loop rolled ends them apart), and its cost (a line in L times 1 + g S)
    # grows with both; one fraction for every compute pins the shapes they leave apart
    # (docs/calibration.md, "A front that opens at a cost"). {}: every compute of a
    # ``compute_front`` key opens or follows its front
    compute_front_from: dict[str, float] = field(default_factory=dict)
    # the datasheet's HBM bandwidth: a fit may find the stream slower, never faster
    # (kda-sim calibrate bounds hbm_bytes_per_ns by it; None: no bound)
    hbm_peak_bytes_per_ns: float | None = None
    # not written by to_dict: the bundled GPU this profile stands on ("h200" for h200 and
    # h200-k1; a file's path for a profile file), and which kernel costs it holds
    gpu: str = ""
    costs_from: str = ""

    def shares_at(self, key: str, units: float) -> bool:
        """Whether a compute of stage cost ``key`` on ``units`` is one that another CTA
        computing it on the same unit slows (by ``unit_share``, where that is set)."""
        return key in self.unit_shared and units >= self.unit_share_from

    @functools.cached_property
    def share_keys(self) -> tuple[str, ...]:
        """The stage costs a shared unit may slow: ``unit_shared``'s and
        ``unit_share_first_task``'s (the engine asks ``_share`` for these alone)."""
        return (*self.unit_shared, *self.unit_share_first_task)

    def share_factor(self, first: bool, units: float = math.inf) -> float:
        """What a shared compute on ``units`` has its cost multiplied by: for the CTA
        resident on the unit first (``first``) or for a later one (``unit_share_skew``
        splits them from ``unit_share_skew_from`` units on)."""
        skew = self.unit_share_skew if units >= self.unit_share_skew_from else 0.0
        return 1.0 + self.unit_share * (1.0 - (skew if first else -skew))

    def grown(self, key: str, launch_units: float) -> float:
        """What a compute of cost ``key`` beside ``launch_units`` of the launch's work has
        its cost multiplied by (``cost_growth``; 1 where the profile sets none)."""
        g = self.cost_growth.get(key)
        return 1.0 + g * launch_units if g else 1.0

    def cost(self, key: str, units: float) -> float:
        above = self.cost_above.get(key)
        if above is not None and units > above[0]:
            return above[1] + above[2] * units
        base, per = self.costs[key]
        return base + per * units

    def with_params(self, **params: float) -> GpuProfile:
        """A copy with latencies (``poll=...``), costs (``cost_k.recur=(a, b)``), a cost's
        growth (``growth_k.recur=g``) or a stage kind's spread between CTAs
        (``spread_gemv0=sd``) replaced."""
        lat = dict(self.latency_ns)
        costs = dict(self.costs)
        above = dict(self.cost_above)
        growth = dict(self.cost_growth)
        spread = dict(self.cta_spread)
        top: dict[str, Any] = {}
        for k, v in params.items():
            if k in lat:
                lat[k] = float(v)
            elif k.startswith("cost_") and k[5:] in costs:
                costs[k[5:]] = (float(v[0]), float(v[1]))  # type: ignore[index]
            elif k.startswith("above_") and k[6:] in costs:
                above[k[6:]] = (float(v[0]), float(v[1]), float(v[2]))  # type: ignore[index]
            elif k.startswith(GROWTH_PREFIX) and k[len(GROWTH_PREFIX) :] in costs:
                growth[k[len(GROWTH_PREFIX) :]] = float(v)
            elif k.startswith(SPREAD_PREFIX) and len(k) > len(SPREAD_PREFIX):
                spread[k[len(SPREAD_PREFIX) :]] = float(v)
            elif k in _TOP_PARAMS:
                top[k] = float(v)
            else:
                raise InvalidInput(f"unknown model parameter {k!r}", what="parameter")
        growth = {n: g for n, g in growth.items() if g}  # 0: as if never set
        spread = {n: v for n, v in spread.items() if v}
        return replace(
            self,
            latency_ns=lat,
            costs=costs,
            cost_above=above,
            cost_growth=growth,
            cta_spread=spread,
            **top,
        )

    def identity(self) -> str:
        """A checksum of everything the model reads (what :meth:`to_dict` writes) and of
        the costs it says it ran: what a cache keys a profile on, never its name alone
        (a name may come to mean other costs)."""
        text = json.dumps([self.to_dict(), self.costs_from], sort_keys=True, default=str)
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d.pop("gpu")
        d.pop("costs_from")
        d["costs"] = {k: list(v) for k, v in self.costs.items()}
        if self.cost_above:
            d["cost_above"] = {k: list(v) for k, v in self.cost_above.items()}
        else:
            d.pop("cost_above", None)
        if self.hbm_peak_bytes_per_ns is None:
            d.pop("hbm_peak_bytes_per_ns")
        if self.unit_shared:
            d["unit_shared"] = list(self.unit_shared)
        else:  # a profile without sharing reads as it did before the field existed
            d.pop("unit_shared", None)
            d.pop("unit_share", None)
        if not (self.unit_shared and self.unit_share_from):
            d.pop("unit_share_from", None)  # as before the field existed
        if not (self.unit_shared and self.unit_share_skew):
            d.pop("unit_share_skew", None)
        if not (self.unit_shared and self.unit_share_skew and self.unit_share_skew_from):
            d.pop("unit_share_skew_from", None)  # as before the field existed
        if not (self.unit_shared and self.unit_share_first_task):
            d.pop("unit_share_first_task")  # as before the field existed
        if not self.cost_growth:
            d.pop("cost_growth")  # unset: written, and checksummed, as a profile without it
        if not self.cta_spread:
            d.pop("cta_spread")  # as cost_growth: a profile without it reads as before
        if not self.compute_front:
            d.pop("compute_front")  # as cost_growth
        if not self.compute_front_from:
            d.pop("compute_front_from")  # as cost_growth
        return d


def _need(d: dict[str, Any], key: str, where: str) -> Any:
    if key not in d:
        raise InvalidInput(f"missing field {key!r}", what=key, where=where)
    return d[key]


def _flag(d: dict[str, Any], key: str, where: str) -> bool:
    v = d.get(key, False)
    if not isinstance(v, bool):
        raise InvalidInput(f"{key} must be true or false, not {v!r}", what=key, where=where)
    return v


def profile_from_dict(d: dict[str, Any], where: str = "profile") -> GpuProfile:
    validate_profile_dict(d, where)
    try:
        k = _need(d, "kernel", where)
        lat = {str(n): float(v) for n, v in _need(d, "latency_ns", where).items()}
        for n in OPTIONAL_LATENCIES:
            lat.setdefault(n, 0.0)
        costs = {str(n): (float(v[0]), float(v[1])) for n, v in d.get("costs", {}).items()}
        missing = [f"latency_ns.{n}" for n in LATENCIES if n not in lat]
        if missing:
            raise InvalidInput(
                f"missing fields: {', '.join(missing)}", what=missing[0], where=where
            )
        prof = GpuProfile(
            name=str(_need(d, "name", where)),
            vendor=str(_need(d, "vendor", where)),
            unit_name=str(d.get("unit_name", "unit")),
            units=int(_need(d, "units", where)),
            xcds=int(d.get("xcds", 1)),
            threads_per_unit=int(_need(d, "threads_per_unit", where)),
            regs_per_unit=int(_need(d, "regs_per_unit", where)),
            lds_per_unit=int(_need(d, "lds_per_unit", where)),
            max_ctas_per_unit=int(d.get("max_ctas_per_unit", 32)),
            lds_reserve=int(d.get("lds_reserve", 0)),
            x_lds_budget=int(_need(d, "x_lds_budget", where)),
            in_order_loads=_flag(d, "in_order_loads", where),
            stores_in_vmcnt=_flag(d, "stores_in_vmcnt", where),
            hbm_bytes_per_ns=float(_need(d, "hbm_bytes_per_ns", where)),
            unit_bytes_per_ns=float(_need(d, "unit_bytes_per_ns", where)),
            kernel=KernelResources(
                int(k["threads"]), int(k["regs_per_thread"]), k.get("lds_bytes")
            ),
            latency_ns=lat,
            costs=costs,
            sources=dict(d.get("sources", {})),
            cost_above={
                str(n): (float(v[0]), float(v[1]), float(v[2]))
                for n, v in d.get("cost_above", {}).items()
            },
            streamed_weights=_flag(d, "streamed_weights", where),
            unit_shared=tuple(str(n) for n in d.get("unit_shared", ())),
            unit_share=float(d.get("unit_share", 0.0)),
            unit_share_from=float(d.get("unit_share_from", 0.0)),
            unit_share_skew=float(d.get("unit_share_skew", 0.0)),
            unit_share_skew_from=float(d.get("unit_share_skew_from", 0.0)),
            unit_share_first_task={
                str(n): float(v) for n, v in d.get("unit_share_first_task", {}).items()
            },
            cost_growth={str(n): float(v) for n, v in d.get("cost_growth", {}).items() if v},
            cta_spread={str(n): float(v) for n, v in d.get("cta_spread", {}).items() if v},
            compute_front={str(n): float(v) for n, v in d.get("compute_front", {}).items()},
            compute_front_from={
                str(n): float(v) for n, v in d.get("compute_front_from", {}).items() if v
            },
            hbm_peak_bytes_per_ns=(
                None
                if d.get("hbm_peak_bytes_per_ns") is None
                else float(d["hbm_peak_bytes_per_ns"])
            ),
        )
    except (TypeError, ValueError, KeyError, IndexError) as e:
        raise InvalidInput(f"malformed profile field: {e}", where=where) from e
    if prof.units % prof.xcds:
        raise InvalidInput("units must be a positive multiple of xcds", what="units", where=where)
    if prof.hbm_bytes_per_ns <= 0 or prof.unit_bytes_per_ns <= 0:
        raise InvalidInput("bandwidths must be positive", what="bandwidth", where=where)
    peak = prof.hbm_peak_bytes_per_ns
    if peak is not None and not 0 < prof.hbm_bytes_per_ns <= peak:
        raise InvalidInput(
            f"hbm_bytes_per_ns {prof.hbm_bytes_per_ns:g} is above the datasheet's "
            f"hbm_peak_bytes_per_ns {peak:g}",
            what="hbm_bytes_per_ns",
            where=where,
        )
    if prof.unit_share < 0 or any(n not in prof.costs for n in prof.unit_shared):
        raise InvalidInput(
            "unit_share must be >= 0 and unit_shared name stage costs",
            what="unit_share",
            where=where,
        )
    for name, keys in (
        ("cost_growth", prof.cost_growth),
        ("compute_front", prof.compute_front),
        ("unit_share_first_task", prof.unit_share_first_task),
    ):
        bad = [n for n in keys if n not in prof.costs]
        if bad:
            raise InvalidInput(
                f"{name}.{bad[0]}: not a stage cost of the profile",
                what=f"{name}.{bad[0]}",
                where=where,
            )
    loose = [n for n in prof.compute_front_from if n not in prof.compute_front]
    if loose:
        raise InvalidInput(
            f"compute_front_from.{loose[0]}: the profile sets no compute_front for it",
            what=f"compute_front_from.{loose[0]}",
            where=where,
        )
    if any(v < 0 for v in prof.latency_ns.values()):
        raise InvalidInput("latencies must be >= 0", what="latency_ns", where=where)
    return prof


def validate_profile(prof: GpuProfile, where: str = "profile") -> GpuProfile:
    """``prof`` if its fields are ones the loader accepts (a profile made in-process, as a
    fit's, before it is used or written); InvalidInput naming the field if not."""
    profile_from_dict(prof.to_dict(), where)
    return prof


def gpu_names() -> list[str]:
    """The bundled GPUs (``profiles/*.json``)."""
    return list(_gpu_names())


@functools.cache
def _gpu_names() -> tuple[str, ...]:
    # package data: listed once a process (every profile name's lookup asks for it)
    files = resources.files("kda_sim.machine").joinpath("profiles")
    return tuple(
        sorted(p.name.removesuffix(".json") for p in files.iterdir() if p.name.endswith(".json"))
    )


def bundled_names(kernel: str | Any | None = None) -> list[str]:
    """Every bundled profile name: the GPUs, ``<gpu>-<kernel>`` for each built-in kernel's
    fitted overlay on one (``h200-k1``) and ``<gpu>-stock`` where a kernel has both fitted
    and stock costs for it (``h200-stock``); with ``kernel``, the stock names of that
    kernel alone."""
    from kda_sim.machine.costs import aliases, stock_names

    return sorted([*gpu_names(), *aliases(), *stock_names(kernel)])


def bundled_for(gpu: str, kernel: str | None = None) -> str | None:
    """The bundled profile a GPU's name means ("NVIDIA H200" -> "h200"), or None; with
    ``kernel``, a profile fitted to that kernel on this GPU ("h200-k1") where one is
    bundled."""
    names = bundled_names()
    key = re.sub(r"[^a-z0-9]", "", gpu.lower())
    base = (
        gpu
        if gpu in names
        else max((n for n in names if n.isalnum() and n in key), key=len, default=None)
    )
    if base is not None and kernel and f"{base}-{kernel}" in names:
        return f"{base}-{kernel}"
    return base


def load_gpu(name_or_path: str) -> GpuProfile:
    """A bundled GPU by name (``mi355x``) or a profile file by path, with no kernel's
    costs merged on (a file's own costs, if it holds some, are kept)."""
    return load_profile(name_or_path, kernel=None)


def load_profile(name_or_path: str, kernel: str | Any | None = DEFAULT_KERNEL) -> GpuProfile:
    """A bundled profile by name or a file by path, with ``kernel``'s costs (a name or a
    kernel; None: none merged on):

    * ``h200``: the GPU with the kernel's fitted overlay for it where one exists, else its
      stock costs, else its ``default_costs`` (``costs_from`` says which);
    * ``h200-stock``: the GPU with the kernel's stock costs (the seed's build), where the
      kernel also has fitted ones (else refused: ``h200`` is its stock costs already);
    * ``h200-k1``: the GPU with K1's fitted overlay (whatever ``kernel`` says);
    * a profile ``.json``: as written, its missing costs filled as for a bundled GPU;
    * a costs overlay ``.json`` (``kda-sim calibrate --out``): on the GPU it names.
    """
    from kda_sim.machine import costs

    path = Path(name_or_path)
    try:
        given_file = path.suffix == ".json" and path.exists()
    except OSError as e:  # a name too long for a path, a symlink loop
        raise InvalidInput(f"cannot read profile: {e.strerror or e}", where=str(path)) from e
    if given_file:
        from kda_sim.importers.caps import read_capped  # importers import the machine

        raw = read_capped(path)  # refused over --max-input-mb before it is read
        d = parse_profile_json(raw, str(path))
        if costs.is_costs_dict(d):
            return costs.load_overlay(path, d)
        prof = replace(profile_from_dict(d, str(path)), gpu=str(path.resolve()))
        if prof.costs:
            prof = replace(prof, costs_from=f"the profile file {path}")
        return prof if kernel is None else costs.with_kernel_costs(prof, kernel)
    if _own_gpu_name(name_or_path):  # the usual --gpu: its file and the kernel's costs
        prof = _bundled_gpu(name_or_path)
        return prof if kernel is None else costs.profile_for(prof, kernel)
    # the built-in kernels' names, and a kernel given by path's own stock names
    names = bundled_names()
    if kernel is not None:
        names = sorted({*names, *costs.stock_names(kernel)})
    if name_or_path not in names and (path.suffix == ".json" or "/" in name_or_path):
        raise InvalidInput("no such profile file", what="profile", where=name_or_path)
    if name_or_path not in names:
        raise InvalidInput(
            f"unknown GPU {name_or_path!r}; known: {', '.join(names)} (or a profile .json file)",
            what="gpu",
        )
    alias = costs.aliases().get(name_or_path)
    if alias is not None:
        gpu, k, build = alias
        prof = costs.profile_for(_bundled_gpu(gpu), k, fitted=True, build=build)
        return replace(prof, name=name_or_path)
    stock = costs.stock_gpu(name_or_path)
    if stock is not None:
        prof = replace(_bundled_gpu(stock), name=name_or_path)
        return prof if kernel is None else costs.stock_for(prof, kernel)
    prof = _bundled_gpu(name_or_path)
    return prof if kernel is None else costs.profile_for(prof, kernel)


def _own_gpu_name(name: str) -> bool:
    """``name`` is a bundled GPU's own (``h200``), which no other bundled name spells
    (those are ``<gpu>-<kernel>`` and ``<gpu>-stock``): it is loaded without listing
    them, which imports every built-in kernel to find its fitted overlays (some 30 ms,
    before a sweep's fork)."""
    gpus = _gpu_names()
    return name in gpus and not any(name.startswith(f"{g}-") for g in gpus)


def _bundled_gpu(name: str) -> GpuProfile:
    text = resources.files("kda_sim.machine").joinpath(f"profiles/{name}.json").read_text()
    return replace(profile_from_dict(parse_profile_json(text, name), name), gpu=name)
