"""The sizes of a mono MoE launch and its fault variants."""

from __future__ import annotations

from dataclasses import dataclass

from kda_sim.errors import InvalidInput
from kda_sim.protocol.tickets import MAX_ITEMS

MAX_SIZE = 4096  # any size field, at most: the queue stays a few thousand items


@dataclass(frozen=True)
class MonoMoeConfig:
    tokens: int = 4  # T: the decode batch, one top-k item a token
    experts: int = 4  # E: routed experts
    top_k: int = 2  # experts a token is routed to (distinct)
    tiles: int = 2  # gemm1 n-blocks of an expert, and gemm2 tiles of an expert
    shared_tiles: int = 2  # shared expert gate/up K splits, and its down tiles
    ctas: int = 4  # the grid: CTAs that loop on the ticket counter
    tile_bytes: int = 1 << 17  # weight bytes a gemm or shared tile loads
    bad_order: bool = False  # gemm2 tiles numbered before the gemm1 tiles they wait on
    no_clear: bool = False  # the last ticket's taker clears no counter

    def validate(self) -> MonoMoeConfig:
        for name in ("tokens", "experts", "top_k", "tiles", "shared_tiles", "ctas"):
            v = getattr(self, name)
            if not 1 <= v <= MAX_SIZE:
                raise InvalidInput(f"{name} = {v}: 1 to {MAX_SIZE}", what=name)
        if self.top_k > self.experts:
            raise InvalidInput(
                f"top_k = {self.top_k} > experts = {self.experts}: a token's experts are distinct",
                what="top_k",
            )
        if self.items > MAX_ITEMS:
            raise InvalidInput(
                f"{self.items} items (tokens + 1 + 2 x shared_tiles + 2 x experts x tiles): "
                f"at most {MAX_ITEMS}",
                what="tiles",
            )
        if self.tile_bytes < 0:
            raise InvalidInput(f"tile_bytes = {self.tile_bytes}: not negative", what="tile_bytes")
        return self

    @property
    def items(self) -> int:
        """Tickets that pick an item: top-k a token, the sort, the shared expert's gate/up
        and down tiles, gemm1 and gemm2 tiles of every expert."""
        return self.tokens + 1 + 2 * self.shared_tiles + 2 * self.experts * self.tiles
