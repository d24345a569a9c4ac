"""The Triton K1's fixed sizes, which the device code (as constexprs) and the host share."""

from __future__ import annotations

NUM_WARPS = 8  # 256 threads: two CTAs an SM on the H200
MAX_S = 16  # the gemv's token tile and the mix's token vector are 16 wide
MAX_NB = 14  # a token's nb + 1 softmax weights and their sum fit the gate's 16 lanes
