"""The records a store keeps and the interface every backend implements."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from translators.wire import wirejson


class StoreError(RuntimeError):
    """The store cannot be reached or written; the message never holds a password."""


@dataclass(frozen=True, slots=True)
class ItemsJSON:
    """Input items already written as one JSON array (by a worker process, for a long input,
    addon/work/workers.py): the store keeps the text as it is, without reading it into objects in the
    proxy's interpreter (docs/design.md "Limits")."""

    text: bytes

    def items(self) -> list[dict[str, Any]]:
        return wirejson.loads(self.text)


@dataclass(slots=True)
class ResponseRecord:
    id: str
    response: dict[str, Any]
    """The Responses object as the client got it, whole: output items with ids, usage, status
    and the request's echo, `previous_response_id` and `store` included (docs/responses.md "The
    Response object")."""
    input: list[dict[str, Any]] | ItemsJSON
    """The client's own input items of this turn (history from `previous_response_id` or a
    conversation not repeated), each with an id."""
    route: dict[str, Any]
    """Where the turn went: `{"dialect": ..., "model": ...}`."""
    previous_id: str | None = None
    conversation_id: str | None = None
    created_at: float = 0.0
    client: str = ""
    """The client that made it (addon/team/keys.py; `""` without client keys): only it reads it."""


@dataclass(slots=True)
class Conversation:
    id: str
    created_at: float
    metadata: dict[str, Any] = field(default_factory=dict)
    client: str = ""
    """The client that made it; only it reads, appends to, changes or deletes it."""


@dataclass(frozen=True, slots=True)
class Hold:
    """What a turn holds of one budget: `amount` of `kind` (tokens, usd) in `period` (a UTC day
    YYYY-MM-DD or month YYYY-MM), within `limit`."""

    period: str
    kind: str
    amount: float
    limit: float


@dataclass(frozen=True, slots=True)
class Over:
    """A hold that did not fit, and the budget as it stood: `spent` by turns that ended, `held`
    by turns in flight."""

    hold: Hold
    spent: float
    held: float


class Store(Protocol):
    """Every read, change or delete names its client (`client`): another client's row is not
    found, as an unknown id is (the API's own 404)."""

    def put_response(self, record: ResponseRecord) -> None: ...

    def get_response(self, response_id: str, client: str = "") -> ResponseRecord | None: ...

    def chain(self, response_id: str, client: str = "") -> list[ResponseRecord] | None:
        """The response and its ancestors by `previous_id`, oldest first; None when it or any
        ancestor is unknown or expired (the history would be incomplete)."""
        ...

    def chain_texts(self, response_id: str, client: str = "") -> list[str] | None:
        """`chain`'s records as the store keeps them, JSON texts unread (a long history is read
        by a worker process, not the proxy: addon/work/workers.py)."""
        ...

    def delete_response(self, response_id: str, client: str = "") -> bool: ...

    def items_by_id(self, ids: list[str], client: str = "") -> dict[str, dict[str, Any]]:
        """The client's stored items of these ids (of its responses' input and output, or of its
        conversations), by id; an id it does not hold is left out (an `item_reference`)."""
        ...

    def create_conversation(self, conversation: Conversation, items: list[dict[str, Any]]) -> None: ...

    def get_conversation(self, conversation_id: str, client: str = "") -> Conversation | None: ...

    def update_conversation(self, conversation_id: str, metadata: dict[str, Any],
                            client: str = "") -> Conversation | None: ...

    def delete_conversation(self, conversation_id: str, client: str = "") -> bool: ...

    def append_items(self, conversation_id: str, items: list[dict[str, Any]], client: str = "") -> bool:
        """Append in order, atomically; False when the conversation is unknown."""
        ...

    def list_items(self, conversation_id: str, *, after: str | None = None, limit: int | None = None,
                   order: str = "asc", client: str = "") -> tuple[list[dict[str, Any]], bool] | None:
        """A page of items and whether more follow; None when the conversation is unknown."""
        ...

    def item_texts(self, conversation_id: str, client: str = "") -> list[str] | None:
        """Every item of the conversation in order, JSON texts unread; None when it is unknown."""
        ...

    def get_item(self, conversation_id: str, item_id: str, client: str = "") -> dict[str, Any] | None: ...

    def delete_item(self, conversation_id: str, item_id: str, client: str = "") -> bool: ...

    def add_usage(self, client: str, day: str, route: str, model: str, counts: dict[str, int]) -> None:
        """Add one answered turn's counts (requests, input/cached/output/reasoning tokens)."""
        ...

    def usage(self, first_day: str, last_day: str, client: str | None = None) -> list[dict[str, Any]]:
        """Usage rows per client, day, route and model, days YYYY-MM-DD (UTC), both included."""
        ...

    def tokens_on(self, client: str, day: str) -> int:
        """Input + output tokens the client used on the day (`tokens_per_day`)."""
        ...

    def reserve(self, client: str, holds: Sequence[Hold], hold_id: str = "") -> Over | None:
        """Hold every amount within its limit, all or none, atomically across processes; None
        when held, else the first that did not fit (addon/team/budgets.py)."""
        ...

    def settle(self, client: str, holds: Sequence[Hold], spent: Sequence[float], hold_id: str = "") -> None:
        """Let go of a turn's holds and add what it spent."""
        ...

    def spent(self, client: str, period: str, kind: str) -> tuple[float, float]:
        """(spent, held) of one budget."""
        ...

    def take_request(self, client: str, per_minute: int) -> float:
        """Count one request within `per_minute` (0.0), else the seconds until one may go."""
        ...

    def purge(self) -> None:
        """Drop what is past its retention, then the least recently used until under the size limit."""
        ...

    def close(self) -> None: ...
