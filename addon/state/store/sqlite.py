"""The embedded backend: one SQLite file, private to its owner (0600, its journal files too).

Several gateway processes on one machine may share the file; a transaction waits at most
`BUSY_TIMEOUT` for another's write lock, then fails as `StoreError` (503 to the client). Across
machines use the PostgreSQL backend.

No memory-mapped file: SQLite's WAL mode maps its `-shm` index into memory, and a `-shm` that
cannot be written (truncated, or a full disk under it) is a SIGBUS at the next access, which ends
the whole proxy with every client on it. The rollback journal (`TRUNCATE`) reads and writes with
plain calls, so such a fault is an error, i.e. a 503 and a note (docs/state.md "Store failures").

The file is watched: one removed or replaced under a running gateway (another process would start
a fresh store in its place, and this one would go on writing into the unlinked file) is noticed at
the next transaction, reopened at its path, and said in the log (docs/state.md "Store failures").
"""

from __future__ import annotations

import logging
import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from addon.state.store.records import StoreError
from addon.state.store.sql import Query, SqlStore

log = logging.getLogger(__name__)

JOURNAL = "TRUNCATE"
"""The rollback journal, kept between transactions (cheaper than creating it for each); never WAL."""
BUSY_TIMEOUT = 5.0
"""Seconds a transaction waits for another connection's write lock (SQLite's busy timeout)."""


class SqliteStore(SqlStore):
    def __init__(self, path: str, *, ttl: float, max_bytes: int) -> None:
        super().__init__(ttl=ttl, max_bytes=max_bytes)
        self.path = Path(path).expanduser()
        self._identity: tuple[int, int] | None = None
        self._db = self._open()
        self._create_schema()

    def _open(self) -> sqlite3.Connection:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            # created private before SQLite opens it; SQLite gives -wal and -shm the file's mode
            os.close(os.open(self.path, os.O_CREAT | os.O_RDWR, 0o600))
            os.chmod(self.path, 0o600)
            db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False,
                                 timeout=BUSY_TIMEOUT)
            db.execute("PRAGMA mmap_size=0")
            mode = db.execute(f"PRAGMA journal_mode={JOURNAL}").fetchone()[0]
            stat = os.stat(self.path)
        except (OSError, sqlite3.Error) as exc:
            raise StoreError(f"the response store {str(self.path)!r} cannot be opened: {exc}") from None
        self._identity = (stat.st_dev, stat.st_ino)
        if str(mode).lower() != JOURNAL.lower():
            # another process holds the file in WAL mode (a gateway before this release)
            log.warning("the response store %s stays in %s mode while another process has it open: "
                        "a fault of its -shm file would end this process", self.path, mode)
        return db

    def _check_file(self) -> None:
        """Reopen the store when its file was removed or replaced since it was opened."""
        try:
            stat = os.stat(self.path)
            now: tuple[int, int] | None = (stat.st_dev, stat.st_ino)
        except OSError:
            now = None
        if now == self._identity:
            return
        what = "removed" if now is None else "replaced"
        log.warning("the response store file %s was %s while the gateway was running: reopened at its "
                    "path; what the old file held is not seen from now on", self.path, what)
        with suppress(sqlite3.Error):
            self._db.close()
        self._db = self._open()
        self._create_schema()

    @contextmanager
    def _transaction(self) -> Iterator[Query]:
        self._check_file()
        try:
            self._db.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as exc:
            raise StoreError(f"the response store cannot be written: {exc}") from None
        try:
            yield lambda sql, *params: self._db.execute(sql, params)
        except sqlite3.Error as exc:  # a full disk, a read-only file, a lock held too long
            with suppress(sqlite3.Error):
                self._db.execute("ROLLBACK")
            raise StoreError(f"the response store failed: {exc}") from None
        except BaseException:
            with suppress(sqlite3.Error):
                self._db.execute("ROLLBACK")
            raise
        try:
            self._db.execute("COMMIT")
        except sqlite3.Error as exc:
            with suppress(sqlite3.Error):
                self._db.execute("ROLLBACK")
            raise StoreError(f"the response store failed: {exc}") from None

    def close(self) -> None:
        self._db.close()
