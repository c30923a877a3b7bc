"""A scripted, recording HTTP/1.1 server on 127.0.0.1 for end-to-end tests.

``FakeUpstream(script)`` listens on an ephemeral loopback port, records every request and answers it by
calling ``script(request_json, request_headers, path)``. The script returns ``(status, headers, body)``:
``body`` is either ``bytes`` (sent with ``Content-Length``) or an iterable of byte chunks, which is sent with
``Transfer-Encoding: chunked`` and one flush per chunk so that a streaming client (or mitmproxy's stream
callable) really sees the chunks one by one.

The server is dialect-neutral. The answer builders below it are not:

- Anthropic Messages SSE (``anthropic_text``, ``anthropic_tool_use``), shaped like the real recordings in
  ``tests/data/anthropic/*.sse`` (padding and ``ping`` events included);
- OpenAI Responses SSE (``responses_text``, ``responses_custom_tool_call``), the shape Codex parses
  (``tests/data/codex/answer_*.sse``), used to exercise Codex without the gateway;
- one text answer and one tool call in each other dialect's stream, shaped like the recordings in
  ``tests/data``: Chat Completions SSE (``chat_text``, ``chat_tool_call``), Gemini ``alt=sse``
  (``gemini_text``, ``gemini_function_call``), Bedrock ConverseStream's binary event stream
  (``bedrock_text``, ``bedrock_tool_use``). Each takes the input tokens its usage reports (Codex decides
  when to compact from them).

Other dialects can add their own builders and reuse the server unchanged.
"""

from __future__ import annotations

import itertools
import json
import traceback
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tests.support.loopback_http import Loopback, Received, RecordingHandler
from tests.translators.bedrock.frames import event as bedrock_event

Body = bytes | Iterable[bytes]
Reply = tuple[int, Mapping[str, str], Body]
Script = Callable[[Any, Mapping[str, str], str], Reply]

SSE_HEADERS: Mapping[str, str] = {"content-type": "text/event-stream", "cache-control": "no-cache"}


class FakeUpstream(Loopback):
    """``with FakeUpstream(script) as up:`` -> ``up.url`` (``http://127.0.0.1:PORT``), ``up.requests``."""

    thread_name = "fake-upstream"

    def __init__(self, script: Script) -> None:
        self.script = script
        self._errors: list[str] = []
        super().__init__()

    @property
    def requests(self) -> list[Received]:
        """A snapshot of every request received so far, in arrival order."""
        return self.received

    @property
    def errors(self) -> list[str]:
        """Tracebacks of script exceptions (each one was answered with a 500)."""
        with self.lock:
            return list(self._errors)

    def answer(self, handler: RecordingHandler, received: Received) -> None:
        try:
            status, headers, body = self.script(received.json, received.headers, received.path)
        except Exception:  # a broken script must show up in the test, not as a hung client
            with self.lock:
                self._errors.append(traceback.format_exc())
            status, headers, body = 500, {"content-type": "text/plain"}, b"fake upstream script error"
        if isinstance(body, bytes | bytearray):
            handler.send_whole(status, dict(headers), bytes(body))
            return
        handler.start_chunked(status, dict(headers))
        for chunk in body:
            handler.send_chunk(chunk)
        handler.end_chunked()


# --------------------------------------------------------------------------------------------------------
# Generic replies and scripts
# --------------------------------------------------------------------------------------------------------


def json_reply(status: int, payload: Any) -> Reply:
    return status, {"content-type": "application/json"}, json.dumps(payload).encode()


def empty_reply(status: int) -> Reply:
    return status, {}, b""


def sse_reply(chunks: Iterable[bytes]) -> Reply:
    return 200, SSE_HEADERS, chunks


def refuse_everything(_body: Any, _headers: Mapping[str, str], _path: str) -> Reply:
    """Script for a loopback "black hole" proxy: every request (CONNECT included) gets 403.

    Codex makes start-up calls (chatgpt.com, github.com) that must never leave the machine; pointing
    HTTPS_PROXY at a FakeUpstream with this script catches and records them.
    """
    return empty_reply(403)


def is_websocket_upgrade(headers: Mapping[str, str]) -> bool:
    return headers.get("upgrade", "").lower() == "websocket"


