"""Whose turn it is across the pytest-xdist workers of one run: any number of tests at once, or
one test marked `alone`.

An `alone` test counts what a stream went through while the proxy worked
(tests/addon/e2e/test_limits.py): a neighbour's load on the other core would blur that count, so
it runs while the other workers wait. Every test holds the room's shared lock for its setup, call
and teardown, an `alone` test the exclusive one; all pass a gate first, which an `alone` test
keeps while it waits and runs, so a stream of short tests on the other workers cannot keep it out.
"""

from __future__ import annotations

import contextlib
import fcntl
import tempfile
from collections.abc import Iterator
from pathlib import Path


def _path(run: str, kind: str) -> Path:
    return Path(tempfile.gettempdir()) / f"dialect-gateway-tests-{run}.{kind}"


class Turns:
    """Who may run now, across the workers of one run (their files share the run's id): any
    number of tests, or one `alone` test."""

    def __init__(self, run: str) -> None:
        self._gate = _path(run, "gate").open("a")
        self._room = _path(run, "room").open("a")

    @contextlib.contextmanager
    def turn(self, alone: bool) -> Iterator[None]:
        fcntl.flock(self._gate, fcntl.LOCK_EX)  # an `alone` test waiting holds the gate
        try:
            fcntl.flock(self._room, fcntl.LOCK_EX if alone else fcntl.LOCK_SH)
        finally:
            if not alone:
                fcntl.flock(self._gate, fcntl.LOCK_UN)
        try:
            yield
        finally:
            fcntl.flock(self._room, fcntl.LOCK_UN)
            if alone:
                fcntl.flock(self._gate, fcntl.LOCK_UN)

    @staticmethod
    def forget(run: str) -> None:
        """Removes the run's files (a worker that opened them keeps its locks)."""
        for kind in ("gate", "room"):
            _path(run, kind).unlink(missing_ok=True)
