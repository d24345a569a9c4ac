"""The mono MoE launch as data: one ticket queue, its items and their waits.

What vLLM's README says the launch does (read through the code index, nothing copied):
every workgroup loops on a global ticket counter and the ticket picks the item; tickets
run top-k a token, then the shared expert's gate/up splits, the gemm1 tiles, the shared
down tiles and the gemm2 tiles; gemm1 waits for the routed flag, gemm2 for every gemm1
n-block of its m-block, shared down for every gate/up split; each wait names an item of
a smaller ticket, so the grid cannot deadlock however many workgroups are resident.
The routed flag holds a launch epoch and is never cleared; the workgroup that takes the
last ticket clears the ticket, top-k and m-block counters for the next launch.

How it is said here:

- Top-k item t adds 1 to ``COUNT[e]`` (the m-block counter) for each expert e the token
  is routed to, then 1 to ``TOPK``. The routing is data: token t goes to experts
  (t x top_k + j) mod E, j < top_k, distinct while top_k <= E.
- In vLLM the workgroup whose top-k finishes last sorts the routes and raises the flag;
  the vocabulary has no branch on an atomic's old value, so the sort is its own item,
  the ticket right after the top-k items, waiting ``TOPK >= T``. Its waits stay on
  smaller tickets, as the design's.
- The routed flag is the (value, tag) pair ``ROUTED[0]`` whose tag is the launch's (the
  epoch): a put of a previous launch carries another tag and satisfies no poll, so the
  flag needs no clearing. gemm1 of expert e polls it, then waits ``COUNT[e] >= routes
  of e`` (it reads its m-block count there).
- gemm1 (e, n) puts ``H1[e, n]``; gemm2 (e, n) polls ``H1[e, 0..tiles-1]``. Shared
  gate/up s puts ``SGU[s]``; shared down polls every ``SGU``.
- The loop's last ticket (items + ctas - 1) is taken once every CTA found the queue
  empty; its taker zeroes ``TICKET``, ``TOPK`` and every ``COUNT`` (``clears``).

Variants: ``bad_order`` numbers the gemm2 tiles before the gemm1 tiles (a wait names a
larger ticket); ``no_clear`` leaves every counter as the launch left it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kda_sim.kernels.monomoe.config import MonoMoeConfig
from kda_sim.kernels.spec import launch_terms
from kda_sim.protocol.counters import Atomic, Pred, Reset, Wait
from kda_sim.protocol.ops import Begin, Compute, End, Load, LoadKind, Op, Poll, Put, Store, Use
from kda_sim.protocol.program import CtaProgram, Launch
from kda_sim.protocol.space import CellSpace
from kda_sim.protocol.tickets import ticket_loop

# region ids, in the order of regions()
TICKET, TOPK, COUNT, ROUTED, SGU, H1 = range(6)
ROLE = "worker"
LOOP = "moe"
OUT_BYTES_PER_TOKEN = 2 * 7168  # a bf16 output row of a 7168-wide hidden state


def regions(cfg: MonoMoeConfig) -> dict[str, int]:
    return {
        "TICKET": 1,  # the ticket counter
        "TOPK": 1,  # top-k items finished
        "COUNT": cfg.experts,  # routes of each expert (its m-block counter)
        "ROUTED": 1,  # the routed flag: a (value, tag) pair, tag = the launch's epoch
        "SGU": cfg.shared_tiles,  # shared gate/up partials, a pair each
        "H1": cfg.experts * cfg.tiles,  # gemm1 intermediate tiles, a pair each
    }


def experts_of(cfg: MonoMoeConfig, token: int) -> tuple[int, ...]:
    return tuple((token * cfg.top_k + j) % cfg.experts for j in range(cfg.top_k))


def routes(cfg: MonoMoeConfig) -> list[int]:
    """Tokens routed to each expert."""
    n = [0] * cfg.experts
    for t in range(cfg.tokens):
        for e in experts_of(cfg, t):
            n[e] += 1
    return n


@dataclass(frozen=True)
class Layout:
    """The first ticket of each kind of item, in ticket order."""

    route: int
    sort: int
    shared_gu: int
    gemm1: int
    shared_down: int
    gemm2: int
    items: int

    @classmethod
    def of(cls, cfg: MonoMoeConfig) -> Layout:
        g = cfg.experts * cfg.tiles
        s = cfg.shared_tiles
        sort = cfg.tokens
        gu = sort + 1
        g1 = gu + s
        dn = g1 + g
        g2 = dn + s
        if cfg.bad_order:  # gemm2 tiles ahead of the gemm1 tiles they poll
            g2, g1, dn = g1, g1 + g, g1 + 2 * g
        return cls(0, sort, gu, g1, dn, g2, cfg.items)

    def kind(self, ticket: int) -> tuple[str, int]:
        """The stage and the index within it of the item ``ticket`` picks."""
        starts = sorted(
            [
                ("route", self.route),
                ("sort", self.sort),
                ("shared_gu", self.shared_gu),
                ("gemm1", self.gemm1),
                ("shared_down", self.shared_down),
                ("gemm2", self.gemm2),
            ],
            key=lambda kv: kv[1],
        )
        name, first = next((n, f) for n, f in reversed(starts) if f <= ticket)
        return name, ticket - first


def _pair_poll(label: str, cells: np.ndarray) -> Poll:
    """One thread a pair (the design updates each control word from one lane)."""
    cells = np.asarray(cells, dtype=np.int64).reshape(-1)
    return Poll(label, cells.reshape(-1, 1), np.unique(cells))


def launch_size(cfg: MonoMoeConfig) -> tuple[int, tuple[str, ...]]:
    """The ops :func:`build` makes: the loop, one op a CTA, and its bodies once (the
    CTAs share them): a top-k item's 5 and an add an expert it routes to, the sort's 5,
    a shared tile's 6 (gate/up) and 7 (down), an expert tile's 8 (gemm1) and 7 (gemm2)."""
    return launch_terms(
        {
            ("ctas",): cfg.ctas,
            ("tokens", "top_k"): cfg.tokens * (cfg.top_k + 5) + 5,
            ("shared_tiles",): 13 * cfg.shared_tiles,
            ("experts", "tiles"): 15 * cfg.experts * cfg.tiles,
        }
    )


def build(cfg: MonoMoeConfig) -> Launch:
    space = CellSpace.from_sizes(regions(cfg))
    lay = Layout.of(cfg)
    n_routes = routes(cfg)
    ticket = int(space.gid(TICKET, 0))
    topk = int(space.gid(TOPK, 0))
    count = [int(space.gid(COUNT, e)) for e in range(cfg.experts)]
    routed = space.gid(ROUTED, np.array([0]))
    sgu = space.gid(SGU, np.arange(cfg.shared_tiles))

    def h1(e: int) -> np.ndarray:
        return space.gid(H1, np.arange(e * cfg.tiles, (e + 1) * cfg.tiles))

    def weights(name: str, what: str) -> list[Op]:
        return [Load(name, LoadKind.WEIGHT, cfg.tile_bytes, what), Use((name,))]

    def item(i: int) -> list[Op]:
        stage, k = lay.kind(i)
        ops: list[Op] = [Begin(stage, i)]
        if stage == "route":
            ops.append(Compute("moe.topk"))
            ops += [Atomic(COUNT, count[e]) for e in experts_of(cfg, k)]
            ops += [Atomic(TOPK, topk), Store("zero output row", OUT_BYTES_PER_TOKEN)]
        elif stage == "sort":
            ops += [
                Wait("TOPK", TOPK, topk, Pred.GE, cfg.tokens),
                Compute("moe.sort", cfg.tokens * cfg.top_k),
                Put(ROUTED, routed),
            ]
        elif stage == "shared_gu":
            ops += weights(f"sgu{k}", "shared gate/up weights")
            ops += [Compute("moe.shared_gu", cfg.tokens), Put(SGU, sgu[k : k + 1])]
        elif stage == "shared_down":
            parts = _pair_poll("SGU", sgu)
            ops.append(parts)
            ops += weights(f"sdn{k}", "shared down weights")
            ops += [
                Compute("moe.shared_down", cfg.tokens, reads=parts.cells),
                Store("shared output", OUT_BYTES_PER_TOKEN * cfg.tokens // cfg.shared_tiles),
            ]
        elif stage == "gemm1":
            e, n = divmod(k, cfg.tiles)
            flag = _pair_poll("ROUTED", routed)  # the sorted routes: what gemm1 reads
            ops += [flag, Wait(f"COUNT[{e}]", COUNT, count[e], Pred.GE, n_routes[e])]
            ops += weights(f"w1_{e}_{n}", f"gemm1 weights of expert {e}")
            ops += [
                Compute("moe.gemm1", n_routes[e], reads=flag.cells),
                Put(H1, h1(e)[n : n + 1], reads=flag.cells),
            ]
        else:  # gemm2
            e, n = divmod(k, cfg.tiles)
            tiles = _pair_poll(f"H1[{e}]", h1(e))
            ops.append(tiles)
            ops += weights(f"w2_{e}_{n}", f"gemm2 weights of expert {e}")
            ops += [
                Compute("moe.gemm2", n_routes[e], reads=tiles.cells),
                Store("routed output (atomic adds)", OUT_BYTES_PER_TOKEN * n_routes[e]),
            ]
        ops.append(End(stage, i))
        return ops

    clears = () if cfg.no_clear else (Reset(TOPK, (topk,)), Reset(COUNT, tuple(count)))
    loop = ticket_loop(
        LOOP,
        TICKET,
        ticket,
        lay.items,
        item,
        takers=0 if cfg.no_clear else cfg.ctas,
        clears=clears,
    )
    programs = tuple(CtaProgram(c, ROLE, (), (loop,)) for c in range(cfg.ctas))
    return Launch(cfg, space, programs)


def work_items(cfg: MonoMoeConfig) -> dict[str, range]:
    """Each stage's items, by ticket (a Begin carries its ticket): each runs once."""
    lay = Layout.of(cfg)
    counts = {
        "route": cfg.tokens,
        "sort": 1,
        "shared_gu": cfg.shared_tiles,
        "gemm1": cfg.experts * cfg.tiles,
        "shared_down": cfg.shared_tiles,
        "gemm2": cfg.experts * cfg.tiles,
    }
    return {
        stage: range(getattr(lay, stage), getattr(lay, stage) + n) for stage, n in counts.items()
    }
