"""The whole suite sees one registry: the shipped dialects and the toy one (tests/support/toy_dialect.py),
registered here the way any dialect outside the package is, so every suite that takes its list
from the registry runs over it too.

And every test runs at a depth (tests/support/depth.py): sampled by default, exhaustive under the
`exhaustive` marker.

Under pytest-xdist (`./run test` runs three workers) tests/support/schedule.py decides which worker
runs what: one file (or one `xdist_group`) per unit, the slowest first; a test marked `alone`
runs while the other workers wait."""

from collections.abc import Generator
from typing import Any

import pytest

from tests.support import depth, toy_dialect
from tests.support.turns import Turns

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


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """`--dist loadgroup` (what `./run test` asks for) shares files out whole, slowest first
    (tests/support/schedule.py); any other `--dist` is xdist's own."""
    if config.getvalue("dist") != "loadgroup":
        return None
    from tests.support.schedule import FileScheduling

    return FileScheduling(config, log)


_turns: list[Turns] = []
"""An xdist worker's `Turns` (its run's id comes with the worker's input), made at its first test."""


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Generator[None, object, object]:
    """Setup, call and teardown of one test, in its turn (tests/support/turns.py) under xdist."""
    worker = getattr(item.config, "workerinput", None)
    if worker is None:
        return (yield)
    if not _turns:
        _turns.append(Turns(worker["testrunuid"]))
    with _turns[0].turn(alone=item.get_closest_marker("alone") is not None):
        return (yield)


def pytest_sessionfinish(session: pytest.Session) -> None:
    worker = getattr(session.config, "workerinput", None)
    if worker is not None:
        Turns.forget(worker["testrunuid"])
