"""What only the embedded backend promises: a private file."""

from __future__ import annotations

import stat
from pathlib import Path

from addon.store import ResponseRecord, open_store
from addon.store.sqlite import SqliteStore


def test_the_store_file_and_its_journal_are_private(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "store.sqlite"
    store = open_store(str(path), ttl=0, max_bytes=0)
    assert isinstance(store, SqliteStore)
    store.put_response(ResponseRecord(id="resp_1", response={}, input=[], route={}))
    files = [p for p in path.parent.iterdir() if p.name.startswith("store.sqlite")]
    assert len(files) >= 2  # the database and its WAL
    for p in files:
        assert stat.S_IMODE(p.stat().st_mode) == 0o600, p
    store.close()


def test_an_existing_file_is_made_private(tmp_path: Path) -> None:
    path = tmp_path / "store.sqlite"
    path.touch(mode=0o644)
    path.chmod(0o644)
    open_store(str(path), ttl=0, max_bytes=0).close()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
