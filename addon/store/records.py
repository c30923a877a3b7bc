"""The records a store keeps and the interface every backend implements."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from translators import wirejson


class StoreError(RuntimeError):
    """The store cannot be reached or written; the message never holds a password."""


@dataclass(frozen=True, slots=True)
class ItemsJSON:
    """Input items already written as one JSON array (by a worker process, for a long input,
    addon/workers.py): the store keeps the text as it is, without reading it into objects in the
    proxy's interpreter (docs/design.md "Limits")."""

    text: bytes

    def items(self) -> list[dict[str, Any]]:
        return wirejson.loads(self.text)


@dataclass(slots=True)
class ResponseRecord:
    id: str
    response: dict[str, Any]
    """The Responses object as the client got it (output items with ids, usage, status)."""
    input: list[dict[str, Any]] | ItemsJSON
    """The client's own input items of this turn (history from `previous_response_id` or a
    conversation not repeated), each with an id."""
    route: dict[str, Any]
    """Where the turn went: `{"dialect": ..., "model": ...}`."""
    previous_id: str | None = None
    conversation_id: str | None = None
    created_at: float = 0.0


@dataclass(slots=True)
class Conversation:
    id: str
    created_at: float
    metadata: dict[str, Any] = field(default_factory=dict)


class Store(Protocol):
    def put_response(self, record: ResponseRecord) -> None: ...

    def get_response(self, response_id: str) -> ResponseRecord | None: ...

    def chain(self, response_id: str) -> list[ResponseRecord] | None:
        """The response and its ancestors by `previous_id`, oldest first; None when it or any
        ancestor is unknown or expired (the history would be incomplete)."""
        ...

    def chain_texts(self, response_id: str) -> list[str] | None:
        """`chain`'s records as the store keeps them, JSON texts unread (a long history is read
        by a worker process, not the proxy: addon/workers.py)."""
        ...

    def delete_response(self, response_id: str) -> bool: ...

    def create_conversation(self, conversation: Conversation, items: list[dict[str, Any]]) -> None: ...

    def get_conversation(self, conversation_id: str) -> Conversation | None: ...

    def update_conversation(self, conversation_id: str, metadata: dict[str, Any]) -> Conversation | None: ...

    def delete_conversation(self, conversation_id: str) -> bool: ...

    def append_items(self, conversation_id: str, items: list[dict[str, Any]]) -> bool:
        """Append in order, atomically; False when the conversation is unknown."""
        ...

    def list_items(self, conversation_id: str, *, after: str | None = None, limit: int | None = None,
                   order: str = "asc") -> tuple[list[dict[str, Any]], bool] | None:
        """A page of items and whether more follow; None when the conversation is unknown."""
        ...

    def item_texts(self, conversation_id: str) -> list[str] | None:
        """Every item of the conversation in order, JSON texts unread; None when it is unknown."""
        ...

    def get_item(self, conversation_id: str, item_id: str) -> dict[str, Any] | None: ...

    def delete_item(self, conversation_id: str, item_id: str) -> bool: ...

    def purge(self) -> None:
        """Drop what is past its retention, then the least recently used until under the size limit."""
        ...

    def close(self) -> None: ...
