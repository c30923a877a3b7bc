"""`GenerateContentResponse` chunks -> IR events (docs/gemini.md "Streaming", "Thought signatures").

Used for streams (one chunk per SSE event or array element) and for whole answers (one chunk).
Rules:
- text parts stream as they arrive; `thought: true` parts are reasoning; an empty text part
  with nothing else is ignored (Gemini 3 ends with one);
- a `functionCall` arrives whole (args object) or, on Vertex, as a start part
  (`name`, `willContinue`), `partialArgs` parts and an empty closing part;
- a part of another kind closes the open text or reasoning item, so items complete in the order
  Gemini wrote them and the client replays them in that order;
- every `thoughtSignature` becomes a `ReasoningDone` whose `VendorState(dialect="gemini")`
  holds it, with `call_ids=[id]` when it sat on a functionCall: it closes the open reasoning item,
  or is a reasoning item of its own, placed right before the call / right after the text it
  signed (`contents.py` puts it back there). Only the first call of a parallel set has one;
- `finishReason` is `STOP` after calls too: calls seen means `tool_calls`;
- `usageMetadata` is repeated cumulatively: the last one counts.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from translators.core.errors import UpstreamProtocolError
from translators.gemini import calls, failures
from translators.gemini.partial_args import ArgsBuilder
from translators.ir import events as ev
from translators.ir.request import VendorState
from translators.wire import wirejson
from translators.wire.upstream_errors import Failure

FINISHED = {
    "STOP": "stop",
    "MAX_TOKENS": "max_output_tokens",
    "CONTINUATION": "max_output_tokens",
    "SAFETY": "content_filter",
    "RECITATION": "content_filter",
    "LANGUAGE": "content_filter",
    "BLOCKLIST": "content_filter",
    "PROHIBITED_CONTENT": "content_filter",
    "SPII": "content_filter",
    "IMAGE_SAFETY": "content_filter",
    "IMAGE_PROHIBITED_CONTENT": "content_filter",
    "IMAGE_RECITATION": "content_filter",
    "MODEL_ARMOR": "content_filter",
    "ESCALATION": "content_filter",
}
"""finishReason -> how the response ends (Finished.reason)."""

FAILED = {
    "MALFORMED_FUNCTION_CALL": ("server_error", "the model wrote a function call that could not be parsed"),
    "UNEXPECTED_TOOL_CALL": ("server_error", "the model called a function that was not declared or allowed"),
    "TOO_MANY_TOOL_CALLS": ("server_error", "the model made too many tool calls in one response"),
    "MALFORMED_RESPONSE": ("server_error", "the model's response was malformed"),
    "MISSING_THOUGHT_SIGNATURE": ("invalid_prompt", "the request lacks a thought signature Gemini requires"),
    "PUP_LIMITED_DISABLED": ("invalid_prompt", "generation is limited or disabled for this account"),
    "OTHER": ("server_error", "the model stopped for an unspecified reason"),
    "FINISH_REASON_UNSPECIFIED": ("server_error", "the model stopped for an unspecified reason"),
    "NO_IMAGE": ("server_error", "the model was expected to produce an image and did not"),
    "IMAGE_OTHER": ("server_error", "image generation stopped for an unspecified reason"),
}
"""finishReason -> (error code, explanation) for stops that leave no usable answer."""

_PART_BOOKKEEPING = {"thought", "thoughtSignature", "partMetadata"}
_CANDIDATE_EXTRAS = ("citationMetadata", "urlContextMetadata")
_ANY_EXTRA = frozenset((*_CANDIDATE_EXTRAS, "groundingMetadata"))


class _StreamedCall:
    __slots__ = ("args", "call_id", "key")

    def __init__(self, key: object, call_id: str, args: ArgsBuilder) -> None:
        self.key = key
        self.call_id = call_id
        self.args = args


class ChunkReader:
    """State across the chunks of one answer: open items, the streamed call, last usage."""

    def __init__(self, seed: str | Callable[[], str]) -> None:
        # a callable is computed only when Gemini gives neither a call id nor a responseId (rare):
        # hashing the whole request per stream would cost more than the stream itself
        self._seed = seed if callable(seed) else (lambda: seed)
        """Stands in for the response id in made-up call ids when Gemini sends none."""
        self._response_id: str | None = None
        self._started = False
        self._finished = False
        self._usage: dict[str, Any] | None = None
        self._blocks = 0
        self._calls = 0
        self._saw_call = False
        self._text: object | None = None
        self._answer: list[str] = []
        """The open text item's text so far (grounding offsets point into it)."""
        self._grounded = Grounding()
        self._thought: object | None = None
        self._streamed: _StreamedCall | None = None

    @property
    def finished(self) -> bool:
        return self._finished

    def chunk(self, payload: Any) -> list[ev.Event]:
        if self._finished:
            return []
        if not isinstance(payload, dict):
            raise UpstreamProtocolError("Gemini sent a stream element that is not a JSON object")
        out: list[ev.Event] = []
        get = payload.get
        error = get("error")
        if isinstance(error, dict):  # failures.error_object of an object
            self._fail(failures.describe_error(error), out)
            return out
        response_id = get("responseId")
        if isinstance(response_id, str) and not self._response_id:
            self._response_id = response_id
        if not self._started:
            self._started = True
            out.append(ev.Started())
        usage = get("usageMetadata")
        if isinstance(usage, dict):
            self._usage = usage
        candidates = get("candidates")
        if isinstance(candidates, list) and candidates:
            if len(candidates) > 1:
                out += [ev.Unknown(f"candidates[{i}]") for i in range(1, len(candidates))]
            self._candidate(candidates[0], out)
        elif isinstance(payload.get("promptFeedback"), dict) and payload["promptFeedback"].get("blockReason"):
            feedback = payload["promptFeedback"]
            detail = f"Gemini blocked the prompt: {feedback['blockReason']}"
            if feedback.get("blockReasonMessage"):
                detail += f" ({feedback['blockReasonMessage']})"
            self._end(out)
            out.append(ev.Finished("content_filter", detail))
        return out

    def end(self) -> list[ev.Event]:
        """The answer is over: without a finishReason it was cut off."""
        if self._finished:
            return []
        out: list[ev.Event] = []
        self._fail(Failure(502, "server_error", "the Gemini stream ended before a finishReason"), out)
        return out

    # -- candidate and parts ---------------------------------------------------------------------
    def _candidate(self, candidate: Any, out: list[ev.Event]) -> None:
        if not isinstance(candidate, dict):
            raise UpstreamProtocolError("Gemini sent a candidate that is not a JSON object")
        content = candidate.get("content")
        parts = content.get("parts") if isinstance(content, dict) else None
        if isinstance(parts, list):
            for part in parts:
                self._part(part, out)
        if not _ANY_EXTRA.isdisjoint(candidate):
            if isinstance(candidate.get("groundingMetadata"), dict):
                self._grounding(candidate["groundingMetadata"], out)
            # sources Gemini cites otherwise: Responses annotations cannot carry them here
            out += [ev.Unknown(f"output.{key}") for key in _CANDIDATE_EXTRAS if candidate.get(key)]
        reason = candidate.get("finishReason")
        if isinstance(reason, str) and reason:
            self._finish(reason, candidate.get("finishMessage"), out)

    def _part(self, part: Any, out: list[ev.Event]) -> None:
        if not isinstance(part, dict):
            raise UpstreamProtocolError("Gemini sent a content part that is not a JSON object")
        signature = part.get("thoughtSignature")
        if not isinstance(signature, str):
            signature = None
        if "functionCall" in part:
            self._function_call(part["functionCall"], signature, out)
            return
        if self._streamed is not None:
            self._close_streamed(out)
        if "text" in part:
            text = part["text"] if isinstance(part["text"], str) else ""
            if part.get("thought"):
                self._thought_text(text, out)
            else:
                self._answer_text(text, out)
        elif kinds := [k for k in part if k not in _PART_BOOKKEEPING]:
            # executableCode, codeExecutionResult, inlineData... run or live on Google's side;
            # the client cannot replay them
            self._close_text(out)
            out.append(ev.Unknown(f"output.part.{kinds[0]}"))
        if signature is not None:
            self._close_text(out)
            self._signature(signature, [], out)

    def _thought_text(self, text: str, out: list[ev.Event]) -> None:
        if self._text is not None:
            self._close_text(out)
        if not text:
            return
        key = self._thought
        if key is None:
            key = self._thought = self._key("reasoning")
        out.append(ev.ReasoningDelta(key, text))

    def _answer_text(self, text: str, out: list[ev.Event]) -> None:
        if not text:
            return
        if self._thought is not None:
            self._close_thought(out)
        key = self._text
        if key is None:
            key = self._text = self._key("text")
            self._answer = []
        self._answer.append(text)
        out.append(ev.TextDelta(key, text))

    def _function_call(self, call: Any, signature: str | None, out: list[ev.Event]) -> None:
        if not isinstance(call, dict):
            raise UpstreamProtocolError("Gemini sent a functionCall that is not a JSON object")
        name = call.get("name")
        streamed = self._streamed
        if streamed is not None and not name:
            self._continue_streamed(streamed, call, signature, out)
            return
        self._close_streamed(out)
        if not isinstance(name, str) or not name:
            raise UpstreamProtocolError("Gemini sent a functionCall without a name")
        self._close_text(out)
        self._calls += 1
        self._saw_call = True
        call_id = call.get("id")
        if not isinstance(call_id, str) or not call_id:
            call_id = calls.synthesized_id(self._response_id or self._seed(), self._calls)
        if signature is not None:
            self._signature(signature, [call_id], out)
        else:
            self._close_thought(out)
        key = self._key("call")
        out.append(ev.ToolCallStarted(key, call_id, name))
        if call.get("willContinue") or "partialArgs" in call:
            self._streamed = _StreamedCall(key, call_id, ArgsBuilder(call.get("args")))
            self._continue_streamed(self._streamed, {**call, "name": None}, None, out)
            return
        args = call.get("args")
        if args is not None and not isinstance(args, dict):
            raise UpstreamProtocolError("Gemini sent functionCall args that are not a JSON object")
        out.append(ev.ToolCallDone(key, wirejson.text(args or {})))

    def _continue_streamed(self, streamed: _StreamedCall, call: dict[str, Any], signature: str | None,
                           out: list[ev.Event]) -> None:
        for partial in call.get("partialArgs") or []:
            streamed.args.add(partial)
        if signature is not None:
            self._signature(signature, [streamed.call_id], out)
        if not call.get("willContinue"):
            self._close_streamed(out)

    def _close_streamed(self, out: list[ev.Event]) -> None:
        streamed, self._streamed = self._streamed, None
        if streamed is not None:
            out.append(ev.ToolCallDone(streamed.key, streamed.args.json()))

    def _grounding(self, metadata: dict[str, Any], out: list[ev.Event]) -> None:
        """Google Search grounding: citations on the open text, then one `WebSearch` for the
        queries Gemini ran (after the text it grounded: Gemini says so only at the end)."""
        key = self._text
        citations, search = self._grounded.read(metadata, "".join(self._answer) if key is not None else None)
        if key is not None:
            out += [ev.Citation(key, url, title, start, end) for url, title, start, end in citations]
        elif citations:
            out.append(ev.Note("Gemini grounded text that had already ended; its citations were left out"))
        if search is not None:
            self._close_text(out)
            out.append(ev.WebSearch(self._key("search"), search[0], search[1]))

    # -- items -----------------------------------------------------------------------------------
    def _signature(self, signature: str, call_ids: list[str], out: list[ev.Event]) -> None:
        key = self._thought if self._thought is not None else self._key("signature")
        self._thought = None
        state = VendorState(dialect="gemini", signature=signature, call_ids=call_ids)
        out.append(ev.ReasoningDone(key, state))

    def _close_text(self, out: list[ev.Event]) -> None:
        if self._text is not None:
            out.append(ev.TextDone(self._text))
            self._text = None

    def _close_thought(self, out: list[ev.Event]) -> None:
        if self._thought is not None:
            out.append(ev.ReasoningDone(self._thought))
            self._thought = None

    def _key(self, kind: str) -> tuple[str, int]:
        self._blocks += 1
        return (kind, self._blocks)

    # -- the end ---------------------------------------------------------------------------------
    def _end(self, out: list[ev.Event]) -> None:
        self._close_streamed(out)
        self._close_text(out)
        self._close_thought(out)
        self._finished = True
        if self._usage is not None:
            out.append(usage_event(self._usage))

    def _finish(self, reason: str, message: Any, out: list[ev.Event]) -> None:
        self._end(out)
        detail = f"{reason}: {message}" if isinstance(message, str) and message else None
        if reason in FINISHED:
            finished = FINISHED[reason]
            if finished == "stop" and self._saw_call:
                finished = "tool_calls"
            out.append(ev.Finished(finished, detail))
        elif reason in FAILED:
            code, why = FAILED[reason]
            said = f" ({message})" if isinstance(message, str) and message else ""
            out.append(ev.Failed(code, f"Gemini stopped with finishReason {reason}: {why}{said}"))
        else:
            out.append(ev.Note(f"unknown finishReason {reason!r} treated as STOP"))
            out.append(ev.Finished("tool_calls" if self._saw_call else "stop", detail))

    def _fail(self, failure: Failure, out: list[ev.Event]) -> None:
        self._end(out)
        out.append(ev.Failed(failure.code, failure.message))


