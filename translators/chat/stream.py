"""Chat Completions SSE -> IR events (docs/chat.md "Streaming", "DeepSeek").

`data: {chunk}` lines without event names, ended by `data: [DONE]`. Usage may ride on any chunk:
OpenAI sends it in an extra `choices: []` chunk after the finish chunk, DeepSeek on the finish
chunk itself, so the turn is declared finished only at `[DONE]` (or at the end of the bytes once
a finish_reason was seen). A `{"error": {...}}` chunk ends the stream as a failure.
"""

from __future__ import annotations

from typing import Any

from translators.chat import errors
from translators.chat.choice import Choice
from translators.core.errors import UpstreamProtocolError
from translators.core.translation import Translation
from translators.ir import events as ev
from translators.wire import decoding, wirejson

NO_USAGE = ("the upstream sent no usage (it ignores stream_options.include_usage, as llama-cpp-python "
            "does): the response's usage is left out")


def usage_event(usage: dict[str, Any]) -> ev.Usage:
    """`prompt_tokens` already includes cached ones and `completion_tokens` reasoning ones, as in
    Responses; DeepSeek also names the cached part `prompt_cache_hit_tokens` (docs/chat.md "DeepSeek")."""
    prompt_details = usage.get("prompt_tokens_details")
    completion_details = usage.get("completion_tokens_details")
    cached = prompt_details.get("cached_tokens") if isinstance(prompt_details, dict) else None
    if cached is None:
        cached = usage.get("prompt_cache_hit_tokens")
    reasoning = completion_details.get("reasoning_tokens") if isinstance(completion_details, dict) else None
    return ev.Usage(input_tokens=_int(usage.get("prompt_tokens")),
                    output_tokens=_int(usage.get("completion_tokens")),
                    cached_tokens=_int(cached), reasoning_tokens=_int(reasoning))


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def error_event(error: Any) -> ev.Failed:
    """`{"error": {"message", "type", "code"}}` (OpenAI, DeepSeek) or vLLM's flat
    `{"object": "error", "message", "type", "code": 400}`."""
    failure = errors.event_failure(error)
    return ev.Failed(failure.code, failure.message)


class ChatDecoder(decoding.DataEvents):
    def __init__(self, translation: Translation | None = None) -> None:
        super().__init__()
        self._choice = Choice()
        self._started = False
        self._usage = False

    def close(self) -> list[ev.Event]:
        if self._done:
            return []
        out = decoding.each(lambda: [sse.data for sse in self._sse.close()], self._data)
        self._done, over = True, self._done or decoding.ended(out)
        if over:
            return out
        if self._choice.finish_reason is not None:
            # the answer itself was complete; only `[DONE]` (and OpenAI's usage chunk) is missing
            out.append(ev.Note("the Chat stream ended without data: [DONE]"))
            self._finished(out)
        else:
            out.append(ev.Failed("server_error", "the Chat stream ended before a finish_reason"))
        return out

    def _data(self, data: str, out: list[ev.Event]) -> None:
        if self._done:
            return
        if data.strip() == "[DONE]":
            self._done = True
            self._finished(out)
            return
        try:
            chunk = wirejson.loads(data)
        except ValueError:
            raise UpstreamProtocolError(f"the Chat upstream sent a non-JSON chunk: {data[:120]!r}") from None
        if not isinstance(chunk, dict):
            raise UpstreamProtocolError("the Chat upstream sent a chunk that is not a JSON object")
        if "error" in chunk or chunk.get("object") == "error":
            self._done = True
            out.append(error_event(chunk.get("error", chunk)))
            return
        if not self._started:
            self._started = True
            out.append(ev.Started())
        choices = chunk.get("choices")
        if isinstance(choices, list):
            for choice in choices:
                self._choice_chunk(choice, out)
        if isinstance(chunk.get("usage"), dict):
            self._usage = True
            out.append(usage_event(chunk["usage"]))

    def _finished(self, out: list[ev.Event]) -> None:
        if self._started and not self._usage:
            out.append(ev.Note(NO_USAGE))  # Responses `usage` stays null, never made-up zeros
        self._choice.finished(out)

    def _choice_chunk(self, choice: Any, out: list[ev.Event]) -> None:
        if not isinstance(choice, dict):
            raise UpstreamProtocolError("the Chat upstream sent a choice that is not a JSON object")
        index = choice.get("index", 0)
        if index != 0:
            out.append(ev.Unknown(f"choices[{index}]"))  # n > 1: the client asked for one answer
            return
        if isinstance(choice.get("delta"), dict):
            self._choice.delta(choice["delta"], out)
        if choice.get("finish_reason") is not None:
            self._choice.read_stop(choice)
            self._choice.finish(str(choice["finish_reason"]), out)
