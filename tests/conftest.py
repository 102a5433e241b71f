"""Test-suite settings shared by every test module (helpers live in tests/helpers.py)."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

# Shared CI machines are noisy: hypothesis must never fail a test for being slow.
settings.register_profile(
    "ragmeter", deadline=None, suppress_health_check=[HealthCheck.too_slow], print_blob=True
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ragmeter"))
