"""How hard a test run tries: a sampled default and an exhaustive run, chosen by the `exhaustive` marker.

The default run (`pytest tests/translators`: pyproject.toml deselects the marker) samples: a
fixed, seeded set of split points per stream and a fraction of the property examples. A test
carrying the marker (`./run test` runs every marked test) tries everything: every split point
and the full example counts. A test that has both runs is parametrized by `at_both_depths`;
tests/conftest.py tells the harnesses (tests/translators/streamcheck.py, `examples` in the
property tests) which run they are in, per test.
"""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar, Token

import pytest

MARKER = "exhaustive"
SAMPLED_SHARE = 4
"""A default run draws one property example in this many (never fewer than `LEAST_EXAMPLES`)."""
LEAST_EXAMPLES = 25

_EXHAUSTIVE: ContextVar[bool] = ContextVar("exhaustive", default=False)


def exhaustive() -> bool:
    """Whether the running test carries the `exhaustive` marker."""
    return _EXHAUSTIVE.get()


def examples(full: int) -> int:
    """A property's example count: `full` in the exhaustive run, a quarter of it by default."""
    return full if exhaustive() else min(full, max(LEAST_EXAMPLES, full // SAMPLED_SHARE))


def at_both_depths[T: Callable[..., object]](test: T) -> T:
    """Collects `test` twice: sampled (the default run) and exhaustive (marked, deselected by
    default), so a plain `pytest` still runs the sampled checks of every stream."""
    return pytest.mark.parametrize(
        "check_depth", ["sampled", pytest.param(MARKER, marks=getattr(pytest.mark, MARKER))]
    )(test)


def enter(item: pytest.Item) -> Token[bool]:
    """Sets the depth for `item`'s run (from its marker); `leave` with the token restores it."""
    return _EXHAUSTIVE.set(item.get_closest_marker(MARKER) is not None)


def leave(token: Token[bool]) -> None:
    _EXHAUSTIVE.reset(token)
