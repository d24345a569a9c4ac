"""K1's poll batches: a polling thread's list split at POLL_MAX pairs, waiting for K1's
tag (``TAG_EXPR``), with the site's pairs a thread and back-off (``poll_sites``)."""

from __future__ import annotations

import numpy as np

from kda_sim.kernels.k1.constants import POLL_MAX, TAG_EXPR
from kda_sim.kernels.k1.new_ops import new_poll
from kda_sim.kernels.k1.poll_sites import Site
from kda_sim.protocol import batches
from kda_sim.protocol.ops import Poll

_poll = new_poll  # a copy made without Poll's __init__ (new_ops says why)


def poll(label: str, *row_blocks: np.ndarray, site: Site) -> Poll:
    return batches.poll(
        label, *row_blocks, width=POLL_MAX, tag=TAG_EXPR, lanes=site.lanes, backoff=site.backoff
    )


def own_copy(p: Poll) -> Poll:
    """``p`` with arrays of its own (read-only copies): a poll the same for every CTA of a
    launch is batched once, and each CTA's ops hold their own arrays, as built from the
    formulas (the checks key a read on the very array a poll loaded), for a copy's cost."""
    batches, cells = p.batches.copy(), p.cells.copy()
    batches.setflags(write=False)
    cells.setflags(write=False)
    return _poll(p.label, batches, cells, p.tag, p.lanes, p.backoff)
