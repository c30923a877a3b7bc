"""Where the gateway keeps Responses state: stored responses and conversations (docs/state.md).

One small interface, `Store`, two backends sharing one SQL schema and one set of queries
(`addon/state/store/sql.py`): SQLite in a private file (the default, one gateway process or several on
one machine) and PostgreSQL (a team running several gateway processes behind a load balancer).
What is kept: per response id, the client's input items, the output items as the client saw them
(reasoning state in `encrypted_content` included), the route (dialect, model) and the Responses
object; per conversation, its items in order and its metadata. Never headers, never keys.
"""

from __future__ import annotations

from addon.state.store.records import Conversation, ItemsJSON, ResponseRecord, Store, StoreError

__all__ = ["Conversation", "ItemsJSON", "ResponseRecord", "Store", "StoreError", "open_store"]


def open_store(location: str, *, ttl: float, max_bytes: int) -> Store:
    """`location` is a `postgresql://` URL (the shared backend) or a SQLite file path."""
    if location.startswith(("postgresql://", "postgres://")):
        from addon.state.store.postgres import PostgresStore

        return PostgresStore(location, ttl=ttl, max_bytes=max_bytes)
    from addon.state.store.sqlite import SqliteStore

    return SqliteStore(location, ttl=ttl, max_bytes=max_bytes)
