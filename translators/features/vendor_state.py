"""Carrying provider state through the client inside `encrypted_content`.

Codex replays a reasoning item's `encrypted_content` byte for byte on the next turn
(docs/codex.md "Input items"), so the gateway writes its own, clearly marked, payload there. Anything
without the marker is the OpenAI platform's own encrypted reasoning.
"""

from __future__ import annotations

from translators.ir.request import VendorState
from translators.wire import payload

MARKER = "dgw1:"


def encode(state: VendorState) -> str:
    return payload.write(MARKER, state.model_dump_json(exclude_none=True, exclude_defaults=True))


def decode(encrypted: object) -> VendorState | None:
    """The state this gateway wrote, or None for anything else (including corrupt payloads and
    values that are not strings)."""
    return payload.read(MARKER, encrypted, VendorState)


def in_id(item_id: str, state: VendorState | None) -> str:
    """An output item id that carries `state` after it: Codex replays a `web_search_call` with no
    opaque field but its `id`, byte for byte (docs/codex.md "Echo behaviour")."""
    return item_id if state is None else f"{item_id}.{encode(state)}"


def from_id(item_id: str | None) -> VendorState | None:
    """The state an id made by `in_id` carries, or None for any other id."""
    if not item_id:
        return None
    at = item_id.find(MARKER)
    return decode(item_id[at:]) if at >= 0 else None


def is_ours(encrypted: object) -> bool:
    return isinstance(encrypted, str) and encrypted.startswith(MARKER)


def replayable(state: VendorState | None, dialect: str) -> VendorState | None:
    """Reasoning a vendor will take back: its own, signed or redacted. A signature covers the
    exact text and model it came from, so another vendor's (or an unsigned) one is never sent."""
    if state is None or state.dialect != dialect or not (state.signature or state.redacted):
        return None
    return state
