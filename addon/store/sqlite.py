"""The embedded backend: one SQLite file, private to its owner (0600, its journal files too).

Several gateway processes on one machine may share the file (WAL mode, writes wait up to 5 s for
each other); across machines use the PostgreSQL backend.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from addon.store.records import StoreError
from addon.store.sql import Query, SqlStore


class SqliteStore(SqlStore):
    def __init__(self, path: str, *, ttl: float, max_bytes: int) -> None:
        super().__init__(ttl=ttl, max_bytes=max_bytes)
        self.path = Path(path).expanduser()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            # created private before SQLite opens it; SQLite gives -wal and -shm the file's mode
            os.close(os.open(self.path, os.O_CREAT | os.O_RDWR, 0o600))
            os.chmod(self.path, 0o600)
            self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False, timeout=5.0)
            self._db.execute("PRAGMA journal_mode=WAL")
        except (OSError, sqlite3.Error) as exc:
            raise StoreError(f"the response store {str(self.path)!r} cannot be opened: {exc}") from None
        self._create_schema()

    @contextmanager
    def _transaction(self) -> Iterator[Query]:
        try:
            self._db.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as exc:
            raise StoreError(f"the response store cannot be written: {exc}") from None
        try:
            yield lambda sql, *params: self._db.execute(sql, params)
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    def close(self) -> None:
        self._db.close()