# --------------------------------------------------------------------------------------------------------
# OpenAI Responses SSE (what Codex parses)
# --------------------------------------------------------------------------------------------------------

_ids = itertools.count(1)


def _sse_event(event: str, payload: Mapping[str, Any], padding: str = "") -> bytes:
    return f"event: {event}\ndata: {json.dumps(payload, separators=(',', ':'))}{padding}\n\n".encode()


def _responses_usage() -> dict[str, Any]:
    # Codex requires integer input/output/total tokens when usage is present.
    return {
        "input_tokens": 10,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 5,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 15,
    }


def _responses_stream(item: dict[str, Any], delta_event: str, delta: str) -> list[bytes]:
    response_id = f"resp_{next(_ids)}"
    is_message = item["type"] == "message"
    # The "added" item starts empty; Codex only displays it, history comes from output_item.done.
    added = {**item, "status": "in_progress", **({"content": []} if is_message else {"input": ""})}
    delta_payload: dict[str, Any] = {"type": delta_event, "item_id": item["id"], "output_index": 0}
    if is_message:
        delta_payload["content_index"] = 0
    delta_payload["delta"] = delta
    return [
        _sse_event("response.created", {"type": "response.created", "response": {"id": response_id}}),
        _sse_event(
            "response.output_item.added",
            {"type": "response.output_item.added", "output_index": 0, "item": added},
        ),
        _sse_event(delta_event, delta_payload),
        # output_item.done is the only thing Codex records; it must carry the complete item.
        _sse_event(
            "response.output_item.done",
            {"type": "response.output_item.done", "output_index": 0, "item": {**item, "status": "completed"}},
        ),
        _sse_event(
            "response.completed",
            {
                "type": "response.completed",
                "response": {"id": response_id, "status": "completed", "usage": _responses_usage()},
            },
        ),
    ]


def responses_text(text: str) -> Reply:
    """A Responses SSE stream with one assistant message."""
    n = next(_ids)
    item = {
        "type": "message",
        "id": f"msg_{n}",
        "role": "assistant",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }
    return sse_reply(_responses_stream(item, "response.output_text.delta", text))


def responses_custom_tool_call(name: str, tool_input: str, call_id: str) -> Reply:
    """A Responses SSE stream with one freeform (``custom``) tool call, e.g. ``apply_patch`` or ``exec``."""
    item = {
        "type": "custom_tool_call",
        "id": f"ctc_{next(_ids)}",
        "call_id": call_id,
        "name": name,
        "input": tool_input,
    }
    return sse_reply(_responses_stream(item, "response.custom_tool_call_input.delta", tool_input))


def responses_tool_outputs(body: Any) -> list[dict[str, Any]]:
    """Every ``function_call_output`` / ``custom_tool_call_output`` input item of a Responses request."""
    if not isinstance(body, dict):
        return []
    kinds = {"function_call_output", "custom_tool_call_output"}
    return [i for i in body.get("input") or [] if isinstance(i, dict) and i.get("type") in kinds]


# --------------------------------------------------------------------------------------------------------
# Anthropic Messages SSE
# --------------------------------------------------------------------------------------------------------

# Real Anthropic payloads carry runs of spaces after the JSON (see the fixtures); a translator has to use a
# JSON parser, so the fake does the same.
_PAD = "    "


def _anthropic_usage(output_tokens: int, input_tokens: int = 42) -> dict[str, Any]:
    return {
        "input_tokens": input_tokens,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
        "output_tokens": output_tokens,
    }


def _anthropic_message_start(model: str, input_tokens: int = 42) -> bytes:
    message = {
        "model": model,
        "id": f"msg_fake{next(_ids):04d}",
        "type": "message",
        "role": "assistant",
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": _anthropic_usage(1, input_tokens),
    }
    return _sse_event("message_start", {"type": "message_start", "message": message}, _PAD)


