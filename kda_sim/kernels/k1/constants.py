"""The K1 ``kda_pre`` constants: their one home.

Every value is derived from the seed's index arithmetic (``shared/PROTOCOL.md``
reads them off ``seed/kda_pre.txt``); nothing else in the package repeats them.
"""

from __future__ import annotations

from typing import Final

from kda_sim.protocol.tagexpr import TagExpr

HIDDEN: Final = 7168  # hidden size: NA slices x COLS columns
NA: Final = 56  # attn CTAs, one 128-column slice each
COLS: Final = 128  # columns a slice
QC: Final = COLS // 4  # threads a (token, source) row: 4 columns a thread
GSL: Final = 7  # slices a poll group (8 groups x 7 = 56)
WAVES: Final = 8  # waves a CTA (AMD wave64)
WAVE_LANES: Final = 64
THREADS: Final = WAVES * WAVE_LANES  # 512
NH: Final = 12  # KDA heads
HD: Final = 128  # head dim
PROJ: Final = NH * HD  # 1536, one of q / k / v / g2
VCH: Final = 16  # v rows a chunk
NVCH: Final = HD // VCH  # 8 chunks a head
CONV_W: Final = 4  # short-conv width (reading: Kimi Linear uses 4)

# in_proj rows: q | k | v | g2 | f_a | beta | 4 zero pad rows
Q_0: Final = 0
K_0: Final = PROJ
V_0: Final = 2 * PROJ
G2_0: Final = 3 * PROJ  # 4608
FA_0: Final = 4 * PROJ  # 6144
BETA_0: Final = FA_0 + HD  # 6272
NPROJ: Final = BETA_0 + NH + 4  # 6288
ROWS: Final = 16  # in_proj rows a gemv group
GEMV_TASKS: Final = NPROJ // ROWS  # 393
N_GEMV: Final = (GEMV_TASKS + 1) // 2  # 197 gemv CTAs, two groups each
GEMV0: Final = NA  # first gemv CTA
KCH: Final = 128  # K elements a weight chunk (4 lane groups x 8, four loads 32 apart)
PER_WAVE: Final = HIDDEN // (WAVES * KCH)  # 7 K chunks a wave
RG1_EARLY: Final = 4  # chunks of the second group issued as x lands (the rest after gemv0)

BLOCKS: Final = 256  # CTAs a launch (one a CU of an MI355X)
TAG_SLOTS: Final = 256  # launch slots a step
EPOCH_BITS: Final = 22  # step_tag keeps epoch % 2**EPOCH_BITS
POLL_MAX: Final = 12  # pairs a poll batch (a thread's)

LDS_PAD: Final = 8  # bf16 elements of padding a row of x in LDS
X_LDS_LIMIT: Final = 136 * 1024  # the public build's assert on the x rows in LDS
MAX_L: Final = 16  # kda_gates' per-thread batch (3 L HD / THREADS) stays <= POLL_MAX
BF16: Final = 2
F32: Final = 4

STEP_TAG_INT_BITS: Final = 32  # the device computes tags in int32
# the tag every put writes and every poll waits for: step_tag(epoch, slot) =
# (epoch % 2^EPOCH_BITS) * TAG_SLOTS + slot + 1 in int32 (the programs carry it)
TAG_EXPR: Final = TagExpr(STEP_TAG_INT_BITS, TAG_SLOTS, EPOCH_BITS)

# the protocol's faults a kernel's watchdog build can plant (kda-sim kernel run --inject):
# a put dropped, a put written with a wrong tag, a step whose epoch is not bumped
FAULTS: Final = ("drop", "corrupt", "skip-bump")


def x_lds_bytes(s: int) -> int:
    """Bytes of LDS the x rows of ``s`` tokens take (rows padded)."""
    return s * (HIDDEN + LDS_PAD) * BF16
