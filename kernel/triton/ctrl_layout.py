"""The launch's control buffer (int32 words, zeroed once when the workspace is allocated):
the device epoch, bumped in the graph before each launch, and the kda_tickets counter,
each on a 128-byte line of its own, so the counter's atomics share no line with the
epoch's reads (nor with any mailbox pair: those live in scratch)."""

from __future__ import annotations

# the epoch is word 0 (the kernel's ``epoch`` argument points at it); the counter, words
# past it
COUNTER_WORD = 32  # 128 bytes past the epoch: the next line
CTRL_WORDS = 64
