"""A stored turn: what the store holds for one Responses turn and what its answer will record
(docs/state.md). `addon/state/turns.py` makes it (`Turns.lookup`) and writes it; the flow's
context only carries it (addon/serve/flow.py `FlowCtx.turn`)."""

from __future__ import annotations

import enum
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

from addon.state.store import ItemsJSON
from addon.state.stored_items import Stored


class Unstored(enum.Enum):
    """What `Turns.lookup` says of a turn with no stored turn to carry."""

    AS_SENT = "as sent"
    """The turn reads and writes no state: its body is translated as the client sent it."""
    UNTOUCHED = "untouched"
    """The upstream keeps its own state (a passthrough route to OpenAI): a compaction goes on as
    the client sent it, not translated."""


@dataclass(slots=True, eq=False)
class StoredTurn:
    past: list[dict[str, Any]] | Stored
    """The stored history the turn continues, oldest first; a long one unread (a worker reads it)."""
    records: bool
    """The answer is recorded. False: a `/responses/compact` compaction (its answer is final as
    written, docs/compaction.md) or OpenAI's own answer, kept by OpenAI."""
    store: bool
    """`store` was not false: the response is kept (`GET /responses/{id}`, a next
    `previous_response_id`)."""
    previous_id: str | None
    conversation_id: str | None
    route: dict[str, Any]
    """`{"dialect", "model"}` of the route that serves it, as the store keeps it."""
    client: str
    """The gateway client it belongs to (addon/team/keys.py; "" without client keys)."""
    inputs: list[dict[str, Any]] | ItemsJSON | None = None
    """The turn's new input items until they are recorded (a list, or for a large request their
    JSON written by a worker, addon/work/workers.py): beside the flow, never in its metadata, which
    mitmproxy deep-copies (a 100k-item history: seconds)."""
    input_count: int = 0
    write: Future[None] | None = None
    """The store write of the recorded turn, until the answer has ended (`Turns.written`)."""
    recorded: bool = False
    """The answer was recorded (a streamed one as it finished, a whole one at its end)."""
    found: dict[str, dict[str, Any]] = field(default_factory=dict)
    """The stored items the turn's `item_reference`s name, by id (`stored_items.resolve`)."""

    def keep_inputs(self, items: list[dict[str, Any]] | ItemsJSON, count: int) -> None:
        """The turn's new input items, once the body is expanded (addon/serve/translate.py)."""
        if self.records:
            self.inputs, self.input_count = items, count
