"""How many examples a property of the checks runs: ``n`` under the ``ci`` profile (sized
so the checks' tests stay well inside CI's 5 minutes on 2 cores), 20 n under
``thorough``."""

from __future__ import annotations

from hypothesis import settings


def examples(n: int) -> int:
    return n if settings.default.max_examples <= 100 else 20 * n
