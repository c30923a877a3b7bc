"""The store's tables: the schema both backends create, the columns an earlier version's store
gets added, and the indexes (addon/state/store/sql.py runs them; docs/state.md "The store")."""

SCHEMA = (
    """CREATE TABLE IF NOT EXISTS gw_responses (
        id TEXT PRIMARY KEY, previous_id TEXT, conversation_id TEXT, data TEXT NOT NULL,
        size BIGINT NOT NULL, created_at DOUBLE PRECISION NOT NULL, used_at DOUBLE PRECISION NOT NULL,
        client TEXT NOT NULL DEFAULT '')""",
    "CREATE INDEX IF NOT EXISTS gw_responses_used ON gw_responses (used_at)",
    """CREATE TABLE IF NOT EXISTS gw_conversations (
        id TEXT PRIMARY KEY, metadata TEXT NOT NULL, size BIGINT NOT NULL, next_seq BIGINT NOT NULL,
        created_at DOUBLE PRECISION NOT NULL, used_at DOUBLE PRECISION NOT NULL,
        client TEXT NOT NULL DEFAULT '')""",
    "CREATE INDEX IF NOT EXISTS gw_conversations_used ON gw_conversations (used_at)",
    """CREATE TABLE IF NOT EXISTS gw_items (
        conversation_id TEXT NOT NULL, seq BIGINT NOT NULL, id TEXT NOT NULL, data TEXT NOT NULL,
        size BIGINT NOT NULL, client TEXT NOT NULL DEFAULT '', PRIMARY KEY (conversation_id, seq))""",
    "CREATE INDEX IF NOT EXISTS gw_items_id ON gw_items (conversation_id, id)",
    """CREATE TABLE IF NOT EXISTS gw_item_ids (
        client TEXT NOT NULL, id TEXT NOT NULL, response_id TEXT NOT NULL, PRIMARY KEY (client, id))""",
    """CREATE TABLE IF NOT EXISTS gw_usage (
        client TEXT NOT NULL, day TEXT NOT NULL, route TEXT NOT NULL, model TEXT NOT NULL,
        requests BIGINT NOT NULL, input_tokens BIGINT NOT NULL, cached_tokens BIGINT NOT NULL,
        output_tokens BIGINT NOT NULL, reasoning_tokens BIGINT NOT NULL,
        cost_usd DOUBLE PRECISION NOT NULL DEFAULT 0, partial_requests BIGINT NOT NULL DEFAULT 0,
        PRIMARY KEY (client, day, route, model))""",
    # the budgets (addon/team/budgets.py): per client, period (a UTC day YYYY-MM-DD or month
    # YYYY-MM) and kind (tokens, usd), what was spent and what turns in flight hold
    """CREATE TABLE IF NOT EXISTS gw_budget (
        client TEXT NOT NULL, period TEXT NOT NULL, kind TEXT NOT NULL,
        spent DOUBLE PRECISION NOT NULL DEFAULT 0, held DOUBLE PRECISION NOT NULL DEFAULT 0,
        PRIMARY KEY (client, period, kind))""",
    # requests per minute: one row per client locked by each take, and the times of its requests
    "CREATE TABLE IF NOT EXISTS gw_rate (client TEXT PRIMARY KEY, touched DOUBLE PRECISION NOT NULL)",
    "CREATE TABLE IF NOT EXISTS gw_requests (client TEXT NOT NULL, at DOUBLE PRECISION NOT NULL)",
    # each turn's holds until it settles them: those of a process that died are let go of
    """CREATE TABLE IF NOT EXISTS gw_holds (
        id TEXT PRIMARY KEY, client TEXT NOT NULL, created_at DOUBLE PRECISION NOT NULL,
        holds TEXT NOT NULL)""",
)
MIGRATIONS = (("gw_responses", "client", "TEXT NOT NULL DEFAULT ''"),
              ("gw_conversations", "client", "TEXT NOT NULL DEFAULT ''"),
              ("gw_items", "client", "TEXT NOT NULL DEFAULT ''"),
              ("gw_usage", "cost_usd", "DOUBLE PRECISION NOT NULL DEFAULT 0"),
              ("gw_usage", "partial_requests", "BIGINT NOT NULL DEFAULT 0"))
"""Columns a store written by an earlier version lacks, added with their default (`''`: the
anonymous client, what every row was before client keys; 0: no cost, before prices)."""
INDEXES = (
    # the size check's SUM(size) per client from the index alone: from the table, it reads past
    # every row's `data` (a 100k-item turn is 10 MB)
    "CREATE INDEX IF NOT EXISTS gw_responses_client ON gw_responses (client, used_at, size)",
    "CREATE INDEX IF NOT EXISTS gw_conversations_client ON gw_conversations (client, used_at, size)",
    # an `item_reference` to a conversation's item, found by its id alone
    "CREATE INDEX IF NOT EXISTS gw_items_client_id ON gw_items (client, id)",
    "CREATE INDEX IF NOT EXISTS gw_requests_client ON gw_requests (client, at)",
)
