"""What one client's earlier requests decoded, kept for its next ones (docs/benchmarks.md "Request
translation over a session").

Codex sends a conversation's whole history with every request (docs/codex.md "Responses Lite"), so
most of what a turn's request holds was decoded on the turn before. A client decoder that reuses
items (`ClientDialect.reuses_items`) keeps here what it decoded: entries by content (an item's
JSON text), and the last requests of each conversation (`runs`), whose items a request that
repeats them in the same places takes whole. What an entry or a run holds is the decoder's
business (translators/responses_client/reuse.py).

The cache is its caller's, passed in (`translate_request(..., items=)`): the translators keep no
state between calls. It must never be shared by two clients: an entry is one client's text. It
is bounded in entries and in bytes, the least recently used going first: an entry counts its
key's text twice (the key, and the strings of what it decoded) plus `ENTRY_OVERHEAD`, a run its
text. A history larger than the cache finds none of its items on the next request (a request
reads its items in the same order, oldest first): it is decoded whole, as without a cache.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any

MiB = 1024 * 1024
MAX_ENTRIES = 20_000
"""Entries a cache holds at most: about a hundred Codex turns of ten items, twice over."""
MAX_BYTES = 16 * MiB
"""The bytes a cache holds at most, as counted here: the items of about 5 MB of history (a
1M-token context window at four characters a token), with their last request."""
MAX_RUNS = 4
"""Conversations whose last request a cache keeps (a client's agent and its sub-agents)."""
ENTRY_OVERHEAD = 512
"""Bytes an entry costs besides its text: the Python objects of the key, the entry and the IR."""


class ItemCache:
    """A bounded least-recently-used map from an item's content to what decoding it gave, and the
    last few requests decoded. Safe to use from two threads (a request the addon translates in a
    thread, docs/concurrency.md)."""

    __slots__ = ("_bytes", "_entries", "_lock", "_runs", "hits", "max_bytes", "max_entries", "max_runs",
                 "misses", "reused")

    def __init__(self, max_entries: int = MAX_ENTRIES, max_bytes: int = MAX_BYTES,
                 max_runs: int = MAX_RUNS) -> None:
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self.max_runs = max_runs
        self._entries: OrderedDict[Hashable, tuple[Any, int]] = OrderedDict()
        self._runs: list[tuple[Any, int]] = []
        """Most recent first."""
        self._bytes = 0
        self._lock = threading.Lock()
        self.hits = 0
        """Items found by content (`get`)."""
        self.misses = 0
        self.reused = 0
        """Items taken with a run (`took`)."""

    # -- entries, by content ------------------------------------------------------------------
    def get(self, key: Hashable) -> Any | None:
        """What was stored for `key`, now the most recently used; None if nothing is."""
        with self._lock:
            found = self._entries.get(key)
            if found is None:
                self.misses += 1
                return None
            self._entries.move_to_end(key)
            self.hits += 1
            return found[0]

    def put(self, key: Hashable, value: Any, text_bytes: int) -> None:
        """Store `value` for `key`, whose content is `text_bytes` long. An entry larger than the
        whole cache is not stored."""
        size = 2 * text_bytes + ENTRY_OVERHEAD
        if size > self.max_bytes:
            return
        with self._lock:
            old = self._entries.pop(key, None)
            if old is not None:
                self._bytes -= old[1]
            self._entries[key] = (value, size)
            self._bytes += size
            self._evict()

    # -- runs: the last requests ------------------------------------------------------------
    def runs(self) -> list[Any]:
        """The runs kept, most recent first."""
        with self._lock:
            return [run for run, _ in self._runs]

    def add_run(self, run: Any, text_bytes: int, replaces: Callable[[Any], bool]) -> None:
        """Keep `run` as the most recent; the runs `replaces` says it makes useless go (the one it
        continues), and the oldest beyond `max_runs`."""
        if text_bytes > self.max_bytes:
            return
        with self._lock:
            kept, freed = [], 0
            for old, size in self._runs:
                if replaces(old):
                    freed += size
                else:
                    kept.append((old, size))
            self._runs = [(run, text_bytes), *kept]
            self._bytes += text_bytes - freed
            self._evict()

    def took(self, items: int) -> None:
        with self._lock:
            self.reused += items

    # -- bounds ---------------------------------------------------------------------------------
    def _evict(self) -> None:
        while len(self._runs) > self.max_runs or (self._bytes > self.max_bytes and len(self._runs) > 1):
            self._bytes -= self._runs.pop()[1]
        while self._entries and (len(self._entries) > self.max_entries or self._bytes > self.max_bytes):
            _, (_, freed) = self._entries.popitem(last=False)
            self._bytes -= freed

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._runs.clear()
            self._bytes = 0

    @property
    def bytes(self) -> int:
        """The bytes held, as counted here."""
        return self._bytes

    def __len__(self) -> int:
        return len(self._entries)