class Grounding:
    """What one answer's `groundingMetadata` says, read once even when chunks repeat it
    (google-genai `GroundingMetadata`: `webSearchQueries`, `groundingChunks[].web{uri, title}`,
    `groundingSupports[].segment{startIndex, endIndex}` + `groundingChunkIndices`)."""

    def __init__(self) -> None:
        self._queries: set[str] = set()
        self._supports: set[tuple[int, int, int]] = set()

    def read(self, metadata: dict[str, Any], text: str | None
             ) -> tuple[list[tuple[str, str, int, int]], tuple[str, list[str]] | None]:
        """(citations as (url, title, start, end) in characters of `text`, the new search as
        (query, source urls) or None)."""
        chunks = metadata.get("groundingChunks")
        webs = [c["web"] for c in chunks if isinstance(c, dict) and isinstance(c.get("web"), dict)
                and isinstance(c["web"].get("uri"), str)] if isinstance(chunks, list) else []
        if isinstance(chunks, list) and len(webs) != len(chunks):
            webs = []  # indices would point past chunks that are no web pages: read none
        citations = []
        supports = metadata.get("groundingSupports")
        for support in supports if isinstance(supports, list) and text is not None else []:
            segment = support.get("segment") if isinstance(support, dict) else None
            span = _characters(text or "", segment) if isinstance(segment, dict) else None
            indices = support.get("groundingChunkIndices") if span is not None else None
            for index in indices if isinstance(indices, list) else []:
                known = isinstance(index, int) and 0 <= index < len(webs)
                if not known or (*span, index) in self._supports:
                    continue
                self._supports.add((*span, index))
                title = webs[index].get("title")
                citations.append((webs[index]["uri"], title if isinstance(title, str) else "", *span))
        said = metadata.get("webSearchQueries")
        said = said if isinstance(said, list) else []
        queries = [q for q in said if isinstance(q, str) and q not in self._queries]
        if not queries:
            return citations, None
        self._queries.update(queries)
        return citations, ("; ".join(queries), [w["uri"] for w in webs])


