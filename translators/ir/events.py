"""Stream events: what every upstream decoder produces and the Responses encoder consumes.

These are plain slotted dataclasses rather than pydantic models: one is built per upstream event
on the proxy's hot path, where pydantic validation would cost more than parsing the JSON (bench/
measures it); not frozen either, since a frozen one costs twice as much to build and nothing
changes an event once built. `key` identifies one upstream block (an Anthropic content index, a Chat
tool-call index...), unique within a stream; the encoder opens a Responses item on the first
event that names a key and closes it on the matching `*Done`.
"""

from __future__ import annotations

from dataclasses import dataclass

from translators.ir.request import VendorState


@dataclass(slots=True)
class Started:
    """The upstream began its answer: the client's response opens (`response.created`) before
    any content. The upstream's own id and model are not carried: a Responses object has no
    field for them, and the flow keeps the upstream's answer and request-id header."""


@dataclass(slots=True)
class TextDelta:
    key: object
    text: str


@dataclass(slots=True)
class TextDone:
    key: object


@dataclass(slots=True)
class ReasoningDelta:
    """Readable reasoning (thinking text, a summary, DeepSeek reasoning_content)."""

    key: object
    text: str


@dataclass(slots=True)
class ReasoningDone:
    key: object
    state: VendorState | None = None


@dataclass(slots=True)
class ToolCallStarted:
    key: object
    call_id: str
    name: str
    """The name on the upstream's wire; the encoder maps it back to client name + namespace."""


@dataclass(slots=True)
class ToolCallDelta:
    key: object
    fragment: str
    """A piece of the JSON arguments as the upstream streamed it."""


@dataclass(slots=True)
class ToolCallDone:
    key: object
    arguments: str | None = None
    """The whole argument text when the upstream gives it at once; None means: the deltas."""


@dataclass(slots=True)
class Usage:
    """Token counts in Responses terms: input includes cached; output includes reasoning.

    A field left None keeps what an earlier Usage event said (upstreams report in pieces).
    """

    input_tokens: int | None = None
    output_tokens: int | None = None
    cached_tokens: int | None = None
    reasoning_tokens: int | None = None
    cache_write_tokens: int | None = None
    """Input tokens written to the prompt cache (part of input_tokens, like cached_tokens)."""
    cache_write_1h_tokens: int | None = None
    """Of `cache_write_tokens`, those written for an hour (priced apart: docs/anthropic.md "Prompt
    caching"); the rest were written for five minutes."""
    web_searches: int | None = None
    """Searches the upstream ran and counted (Anthropic `server_tool_use.web_search_requests`)."""


@dataclass(slots=True)
class WebSearch:
    """A search the upstream ran itself, whole: it becomes one `web_search_call` item."""

    key: object
    query: str
    sources: list[str]
    """URLs of the results, in the upstream's order."""
    state: VendorState | None = None
    """What the vendor needs on the next turn to take the search back."""
    failed: bool = False


@dataclass(slots=True)
class Citation:
    """A source cited by text of the message `key`: characters [start, end) of its text."""

    key: object
    url: str
    title: str
    start: int
    end: int


@dataclass(slots=True)
class Finished:
    reason: str
    """One of: stop, tool_calls, max_output_tokens, content_filter, context_length_exceeded; or
    stop_sequence (`detail`: the sequence) and pause_turn, which a Messages client tells apart
    (translators/messages_client/stream.py) and a Responses client reads as stop."""
    detail: str | None = None


@dataclass(slots=True)
class Failed:
    code: str
    """The Responses error code (translators/wire/upstream_errors.py)."""
    message: str
    """As the client reads it: the retry hint, if any, is already in it (upstream_errors.describe)."""


@dataclass(slots=True)
class Unknown:
    """Something the upstream sent that has no Responses equivalent; lands in `dropped`."""

    path: str


@dataclass(slots=True)
class Note:
    text: str


@dataclass(slots=True)
class KeepAlive:
    """The upstream said it is still there and has nothing yet (Anthropic `ping`, an SSE comment
    line, a Responses `keepalive` event): no part of the answer. A client dialect with an event
    of its own for it passes it on (a Messages client's `ping`); the others write nothing."""


Event = (
    Started | TextDelta | TextDone | ReasoningDelta | ReasoningDone | ToolCallStarted | ToolCallDelta
    | ToolCallDone | Usage | WebSearch | Citation | Finished | Failed | Unknown | Note | KeepAlive
)
