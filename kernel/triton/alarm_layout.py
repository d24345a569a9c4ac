"""The watchdog's alarm buffer (int64 words), shared by the kernel and the host.

Word 0 holds the tag of the launch that gave up first: a CTA of that launch that sees it
there stops waiting. Holding a tag, not a flag, means the buffer is never cleared: an old
launch's abort can never release a new launch (its tag differs).
Then one record a CTA: the first wait (or put) that CTA gave up on.
"""

from __future__ import annotations

ABORT = 0
REC0 = 8  # first record
REC_WORDS = 8
# fields of a record
F_TAG = 0  # the launch's tag (a record is this launch's only if it matches)
F_KIND = 1
F_GIDX = 2  # word index in scratch (region and index decoded on the host)
F_EXPECT = 3
F_SEEN = 4
F_TIME = 5  # globaltimer ns
F_SITE = 6
F_TASK = 7
# F_GIDX when the CTA's reduction found no stale lane in the copy it reads: the stale pair
# was in another warp's replica of a small poll tensor (its count is CTA-wide, its index
# is not), so the cell is not identified
NO_CELL = 2**31 - 1

KIND_TIMEOUT = 1  # the wait ran past its budget
KIND_RELEASED = 2  # another CTA gave up first; this one was released
KIND_REUSE = 3  # a put found its cell already holding this launch's tag (tag not fresh)
KIND_NAMES = {KIND_TIMEOUT: "timeout", KIND_RELEASED: "released", KIND_REUSE: "tag reuse"}

# poll sites (and put sites for KIND_REUSE), numbered across roles
SITES = (
    ("gate", "PART"),
    ("mix", "WGT"),
    ("mix", "MSQ"),
    ("load_x", "XRDY"),
    ("k.conv", "PROJ"),
    ("k.gates", "PROJ f_a"),
    ("k.gates", "QK"),
    ("k.gates", "PROJ beta"),
    ("k.norm", "ONRM+PROJ g2"),
    ("put", "any"),
    # gate_local (Build.gate_local): the mix's own PART poll, after "put" so that every
    # other site keeps its number (and a build without the variant its code)
    ("mix", "PART"),
)
SITE_PUT = SITES.index(("put", "any"))
SITE_MIX_PART = SITES.index(("mix", "PART"))


def alarm_words(blocks: int = 256) -> int:
    return REC0 + REC_WORDS * blocks
