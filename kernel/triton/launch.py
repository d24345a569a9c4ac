"""Host side of the Triton K1: build keys, the scratch layout, one launch.

The mailbox layout is the simulator's (``kda_sim.protocol.space.CellSpace``): one word
space a launch, regions in the seed's order, each on lines of its own (``Build.align``), so
a (region, index) means the same thing in a trace, a watchdog report and the model.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from dataclasses import fields as dataclass_fields
from typing import Any

import torch

from kda_kernel.triton import trace_layout as T
from kda_kernel.triton.alarm_layout import alarm_words
from kda_kernel.triton.ctrl_layout import COUNTER_WORD, CTRL_WORDS
from kda_kernel.triton.defaults import SRC_MIN_S, default_config
from kda_kernel.triton.limits import MAX_NB, MAX_S, NUM_WARPS
from kda_sim.errors import InvalidInput
from kda_sim.kernels.k1.config import CONFIG_KEYS, LaunchConfig
from kda_sim.kernels.k1.constants import BLOCKS, CONV_W, EPOCH_BITS, HD, HIDDEN, NPROJ, TAG_SLOTS
from kda_sim.kernels.k1.regions import Region
from kda_sim.protocol.space import CellSpace


def step_tag(epoch: int, slot: int) -> int:
    """The seed's step_tag in int32: (epoch % 2^22) * TAG_SLOTS + slot + 1 (remainder
    with the dividend's sign, as FlyDSL's remsi and Triton's %)."""
    e = abs(epoch) % (1 << EPOCH_BITS)
    e = -e if epoch < 0 else e
    return e * TAG_SLOTS + slot + 1


def next_pow2(n: int) -> int:
    p = 1
    while p < n:
        p *= 2
    return p


# Build.probe's experiments (none: "")
PROBES = ("", "take", "static_item")

# the stress build's stagger (Build.jitter_ns) in the GPU tests: warp 7 starts about
# 2.1 us after warp 0, about as long as the slice takes at S = 1
STRESS_JITTER_NS = 300