def _characters(text: str, segment: dict[str, Any]) -> tuple[int, int] | None:
    """A segment's UTF-8 byte offsets as character offsets into `text` (the Responses API counts
    characters). A segment whose bytes do not hold its `text` is looked up by that text."""
    raw = text.encode("utf-8")
    start, end = segment.get("startIndex", 0), segment.get("endIndex")
    said = segment.get("text")
    if isinstance(start, int) and isinstance(end, int) and 0 <= start <= end <= len(raw):
        first = len(raw[:start].decode("utf-8", "ignore"))
        last = len(raw[:end].decode("utf-8", "ignore"))
        if not isinstance(said, str) or text[first:last] == said:
            return first, last
    if isinstance(said, str) and said and (at := text.find(said)) >= 0:
        return at, at + len(said)
    return None


def usage_event(usage: dict[str, Any]) -> ev.Usage:
    """Responses counts thinking inside output and cached tokens inside input; Gemini reports
    `thoughtsTokenCount` beside `candidatesTokenCount`, and `promptTokenCount` already includes
    `cachedContentTokenCount` (total = prompt + toolUsePrompt + candidates + thoughts)."""
    prompt, tool_prompt = _count(usage, "promptTokenCount"), _count(usage, "toolUsePromptTokenCount")
    candidates, thoughts = _count(usage, "candidatesTokenCount"), _count(usage, "thoughtsTokenCount")
    input_tokens = None if prompt is None and tool_prompt is None else (prompt or 0) + (tool_prompt or 0)
    output_tokens = None if candidates is None and thoughts is None else (candidates or 0) + (thoughts or 0)
    return ev.Usage(input_tokens=input_tokens, output_tokens=output_tokens,
                    cached_tokens=_count(usage, "cachedContentTokenCount"), reasoning_tokens=thoughts)


def _count(usage: dict[str, Any], key: str) -> int | None:
    value = usage.get(key)
    return value if type(value) is int else None  # JSON gives int, float or bool; bool is no count
