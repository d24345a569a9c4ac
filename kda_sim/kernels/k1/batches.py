"""K1's poll batches: a polling thread's list split at POLL_MAX pairs, waiting for K1's
tag (``TAG_EXPR``)."""

from __future__ import annotations

import numpy as np

from kda_sim.kernels.k1.constants import POLL_MAX, TAG_EXPR
from kda_sim.protocol import batches
from kda_sim.protocol.ops import Poll


def poll(label: str, *row_blocks: np.ndarray) -> Poll:
    return batches.poll(label, *row_blocks, width=POLL_MAX, tag=TAG_EXPR)
