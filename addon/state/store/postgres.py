"""The shared backend: PostgreSQL, for several gateway processes serving the same clients.

Why PostgreSQL (docs/state.md): a conversation is an ordered list that two gateways may
append to at once, read in pages, and delete item by item; that wants transactions and row locks,
which PostgreSQL has and every team running a database already operates. Retention and size are
enforced by the gateway's own purge, the same queries as SQLite's.

The driver is `psycopg` 3 (the `team` extra). The URL may hold a password: it is never logged or
put into an error.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import urlsplit

from addon.state.store.records import StoreError
from addon.state.store.sql import Query, SqlStore

STATEMENT_TIMEOUT_MS = 5000
"""PostgreSQL's `statement_timeout` on every connection: no read or write waits longer (a table
lock held by another client's write, a stalled server)."""


def _where(url: str) -> str:
    """host:port/db of a URL, without user or password, for messages."""
    parts = urlsplit(url)
    return f"{parts.hostname or 'localhost'}:{parts.port or 5432}{parts.path}"


class PostgresStore(SqlStore):
    def __init__(self, url: str, *, ttl: float, max_bytes: int) -> None:
        super().__init__(ttl=ttl, max_bytes=max_bytes)
        try:
            import psycopg
        except ImportError:
            raise StoreError("the PostgreSQL store needs psycopg: "
                             "pip install 'dialect-gateway[team]'") from None
        self._psycopg = psycopg
        self._url = url
        self._where = _where(url)
        self._local = threading.local()
        self._connections: list[Any] = []
        self._create_schema()

    def _connection(self) -> Any:
        conn = getattr(self._local, "conn", None)
        if conn is None or conn.closed:
            try:
                # a statement or a lock wait past the timeout fails (503) instead of holding this
                # process's one store thread, and every request behind it (docs/state.md)
                conn = self._psycopg.connect(self._url, autocommit=True, connect_timeout=5,
                                             options=f"-c statement_timeout={STATEMENT_TIMEOUT_MS}")
            except self._psycopg.Error as exc:
                raise StoreError(f"the response store at {self._where} cannot be reached: "
                                 f"{type(exc).__name__}") from None
            self._local.conn = conn
            self._connections.append(conn)
        return conn

    @contextmanager
    def _transaction(self) -> Iterator[Query]:
        conn = self._connection()

        def q(sql: str, *params: Any) -> Any:
            return conn.execute(sql.replace("?", "%s"), params)

        try:
            with conn.transaction():
                yield q
        except self._psycopg.Error as exc:
            if isinstance(exc, self._psycopg.OperationalError):
                conn.close()  # reconnect on the next call
            # the type and SQLSTATE only: a message may quote the statement's values
            state = getattr(getattr(exc, "diag", None), "sqlstate", None)
            raise StoreError(f"the response store at {self._where} failed: {type(exc).__name__}"
                             + (f" ({state})" if state else "")) from None

    def close(self) -> None:
        for conn in self._connections:
            conn.close()
        self._connections.clear()
