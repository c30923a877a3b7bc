"""Each store test runs against both backends: SQLite in a temporary file and PostgreSQL on a
server the session starts itself (tests/support/postgres.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from addon.state.store.postgres import PostgresStore
from addon.state.store.sql import SqlStore
from addon.state.store.sqlite import SqliteStore
from tests.support.postgres import running_postgres


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    with running_postgres() as url:
        yield url


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


def _reset_postgres(url: str) -> None:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("DROP TABLE IF EXISTS gw_responses, gw_conversations, gw_items, gw_usage, gw_budget, "
                     "gw_rate, gw_requests, gw_holds")


@pytest.fixture(params=["sqlite", "postgres"])
def make_store(request: pytest.FixtureRequest, tmp_path: Path, clock: Clock) -> Iterator:
    """`make_store(ttl=..., max_bytes=...)`: a fresh, empty store of the parametrized backend."""
    made: list[SqlStore] = []

    def make(ttl: float = 0, max_bytes: int = 0) -> SqlStore:
        if request.param == "sqlite":
            store: SqlStore = SqliteStore(str(tmp_path / "store.sqlite"), ttl=ttl,
                                          max_bytes=max_bytes)
        else:
            url = request.getfixturevalue("postgres_url")
            if not made:
                _reset_postgres(url)
            store = PostgresStore(url, ttl=ttl, max_bytes=max_bytes)
        store.clock = clock
        made.append(store)
        return store

    yield make
    for store in made:
        store.close()
