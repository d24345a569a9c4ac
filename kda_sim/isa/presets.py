"""Argument classes and accepted polls of kernels we know: our FlyDSL K1 and the
analyzer's probes. FlyDSL writes no argument names into the metadata, so classes go
by position; ``kernel/flydsl/k1.py`` is checked (tests/kernel) to take its arguments
in exactly this order."""

from __future__ import annotations

# (name, class) in kernel-argument order
K1_ARGS: tuple[tuple[str, str], ...] = (
    ("prefix", "staging"),
    ("blocks", "staging"),
    ("ares_nw", "staging"),
    ("ares_qk", "staging"),
    ("in_nw", "staging"),
    ("w_in", "weights"),
    ("w_fb", "staging"),  # f_b rows: staged before the first poll, by design
    ("conv_w", "staging"),
    ("conv_state", "staging"),
    ("a_log", "staging"),
    ("dt_bias", "staging"),
    ("on_w", "staging"),
    ("rstate", "staging"),
    ("core_out", "staging"),
    ("xbuf", "flagged"),
    ("scratch", "mailbox"),
    ("epoch", "staging"),
    ("stamps", "staging"),
    ("slot", "scalar"),
    ("st_idx", "staging"),  # after slot: the builds before them keep their arguments' indices
    ("num_acc", "staging"),
    # the seed's arguments added after these (indices of earlier builds kept): the
    # prefix's delta, the bounded-wait build's give-up records and its bound (ticks)
    ("delta", "staging"),
    ("health", "mailbox"),
    ("alarm", "scalar"),
)

# the seed's one accepted exception to the role rule: the gemv CTAs' XRDY poll in
# load_x waits behind rg0's weights (poll markers read "poll <stage> <region>")
K1_ACCEPTED: tuple[str, ...] = ("load_x XRDY",)

PROBE_ARGS: tuple[tuple[str, str], ...] = (
    ("w", "weights"),
    ("mb", "mailbox"),
    ("out", "staging"),
    ("flag", "mailbox"),
    ("tag", "scalar"),
)

PRESETS: dict[str, tuple[tuple[tuple[str, str], ...], tuple[str, ...]]] = {
    "k1": (K1_ARGS, K1_ACCEPTED),
    "probe": (PROBE_ARGS, ()),
}
