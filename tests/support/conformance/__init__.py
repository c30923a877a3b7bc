"""Each dialect's conformance data, for the shared suites that run every dialect the same way
(tests/reliability/, tests/translators/responses_client/test_conformance.py): what its local upstream
answers (recorded streams, a whole answer, its error shape, which paths are its own), the route
and key the suites give it, where its key arrives, and where a stream says it finished.

One module per shipped dialect, `tests/support/conformance/<name>.py`, defining `CONFORMANCE`;
a dialect defined in tests/ registers its own (`register`, e.g. tests/support/toy_dialect.py).
The shared suites take their dialect list from the registry and ask `of(name)`: a new dialect adds
one module here and edits no shared file, and one without it fails by name (docs/adding-a-dialect.md).
"""

from __future__ import annotations

import importlib
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from translators import dialect as dialects

ErrorBody = Callable[[int, str], tuple[dict[str, str], bytes]]
"""(status, message) -> the headers and body of an error in the dialect's own shape."""
Turns = list[tuple[str, list[tuple[str | None, str]], list[str | None]]]
"""[(role, [call (id, name)], [result id, or `name:<name>` for a result matched by name])]."""


@dataclass(frozen=True)
class BodyReader:
    """The dialect's upstream request body read back independently of its encoder, with the rules
    its vendor enforces on it (tests/reliability/upstream_bodies.py)."""

    tool_name: re.Pattern[str]
    """What a tool name must match."""
    call_id: re.Pattern[str]
    """What a call id must match."""
    tool_names: Callable[[dict[str, Any]], list[str]]
    chosen_tool: Callable[[dict[str, Any]], str | None]
    """The tool a forced tool choice names, if any."""
    turns: Callable[[dict[str, Any]], Turns]
    results_first: bool = False
    """Tool results come first in their message, text after them (Anthropic's rule)."""


def asks_stream(path: str, body: Any) -> bool:
    """The usual rule: the body's `stream` flag."""
    return isinstance(body, dict) and bool(body.get("stream"))


@dataclass(frozen=True)
class Conformance:
    dialect: str
    model: str
    """The upstream model the suites route to (and translate for)."""
    key_env: str
    key: str
    """The route's key variable in the suites, and the (fake) key it holds."""
    key_header: tuple[str, str]
    """(header, template with `{key}`): where the key arrives at the upstream."""
    is_mine: Callable[[str], bool]
    """Is this request path one of the dialect's?"""
    error: ErrorBody
    whole: dict[str, Any]
    """The whole (non-streamed) answer the local upstream gives: "Hello whole."."""
    whole_tool_call: dict[str, Any] | None = None
    """A whole answer calling `get_weather` with `{"city": "Paris"}`, in the vendor's documented
    shape (None: the conformance suite has none for it)."""
    base_suffix: str = ""
    """What follows the local upstream's URL in the route's base URL (e.g. `/v1`)."""
    recordings: tuple[str, ...] = ()
    """Recorded upstream streams, relative to tests/data (`.jsonl`: one data payload per line)."""
    default_stream: str = ""
    """The recording the local upstream answers a stream request with (its file name)."""
    finish_marker: bytes = b""
    """A regex: where in the raw bytes the upstream says the answer is complete."""
    named_events: bool = False
    """Its SSE names each event (`event: <type>`); else `data:` lines only."""
    done_line: bool = False
    """Its stream ends with `data: [DONE]`."""
    content_type: str = "text/event-stream"
    wants_stream: Callable[[str, Any], bool] = asks_stream
    """(path, parsed body) -> is a stream asked for?"""
    models: tuple[str, ...] = ()
    """Upstream models the request fuzzers translate for (the first is the usual one)."""
    body: BodyReader | None = None
    """None: the request fuzzers do not read its bodies back (the client's own wire, a toy)."""
    stream: tuple[bytes, ...] = ()
    """Whole stream events, for a dialect without recordings (a toy)."""
    unknown_event: bytes = b""
    """One event of a type the decoder does not know, in the dialect's stream framing (the
    decoders must skip it and go on); empty: none is tried."""
    reports_unknown: bool = False
    """The decoder reports an unknown event dropped (where the vendor documents its event types)."""
    huge: Callable[[list[bytes], int, str], Iterator[bytes]] | None = None
    """(the default stream's events, size, a text piece) -> the stream with `size` bytes of extra
    text; None: the suites make no huge stream of it."""


_REGISTERED: dict[str, Conformance] = {}


def register(conformance: Conformance) -> Conformance:
    _REGISTERED[conformance.dialect] = conformance
    return conformance


def of(name: str) -> Conformance:
    """The dialect's conformance data; ModuleNotFoundError names a shipped dialect without any."""
    if name in _REGISTERED:
        return _REGISTERED[name]
    found: Conformance = importlib.import_module(f"{__name__}.{name}").CONFORMANCE
    return found


def every() -> list[Conformance]:
    """Every registered dialect's (tests/conftest.py registers the toy one)."""
    return [of(name) for name in dialects.names()]


def json_error(body: dict[str, Any], headers: dict[str, str] | None = None) -> tuple[dict[str, str], bytes]:
    return dict(headers or {}), json.dumps(body).encode()
