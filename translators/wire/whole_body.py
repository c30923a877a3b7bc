"""A whole body where a stream was asked for, read in its own format.

Servers that refuse a streamed request often answer `200` with one JSON body rather than a stream:
vLLM and other Chat servers, proxies and gateways in front of a vendor, a vendor's edge on a
bad day (an HTML page). Read as a stream it is nothing, and the client would learn only that the
stream ended early; the upstream's reason (a context overflow, say) would be lost.

The first bytes tell (`kind`): a stream never begins with `{` or `<` (an SSE stream begins with a
field name or a comment, a Bedrock event stream with a 4-byte length whose first byte is 0 for
any frame under 16 MB, a Gemini JSON-array stream with `[`). Such a body is kept whole and read
at its end (`WholeBody`): a JSON error becomes a failure with the upstream's message and code, a
whole answer the same events `translate_response` reads from it, anything else a failure quoting
its beginning.
"""

from __future__ import annotations

from typing import Any, Literal

from translators.core.errors import TranslatorError
from translators.core.translation import Translation
from translators.dialect import Codec
from translators.ir import events as ev
from translators.wire import wirejson
from translators.wire.upstream_errors import clip, text_of

_WHITESPACE = b" \t\r\n"
_BOM = b"\xef\xbb\xbf"
MAX_BYTES = 32 * 1024 * 1024
"""A whole body kept past this is no answer anyone can use; the rest is not kept."""
_QUOTE = 300
"""Characters of an unreadable body the failure quotes."""


def kind(head: bytes) -> Literal["stream", "whole"] | None:
    """What the upstream's first bytes begin: its stream, a whole body, or not known yet (only
    whitespace or part of a byte-order mark so far)."""
    body = head.lstrip(_WHITESPACE)
    if len(body) < len(_BOM) and _BOM.startswith(body):
        return None  # empty, or perhaps the start of a byte-order mark
    body = body.removeprefix(_BOM).lstrip(_WHITESPACE)
    if not body:
        return None
    return "whole" if body[:1] in (b"{", b"<") else "stream"


class WholeBody:
    """A `StreamDecoder` for a body that is not a stream: keeps it, reads it at the end."""

    def __init__(self, codec: Codec, translation: Translation) -> None:
        self._codec = codec
        self._translation = translation
        self._buf = bytearray()
        self._size = 0

    def feed(self, data: bytes) -> list[ev.Event]:
        self._size += len(data)
        if len(self._buf) < MAX_BYTES:
            self._buf += data[: MAX_BYTES - len(self._buf)]
        return []

    def close(self) -> list[ev.Event]:
        where = f"the {self._translation.target} upstream answered the stream request with"
        body = bytes(self._buf).removeprefix(_BOM).strip()
        self._buf = bytearray()
        if self._size > MAX_BYTES:
            return [ev.Failed("upstream_protocol_error",
                              f"{where} a whole body of {self._size} bytes instead of a stream: "
                              f"{_quote(body)}")]
        if body[:1] == b"<":
            return [ev.Failed("upstream_protocol_error",
                              f"{where} an HTML (or XML) page instead of a stream: {_quote(body)}")]
        try:
            parsed: Any = wirejson.loads(body)
        except (ValueError, RecursionError):
            return [ev.Failed("upstream_protocol_error",
                              f"{where} a body that is neither a stream nor JSON: {_quote(body)}")]
        if _is_error(parsed):
            info = self._codec.error_info(200, parsed)
            return [ev.Failed(info.code, clip(f"{where} an error: {info.message}"))]
        try:
            return self._codec.response_events(parsed, self._translation)
        except TranslatorError as exc:
            return [ev.Failed(exc.code, clip(f"{where} a whole answer that cannot be read: {exc.message}"))]
        except (ValueError, TypeError, KeyError, AttributeError, RecursionError) as exc:
            return [ev.Failed("upstream_protocol_error", f"{where} a JSON body that is no answer: {exc}; "
                                                         f"{_quote(body)}")]


def _is_error(body: Any) -> bool:
    """Every dialect's error shape: `{"error": ...}` (Chat, Gemini, OpenAI), `{"type": "error"}`
    (Anthropic), `{"message": ...}` (Bedrock, vLLM's flat form)."""
    if not isinstance(body, dict):
        return False
    return ("error" in body or body.get("type") == "error" or body.get("object") == "error"
            or (("message" in body or "Message" in body) and "output" not in body))


def _quote(body: bytes) -> str:
    return clip(text_of(body), _QUOTE)
