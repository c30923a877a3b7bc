"""One Chat Completions choice, delta by delta -> IR events (docs/chat.md "Streaming", "DeepSeek", "DSML
markup").

Shared by the stream decoder (many deltas) and whole answers (the `message` read as one delta).
Reasoning (`reasoning_content` from DeepSeek and vLLM, `reasoning` from Ollama and OpenRouter)
is one item closed by the first text or call; text goes through the DSML scanner; tool calls are
keyed by `index`, started once a name is known, and closed when the choice finishes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from translators.chat import dsml
from translators.features import freeform
from translators.ir import events as ev
from translators.ir.request import VendorState
from translators.wire import wirejson

FINISH_REASONS = {
    "stop": "stop",
    "length": "max_output_tokens",
    "tool_calls": "tool_calls",
    "function_call": "tool_calls",
    "content_filter": "content_filter",
}
# DeepSeek: "the request is interrupted due to insufficient resource of the inference system".
FAILED_FINISH = {"insufficient_system_resource": "server_is_overloaded"}
# Delta keys read below; `reasoning_details` repeats `reasoning` in OpenRouter's structured form.
_DELTA_KEYS = {"role", "content", "reasoning_content", "reasoning", "reasoning_details", "tool_calls",
               "refusal", "function_call"}
LEGACY_CALL = -1
"""The `_calls` index of a legacy `function_call` (one per answer, no index of its own)."""
LEGACY_NOTE = ("the upstream answered with a legacy function_call (no tool_calls); read as a tool call "
               '(docs/chat.md "Streaming")')
RECOVERED_NOTE = ('tool calls the model wrote as DSML markup in its text were turned into real calls '
                  '(docs/chat.md "DSML markup")')
# A native custom call's raw text is streamed as the JSON of `{"input": ...}`, the shape of an
# emulated freeform call, so the encoder's one unwrapping path serves both.
_CUSTOM_OPEN, _CUSTOM_CLOSE = '{"' + freeform.ARGUMENT + '":"', '"}'


@dataclass(slots=True)
class _Call:
    key: tuple[str, int]
    call_id: str = ""
    name: str = ""
    custom: bool = False
    started: bool = False
    pending: list[str] = field(default_factory=list)


class Choice:
    def __init__(self) -> None:
        self._reasoning: list[str] | None = None
        self._reasoning_n = 0
        self._text_open = False
        self._text_n = 0
        self._scanner = dsml.Scanner()
        self._calls: dict[int, _Call] = {}
        self._by_id: dict[str, int] = {}
        self._recovered = 0
        self._refused = False
        self.finish_reason: str | None = None
        self.stop_sequence: str | None = None
        """The stop string that ended the answer, where the server names it (`stop_string`)."""
        self._closed = False

    # -- input ------------------------------------------------------------------------------
    def delta(self, delta: dict[str, Any], out: list[ev.Event], path: str = "choices[0].delta") -> None:
        if self._closed:
            if any(value not in (None, "", [], {}) for key, value in delta.items() if key != "role"):
                out.append(ev.Unknown(f"{path} after finish_reason"))
            return
        reasoning = delta.get("reasoning_content")
        if not isinstance(reasoning, str):
            reasoning = delta.get("reasoning")
        if isinstance(reasoning, str) and reasoning:
            self._reasoning_delta(reasoning, out)
        content = delta.get("content")
        if isinstance(content, str) and content:
            for segment in self._scanner.feed(content):
                self._segment(segment, out)
        elif content not in (None, ""):
            out.append(ev.Unknown(f"{path}.content"))
        refusal = delta.get("refusal")
        if isinstance(refusal, str) and refusal:
            if not self._refused:
                self._refused = True
                out.append(ev.Note("the model refused; its refusal is passed on as text"))
            self._segment(refusal, out)
        calls = delta.get("tool_calls")
        if isinstance(calls, list):
            for position, fragment in enumerate(calls):
                if isinstance(fragment, dict):
                    self._call_fragment(position, fragment, out)
        legacy = delta.get("function_call")
        if isinstance(legacy, dict):
            self._legacy_call(legacy, calls, out)
        elif legacy is not None:
            out.append(ev.Unknown(f"{path}.function_call"))
        for key, value in delta.items():
            if key not in _DELTA_KEYS and value not in (None, "", [], {}):
                out.append(ev.Unknown(f"{path}.{key}"))

    def finish(self, reason: str | None, out: list[ev.Event]) -> None:
        """`finish_reason` arrived: nothing more comes for this choice; close every open item."""
        if self._closed:
            return
        self._closed = True
        self.finish_reason = reason
        for segment in self._scanner.close():
            self._segment(segment, out)
        self._close_reasoning(out)
        self._close_text(out)
        for call in self._calls.values():
            self._close_call(call, out)

    def finished(self, out: list[ev.Event]) -> None:
        """The answer is over: the final Finished (or Failed) event."""
        self.finish(self.finish_reason, out)
        reason = self.finish_reason
        if reason in FAILED_FINISH:
            out.append(ev.Failed(FAILED_FINISH[reason], f"upstream stopped: {reason}"))
            return
        mapped = FINISH_REASONS.get(reason or "")
        if mapped is None:
            out.append(ev.Note(f"finish_reason {reason!r} read as stop"))
            mapped = "stop"
        if self._recovered and mapped == "stop":
            mapped = "tool_calls"
        if mapped == "stop" and self.stop_sequence is not None:
            out.append(ev.Finished("stop_sequence", self.stop_sequence))
            return
        out.append(ev.Finished(mapped))

    def read_stop(self, choice: dict[str, Any]) -> None:
        """vLLM's `stop_reason` beside `finish_reason: "stop"`: the stop string that matched (a
        token id, or null for the end of the turn, says nothing of one). OpenAI's `stop` finish
        tells a stop sequence from the end of the turn by nothing (docs/chat.md "Stop sequences")."""
        matched = choice.get("stop_reason")
        if isinstance(matched, str) and matched:
            self.stop_sequence = matched

    # -- reasoning and text -----------------------------------------------------------------
    def _reasoning_delta(self, text: str, out: list[ev.Event]) -> None:
        if self._reasoning is None:
            self._reasoning = []
        self._reasoning.append(text)
        out.append(ev.ReasoningDelta(("reasoning", self._reasoning_n), text))

    def _close_reasoning(self, out: list[ev.Event]) -> None:
        if self._reasoning is None:
            return
        text = "".join(self._reasoning)
        # DeepSeek wants this text back on the next request (docs/chat.md "DeepSeek"): it rides in the
        # client's
        # reasoning item as VendorState
        out.append(ev.ReasoningDone(("reasoning", self._reasoning_n), VendorState(dialect="chat", text=text)))
        self._reasoning = None
        self._reasoning_n += 1

    def _segment(self, segment: dsml.Segment, out: list[ev.Event]) -> None:
        if not segment:
            return
        self._close_reasoning(out)
        if isinstance(segment, str):
            self._text_open = True
            out.append(ev.TextDelta(("text", self._text_n), segment))
            return
        self._close_text(out)
        if not self._recovered:
            out.append(ev.Note(RECOVERED_NOTE))
        for call in segment:
            key = ("dsml", self._recovered)
            self._recovered += 1
            out += [ev.ToolCallStarted(key, "", call.name), ev.ToolCallDelta(key, call.arguments),
                    ev.ToolCallDone(key)]

    def _close_text(self, out: list[ev.Event]) -> None:
        if self._text_open:
            out.append(ev.TextDone(("text", self._text_n)))
            self._text_open = False
            self._text_n += 1

    # -- tool calls -------------------------------------------------------------------------
    def _call_fragment(self, position: int, fragment: dict[str, Any], out: list[ev.Event]) -> None:
        call = self._call_for(position, fragment)
        if isinstance(fragment.get("id"), str) and fragment["id"] and not call.call_id:
            call.call_id = fragment["id"]
            self._by_id[call.call_id] = call.key[1]
        custom = fragment.get("custom")
        function = fragment.get("function")
        if fragment.get("type") == "custom" or isinstance(custom, dict):
            # OpenAI's native custom call: raw text in `custom.input` (shape inferred from
            # ChatCompletionMessageCustomToolCall; docs/chat.md "Streaming" says streaming it is untyped)
            call.custom = True
            body = custom if isinstance(custom, dict) else {}
            piece = body.get("input")
        else:
            body = function if isinstance(function, dict) else {}
            piece = body.get("arguments")
        if isinstance(body.get("name"), str) and body["name"] and not call.name:
            call.name = body["name"]
        if isinstance(piece, dict):
            piece = wirejson.text(piece)  # some servers send an object
        if isinstance(piece, str) and piece:
            call.pending.append(wirejson.text(piece)[1:-1] if call.custom else piece)
        if not call.started and call.name:
            call.started = True
            self._close_reasoning(out)
            out.append(ev.ToolCallStarted(call.key, call.call_id, call.name))
            if call.custom:
                out.append(ev.ToolCallDelta(call.key, _CUSTOM_OPEN))
        if call.started:
            for piece in call.pending:
                out.append(ev.ToolCallDelta(call.key, piece))
            call.pending.clear()

    def _legacy_call(self, legacy: dict[str, Any], calls: Any, out: list[ev.Event]) -> None:
        """`function_call` beside `tool_calls` (in this delta, or once the answer has any) is
        the same call repeated in the deprecated form (llama-cpp-python sends both): nothing to
        read. Alone it is a real legacy call, `{name, arguments}` streamed like a tool call's
        `function` without an index or id: read as one more tool call, whose id the encoder makes
        up (docs/chat.md "Streaming")."""
        if calls or any(index != LEGACY_CALL for index in self._calls):
            return
        if LEGACY_CALL not in self._calls:
            out.append(ev.Note(LEGACY_NOTE))
        self._call_fragment(0, {"index": LEGACY_CALL, "function": legacy}, out)

    def _call_for(self, position: int, fragment: dict[str, Any]) -> _Call:
        index = fragment.get("index")
        if not isinstance(index, int):
            # servers that omit `index` (Gemini's compatibility layer) send whole calls: tell
            # them apart by id, else by their place in the list
            call_id = fragment.get("id")
            index = self._by_id.get(call_id) if isinstance(call_id, str) else None
            if index is None:
                index = len(self._calls) if isinstance(call_id, str) and call_id else position
        if index not in self._calls:
            self._calls[index] = _Call(key=("call", index))
        return self._calls[index]

    def _close_call(self, call: _Call, out: list[ev.Event]) -> None:
        if not call.started:
            out.append(ev.Unknown(f"choices[0].delta.tool_calls[{call.key[1]}] (no function name)"))
            return
        if call.custom:
            out.append(ev.ToolCallDelta(call.key, _CUSTOM_CLOSE))
        out.append(ev.ToolCallDone(call.key))
