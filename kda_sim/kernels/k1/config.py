"""One launch's configuration: the shape and build parameters of K1, validated.

The checks here are the kernel's own structural limits (threads a stage needs,
the per-thread poll batch, the gate on attn CTAs); the GPU-dependent limit (x rows
in LDS) is checked against a profile in :mod:`kda_sim.machine.residency`.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import Any

from kda_sim.errors import InvalidInput
from kda_sim.kernels.k1.constants import BLOCKS, CONV_W, GEMV0, MAX_L, N_GEMV, NA, QC, THREADS

# the switches that change what a CTA does but not the shape (shared/PROTOCOL.md)
VARIANTS: tuple[str, ...] = ("gate_local", "nw_first", "onw_first")
# the switches that change who runs which work item: taken from an atomic ticket counter
# (kda_sim/kernels/k1/tickets.py) instead of K1's static placement. Apart from VARIANTS:
# the what-if views enumerate those, and a field left at False is left out of to_dict, so
# a static launch's metadata is what it was before these existed
SCHEDULES: tuple[str, ...] = ("kda_tickets", "gemv_tickets")
# unrolled kda task copies before the ticket loop, at most (each is the task's code again)
MAX_TICKET_UNROLL = 4
# every field, as timeline metadata and JSON carry them
CONFIG_KEYS: tuple[str, ...] = (
    "R",
    "L",
    "nb",
    "kda0",
    "blocks",
    *VARIANTS,
    *SCHEDULES,
    "ticket_unroll",
    "take_ahead",
    "placed",
)
# what each variant changes, as flags and the app say it
VARIANT_HELP: dict[str, str] = {
    "gate_local": "every attn CTA computes the gate weights itself (no WGT hand-off)",
    "nw_first": "the attn CTAs ask for in_nw with the slice's loads, not after the MSQ poll",
    "onw_first": "the kda tasks ask for on_w with k.stage's loads, not after k.norm's poll",
    "kda_tickets": "the kda tasks are taken from an atomic ticket counter by every CTA once "
    "its static role is done (attn and gemv stay static)",
    "gemv_tickets": "the gemv groups, then the kda tasks, are taken from one ticket counter "
    "(only attn stays static: its all-to-all needs the 56 co-resident)",
}


def variants_of(given: dict[str, object]) -> dict[str, bool]:
    """Keyword arguments naming protocol variants (or schedules, or take_ahead), checked:
    an unknown name is an error that lists the known ones (a typo would otherwise run the
    seed's protocol)."""
    switches = (*VARIANTS, *SCHEDULES, "take_ahead")  # every boolean switch (a flag each)
    unknown = sorted(set(given) - set(switches))
    if unknown:
        known = list(switches)
        raise InvalidInput(f"not a protocol variant: {unknown} (known: {known})", what="variant")
    return dict(given)  # type: ignore[arg-type]


@dataclass(frozen=True, slots=True)
class LaunchConfig:
    """R requests x L tokens of one K1 launch (S = R L rows)."""

    R: int
    L: int
    nb: int = 8
    kda0: int = 0
    gate_local: bool = False
    blocks: int = BLOCKS
    # the attn CTAs ask for in_nw (the x rows' norm weights) with the slice's loads, not
    # after the MSQ poll (the seed's order): its round trip leaves the path into XRDY
    nw_first: bool = False
    # the kda tasks ask for on_w (the output norm's weights) with k.stage's loads, not
    # after k.norm's ONRM+PROJ poll (the seed's order)
    onw_first: bool = False
    # the kda tasks from a ticket counter, taken by each CTA after its static role
    kda_tickets: bool = False
    # the gemv groups too, from the same counter before the kda tasks (implies kda_tickets)
    gemv_tickets: bool = False
    # kda task copies a CTA's first takes run unrolled before the ticket loop (0: every
    # item in the loop's one copy). The loop alone keeps the task's address terms live
    # across it and spills on the H200 (kernel/triton/tickets.py); a copy runs its code
    # the first time, as the static placement's second task does (cold_code)
    ticket_unroll: int = 0
    # each CTA with a role issues its first take before the role's last hand-off (the
    # XRDY publish, the last PROJ put) and waits for it after the role, its round trip
    # overlapped with the hand-off (kda_sim.protocol.tickets.TakeAhead). Off: the take
    # after the role, as the Triton build issues it (a CTA barrier after the publish's
    # release, then one thread's atomic: docs/whatif/ticket_k1.md, "A take issued ahead")
    take_ahead: bool = False
    # a ticket launch's items placed as a run took them: CTA -> its tickets in take order
    # (kda_sim.protocol.tickets.placed); empty: taken from the counter as the launch runs
    placed: tuple[tuple[int, ...], ...] = ()

    @property
    def S(self) -> int:
        return self.R * self.L

    @property
    def NS(self) -> int:
        return self.nb + 1

    @property
    def SL(self) -> int:
        """Conv state length: CONV_W - 1 + num_spec, num_spec = L - 1 (reading)."""
        return CONV_W - 1 + self.L - 1

    @property
    def n_tasks(self) -> int:
        return self.R * 12 * 8

    @property
    def tickets(self) -> bool:
        """Whether any work is taken from the ticket counter (a SCHEDULES field is on)."""
        return self.kda_tickets or self.gemv_tickets

    def schedule(self) -> str:
        """Who places the work: "static" (K1's placement) or the SCHEDULES field on."""
        return (
            "gemv_tickets"
            if self.gemv_tickets
            else "kda_tickets"
            if self.kda_tickets
            else ("static")
        )

    def label(self) -> str:
        variants = "".join(f" {v}" for v in self.variants())
        sched = "" if not self.tickets else f" {self.schedule()}"
        sched += f" unroll {self.ticket_unroll}" if self.ticket_unroll else ""
        sched += " take ahead" if self.take_ahead else ""
        sched += " placed" if self.placed else ""
        return f"R={self.R} L={self.L} nb={self.nb} kda0={self.kda0}{variants}{sched}"

    def variants(self) -> tuple[str, ...]:
        """The protocol variants this launch runs, by name (of :data:`VARIANTS`)."""
        return tuple(v for v in VARIANTS if getattr(self, v))

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        # off: left out (a static launch's as it was)
        for name in (*SCHEDULES, "ticket_unroll", "take_ahead", "placed"):
            if not d[name]:
                del d[name]
        if "placed" in d:
            d["placed"] = [list(t) for t in d["placed"]]
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> LaunchConfig:
        got = {k: d[k] for k in CONFIG_KEYS if k in d}
        if isinstance(got.get("placed"), list | tuple):
            got["placed"] = tuple(
                tuple(t) if isinstance(t, list | tuple) else t for t in got["placed"]
            )
        return cls(**got)

    def dynamic(self) -> LaunchConfig:
        """This launch with its ticket items taken from the counter again (not placed)."""
        return replace(self, placed=())

    def validate(self) -> LaunchConfig:
        """Raise :class:`InvalidInput` naming the first constraint this shape breaks."""
        for name in ("R", "L", "nb", "kda0", "blocks", "ticket_unroll"):
            if not isinstance(getattr(self, name), int) or isinstance(getattr(self, name), bool):
                raise InvalidInput(f"{name} must be an integer", what=name)
        for name in (*VARIANTS, *SCHEDULES, "take_ahead"):
            if not isinstance(getattr(self, name), bool):
                raise InvalidInput(f"{name} must be true or false", what=name)
        self._validate_placed()
        rules: list[tuple[bool, str, str]] = [
            (self.R >= 1, "R", f"R = {self.R}: at least one request (R >= 1)"),
            (self.L >= 1, "L", f"L = {self.L}: at least one token a request (L >= 1)"),
            (
                self.L <= MAX_L,
                "L",
                f"L = {self.L} > {MAX_L}: kda_gates polls 3 L 128 pairs over {THREADS} "
                f"threads, at most 12 a thread",
            ),
            (self.nb >= 1, "nb", f"nb = {self.nb}: AttnRes needs at least one block"),
            (
                16 * self.NS <= THREADS,
                "nb",
                f"nb = {self.nb}: stage_gate polls with 16 (nb + 1) threads, more than {THREADS}",
            ),
            (
                self.S <= NA,
                "S",
                f"S = R L = {self.S} > {NA}: the gate of token t runs on attn CTA t",
            ),
            (
                self.S * QC <= THREADS,
                "S",
                f"S = R L = {self.S}: stage_mix needs 32 S <= {THREADS} threads (S <= 16)",
            ),
            (
                self.S * (self.NS + 1) <= THREADS,
                "S",
                f"S (nb + 2) = {self.S * (self.NS + 1)} > {THREADS}: stage_mix polls one "
                f"WGT pair a thread",
            ),
            (
                self.blocks >= GEMV0 + N_GEMV,
                "blocks",
                f"blocks = {self.blocks} < {GEMV0 + N_GEMV}: the roles need "
                f"{NA} attn + {N_GEMV} gemv CTAs",
            ),
            (
                0 <= self.ticket_unroll <= MAX_TICKET_UNROLL,
                "ticket_unroll",
                f"ticket_unroll = {self.ticket_unroll}: 0 (the loop alone) to "
                f"{MAX_TICKET_UNROLL} unrolled copies of the kda task",
            ),
            (
                self.ticket_unroll == 0 or self.kda_tickets,
                "ticket_unroll",
                f"ticket_unroll = {self.ticket_unroll} unrolls the kda_tickets loop: "
                "it needs kda_tickets",
            ),
            (
                not self.take_ahead or self.tickets,
                "take_ahead",
                "take_ahead issues a CTA's first ticket take before its role ends: it needs "
                "kda_tickets or gemv_tickets",
            ),
            (
                0 <= self.kda0 < self.blocks,
                "kda0",
                f"kda0 = {self.kda0}: must be a CTA of the launch, 0..{self.blocks - 1}",
            ),
        ]
        for ok, what, msg in rules:
            if not ok:
                raise InvalidInput(msg, what=what)
        return self

    def _validate_placed(self) -> None:
        """The shape of ``placed``; whether it is a run of the loop is checked when the
        launch is built (kda_sim.protocol.tickets.placed)."""
        if not self.placed:
            return
        if not self.tickets:
            raise InvalidInput("placed: a static launch has no ticket items", what="placed")
        ok = isinstance(self.placed, tuple) and all(
            isinstance(ts, tuple)
            and all(isinstance(t, int) and not isinstance(t, bool) and t >= 0 for t in ts)
            for ts in self.placed
        )
        if not ok:
            raise InvalidInput("placed: a list a CTA of the tickets it took", what="placed")
        if len(self.placed) != self.blocks:
            raise InvalidInput(
                f"placed: takes of {len(self.placed)} CTAs, the launch has {self.blocks}",
                what="placed",
            )


def parse_shapes(text: str) -> tuple[tuple[int, int], ...]:
    """Shapes written R x L, comma-separated ("8x1,1x1") -> ((8, 1), (1, 1)), each once."""
    out: list[tuple[int, int]] = []
    for part in text.split(","):
        part = part.strip().lower()
        try:
            r, lng = part.split("x")
            out.append((int(r), int(lng)))
        except ValueError as e:
            raise InvalidInput(f"shape {part!r}: write R x L as e.g. 8x1", what="shapes") from e
    if not out:
        raise InvalidInput("at least one shape", what="shapes")
    return tuple(dict.fromkeys(out))