def _anthropic_text_block(index: int, text: str) -> list[bytes]:
    half = len(text) // 2
    return [
        _sse_event(
            "content_block_start",
            {"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}},
        ),
        _sse_event("ping", {"type": "ping"}),
        *(
            _sse_event(
                "content_block_delta",
                {
                    "type": "content_block_delta",
                    "index": index,
                    "delta": {"type": "text_delta", "text": part},
                },
                _PAD,
            )
            for part in (text[:half], text[half:])
            if part
        ),
        _sse_event("content_block_stop", {"type": "content_block_stop", "index": index}),
    ]


def _json_fragments(value: Mapping[str, Any], size: int = 16) -> Iterator[str]:
    # Like the real API: an empty first fragment, then the JSON text cut at arbitrary points.
    text = json.dumps(value)
    yield ""
    for start in range(0, len(text), size):
        yield text[start : start + size]


def _anthropic_tool_use_block(
    index: int, tool_id: str, name: str, tool_input: Mapping[str, Any]
) -> list[bytes]:
    start_block = {"type": "tool_use", "id": tool_id, "name": name, "input": {}}
    return [
        _sse_event(
            "content_block_start",
            {"type": "content_block_start", "index": index, "content_block": start_block},
            _PAD,
        ),
        *(
            _sse_event(
                "content_block_delta",
                {
                    "type": "content_block_delta",
                    "index": index,
                    "delta": {"type": "input_json_delta", "partial_json": fragment},
                },
            )
            for fragment in _json_fragments(tool_input)
        ),
        _sse_event("content_block_stop", {"type": "content_block_stop", "index": index}),
    ]


def _anthropic_finish(stop_reason: str, output_tokens: int, input_tokens: int = 42) -> list[bytes]:
    delta = {
        "type": "message_delta",
        "delta": {"stop_reason": stop_reason, "stop_sequence": None},
        "usage": _anthropic_usage(output_tokens, input_tokens),
    }
    return [_sse_event("message_delta", delta, _PAD), _sse_event("message_stop", {"type": "message_stop"})]


def anthropic_text(text: str, model: str = "claude-sonnet-4-6", input_tokens: int = 42) -> Reply:
    """An Anthropic Messages stream answering with one text block (``stop_reason: end_turn``);
    ``input_tokens`` is the usage it reports (Codex decides when to compact from it)."""
    chunks = [
        _anthropic_message_start(model, input_tokens),
        *_anthropic_text_block(0, text),
        *_anthropic_finish("end_turn", 7, input_tokens),
    ]
    return sse_reply(chunks)


def anthropic_tool_use(
    name: str,
    tool_input: Mapping[str, Any],
    tool_id: str = "toolu_fake01",
    text_before: str | None = None,
    model: str = "claude-sonnet-4-6",
    input_tokens: int = 42,
) -> Reply:
    """An Anthropic Messages stream with an optional text block, then one ``tool_use`` block."""
    chunks = [_anthropic_message_start(model, input_tokens)]
    index = 0
    if text_before:
        chunks += _anthropic_text_block(index, text_before)
        index += 1
    chunks += _anthropic_tool_use_block(index, tool_id, name, tool_input)
    chunks += _anthropic_finish("tool_use", 20, input_tokens)
    return sse_reply(chunks)


@dataclass(frozen=True)
class WebResult:
    url: str
    title: str
    encrypted_content: str
    page_age: str | None = None


@dataclass(frozen=True)
class Cited:
    """A stretch of the answer; cited by `sources` (indexes into the results) when given."""

    text: str
    sources: tuple[int, ...] = ()


def anthropic_web_search_events(query: str, results: Sequence[WebResult], answer: Sequence[Cited],
                                preface: str = "I'll search for that.",
                                tool_id: str = "srvtoolu_01WebSearchFake") -> list[dict[str, Any]]:
    """The events of a Claude answer that searches once: a preface text block, `server_tool_use`
    (name `web_search`, its input streamed as JSON fragments), `web_search_tool_result`, then one
    text block per stretch of the answer, a cited one opening with its `citations_delta` events,
    and `usage.server_tool_use.web_search_requests: 1` (shapes of the anthropic SDK's
    `RawMessageStreamEvent`)."""
    def block(index: int, content: dict[str, Any]) -> list[dict[str, Any]]:
        return [{"type": "content_block_start", "index": index, "content_block": content}]

    def delta(index: int, value: dict[str, Any]) -> dict[str, Any]:
        return {"type": "content_block_delta", "index": index, "delta": value}

    def stop(index: int) -> dict[str, Any]:
        return {"type": "content_block_stop", "index": index}

    events: list[dict[str, Any]] = [{"type": "message_start", "message": {
        "model": "claude-sonnet-4-6", "id": f"msg_fake{next(_ids):04d}", "type": "message",
        "role": "assistant", "content": [], "stop_reason": None, "stop_sequence": None,
        "usage": _anthropic_usage(1)}}]
    events += [*block(0, {"type": "text", "text": ""}), delta(0, {"type": "text_delta", "text": preface}),
               stop(0)]
    events += block(1, {"type": "server_tool_use", "id": tool_id, "name": "web_search", "input": {}})
    events += [delta(1, {"type": "input_json_delta", "partial_json": part})
               for part in _json_fragments({"query": query}, size=9)]
    found = [{"type": "web_search_result", "url": r.url, "title": r.title,
              "encrypted_content": r.encrypted_content, "page_age": r.page_age} for r in results]
    result = {"type": "web_search_tool_result", "tool_use_id": tool_id, "content": found}
    events += [stop(1), *block(2, result), stop(2)]
    for index, stretch in enumerate(answer, start=3):
        content: dict[str, Any] = {"type": "text", "text": ""}
        if stretch.sources:
            content["citations"] = []
        events += block(index, content)
        for source in stretch.sources:
            result = results[source]
            events.append(delta(index, {"type": "citations_delta", "citation": {
                "type": "web_search_result_location", "cited_text": stretch.text[:40], "url": result.url,
                "title": result.title, "encrypted_index": f"EqIndex{source}=="}}))
        events += [delta(index, {"type": "text_delta", "text": part}) for part in _halves_of(stretch.text)]
        events.append(stop(index))
    usage = {**_anthropic_usage(57), "server_tool_use": {"web_search_requests": 1, "web_fetch_requests": 0}}
    events += [{"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                "usage": usage}, {"type": "message_stop"}]
    return events


def anthropic_web_search(query: str, results: Sequence[WebResult], answer: Sequence[Cited]) -> Reply:
    """`anthropic_web_search_events` as the SSE stream Anthropic writes."""
    events = anthropic_web_search_events(query, results, answer)
    return sse_reply([_sse_event(e["type"], e, _PAD) for e in events])


def anthropic_message(text: str, model: str = "claude-sonnet-4-6") -> Reply:
    """A whole (non-streamed) Messages answer with one text block."""
    return json_reply(200, {"id": f"msg_fake{next(_ids):04d}", "type": "message", "role": "assistant",
                            "model": model, "content": [{"type": "text", "text": text}],
                            "stop_reason": "end_turn", "stop_sequence": None, "usage": _anthropic_usage(9)})


def anthropic_tool_results(body: Any) -> list[dict[str, Any]]:
    """Every ``tool_result`` block in an Anthropic Messages request body."""
    results: list[dict[str, Any]] = []
    if not isinstance(body, dict):
        return results
    for message in body.get("messages") or []:
        content = message.get("content")
        if isinstance(content, list):
            results += [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]
    return results


# --------------------------------------------------------------------------------------------------------
# One text answer in the other dialects (Chat Completions, Gemini, Bedrock Converse)
# --------------------------------------------------------------------------------------------------------


def _halves_of(text: str) -> list[str]:
    half = len(text) // 2
    return [part for part in (text[:half], text[half:]) if part]


def _chat_chunk(model: str, choices: list[dict[str, Any]], **extra: Any) -> bytes:
    payload = {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 1, "model": model,
               "choices": choices, **extra}
    return f"data: {json.dumps(payload, separators=(',', ':'))}\n\n".encode()


def _chat_end(model: str, finish: str, prompt_tokens: int) -> list[bytes]:
    usage = {"prompt_tokens": prompt_tokens, "completion_tokens": 9, "total_tokens": prompt_tokens + 9}
    return [
        _chat_chunk(model, [{"index": 0, "delta": {}, "finish_reason": finish}]),
        _chat_chunk(model, [], usage=usage),
        b"data: [DONE]\n\n",
    ]


def chat_text(text: str, model: str = "deepseek-chat", prompt_tokens: int = 42) -> Reply:
    """A Chat Completions stream answering ``text`` in two deltas, then usage and ``[DONE]``."""
    chunks = [_chat_chunk(model, [{"index": 0, "delta": {"role": "assistant", "content": part},
                                   "finish_reason": None}]) for part in _halves_of(text)]
    return sse_reply([*chunks, *_chat_end(model, "stop", prompt_tokens)])


def chat_tool_call(name: str, arguments: Mapping[str, Any], call_id: str = "call_fake01",
                   model: str = "deepseek-chat", prompt_tokens: int = 42) -> Reply:
    """A Chat Completions stream with one function call, its arguments in two fragments."""
    text = json.dumps(arguments)
    half = len(text) // 2
    head = {"index": 0, "id": call_id, "type": "function",
            "function": {"name": name, "arguments": text[:half]}}
    tail = {"index": 0, "function": {"arguments": text[half:]}}
    chunks = [_chat_chunk(model, [{"index": 0, "delta": {"role": "assistant", "tool_calls": [head]},
                                   "finish_reason": None}]),
              _chat_chunk(model, [{"index": 0, "delta": {"tool_calls": [tail]}, "finish_reason": None}])]
    return sse_reply([*chunks, *_chat_end(model, "tool_calls", prompt_tokens)])


def _gemini_chunk(parts: list[dict[str, Any]], model: str, response_id: str, input_tokens: int,
                  output_tokens: int, finish: str | None = None) -> bytes:
    candidate: dict[str, Any] = {"content": {"parts": parts, "role": "model"}, "index": 0}
    if finish:
        candidate["finishReason"] = finish
    usage = {"promptTokenCount": input_tokens, "candidatesTokenCount": output_tokens,
             "totalTokenCount": input_tokens + output_tokens}
    payload = {"candidates": [candidate], "usageMetadata": usage, "modelVersion": model,
               "responseId": response_id}
    return f"data: {json.dumps(payload)}\r\n\r\n".encode()


def gemini_text(text: str, model: str = "gemini-3-flash-preview", input_tokens: int = 30) -> Reply:
    """A Gemini ``streamGenerateContent?alt=sse`` stream (``\\r\\n\\r\\n`` between events): the text in two
    chunks, then an empty part with ``finishReason: STOP``; every chunk carries usage so far, with
    ``input_tokens`` as its ``promptTokenCount``."""
    response_id = f"fakeGemini{next(_ids)}"
    parts = _halves_of(text)
    chunks = [_gemini_chunk([{"text": part}], model, response_id, input_tokens, 4 * (i + 1))
              for i, part in enumerate(parts)]
    chunks.append(_gemini_chunk([{"text": ""}], model, response_id, input_tokens, 4 * len(parts), "STOP"))
    return sse_reply(chunks)


GEMINI_SIGNATURE = "ZmFrZS10aG91Z2h0LXNpZ25hdHVyZQ=="
"""The ``thoughtSignature`` a fake Gemini 3 function call carries (base64, as Gemini writes it)."""


def gemini_function_call(name: str, args: Mapping[str, Any], model: str = "gemini-3-flash-preview",
                         thought_signature: str | None = GEMINI_SIGNATURE, input_tokens: int = 30) -> Reply:
    """A Gemini stream with one whole ``functionCall`` part (Gemini sends a call's arguments in one
    piece, Gemini 3 with a ``thoughtSignature``, and no call id), then the empty ``STOP`` chunk, as
    in ``tests/data/gemini/sse_function_call_thought_signature.sse``."""
    response_id = f"fakeGemini{next(_ids)}"
    part: dict[str, Any] = {"functionCall": {"name": name, "args": dict(args)}}
    if thought_signature is not None:
        part["thoughtSignature"] = thought_signature
    return sse_reply([_gemini_chunk([part], model, response_id, input_tokens, 10),
                      _gemini_chunk([{"text": ""}], model, response_id, input_tokens, 10, "STOP")])


def gemini_message(text: str, model: str = "gemini-3-flash-preview") -> Reply:
    """A whole ``generateContent`` answer with one text part."""
    candidate = {"content": {"parts": [{"text": text}], "role": "model"}, "finishReason": "STOP", "index": 0}
    return json_reply(200, {"candidates": [candidate], "modelVersion": model,
                            "responseId": f"fakeGemini{next(_ids)}",
                            "usageMetadata": {"promptTokenCount": 30, "candidatesTokenCount": 9,
                                              "totalTokenCount": 39}})


def chat_message(text: str, model: str = "deepseek-chat") -> Reply:
    """A whole Chat Completions answer with one assistant message."""
    return json_reply(200, {"id": "chatcmpl-fake", "object": "chat.completion", "created": 1, "model": model,
                            "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                                         "finish_reason": "stop"}],
                            "usage": {"prompt_tokens": 42, "completion_tokens": 9, "total_tokens": 51}})


BEDROCK_EVENTSTREAM = "application/vnd.amazon.eventstream"


def _bedrock_end(stop_reason: str, input_tokens: int) -> list[bytes]:
    usage = {"inputTokens": input_tokens, "outputTokens": 9, "totalTokens": input_tokens + 9}
    return [bedrock_event("messageStop", {"stopReason": stop_reason}),
            bedrock_event("metadata", {"usage": usage, "metrics": {"latencyMs": 100}})]


def bedrock_text(text: str, input_tokens: int = 30) -> Reply:
    """A Bedrock ConverseStream answer (binary ``application/vnd.amazon.eventstream`` frames):
    messageStart, the text in two contentBlockDeltas, contentBlockStop, messageStop, metadata
    (``input_tokens`` as its ``usage.inputTokens``)."""
    frames = [bedrock_event("messageStart", {"role": "assistant"})]
    frames += [bedrock_event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": part}})
               for part in _halves_of(text)]
    frames += [bedrock_event("contentBlockStop", {"contentBlockIndex": 0}),
               *_bedrock_end("end_turn", input_tokens)]
    return 200, {"content-type": BEDROCK_EVENTSTREAM}, frames


def bedrock_tool_use(name: str, tool_input: Mapping[str, Any], tool_id: str = "tooluse_fake01",
                     input_tokens: int = 30) -> Reply:
    """A ConverseStream answer with one ``toolUse`` block (its input JSON in two deltas, as in
    ``tests/data/bedrock/converse_stream_tool_use.eventstream``) and ``stopReason: tool_use``."""
    text = json.dumps(tool_input)
    half = len(text) // 2
    start = {"toolUse": {"toolUseId": tool_id, "name": name}}

    def delta(piece: str) -> dict[str, Any]:
        return {"contentBlockIndex": 0, "delta": {"toolUse": {"input": piece}}}

    frames = [bedrock_event("messageStart", {"role": "assistant"}),
              bedrock_event("contentBlockStart", {"contentBlockIndex": 0, "start": start})]
    frames += [bedrock_event("contentBlockDelta", delta(piece))
               for piece in (text[:half], text[half:])]
    frames += [bedrock_event("contentBlockStop", {"contentBlockIndex": 0}),
               *_bedrock_end("tool_use", input_tokens)]
    return 200, {"content-type": BEDROCK_EVENTSTREAM}, frames


def bedrock_message(text: str, input_tokens: int = 30) -> Reply:
    """A whole Converse answer with one text block."""
    usage = {"inputTokens": input_tokens, "outputTokens": 9, "totalTokens": input_tokens + 9}
    return json_reply(200, {"output": {"message": {"role": "assistant", "content": [{"text": text}]}},
                            "stopReason": "end_turn", "usage": usage, "metrics": {"latencyMs": 100}})


COUNT_PATHS: Mapping[str, str] = {"anthropic": "/v1/messages/count_tokens", "gemini": ":countTokens",
                                  "bedrock": "/count-tokens", "responses": "/responses/input_tokens"}
"""How each upstream's token-count path ends (docs/claude-code.md "Token counts")."""


def is_count(dialect: str, path: str) -> bool:
    ending = COUNT_PATHS.get(dialect)
    return ending is not None and path.split("?", 1)[0].endswith(ending)


def count_reply(dialect: str, tokens: int) -> Reply:
    """Each upstream's answer to a token count."""
    if dialect == "gemini":  # countTokens: CountTokensResponse
        return json_reply(200, {"totalTokens": tokens, "promptTokensDetails": [
            {"modality": "TEXT", "tokenCount": tokens}]})
    if dialect == "bedrock":  # CountTokens: CountTokensResponse
        return json_reply(200, {"inputTokens": tokens})
    if dialect == "responses":  # input_tokens: InputTokenCountResponse
        return json_reply(200, {"object": "response.input_tokens", "input_tokens": tokens})
    return json_reply(200, {"input_tokens": tokens})  # Anthropic: MessageTokensCount
