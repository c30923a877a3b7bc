"""What each upstream dialect provides, and the registry of them."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from translators.ir.events import Event
from translators.ir.request import Request
from translators.report import Report
from translators.translation import Encoded, Translation

DIALECTS = ("responses", "anthropic", "chat", "gemini", "bedrock")


class StreamDecoder(Protocol):
    """Sans-I/O: upstream bytes in any chunking -> IR events, as soon as a whole event is in."""

    def feed(self, data: bytes) -> list[Event]: ...

    def close(self) -> list[Event]: ...


@dataclass(frozen=True, slots=True)
class ErrorInfo:
    code: str
    message: str


@dataclass(frozen=True, slots=True)
class Dialect:
    name: str
    encode_request: Callable[[Request, str, Report], Encoded]
    """(IR request, upstream model, report) -> upstream path, body, headers, tool index."""
    stream_decoder: Callable[[Translation], StreamDecoder]
    response_events: Callable[[Any, Translation], list[Event]]
    """A whole (non-streamed) upstream answer, parsed JSON -> the same events a stream gives."""
    error_info: Callable[[int, Any], ErrorInfo]
    """(HTTP status, parsed error body or raw text) -> code and message for the client."""


def get(name: str) -> Dialect:
    if name not in DIALECTS or name == "responses":
        raise KeyError(name)
    module = importlib.import_module(f"translators.{name}")
    return module.DIALECT  # type: ignore[no-any-return]
