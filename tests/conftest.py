"""The whole suite sees one registry: the shipped dialects and the toy one (tests/support/toy_dialect.py),
registered here the way any dialect outside the package is, so every suite that takes its list
from the registry runs over it too.

And every test runs at a depth (tests/support/depth.py): sampled by default, exhaustive under the
`exhaustive` marker."""

from collections.abc import Generator

import pytest

from tests.support import depth, toy_dialect

toy_dialect.register()


@pytest.fixture(autouse=True)
def check_depth() -> str:
    """What `depth.at_both_depths` parametrizes; a test without it runs sampled, or exhaustive when
    it (or its module) carries the marker."""
    return "sampled"


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, object, object]:
    token = depth.enter(item)
    try:
        return (yield)
    finally:
        depth.leave(token)