def split_fields(fields: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """One dict of fields -> (``LaunchConfig`` fields, ``Build`` options); a name that is
    neither is an error naming it."""
    known = {f.name for f in dataclass_fields(Build)} - {"cfg"}
    cfg_keys = set(CONFIG_KEYS) - {"R", "L"}
    unknown = sorted(set(fields) - known - cfg_keys)
    if unknown:
        raise TypeError(f"neither LaunchConfig variants nor Build options: {unknown}")
    cfg = {k: v for k, v in fields.items() if k in cfg_keys}
    return cfg, {k: v for k, v in fields.items() if k not in cfg_keys}


class Unsupported(InvalidInput, ValueError):
    """A launch configuration this build cannot run (``what`` names the field)."""


def options_only(options: dict[str, Any]) -> dict[str, Any]:
    """``options`` checked to hold ``Build`` options only: a ``LaunchConfig`` field there
    (``nw_first``, ``gate_local``, ...) is refused, naming it (the configuration says it)."""
    variants, opts = split_fields(options)
    if variants:
        raise Unsupported(
            f"{sorted(variants)}: fields of the launch configuration, not build options; "
            f"set them in cfg",
            what=sorted(variants)[0],
        )
    return opts


# the lab builds' waits (the gate's and k.norm's first try, the ONRM put): the most each
# may be, ns; a delay up to 0.1 ms, a stagger a CTA or chunk up to 10 us
LAB_WAITS_NS = {
    "gate_delay_ns": 100_000,
    "gate_stagger_ns": 10_000,
    "norm_delay_ns": 100_000,
    "norm_stagger_ns": 10_000,
    "onrm_put_delay_ns": 100_000,
}

# the back-offs between a poll's tries (the long polls', a lab build's gate PART poll's):
# not negative, no most
BACKOFFS_NS = ("sleep_ns", "gate_sleep_ns")


def wait_error(name: str, ns: int) -> str | None:
    """What is wrong with ``ns`` as the build's wait ``name`` (a field of ``BACKOFFS_NS``
    or ``LAB_WAITS_NS``), None where nothing is: ``Build.validate``'s ranges, for a caller
    that names the value its own way (a command's flag)."""
    if name in BACKOFFS_NS:
        return "not negative" if ns < 0 else None
    most = LAB_WAITS_NS[name]
    return None if 0 <= ns <= most else f"0 to {most}"


@dataclass(frozen=True)
class Build:
    """A compiled kernel's key and one launch's options: ``cfg``, the launch configuration
    (shape, kda0 and the protocol's variants, run exactly as it says), and the Triton
    backend's own compile and launch options (the other fields)."""

    cfg: LaunchConfig
    has_delta: bool = True
    sl: int | None = None  # conv state length; default CONV_W - 1 + L - 1
    watchdog: bool = False
    trace: bool = False
    # what a traced build records, to split the tracing overhead (a diagnostic): 1 all,
    # 2 no poll records, 3 the header and the task ids only (neither stamps nor polls),
    # 4 poll records without their retry counts. Measured at 4x4 on the H200 over the
    # untraced build (64-bit record words): 1 +3.7 / +3.8 %, 2 +2.1 %,
    # 3 +1.6 %, 4 +2.5 to +2.7 %; with 32-bit words 1 +2.2 to +3.3 %
    trace_level: int = 1
    interp: bool = False
    rmax: int = 4  # the largest R this compiled kernel serves (sizes the trace record)
    bk: int = 128  # FMA gemv (S <= fma_max_s): columns a weight chunk
    nstage: int = 4  # tensor-core gemv: pipeline stages of tc_bk columns
    fma: bool = True  # S <= fma_max_s: the gemv on FMA units over all threads
    # the largest S the FMA form serves (above it, the tensor cores). Measured on the H200
    # with 3, the split dot at S = 4, took 1x4 from 63.7 to 56.5 us, 2x2 from 61.2 to
    # 54.5 and 4x1 from 65.3 to 59.8 (and 1x1 from 53.8 to 50.2: an L = 1 build whose FMA
    # form serves S <= 3 keeps three accumulators, not four)
    fma_max_s: int = 3
    # the FMA form keeps an accumulator only for the tokens S has (1, 2 or 4): at S = 1
    # four accumulators did 4 FMAs a weight, three on masked zeros. Measured:
    # 1x1 50.3 -> 45.1 us, 1x2 54.2 -> 53.2; the gemv at S = 1 streams at the rate
    # of a plain read of the weights
    fma_by_s: bool = True
    # the weights asked of L2 before the XRDY poll: 0 none; 1 a prefetch.global.L2 a line,
    # group rg0 before the poll and rg1 after it; 2, 3, 4 the copy engine's bulk prefetch:
    # rg0 before the poll; and rg1 after it; and rg1 before it too. Every mode measured
    # slower on the H200 (1x1 53.8 us with none, 57.9 to 62.2 with one): the
    # weights' HBM traffic slows the attn CTAs' own loads, so XRDY comes later, and the
    # gemv groups took no less time after it (docs/measurements/kernel_h200.md)
    prefetch: int = 0
    prefetch_delay_ns: int = 0  # the L2 prefetch waits this long after the CTA starts
    early: bool = True  # the FMA loop's first 16 KB of group rg0 issued before the XRDY poll
    # the FMA gemv's weights at S = 1 brought on chip by the copy engine (TMA, a tensor
    # descriptor), this many steps deep in shared memory; 0: plain loads into registers.
    # 3.2 us a launch faster alone; in the K1 1x1 44.7 -> 44.3 us at 3
    # stages, 2x1 and 4x1 0.3 to 3.2 % slower (docs/measurements/kernel_h200.md),
    # so off by default
    tma_ns: int = 0
    # measured on the H200: 256 x 4 stages 3.7 % faster at 4x4 than 128 x 3;
    # with 4 slices 512 x 3 is within 1.3 us
    tc_bk: int = 256
    # tensor-core gemv: K split over this many column slices (1: one [16, 16] dot).
    # Measured: 4 is fastest at 2x4 and 4x4 (8 and 2 slower)
    tc_split: int = 4
    # the attn slice one source an iteration for all 16 tokens from S = src_min_s on (else
    # TB tokens an iteration; 17: never; the mix: mix_min_s). Measured (slice and
    # mix): 4x4 136.1 -> 104.2 us; at S = 1 and 2 the token form is 1 to 2 us faster. The
    # slice alone (the mix by source): 1x1 42.69 by token, 46.27 by source; 2x1
    # 47.37 and 48.46
    src_min_s: int = SRC_MIN_S
    # the mix alone one source an iteration from S = mix_min_s on (else TB tokens an
    # iteration); default: see MIX_MIN_S
    mix_min_s: int | None = None
    quiet: bool = True  # polls: masked lanes load nothing, XRDY flags read once a CTA
    tb: int | None = None  # attn: tokens a slice / mix iteration; default: see TB
    sleep_ns: int = 128  # back-off in the long polls (XRDY, the kda tasks' PROJ)
    # a lab experiment, not a protocol variant: the gate's PART poll (8 pairs a thread) backs
    # off this many ns between tries, as the long polls do; 0 (as shipped): it spins. On an
    # H100 the wait is the same either way (docs/calibration.md, "gate's PART poll: its
    # retries, and a back-off tried in the K1"). The model knows it only as the trace's
    # meta.extra["build"] names it
    gate_sleep_ns: int = 0
    # a lab experiment: gate CTA a waits gate_delay_ns + a * gate_stagger_ns ns after its
    # slice before its PART poll's first try, so the try meets every slice's put landed
    # (and, staggered, no other gate CTA trying beside it): what a try costs at each S,
    # apart from the hand-off. 0 (as shipped): no code
    gate_delay_ns: int = 0
    gate_stagger_ns: int = 0
    # the same for k.norm's ONRM+PROJ poll: kda task (req, h, ch) waits norm_delay_ns + ch x
    # norm_stagger_ns ns after its ONRM put before the first try (chunk 0 of a head polling
    # alone while the others' puts land, where the stagger is longer than a hand-off); and
    # k.recur waits onrm_put_delay_ns ns before its ONRM put, so the state's stores have left
    # the SM ahead of it. 0 (as shipped): no code. Static placement only (not kda_tickets)
    norm_delay_ns: int = 0
    norm_stagger_ns: int = 0
    onrm_put_delay_ns: int = 0
    # a lab experiment: 1 runs k.recur's token loop as a loop (one copy of its code), where
    # the shipped build (0) unrolls it into L copies: whether the tasks running k.recur at
    # once end it together for the code they fetch (docs/calibration.md, "A head's chunks
    # at k.recur's end"). Static placement only (not kda_tickets)
    recur_rolled: int = 0
    # the scratch layout: every mailbox region starts on a multiple of this many cells
    # (8 B each; 16: a 128 B L2 line), so no line holds two regions. Dense (1), MSQ's last
    # cells and PROJ's first share lines with the 56 XRDY flags that every gemv CTA
    # re-reads. Measured (us a launch, dense -> 16): 1x1 45.2 -> 44.8, 4x4
    # 77.1/78.4 -> 75.4/76.1, 1x2 53.9/54.5 -> 54.3/55.0, the rest within 0.2
    align: int = 16
    # a stress build: warp w sleeps w * jitter_ns ns at the CTA's start and before each
    # kda task, so a load in one warp and another warp's store over it, unordered by a
    # barrier, come apart (tests/kernel/test_gpu_k1.py); 0 (production): no code
    jitter_ns: int = 0
    # False only to prove that the stress build finds the race it was made for: the
    # slice's in-place prefix update without its barrier (a GPU test expects wrong outputs)
    slice_barrier: bool = True
    maxnreg: int | None = 128  # 65536 registers an SM / (2 CTAs x 256 threads)
    # the attn slice's token form (S < src_min_s) asks for its block rows before p', not
    # after p''s barrier: one HBM round trip less. Measured on the H200 (us a
    # launch): 1x1 44.77 -> 44.41, 2x1 50.78 -> 50.46, 1x2 50.76 -> 50.47; with the MSQ
    # poll's shape (the mix, kda_kernel.triton_k1) 1x1 43.75, 1x2 49.98. On where some S of
    # the L runs the token form (L < src_min_s): an L = 4 build never does, and compiles
    # as without the switch
    blk_first: bool = True
    # a lab experiment on the ticket build's costs (docs/whatif/ticket_k1.md, "The
    # experiment, built"), not a protocol variant: "" none; "take" (the static build) a
    # take on the ticket counter before each task, its ticket recorded and otherwise only
    # waited for; "static_item" (kda_tickets) every take as usual, but the item run is the
    # task the static placement gives this CTA for its take's number. The model knows
    # neither (a trace's meta names it under extra["build"])
    probe: str = ""

    @classmethod
    def default(cls, R: int, L: int, nb: int = 8, kda0: int = 0, **fields: Any) -> Build:
        """The build at (R, L, nb, kda0) from one dict of ``LaunchConfig`` variants and
        build options (a JSON variant such as ``{"trace": true, "nw_first": false}``): the
        variants it leaves unsaid are the recommended ones (``defaults.default_config``)."""
        variants, options = split_fields(fields)
        return cls(default_config(R, L, nb, kda0, options=options, **variants), **options)

    # the launch configuration's fields, by the names the launch code reads
    @property
    def R(self) -> int:
        return self.cfg.R

    @property
    def L(self) -> int:
        return self.cfg.L

    @property
    def nb(self) -> int:
        return self.cfg.nb

    @property
    def kda0(self) -> int:
        return self.cfg.kda0

    @property
    def gate_local(self) -> bool:
        """The protocol's variant gate_local (shared/PROTOCOL.md): no gate stage and no WGT
        hand-off; every attn CTA polls PART for every token and computes all the weights
        itself, trading the hand-off's second wait (for the slowest gate CTA) for S PART
        polls a CTA. Measured on the H200 (us a launch): 1x1 44.77 -> 44.52, but 2x1
        50.78 -> 51.23, 1x2 50.76 -> 51.44, 2x2 54.71 -> 57.42, 4x1 59.92 -> 62.33, 4x4
        76.08 -> 91.01 (S polls one after another); with the slice's and the MSQ poll's
        changes, 1x1 43.78 against 43.75 without it. Off in the recommended configuration."""
        return self.cfg.gate_local

    @property
    def S(self) -> int:
        return self.cfg.S

    @property
    def TB(self) -> int:
        """Tokens the attn slice and mix take an iteration (their loads in flight together).
        Measured on the H200 (docs/measurements/kernel_h200.md): 2 saves 8 us at
        S = 16 and costs 2.5 us at S = 1 (a masked second token); 4 spills registers."""
        if self.tb is not None:
            return self.tb
        return 1 if self.S == 1 else 2

    @property
    def slice_by_token(self) -> bool:
        """Whether some S this build serves (L, 2 L, ...) runs the slice by token: L <
        src_min_s. BLK_FIRST and MIX_MIN_S change only such builds."""
        return self.src_min_s > self.L

    @property
    def NW_FIRST(self) -> bool:
        """in_nw asked with the slice's loads (``cfg.nw_first``; recommended where some S
        runs the slice by token, ``defaults.recommended_nw_first``)."""
        return self.cfg.nw_first

    @property
    def MIX_MIN_S(self) -> int:
        """The mix by source from this S on: every S a build serves (1 where TB = 1; 2
        where TB = 2, whose builds serve S >= 2 but with 1 spilled 2 to 4 registers), in
        the builds where some S runs the slice by token (L < src_min_s); the others never
        run the token form, and keep their code (src_min_s: at 1 or 2 an L = 4 build's
        code changed, 10504 -> 9848 SASS instructions, with its tracing overhead).
        Traces of the token form (us, median over the attn CTAs, WGT seen to the MSQ poll's first
        issue: the mix's loads and arithmetic) put the token form far behind: 2.2 at S = 1,
        3.7 at S = 2, 6.9 at S = 3, against 1.2 to 1.3 by source at S = 4. Measured on the
        H200 (us a launch; the slice still by token below S = 4): 1x1 43.76 ->
        42.69, 2x1 50.48 -> 47.37, 1x2 50.02 -> 47.59, 3x1 66.00 -> 60.47, 1x3 66.68 ->
        60.84, 2x2 54.47 -> 54.95. With the token form compiled out 2x2, 4x1 and 4x2
        were 2.4 to 2.6 us slower."""
        if self.mix_min_s is not None:
            return self.mix_min_s
        if not self.slice_by_token:
            return self.src_min_s
        return 1 if self.TB == 1 else 2

    @property
    def max_s(self) -> int:
        """The largest S this compiled kernel serves (every R up to rmax)."""
        return min(self.rmax * self.L, MAX_S)

    @property
    def SL(self) -> int:
        return self.sl if self.sl is not None else self.cfg.SL

    def validate(self) -> Build:
        """Raise naming the first thing this build cannot run: a ``cfg`` the protocol
        refuses (``InvalidInput``), a variant this kernel cannot build (``Unsupported``,
        naming the field), an option out of range (``ValueError``)."""
        self.cfg.validate()
        if self.cfg.blocks != BLOCKS:
            raise Unsupported(
                f"blocks = {self.cfg.blocks}: the Triton K1 launches {BLOCKS} programs",
                what="blocks",
            )
        if not self.cfg.onw_first:
            raise Unsupported(
                "onw_first = False: the Triton K1 asks for on_w with k.stage's loads (it "
                "builds no other order); run it with onw_first = True "
                "(kda_kernel.triton.defaults.recommended(cfg))",
                what="onw_first",
            )
        if self.cfg.gemv_tickets:
            raise Unsupported(
                "gemv_tickets = True: the Triton K1 does not build the gemv groups from the "
                "ticket counter (kda_tickets is built)",
                what="gemv_tickets",
            )
        if self.rmax < self.R:
            raise ValueError(f"R = {self.R} > rmax = {self.rmax} of this build")
        if self.S > MAX_S:
            raise ValueError(f"S = {self.S} > {MAX_S}: the Triton K1 tiles tokens by 16")
        if self.nb > MAX_NB:
            raise ValueError(
                f"nb = {self.nb} > {MAX_NB}: the Triton K1 puts a token's nb + 1 weights and "
                f"their sum in 16 lanes"
            )
        if self.SL < self.L + CONV_W - 2:
            raise ValueError(f"conv state length {self.SL} < L + {CONV_W - 2}")
        if self.prefetch not in range(5):
            raise ValueError(f"prefetch = {self.prefetch}: 0 to 4")
        if self.prefetch_delay_ns < 0:
            raise ValueError(f"prefetch_delay_ns = {self.prefetch_delay_ns}: not negative")
        if self.tma_ns and not 2 <= self.tma_ns <= 8:
            raise ValueError(f"tma_ns = {self.tma_ns}: 0 (off) or 2 to 8 stages")
        if self.MIX_MIN_S < 1:
            raise ValueError(f"mix_min_s = {self.mix_min_s}: at least 1")
        if not 1 <= self.fma_max_s <= MAX_S:
            raise ValueError(f"fma_max_s = {self.fma_max_s}: 1 to {MAX_S}")
        if self.align < 1 or self.align & (self.align - 1):
            raise ValueError(f"align = {self.align}: a power of two, at least 1")
        if not 0 <= self.jitter_ns <= 10_000:
            raise ValueError(f"jitter_ns = {self.jitter_ns}: 0 to 10000")
        for name in (*BACKOFFS_NS, *LAB_WAITS_NS):
            ns = getattr(self, name)
            why = wait_error(name, ns)
            if why:
                raise ValueError(f"{name} = {ns}: {why}")
        if self.recur_rolled not in (0, 1):
            raise ValueError(f"recur_rolled = {self.recur_rolled}: 0 or 1")
        norm = (self.norm_delay_ns, self.norm_stagger_ns, self.onrm_put_delay_ns)
        if (any(norm) or self.recur_rolled) and self.cfg.kda_tickets:
            raise Unsupported(
                "norm_delay_ns, norm_stagger_ns, onrm_put_delay_ns and recur_rolled: static "
                "placement only, not with kda_tickets",
                what="build",
            )
        if self.trace_level not in (1, 2, 3, 4):
            raise ValueError(f"trace_level = {self.trace_level}: 1 to 4")
        self._validate_probe()
        return self

    def _validate_probe(self) -> None:
        if self.probe not in PROBES:
            raise Unsupported(f"probe = {self.probe!r}: one of {PROBES}", what="probe")
        if self.probe == "take" and self.cfg.kda_tickets:
            raise Unsupported(
                "probe = 'take' is the static build's (kda_tickets takes already)", what="probe"
            )
        if self.probe == "static_item" and not self.cfg.kda_tickets:
            raise Unsupported(
                "probe = 'static_item' is the kda_tickets build's (the static build places "
                "its items already)",
                what="probe",
            )

    @property
    def takes(self) -> bool:
        """Whether this build takes from the ticket counter (and its record has the take
        slots): kda_tickets, or the static build with the "take" probe."""
        return self.cfg.kda_tickets or self.probe == "take"

    @property
    def space(self) -> CellSpace:
        """This build's scratch layout (the kernel computes the same offsets)."""
        return CellSpace.of(self.cfg, self.align)

    def offsets(self) -> dict[str, int]:
        cs = self.space
        return {r.name: cs.offsets[r] for r in Region}

    def scratch_words(self) -> int:
        return self.space.offsets[Region.X]  # X is not a mailbox: it lives in xbuf

    def constexprs(self) -> dict[str, Any]:
        return {
            "L": self.L,
            "SL": self.SL,
            "KDA0": self.kda0,
            "HAS_DELTA": self.has_delta,
            "TB": self.TB,
            "LP": next_pow2(self.L),
            "SLP": next_pow2(max(self.SL - self.L, 1)),
            "NEV": T.record_words(self.rmax, tickets=self.takes),
            "MAXT": T.max_tasks(self.rmax),
            "BK": self.bk,
            "NSTAGE": self.nstage,
            "FMA": self.fma,
            "PREFETCH": int(self.prefetch),
            "PF_DELAY": self.prefetch_delay_ns,
            "FMA_MAX_S": self.fma_max_s,
            "FMA_BY_S": self.fma_by_s,
            "EARLY": self.early,
            "TMA_NS": self.tma_ns,
            "TC_BK": self.tc_bk,
            "TC_SPLIT": self.tc_split,
            "MAXS": self.max_s,
            "SLEEP_NS": self.sleep_ns,
            "ALIGN": self.align,
            "JITTER_NS": self.jitter_ns,
            "SLICE_BARRIER": self.slice_barrier,
            "QUIET": self.quiet,
            "SRC_MIN_S": self.src_min_s,
            "MIX_MIN_S": self.MIX_MIN_S,
            "NW_FIRST": self.NW_FIRST,
            "GATE_LOCAL": bool(self.gate_local),
            "BLK_FIRST": self.blk_first and self.slice_by_token,
            # the MSQ poll's token columns: the fewest that hold every S this build serves
            "MSQ_SP": next_pow2(self.max_s),
            "WATCHDOG": self.watchdog,
            "TRACE": self.trace_level if self.trace else 0,
            "INTERP": self.interp,
            "KDA_TICKETS": self.cfg.kda_tickets,
            "TICKET_UNROLL": self.cfg.ticket_unroll,
            "PROBE_TAKE": self.probe == "take",
            "PROBE_STATIC_ITEM": self.probe == "static_item",
            "GATE_SLEEP_NS": self.gate_sleep_ns,
            "GATE_DELAY_NS": self.gate_delay_ns,
            "GATE_STAGGER_NS": self.gate_stagger_ns,
            "NORM_DELAY_NS": self.norm_delay_ns,
            "NORM_STAGGER_NS": self.norm_stagger_ns,
            "ONRM_PUT_DELAY_NS": self.onrm_put_delay_ns,
            "RECUR_ROLLED": self.recur_rolled,
        }

    def with_(self, **kw: Any) -> Build:
        """This build with some fields changed, of ``cfg`` (R, nb, a variant) or its own."""
        variants, options = split_fields(kw)
        return replace(self, cfg=replace(self.cfg, **variants), **options)


@dataclass
class Workspace:
    """Device buffers a step's launches share. Nothing here is ever cleared by the kernel
    or by us between launches: tags make old contents harmless."""

    scratch: torch.Tensor  # int64 (value, tag) words
    xbuf: torch.Tensor  # bf16 x rows [MAX_S, HIDDEN]
    epoch: torch.Tensor  # int32 [1]: word 0 of ctrl
    # int32 [1]: word COUNTER_WORD of ctrl, the ticket counter (kda_tickets, probe "take")
    counter: torch.Tensor
    alarm: torch.Tensor  # int64
    trace: (
        torch.Tensor
    )  # int32 [BLOCKS, NEV] (kda_kernel.triton.trace_layout; widened by kda_kernel.triton.trace)

    @classmethod
    def create(
        cls, builds: list[Build], device: str | torch.device, *, clear: bool = True
    ) -> Workspace:
        words = max(b.scratch_words() for b in builds)
        nev = max(T.record_words(b.rmax, tickets=b.takes) for b in builds)
        # the epoch and the ticket counter, zeroed here once and never by the host again:
        # the counter's last taker of each launch resets it (graph-safe)
        ctrl = torch.zeros(CTRL_WORDS, dtype=torch.int32, device=device)
        # only the first allocation is cleared (a fresh buffer holds tag 0, never a tag)
        mk = torch.zeros if clear else torch.empty
        return cls(
            scratch=mk(words, dtype=torch.int64, device=device),
            xbuf=mk(MAX_S, HIDDEN, dtype=torch.bfloat16, device=device),
            epoch=ctrl[:1],
            counter=ctrl[COUNTER_WORD : COUNTER_WORD + 1],
            alarm=torch.zeros(alarm_words(BLOCKS), dtype=torch.int64, device=device),
            trace=torch.zeros(BLOCKS, nev, dtype=torch.int32, device=device),
        )


def kernel_args(
    b: Build,
    inp: dict[str, torch.Tensor | None],
    core_out: torch.Tensor,
    ws: Workspace,
    slot: int,
    *,
    budget_ns: int = 200_000_000,
    max_retry: int = 1 << 40,
    inj_mode: int = 0,
    inj_gidx: int = -1,
    eps: float = 1e-5,
    out_eps: float = 1e-5,
    onorm_eps: float = 1e-5,
    lower_bound: float = -5.0,
) -> tuple[list[Any], dict[str, Any]]:
    """Positional args and constexprs of one launch, checked against the build."""
    prefix, blocks, cs, rs = inp["prefix"], inp["blocks"], inp["conv_state"], inp["rstate"]
    assert prefix is not None and blocks is not None and cs is not None and rs is not None
    delta = inp["delta"]
    assert (delta is not None) == b.has_delta, "build's has_delta must match delta"
    assert blocks.shape[1] == b.nb and blocks.stride(2) == 1
    assert prefix.shape == (b.S, HIDDEN) and prefix.is_contiguous()
    assert cs.shape[2] == b.SL, f"conv state length {cs.shape[2]} != build's {b.SL}"
    assert rs.shape[1:] == (12, HD, HD) and rs.stride(3) == 1 and rs.stride(2) == HD
    st_idx = inp["st_idx"]
    assert st_idx is not None and st_idx.shape[0] == b.R and st_idx.shape[1] >= b.L
    assert inp["w_in"] is not None and inp["w_in"].shape == (NPROJ, HIDDEN)
    assert slot < TAG_SLOTS
    args = [
        prefix,
        delta if delta is not None else prefix,
        blocks,
        blocks.stride(0),
        blocks.stride(1),
        inp["ares_nw"],
        inp["ares_qk"],
        inp["in_nw"],
        inp["w_in"],
        inp["w_fb"],
        inp["conv_w"],
        cs,
        cs.stride(0),
        cs.stride(1),
        cs.stride(2),
        inp["a_log"],
        inp["dt_bias"],
        inp["on_w"],
        rs,
        rs.stride(0),
        st_idx,
        st_idx.stride(0),
        inp["num_acc"],
        core_out,
        ws.scratch,
        ws.xbuf,
        ws.epoch,
        slot,
        ws.alarm,
        ws.trace,
        inj_mode,
        inj_gidx,
        budget_ns,
        max_retry,
        eps,
        out_eps,
        onorm_eps,
        lower_bound,
        b.R,
        b.nb,
    ]
    return args, b.constexprs()


def _descriptor_scratch(b: Build) -> None:
    """A build whose gemv makes its tensor descriptor on the device (``tma_ns``) needs
    global scratch for it, which Triton asks an allocator for at each launch; torch's
    caching allocator is stream-ordered, and under graph capture it draws from the graph's
    pool, so a replay reuses what the capture was given."""
    if b.tma_ns and not b.interp:
        descriptor_scratch_from_torch()


def descriptor_scratch_from_torch() -> None:
    """Triton's allocator for device-made tensor descriptors, served by torch."""
    import triton

    triton.set_allocator(
        lambda size, align, stream: torch.empty(size, dtype=torch.int8, device="cuda")
    )


def launch(
    b: Build,
    inp: dict[str, torch.Tensor | None],
    core_out: torch.Tensor,
    ws: Workspace,
    slot: int,
    **kw: Any,
) -> Any:
    """One launch of 256 programs (no pre-flight here: see preflight.py and run.py)."""
    from kda_kernel.triton.k1 import kda_pre_k1

    args, cx = kernel_args(b, inp, core_out, ws, slot, **kw)
    _descriptor_scratch(b)
    opts: dict[str, Any] = {"num_warps": NUM_WARPS}
    if b.maxnreg is not None and not b.interp:
        opts["maxnreg"] = b.maxnreg
    return kda_pre_k1[(BLOCKS,)](*args, **cx, **opts)


def compile_only(
    b: Build, inp: dict[str, torch.Tensor | None], core_out: torch.Tensor, ws: Workspace
) -> Any:
    """Compile without launching (for the pre-flight): the compiled kernel object."""
    from kda_kernel.triton.k1 import kda_pre_k1

    args, cx = kernel_args(b, inp, core_out, ws, 0)
    _descriptor_scratch(b)
    opts: dict[str, Any] = {"num_warps": NUM_WARPS}
    if b.maxnreg is not None:
        opts["maxnreg"] = b.maxnreg
    return kda_pre_k1.warmup(*args, **cx, **opts, grid=(BLOCKS,))
