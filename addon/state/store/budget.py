"""The budgets' queries both backends run (addon/team/budgets.py; docs/team.md "Budgets"): holds
taken within a limit, all or none, and settled; the requests of the last minute. Plain SQL that
SQLite and PostgreSQL read alike, in `SqlStore`'s transactions (addon/state/store/sql.py)."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import Any

from addon.state.store.records import Hold, Over

MINUTE = 60.0
"""The window of `requests_per_minute`, in seconds."""
HOLD_SECONDS = 3 * 3600.0
"""A hold not settled after this long is let go of: its turn's process died (no turn lasts as
long; the gateway's own limits end one sooner)."""


class _NoRoom(Exception):
    def __init__(self, over: Over) -> None:
        self.over = over


class BudgetQueries:
    """What `SqlStore` supplies: its lock, its transactions and its clock."""

    _lock: threading.RLock
    clock: Callable[[], float]

    def _transaction(self) -> AbstractContextManager[Callable[..., Any]]:
        raise NotImplementedError

    def reserve(self, client: str, holds: Sequence[Hold], hold_id: str = "") -> Over | None:
        """Hold each `amount` against its limit, all or none, in one transaction: each row is
        raised only `WHERE spent + held + amount <= limit`, which PostgreSQL re-checks once it
        has the row's lock and SQLite runs under its write lock, so turns reserved at once, on
        any gateway process on this store, never hold more than a limit together. None when
        held; else the first that did not fit, as it stood. `hold_id` (the turn's) records the
        holds in `gw_holds`, so those of a process that died are let go of after `HOLD_SECONDS`."""
        self._release_stale()
        try:
            with self._lock, self._transaction() as q:
                if hold_id:
                    q("INSERT INTO gw_holds (id, client, created_at, holds) VALUES (?, ?, ?, ?)", hold_id,
                      client, self.clock(), json.dumps([[h.period, h.kind, h.amount] for h in holds]))
                for hold in holds:
                    key = (client, hold.period, hold.kind)
                    q("INSERT INTO gw_budget (client, period, kind, spent, held) VALUES (?, ?, ?, 0, 0) "
                      "ON CONFLICT (client, period, kind) DO NOTHING", *key)
                    row = q("UPDATE gw_budget SET held = held + ? WHERE client = ? AND period = ? "
                            "AND kind = ? AND spent + held + ? <= ? RETURNING spent",
                            hold.amount, *key, hold.amount, hold.limit).fetchone()
                    if row is None:
                        spent, held = q("SELECT spent, held FROM gw_budget WHERE client = ? AND period = ? "
                                        "AND kind = ?", *key).fetchone()
                        raise _NoRoom(Over(hold, float(spent), float(held)))
        except _NoRoom as no:
            return no.over
        return None

    def settle(self, client: str, holds: Sequence[Hold], spent: Sequence[float], hold_id: str = "") -> None:
        """A turn's holds let go of, and what it spent (0: nothing, a turn that failed) added.
        With `hold_id`, its holds are let go of only if `gw_holds` still has them (not let go of
        as stale already)."""
        with self._lock, self._transaction() as q:
            if hold_id and q("DELETE FROM gw_holds WHERE id = ?", hold_id).rowcount == 0:
                holds = [Hold(h.period, h.kind, 0.0, h.limit) for h in holds]  # nothing held any more
            for hold, amount in zip(holds, spent, strict=True):
                key = (client, hold.period, hold.kind)
                q("INSERT INTO gw_budget (client, period, kind, spent, held) VALUES (?, ?, ?, 0, 0) "
                  "ON CONFLICT (client, period, kind) DO NOTHING", *key)
                q("UPDATE gw_budget SET held = held - ?, spent = spent + ? WHERE client = ? AND period = ? "
                  "AND kind = ?", hold.amount, amount, *key)

    def _release_stale(self) -> None:
        """Let go of the holds older than `HOLD_SECONDS` (their turn's process died before it
        settled them); at most once a minute per process."""
        now = self.clock()
        if now - getattr(self, "_stale_looked", 0.0) < MINUTE:
            return
        self._stale_looked = now
        with self._lock, self._transaction() as q:
            rows = q("DELETE FROM gw_holds WHERE created_at < ? RETURNING client, holds",
                     now - HOLD_SECONDS).fetchall()
            for client, text in rows:
                for period, kind, amount in json.loads(text):
                    q("UPDATE gw_budget SET held = held - ? WHERE client = ? AND period = ? AND kind = ?",
                      amount, client, period, kind)

    def spent(self, client: str, period: str, kind: str) -> tuple[float, float]:
        """(spent, held) of `client` in `period` (a day YYYY-MM-DD or a month YYYY-MM), `kind`
        tokens or usd."""
        with self._lock, self._transaction() as q:
            row = q("SELECT spent, held FROM gw_budget WHERE client = ? AND period = ? AND kind = ?",
                    client, period, kind).fetchone()
        return (float(row[0]), float(row[1])) if row else (0.0, 0.0)

    def take_request(self, client: str, per_minute: int) -> float:
        """One request of `client` counted in the last minute when fewer than `per_minute` were:
        0.0; else the seconds until one may go. The client's `gw_rate` row is locked first, so
        two takes of one client, from any process, run one after the other."""
        now = self.clock()
        with self._lock, self._transaction() as q:
            q("INSERT INTO gw_rate (client, touched) VALUES (?, ?) ON CONFLICT (client) DO NOTHING",
              client, now)
            q("UPDATE gw_rate SET touched = ? WHERE client = ?", now, client)
            now = self.clock()  # the row is ours now: the minute counts from here
            q("DELETE FROM gw_requests WHERE client = ? AND at <= ?", client, now - MINUTE)
            count, oldest = q("SELECT COUNT(*), MIN(at) FROM gw_requests WHERE client = ?", client).fetchone()
            if int(count) >= per_minute:
                # clocks of processes on several machines differ a little: never past a minute
                return min(max(float(oldest) + MINUTE - now, 0.001), MINUTE)
            q("INSERT INTO gw_requests (client, at) VALUES (?, ?)", client, now)
        return 0.0
