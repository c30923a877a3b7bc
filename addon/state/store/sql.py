"""The queries both backends run: one schema, plain SQL that SQLite 3.35+ and PostgreSQL 12+ read
alike (`WITH RECURSIVE`, `UPDATE ... RETURNING`, `ON CONFLICT`). A backend supplies a connection
and its transactions; placeholders are written `?` and rewritten for drivers that want `%s`.

Every row records its client (`client`, the name from addon/team/keys.py; `''` without client
keys): a read, a chain, a list or a delete of another client's id finds nothing, as an unknown id.

Retention (`ttl`, seconds, 0 = forever) counts from the last use: a response read to rebuild a
history, or a conversation read or written, is kept as long as it is in use. Size (`max_bytes`, 0 =
no limit) is per client, in bytes of the stored JSON of its responses and conversation items, held
by every write in its own transaction: past it that client's least recently used responses and
conversations go first, never another client's.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any

from addon.state.store.budget import BudgetQueries
from addon.state.store.records import Conversation, ItemsJSON, ResponseRecord, StoreError
from addon.state.store.schema import INDEXES, MIGRATIONS, SCHEMA
from translators.wire import wirejson

BATCH = 100
"""Rows per INSERT statement: a long list of items is written in a few statements, not one per row."""
USAGE_FIELDS = ("requests", "input_tokens", "cached_tokens", "output_tokens", "reasoning_tokens", "cost_usd",
                "partial_requests")
"""A usage row's figures: whole counts, `cost_usd` (a float, USD), and of `requests` those the
client abandoned mid-answer, counted from the usage the upstream had reported so far."""

Query = Callable[..., Any]
"""`q(sql, *params)` -> a cursor (`fetchone`, `fetchall`, `rowcount`)."""

_PURGE_EVERY = 60.0
"""Seconds between two purges triggered by writes."""


def _dump(value: Any) -> str:
    return wirejson.dumps(value).decode()


def _figure(name: str, value: Any) -> int | float:
    """A usage figure as stored and read: the cost a float, the counts whole numbers."""
    return float(value or 0) if name == "cost_usd" else int(value or 0)


def _size(text: str) -> int:
    """Bytes of a stored text, as the limit counts them (UTF-8, what both backends store)."""
    return len(text.encode("utf-8", "surrogatepass"))


class SqlStore(BudgetQueries):
    def __init__(self, *, ttl: float, max_bytes: int, clock: Callable[[], float] = time.time) -> None:
        self.ttl = ttl
        self.max_bytes = max_bytes
        self.clock = clock
        self._lock = threading.RLock()
        self._last_purge = 0.0

    # -- what a backend supplies ------------------------------------------------------------
    def _transaction(self) -> AbstractContextManager[Query]:
        """One transaction; every error of the backend leaves it as `StoreError`."""
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
            for table, column, kind in MIGRATIONS:
                names = [d[0] for d in q(f"SELECT * FROM {table} LIMIT 0").description]
                if column not in names:
                    q(f"ALTER TABLE {table} ADD COLUMN {column} {kind}")
            for statement in INDEXES:
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
                              created_at=data.get("created_at", 0.0), client=row[2] if len(row) > 2 else "")

    def _fit(self, q: Query, client: str, kind: str, key: str, *, strict: bool = True) -> None:
        """Hold `client`'s stored JSON within `max_bytes`, in the write's own transaction: its least
        recently used responses and conversations go first, never another client's, never the
        row just written (`kind`, `key`). A row that cannot fit alone fails the write (rolled back)."""
        if self.max_bytes <= 0:
            return
        total = q("SELECT (SELECT COALESCE(SUM(size), 0) FROM gw_responses WHERE client = ?) + "
                  "(SELECT COALESCE(SUM(size), 0) FROM gw_conversations WHERE client = ?)",
                  client, client).fetchone()[0]
        excess = int(total) - self.max_bytes
        if excess <= 0:
            return
        rows = q("SELECT used_at, 'r', id, size FROM gw_responses WHERE client = ? UNION ALL "
                 "SELECT used_at, 'c', id, size FROM gw_conversations WHERE client = ? ORDER BY 1",
                 client, client).fetchall()
        for _used, what, row_key, size in rows:
            if excess <= 0:
                return
            if (what, row_key) == (kind, key):
                continue
            self._drop(q, what, row_key)
            excess -= int(size)
        if excess > 0 and strict:
            raise StoreError(f"the write would hold {self.max_bytes + excess} bytes of stored state for "
                             f"this client, past gateway_store_max_bytes ({self.max_bytes})")

    @staticmethod
    def _drop(q: Query, kind: str, key: str) -> None:
        if kind == "r":
            q("DELETE FROM gw_responses WHERE id = ?", key)
            q("DELETE FROM gw_item_ids WHERE response_id = ?", key)
        else:
            q("DELETE FROM gw_items WHERE conversation_id = ?", key)
            q("DELETE FROM gw_conversations WHERE id = ?", key)

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
            # an id is the client's own: another client's row of the same id is never replaced
            row = q("INSERT INTO gw_responses (id, previous_id, conversation_id, data, size, created_at, "
                    "used_at, client) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET "
                    "data = excluded.data, size = excluded.size, used_at = excluded.used_at "
                    "WHERE gw_responses.client = excluded.client RETURNING id",
                    record.id, record.previous_id, record.conversation_id, data, _size(data),
                    record.created_at, now, record.client).fetchone()
            if row is None:
                raise StoreError(f"response id {record.id!r} is taken")
            self._index_items(q, record)
            self._fit(q, record.client, "r", record.id)
        self._after_write()

    @staticmethod
    def _index_items(q: Query, record: ResponseRecord) -> None:
        """Which response holds each of its items, for an `item_reference` (`items_by_id`): its
        output items, and its input items unless a worker wrote them (a long input stays unread)."""
        items = list(record.response.get("output") or [])
        if not isinstance(record.input, ItemsJSON):
            items += record.input
        ids = list(dict.fromkeys(i["id"] for i in items
                                 if isinstance(i, dict) and isinstance(i.get("id"), str)))
        for start in range(0, len(ids), BATCH):
            batch = ids[start:start + BATCH]
            params: list[Any] = []
            for item_id in batch:
                params += [record.client, item_id, record.id]
            q("INSERT INTO gw_item_ids (client, id, response_id) VALUES "
              + ", ".join(["(?, ?, ?)"] * len(batch))
              + " ON CONFLICT (client, id) DO UPDATE SET response_id = excluded.response_id", *params)

    def items_by_id(self, ids: list[str], client: str = "") -> dict[str, dict[str, Any]]:
        """The stored items of these ids that are `client`'s (an input or output item of one of its
        responses, or an item of one of its conversations), by id; an id it does not hold is left
        out. What an `item_reference` resolves to (docs/agents-sdk.md "Item references")."""
        found: dict[str, dict[str, Any]] = {}
        records: dict[str, dict[str, Any]] = {}
        since = self._since()
        with self._lock, self._transaction() as q:
            for item_id in dict.fromkeys(ids):
                row = q("SELECT r.id, r.data FROM gw_item_ids x JOIN gw_responses r ON r.id = x.response_id "
                        "WHERE x.client = ? AND x.id = ? AND r.client = ? AND r.used_at >= ?",
                        client, item_id, client, since).fetchone()
                if row is not None:
                    data = records.get(row[0]) or records.setdefault(row[0], wirejson.loads(row[1]))
                    for item in [*(data["response"].get("output") or []), *data["input"]]:
                        if isinstance(item, dict) and item.get("id") == item_id:
                            found[item_id] = item
                            break
                    if item_id in found:
                        continue
                row = q("SELECT i.data FROM gw_items i JOIN gw_conversations c ON c.id = i.conversation_id "
                        "WHERE i.client = ? AND i.id = ? AND c.client = ? AND c.used_at >= ? "
                        "ORDER BY i.seq DESC LIMIT 1", client, item_id, client, since).fetchone()
                if row is not None:
                    found[item_id] = wirejson.loads(row[0])
        return found

    def get_response(self, response_id: str, client: str = "") -> ResponseRecord | None:
        with self._lock, self._transaction() as q:
            row = q("SELECT id, data, client FROM gw_responses WHERE id = ? AND client = ? AND used_at >= ?",
                    response_id, client, self._since()).fetchone()
        return self._record(row) if row else None

    def chain(self, response_id: str, client: str = "") -> list[ResponseRecord] | None:
        rows = self._chain_rows(response_id, client)
        return None if rows is None else [self._record((row[0], row[1], client)) for row in rows]

    def chain_texts(self, response_id: str, client: str = "") -> list[str] | None:
        rows = self._chain_rows(response_id, client)
        return None if rows is None else [row[1] for row in rows]

    def _chain_rows(self, response_id: str, client: str) -> list[Any] | None:
        since = self._since()
        with self._lock, self._transaction() as q:
            rows = q("WITH RECURSIVE chain (id, previous_id, data, depth) AS ("
                     " SELECT id, previous_id, data, 0 FROM gw_responses"
                     " WHERE id = ? AND client = ? AND used_at >= ?"
                     " UNION ALL"
                     " SELECT r.id, r.previous_id, r.data, c.depth + 1 FROM gw_responses r"
                     " JOIN chain c ON r.id = c.previous_id WHERE r.client = ? AND r.used_at >= ?)"
                     " SELECT id, data, previous_id FROM chain ORDER BY depth DESC",
                     response_id, client, since, client, since).fetchall()
            if not rows or rows[0][2] is not None:  # unknown, or an ancestor is gone (or not its)
                return None
            now = self.clock()
            for row in rows:
                q("UPDATE gw_responses SET used_at = ? WHERE id = ?", now, row[0])
        return rows

    def delete_response(self, response_id: str, client: str = "") -> bool:
        with self._lock, self._transaction() as q:
            found = q("DELETE FROM gw_responses WHERE id = ? AND client = ? AND used_at >= ?",
                      response_id, client, self._since()).rowcount > 0
            if found:
                q("DELETE FROM gw_item_ids WHERE response_id = ?", response_id)
        return found

    # -- conversations ----------------------------------------------------------------------
    def create_conversation(self, conversation: Conversation, items: list[dict[str, Any]]) -> None:
        metadata = _dump(conversation.metadata)
        with self._lock, self._transaction() as q:
            q("INSERT INTO gw_conversations (id, metadata, size, next_seq, created_at, used_at, client) "
              "VALUES (?, ?, ?, 0, ?, ?, ?)", conversation.id, metadata, _size(metadata),
              conversation.created_at, self.clock(), conversation.client)
            self._append(q, conversation.id, items, conversation.client)
        self._after_write()

    def get_conversation(self, conversation_id: str, client: str = "") -> Conversation | None:
        with self._lock, self._transaction() as q:
            row = q("UPDATE gw_conversations SET used_at = ? WHERE id = ? AND client = ? AND used_at >= ? "
                    "RETURNING id, created_at, metadata", self.clock(), conversation_id, client,
                    self._since()).fetchone()
        return Conversation(id=row[0], created_at=row[1], metadata=wirejson.loads(row[2]),
                            client=client) if row else None

    def update_conversation(self, conversation_id: str, metadata: dict[str, Any],
                            client: str = "") -> Conversation | None:
        text = _dump(metadata)
        with self._lock, self._transaction() as q:
            old = q("SELECT metadata FROM gw_conversations WHERE id = ? AND client = ? AND used_at >= ?",
                    conversation_id, client, self._since()).fetchone()
            if old is None:
                return None
            row = q("UPDATE gw_conversations SET metadata = ?, size = size + ?, used_at = ? WHERE id = ? "
                    "RETURNING id, created_at, metadata", text, _size(text) - _size(old[0]), self.clock(),
                    conversation_id).fetchone()
            self._fit(q, client, "c", conversation_id)
        return Conversation(id=row[0], created_at=row[1], metadata=wirejson.loads(row[2]), client=client)

    def delete_conversation(self, conversation_id: str, client: str = "") -> bool:
        with self._lock, self._transaction() as q:
            found = q("DELETE FROM gw_conversations WHERE id = ? AND client = ? AND used_at >= ?",
                      conversation_id, client, self._since()).rowcount > 0
            if found:
                q("DELETE FROM gw_items WHERE conversation_id = ?", conversation_id)
        return found

    def append_items(self, conversation_id: str, items: list[dict[str, Any]], client: str = "") -> bool:
        with self._lock, self._transaction() as q:
            found = self._append(q, conversation_id, items, client)
        self._after_write()
        return found

    def _append(self, q: Query, conversation_id: str, items: list[dict[str, Any]], client: str) -> bool:
        """One UPDATE reserves the sequence numbers: it locks the conversation's row, so two
        gateways appending to one conversation at once each get their own range, in order. The
        rows go in `BATCH` at a time."""
        texts = [_dump(item) for item in items]
        sizes = [_size(text) for text in texts]
        row = q("UPDATE gw_conversations SET next_seq = next_seq + ?, size = size + ?, used_at = ? "
                "WHERE id = ? AND client = ? AND used_at >= ? RETURNING next_seq", len(items), sum(sizes),
                self.clock(), conversation_id, client, self._since()).fetchone()
        if row is None:
            return False
        first = row[0] - len(items)
        for start in range(0, len(items), BATCH):
            rows = range(start, min(start + BATCH, len(items)))
            params: list[Any] = []
            for n in rows:
                params += [conversation_id, first + n, items[n]["id"], texts[n], sizes[n], client]
            q("INSERT INTO gw_items (conversation_id, seq, id, data, size, client) VALUES "
              + ", ".join(["(?, ?, ?, ?, ?, ?)"] * len(rows)), *params)
        self._fit(q, client, "c", conversation_id)
        return True

    def list_items(self, conversation_id: str, *, after: str | None = None, limit: int | None = None,
                   order: str = "asc", client: str = "") -> tuple[list[dict[str, Any]], bool] | None:
        texts = self._item_texts(conversation_id, after, None if limit is None else limit + 1, order, client)
        if texts is None:
            return None
        items = [wirejson.loads(text) for text in texts]
        if limit is not None and len(items) > limit:
            return items[:limit], True
        return items, False

    def item_texts(self, conversation_id: str, client: str = "") -> list[str] | None:
        return self._item_texts(conversation_id, None, None, "asc", client)

    def _item_texts(self, conversation_id: str, after: str | None, limit: int | None,
                    order: str, client: str) -> list[str] | None:
        descending = order == "desc"
        with self._lock, self._transaction() as q:
            if q("UPDATE gw_conversations SET used_at = ? WHERE id = ? AND client = ? AND used_at >= ?",
                 self.clock(), conversation_id, client, self._since()).rowcount == 0:
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

    def get_item(self, conversation_id: str, item_id: str, client: str = "") -> dict[str, Any] | None:
        with self._lock, self._transaction() as q:
            row = q("SELECT i.data FROM gw_items i JOIN gw_conversations c ON c.id = i.conversation_id "
                    "WHERE i.conversation_id = ? AND i.id = ? AND c.client = ? AND c.used_at >= ?",
                    conversation_id, item_id, client, self._since()).fetchone()
        return wirejson.loads(row[0]) if row else None

    def delete_item(self, conversation_id: str, item_id: str, client: str = "") -> bool:
        with self._lock, self._transaction() as q:
            owner = q("SELECT 1 FROM gw_conversations WHERE id = ? AND client = ? AND used_at >= ?",
                      conversation_id, client, self._since()).fetchone()
            if owner is None:
                return False
            row = q("DELETE FROM gw_items WHERE conversation_id = ? AND id = ? RETURNING size",
                    conversation_id, item_id).fetchone()
            if row is not None:
                q("UPDATE gw_conversations SET size = size - ? WHERE id = ?", row[0], conversation_id)
        return row is not None

    # -- usage ------------------------------------------------------------------------------
    def add_usage(self, client: str, day: str, route: str, model: str, counts: dict[str, Any]) -> None:
        """Add one answered turn's figures (`USAGE_FIELDS`) to the client's row of the day."""
        values = [_figure(name, counts.get(name)) for name in USAGE_FIELDS]
        with self._lock, self._transaction() as q:
            q("INSERT INTO gw_usage (client, day, route, model, " + ", ".join(USAGE_FIELDS) + ") "
              "VALUES (?, ?, ?, ?" + ", ?" * len(USAGE_FIELDS) + ") "
              "ON CONFLICT (client, day, route, model) DO UPDATE SET "
              + ", ".join(f"{name} = gw_usage.{name} + excluded.{name}" for name in USAGE_FIELDS),
              client, day, route, model, *values)

    def usage(self, first_day: str, last_day: str, client: str | None = None) -> list[dict[str, Any]]:
        """The rows of `first_day`..`last_day` (YYYY-MM-DD, both included), one client's or all."""
        sql = ("SELECT client, day, route, model, " + ", ".join(USAGE_FIELDS)
               + " FROM gw_usage WHERE day >= ? AND day <= ?")
        params: list[Any] = [first_day, last_day]
        if client is not None:
            sql += " AND client = ?"
            params.append(client)
        with self._lock, self._transaction() as q:
            rows = q(sql + " ORDER BY client, day, route, model", *params).fetchall()
        keys = ("client", "day", "route", "model", *USAGE_FIELDS)
        return [{k: (_figure(k, v) if k in USAGE_FIELDS else v) for k, v in zip(keys, row, strict=True)}
                for row in rows]

    def tokens_on(self, client: str, day: str) -> int:
        """Input + output tokens `client` used on `day` (what `tokens_per_day` counts)."""
        with self._lock, self._transaction() as q:
            row = q("SELECT COALESCE(SUM(input_tokens + output_tokens), 0) FROM gw_usage "
                    "WHERE client = ? AND day = ?", client, day).fetchone()
        return int(row[0])

    # -- limits -----------------------------------------------------------------------------
    def purge(self) -> None:
        """Drop what is past its retention, then hold each client within `max_bytes` (a write
        holds its own client there already; this catches a limit lowered since)."""
        with self._lock, self._transaction() as q:
            if self.ttl > 0:
                since = self._since()
                q("DELETE FROM gw_item_ids WHERE response_id IN "
                  "(SELECT id FROM gw_responses WHERE used_at < ?)", since)
                q("DELETE FROM gw_responses WHERE used_at < ?", since)
                q("DELETE FROM gw_items WHERE conversation_id IN "
                  "(SELECT id FROM gw_conversations WHERE used_at < ?)", since)
                q("DELETE FROM gw_conversations WHERE used_at < ?", since)
            # budgets of months past (their days too: "2026-11-30" < "2026-12")
            month = time.strftime("%Y-%m", time.gmtime(self.clock()))
            q("DELETE FROM gw_budget WHERE period < ?", month)
            if self.max_bytes <= 0:
                return
            over = q("SELECT client FROM (SELECT client, size FROM gw_responses UNION ALL "
                     "SELECT client, size FROM gw_conversations) s GROUP BY client HAVING SUM(size) > ?",
                     self.max_bytes).fetchall()
            for (client,) in over:
                self._fit(q, client, "", "", strict=False)
