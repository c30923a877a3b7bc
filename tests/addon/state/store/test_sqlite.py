"""What only the embedded backend promises: a private file, watched; its errors as StoreError; an
older file migrated."""

from __future__ import annotations

import json
import logging
import sqlite3
import stat
from pathlib import Path

import pytest

from addon.state.store import ResponseRecord, StoreError, open_store
from addon.state.store.sqlite import SqliteStore


def test_the_store_file_and_its_journal_are_private(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "store.sqlite"
    store = open_store(str(path), ttl=0, max_bytes=0)
    assert isinstance(store, SqliteStore)
    store.put_response(ResponseRecord(id="resp_1", response={}, input=[], route={}))
    files = [p for p in path.parent.iterdir() if p.name.startswith("store.sqlite")]
    assert len(files) >= 2  # the database and its journal
    for p in files:
        assert stat.S_IMODE(p.stat().st_mode) == 0o600, p
    store.close()


def test_an_existing_file_is_made_private(tmp_path: Path) -> None:
    path = tmp_path / "store.sqlite"
    path.touch(mode=0o644)
    path.chmod(0o644)
    open_store(str(path), ttl=0, max_bytes=0).close()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_a_full_disk_is_a_store_error_and_the_store_goes_on(tmp_path: Path) -> None:
    store = SqliteStore(str(tmp_path / "store.sqlite"), ttl=0, max_bytes=0)
    pages = store._db.execute("PRAGMA page_count").fetchone()[0]
    store._db.execute(f"PRAGMA max_page_count = {pages + 2}")  # what a full disk looks like to SQLite
    with pytest.raises(StoreError, match="full"):
        store.put_response(ResponseRecord(id="resp_big", response={}, input=[{"text": "x" * 100_000}],
                                          route={}))
    store._db.execute("PRAGMA max_page_count = 1000000")
    store.put_response(ResponseRecord(id="resp_small", response={}, input=[], route={}))
    assert store.get_response("resp_small") is not None and store.get_response("resp_big") is None
    store.close()


def test_a_read_only_file_is_a_store_error(tmp_path: Path) -> None:
    path = tmp_path / "store.sqlite"
    SqliteStore(str(path), ttl=0, max_bytes=0).close()
    store = SqliteStore(str(path), ttl=0, max_bytes=0)
    store._db.execute("PRAGMA query_only = ON")  # as a file the process may no longer write
    with pytest.raises(StoreError):
        store.put_response(ResponseRecord(id="resp_1", response={}, input=[], route={}))
    store.close()


@pytest.mark.parametrize("how", ["removed", "replaced"])
def test_a_file_removed_or_replaced_under_the_store_is_noticed_and_reopened(
        tmp_path: Path, how: str, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "store.sqlite"
    store = SqliteStore(str(path), ttl=0, max_bytes=0)
    store.put_response(ResponseRecord(id="resp_old", response={}, input=[], route={}))
    for p in tmp_path.glob("store.sqlite*"):
        p.unlink()
    if how == "replaced":  # another process started a fresh store at the path
        other = SqliteStore(str(path), ttl=0, max_bytes=0)
        other.put_response(ResponseRecord(id="resp_new", response={}, input=[], route={}))
        other.close()
    with caplog.at_level(logging.WARNING):
        store.put_response(ResponseRecord(id="resp_after", response={}, input=[], route={}))
    assert f"was {how}" in caplog.text
    fresh = SqliteStore(str(path), ttl=0, max_bytes=0)  # what every other process sees at the path
    assert fresh.get_response("resp_after") is not None
    assert (fresh.get_response("resp_new") is not None) == (how == "replaced")
    fresh.close()
    store.close()


def test_a_store_written_before_client_keys_is_migrated_and_its_rows_are_the_anonymous_clients(
        tmp_path: Path) -> None:
    path = tmp_path / "store.sqlite"
    with sqlite3.connect(path) as old:
        for statement in OLD_SCHEMA:
            old.execute(statement)
        old.execute("INSERT INTO gw_responses VALUES ('resp_1', NULL, NULL, ?, 10, 1.0, 1.0)",
                    (json.dumps({"response": {"id": "resp_1"}, "route": {}, "input": []}),))
    store = SqliteStore(str(path), ttl=0, max_bytes=0)
    assert store.get_response("resp_1") is not None  # the anonymous client ("")
    assert store.get_response("resp_1", "ana") is None
    store.put_response(ResponseRecord(id="resp_2", response={}, input=[], route={}, client="ana"))
    assert store.get_response("resp_2", "ana") is not None
    store.close()


def test_a_usage_table_from_before_prices_gets_a_cost_column_and_its_rows_cost_nothing(
        tmp_path: Path) -> None:
    path = tmp_path / "store.sqlite"
    with sqlite3.connect(path) as old:
        old.execute("""CREATE TABLE gw_usage (client TEXT NOT NULL, day TEXT NOT NULL, route TEXT NOT NULL,
            model TEXT NOT NULL, requests BIGINT NOT NULL, input_tokens BIGINT NOT NULL,
            cached_tokens BIGINT NOT NULL, output_tokens BIGINT NOT NULL, reasoning_tokens BIGINT NOT NULL,
            PRIMARY KEY (client, day, route, model))""")
        old.execute("INSERT INTO gw_usage VALUES ('ana', '2026-12-01', 'anthropic', 'claude', "
                    "1, 10, 0, 5, 0)")
    store = SqliteStore(str(path), ttl=0, max_bytes=0)
    store.add_usage("ana", "2026-12-01", "anthropic", "claude", {"requests": 1, "input_tokens": 10,
                                                                 "output_tokens": 5, "cost_usd": 0.5})
    [row] = store.usage("2026-12-01", "2026-12-01")
    assert (row["requests"], row["input_tokens"], row["cost_usd"]) == (2, 20, 0.5)
    store.close()


OLD_SCHEMA = (
    """CREATE TABLE gw_responses (id TEXT PRIMARY KEY, previous_id TEXT, conversation_id TEXT,
       data TEXT NOT NULL, size BIGINT NOT NULL, created_at DOUBLE PRECISION NOT NULL,
       used_at DOUBLE PRECISION NOT NULL)""",
    """CREATE TABLE gw_conversations (id TEXT PRIMARY KEY, metadata TEXT NOT NULL, size BIGINT NOT NULL,
       next_seq BIGINT NOT NULL, created_at DOUBLE PRECISION NOT NULL, used_at DOUBLE PRECISION NOT NULL)""",
    """CREATE TABLE gw_items (conversation_id TEXT NOT NULL, seq BIGINT NOT NULL, id TEXT NOT NULL,
       data TEXT NOT NULL, size BIGINT NOT NULL, PRIMARY KEY (conversation_id, seq))""",
)
