"""Hypothesis profiles: ``ci`` (default) keeps the whole suite inside CI's budget;
``thorough`` (HYPOTHESIS_PROFILE=thorough) runs the same properties longer."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci", deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True
)
settings.register_profile(
    "thorough", deadline=None, suppress_health_check=[HealthCheck.too_slow], max_examples=2000
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
