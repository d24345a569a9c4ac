"""What a poll try costs beyond the round trip, site by site, as the Triton K1
(``kernel/triton``, the build every H200 trace ran) writes its polls.

A try of ``kernel/triton/mailbox.py``'s ``_poll`` loads the site's tensor of pairs, then
counts the stale ones over the CTA one register slot at a time (``bar.red.popc``, a CTA
barrier a slot): a tensor of n pairs on the 256 threads holds n / 256 a thread (a smaller
one is replicated, one a thread). Between tries the long polls (XRDY, k.conv's PROJ,
k.gates' f_a) sleep ``Build.sleep_ns`` (``nanosleep``); the others re-load at once. In the
nine H200 traces a retry costs 343 + 2.1 ns a ns of sleep + 26 ns a pair a thread
(R^2 0.74 over six sites; ``docs/calibration.md``, "What a poll's time is made of").

The seed's build (the HIP kernel and its profiles) is not described here; a profile
prices these facts with ``latency_ns.poll_lane`` and ``latency_ns.backoff``, 0 unless a
fit sets them, so a profile without them runs every poll as before.
"""

from __future__ import annotations

from dataclasses import dataclass

from kda_sim.kernels.k1.constants import HD

THREADS = 256  # the Triton K1's CTA (kernel/triton/limits.py NUM_WARPS x 32)
RMAX = 4  # kernel/triton/launch.py Build.rmax: MSQ's tensor is sized for R up to 4
MAX_S = 16  # the largest S a Triton build serves (kernel/triton/limits.py MAX_S)


@dataclass(frozen=True)
class Site:
    lanes: int  # pairs a thread
    backoff: bool  # sleeps between tries


def _lanes(pairs: int) -> int:
    return max(1, pairs // THREADS)


def _pow2(n: int) -> int:
    return 1 << (max(1, n) - 1).bit_length()


PART = Site(_lanes(64 * 16 * 2), False)  # attn.py: [64 slices, 16 sources, 2]
WGT = Site(_lanes(16 * 16), False)  # [16 tokens, 16 sources]
XRDY = Site(1, True)  # gemv.py: the 56 flags, read once a CTA (QUIET)
CONV = Site(1, True)  # kda.py: [64 channels, next_pow2(L)], replicated
GATES_FA = Site(_lanes(16 * HD), True)  # [16, HD]
GATES_BETA = Site(1, False)  # [16], L live
NORM = Site(1, False)  # [next_pow2(L), 32]


def msq(L: int) -> Site:
    """[64 slices, MSQ_SP]: MSQ_SP the build's largest S (RMAX L) up to a power of two."""
    return Site(_lanes(64 * _pow2(min(RMAX * L, MAX_S))), False)


def qk(L: int) -> Site:
    """[2 next_pow2(L), HD]: each token's q and k rows."""
    return Site(_lanes(2 * _pow2(L) * HD), False)
