"""How much the reliability suite tries: hypothesis example counts and time bounds, in one place.

CI runs the defaults (a few minutes in all). `RELIABILITY_SCALE=10` multiplies every example
count for a deeper local run. Runs are derandomized and keep no example database, so CI sees
the same inputs every time and a failure reproduces from its printed example. Failing examples
are not shrunk unless `RELIABILITY_SHRINK=1` (shrinking one can take minutes; the regression
tests next to each property pin minimal reproducers of what it found).
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, Phase, settings

SCALE = max(1, int(os.environ.get("RELIABILITY_SCALE", "1")))
SHRINK = os.environ.get("RELIABILITY_SHRINK") == "1"
_PHASES = (Phase.explicit, Phase.reuse, Phase.generate, *((Phase.shrink,) if SHRINK else ()))

STREAM_SPLITS = 60
"""Random multi-splits per recorded-stream property."""
STREAM_FUZZ = 150
"""Mutated upstream streams per decoder property (byte-level and structure-aware)."""
REQUEST_FUZZ = 250
"""Generated Responses requests per target."""


def fuzz(examples: int) -> settings:
    return settings(
        max_examples=examples * SCALE,
        deadline=None,
        derandomize=True,
        database=None,
        phases=_PHASES,
        suppress_health_check=[
            HealthCheck.too_slow,
            HealthCheck.data_too_large,
            HealthCheck.filter_too_much,
            HealthCheck.large_base_example,
        ],
    )
