"""The queries both backends run: one schema, plain SQL that SQLite 3.35+ and PostgreSQL 12+ read
alike (`WITH RECURSIVE`, `UPDATE ... RETURNING`, `ON CONFLICT`). A backend supplies a connection
and its transactions; placeholders are written `?` and rewritten for drivers that want `%s`.

Retention (`ttl`, seconds, 0 = forever) counts from the last use: a response read to rebuild a
history, or a conversation read or written, is kept as long as it is in use. Size (`max_bytes`, 0 =
no limit) counts the stored JSON of responses and conversation items; past it the least recently
used responses and conversations go first.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any

from addon.store.records import Conversation, ItemsJSON, ResponseRecord
from translators import wirejson

SCHEMA = (
    """CREATE TABLE IF NOT EXISTS gw_responses (
        id TEXT PRIMARY KEY, previous_id TEXT, conversation_id TEXT, data TEXT NOT NULL,
        size BIGINT NOT NULL, created_at DOUBLE PRECISION NOT NULL, used_at DOUBLE PRECISION NOT NULL)""",
    "CREATE INDEX IF NOT EXISTS gw_responses_used ON gw_responses (used_at)",
    # the purge's SUM(size) from the index alone: from the table, it reads past every row's
    # `data` (a 100k-item turn is 10 MB), 10-50 ms per 50 MB stored, on the event loop
    "CREATE INDEX IF NOT EXISTS gw_responses_used_size ON gw_responses (used_at, size)",
    """CREATE TABLE IF NOT EXISTS gw_conversations (
        id TEXT PRIMARY KEY, metadata TEXT NOT NULL, size BIGINT NOT NULL, next_seq BIGINT NOT NULL,
        created_at DOUBLE PRECISION NOT NULL, used_at DOUBLE PRECISION NOT NULL)""",
    "CREATE INDEX IF NOT EXISTS gw_conversations_used ON gw_conversations (used_at)",
    """CREATE TABLE IF NOT EXISTS gw_items (
        conversation_id TEXT NOT NULL, seq BIGINT NOT NULL, id TEXT NOT NULL, data TEXT NOT NULL,
        size BIGINT NOT NULL, PRIMARY KEY (conversation_id, seq))""",
    "CREATE INDEX IF NOT EXISTS gw_items_id ON gw_items (conversation_id, id)",
)

Query = Callable[..., Any]
"""`q(sql, *params)` -> a cursor (`fetchone`, `fetchall`, `rowcount`)."""

_PURGE_EVERY = 60.0
"""Seconds between two purges triggered by writes."""


def _dump(value: Any) -> str:
    return wirejson.dumps(value).decode()


class SqlStore:
    def __init__(self, *, ttl: float, max_bytes: int, clock: Callable[[], float] = time.time) -> None:
        self.ttl = ttl
        self.max_bytes = max_bytes
        self.clock = clock
        self._lock = threading.RLock()
        self._last_purge = 0.0

    # -- what a backend supplies ------------------------------------------------------------
    def _transaction(self) -> AbstractContextManager[Query]:
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError

    # -- helpers ----------------------------------------------------------------------------
    def _since(self) -> float:
        """Rows last used before this are expired."""
        return self.clock() - self.ttl if self.ttl > 0 else float("-inf")

    def _create_schema(self) -> None:
        with self._lock, self._transaction() as q:
            for statement in SCHEMA:
                q(statement)

    def _after_write(self) -> None:
        now = self.clock()
        if now - self._last_purge >= _PURGE_EVERY:
            self._last_purge = now
            self.purge()

    @staticmethod
    def _record(row: Any) -> ResponseRecord:
        data = wirejson.loads(row[1])
        return ResponseRecord(id=row[0], response=data["response"], input=data["input"],
                              route=data["route"], previous_id=data.get("previous_id"),
                              conversation_id=data.get("conversation_id"),
                              created_at=data.get("created_at", 0.0))

    # -- responses --------------------------------------------------------------------------
    def put_response(self, record: ResponseRecord) -> None:
        now = self.clock()
        record.created_at = record.created_at or now
        data = _dump({"response": record.response, "route": record.route, "previous_id": record.previous_id,
                      "conversation_id": record.conversation_id, "created_at": record.created_at})
        # the input last, spliced in when a worker wrote it already (a long one, records.ItemsJSON)
        written = record.input.text.decode() if isinstance(record.input, ItemsJSON) else _dump(record.input)
        data = f'{data[:-1]},"input":{written}}}'
        with self._lock, self._transaction() as q:
            q("INSERT INTO gw_responses (id, previous_id, conversation_id, data, size, created_at, used_at) "
              "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET data = excluded.data, "
              "size = excluded.size, used_at = excluded.used_at",
              record.id, record.previous_id, record.conversation_id, data, len(data), record.created_at, now)
        self._after_write()

    def get_response(self, response_id: str) -> ResponseRecord | None:
        with self._lock, self._transaction() as q:
            row = q("SELECT id, data FROM gw_responses WHERE id = ? AND used_at >= ?",
                    response_id, self._since()).fetchone()
        return self._record(row) if row else None

    def chain(self, response_id: str) -> list[ResponseRecord] | None:
        rows = self._chain_rows(response_id)
        return None if rows is None else [self._record(row) for row in rows]

    def chain_texts(self, response_id: str) -> list[str] | None:
        rows = self._chain_rows(response_id)
        return None if rows is None else [row[1] for row in rows]

    def _chain_rows(self, response_id: str) -> list[Any] | None:
        since = self._since()
        with self._lock, self._transaction() as q:
            rows = q("WITH RECURSIVE chain (id, previous_id, data, depth) AS ("
                     " SELECT id, previous_id, data, 0 FROM gw_responses WHERE id = ? AND used_at >= ?"
                     " UNION ALL"
                     " SELECT r.id, r.previous_id, r.data, c.depth + 1 FROM gw_responses r"
                     " JOIN chain c ON r.id = c.previous_id WHERE r.used_at >= ?)"
                     " SELECT id, data, previous_id FROM chain ORDER BY depth DESC",
                     response_id, since, since).fetchall()
            if not rows or rows[0][2] is not None:  # unknown, or an ancestor is gone
                return None
            now = self.clock()
            for row in rows:
                q("UPDATE gw_responses SET used_at = ? WHERE id = ?", now, row[0])
        return rows

    def delete_response(self, response_id: str) -> bool:
        with self._lock, self._transaction() as q:
            return q("DELETE FROM gw_responses WHERE id = ? AND used_at >= ?",
                     response_id, self._since()).rowcount > 0

    # -- conversations ----------------------------------------------------------------------
    def create_conversation(self, conversation: Conversation, items: list[dict[str, Any]]) -> None:
        metadata = _dump(conversation.metadata)
        with self._lock, self._transaction() as q:
            q("INSERT INTO gw_conversations (id, metadata, size, next_seq, created_at, used_at) "
              "VALUES (?, ?, ?, 0, ?, ?)", conversation.id, metadata, len(metadata), conversation.created_at,
              self.clock())
            self._append(q, conversation.id, items)
        self._after_write()

    def get_conversation(self, conversation_id: str) -> Conversation | None:
        with self._lock, self._transaction() as q:
            row = q("UPDATE gw_conversations SET used_at = ? WHERE id = ? AND used_at >= ? "
                    "RETURNING id, created_at, metadata", self.clock(), conversation_id,
                    self._since()).fetchone()
        return Conversation(id=row[0], created_at=row[1], metadata=wirejson.loads(row[2])) if row else None

    def update_conversation(self, conversation_id: str, metadata: dict[str, Any]) -> Conversation | None:
        text = _dump(metadata)
        with self._lock, self._transaction() as q:
            row = q("UPDATE gw_conversations SET metadata = ?, size = size + ? - length(metadata), "
                    "used_at = ? WHERE id = ? AND used_at >= ? RETURNING id, created_at, metadata",
                    text, len(text), self.clock(), conversation_id, self._since()).fetchone()
        return Conversation(id=row[0], created_at=row[1], metadata=wirejson.loads(row[2])) if row else None

    def delete_conversation(self, conversation_id: str) -> bool:
        with self._lock, self._transaction() as q:
            found = q("DELETE FROM gw_conversations WHERE id = ? AND used_at >= ?",
                      conversation_id, self._since()).rowcount > 0
            q("DELETE FROM gw_items WHERE conversation_id = ?", conversation_id)
        return found

    def append_items(self, conversation_id: str, items: list[dict[str, Any]]) -> bool:
        with self._lock, self._transaction() as q:
            found = self._append(q, conversation_id, items)
        self._after_write()
        return found

    def _append(self, q: Query, conversation_id: str, items: list[dict[str, Any]]) -> bool:
        """One UPDATE reserves the sequence numbers: it locks the conversation's row, so two
        gateways appending to one conversation at once each get their own range, in order."""
        texts = [_dump(item) for item in items]
        row = q("UPDATE gw_conversations SET next_seq = next_seq + ?, size = size + ?, used_at = ? "
                "WHERE id = ? AND used_at >= ? RETURNING next_seq", len(items), sum(map(len, texts)),
                self.clock(), conversation_id, self._since()).fetchone()
        if row is None:
            return False
        first = row[0] - len(items)
        for offset, (item, text) in enumerate(zip(items, texts, strict=True)):
            q("INSERT INTO gw_items (conversation_id, seq, id, data, size) VALUES (?, ?, ?, ?, ?)",
              conversation_id, first + offset, item["id"], text, len(text))
        return True

    def list_items(self, conversation_id: str, *, after: str | None = None, limit: int | None = None,
                   order: str = "asc") -> tuple[list[dict[str, Any]], bool] | None:
        texts = self._item_texts(conversation_id, after, None if limit is None else limit + 1, order)
        if texts is None:
            return None
        items = [wirejson.loads(text) for text in texts]
        if limit is not None and len(items) > limit:
            return items[:limit], True
        return items, False

    def item_texts(self, conversation_id: str) -> list[str] | None:
        return self._item_texts(conversation_id, None, None, "asc")

    def _item_texts(self, conversation_id: str, after: str | None, limit: int | None,
                    order: str) -> list[str] | None:
        descending = order == "desc"
        with self._lock, self._transaction() as q:
            if q("UPDATE gw_conversations SET used_at = ? WHERE id = ? AND used_at >= ?", self.clock(),
                 conversation_id, self._since()).rowcount == 0:
                return None
            sql = "SELECT data FROM gw_items WHERE conversation_id = ?"
            params: list[Any] = [conversation_id]
            if after is not None:
                cursor = q("SELECT seq FROM gw_items WHERE conversation_id = ? AND id = ?",
                           conversation_id, after).fetchone()
                if cursor is not None:
                    sql += " AND seq < ?" if descending else " AND seq > ?"
                    params.append(cursor[0])
            sql += " ORDER BY seq DESC" if descending else " ORDER BY seq ASC"
            if limit is not None:
                sql += " LIMIT ?"
                params.append(limit)
            return [row[0] for row in q(sql, *params).fetchall()]

    def get_item(self, conversation_id: str, item_id: str) -> dict[str, Any] | None:
        with self._lock, self._transaction() as q:
            row = q("SELECT i.data FROM gw_items i JOIN gw_conversations c ON c.id = i.conversation_id "
                    "WHERE i.conversation_id = ? AND i.id = ? AND c.used_at >= ?",
                    conversation_id, item_id, self._since()).fetchone()
        return wirejson.loads(row[0]) if row else None

    def delete_item(self, conversation_id: str, item_id: str) -> bool:
        with self._lock, self._transaction() as q:
            row = q("DELETE FROM gw_items WHERE conversation_id = ? AND id = ? RETURNING size",
                    conversation_id, item_id).fetchone()
            if row is not None:
                q("UPDATE gw_conversations SET size = size - ? WHERE id = ?", row[0], conversation_id)
        return row is not None

    # -- limits -----------------------------------------------------------------------------
    def purge(self) -> None:
        with self._lock, self._transaction() as q:
            if self.ttl > 0:
                since = self._since()
                q("DELETE FROM gw_responses WHERE used_at < ?", since)
                q("DELETE FROM gw_items WHERE conversation_id IN "
                  "(SELECT id FROM gw_conversations WHERE used_at < ?)", since)
                q("DELETE FROM gw_conversations WHERE used_at < ?", since)
            if self.max_bytes <= 0:
                return
            total = q("SELECT (SELECT COALESCE(SUM(size), 0) FROM gw_responses) + "
                      "(SELECT COALESCE(SUM(size), 0) FROM gw_conversations)").fetchone()[0]
            excess = int(total) - self.max_bytes
            if excess <= 0:
                return
            rows = q("SELECT used_at, 'r', id, size FROM gw_responses UNION ALL "
                     "SELECT used_at, 'c', id, size FROM gw_conversations ORDER BY 1").fetchall()
            for _used, kind, key, size in rows:
                if excess <= 0:
                    break
                if kind == "r":
                    q("DELETE FROM gw_responses WHERE id = ?", key)
                else:
                    q("DELETE FROM gw_items WHERE conversation_id = ?", key)
                    q("DELETE FROM gw_conversations WHERE id = ?", key)
                excess -= int(size)
