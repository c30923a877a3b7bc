"""translators/ir/size.py: a request's input tokens, estimated from the IR (docs/models.md "Output
limits")."""

from __future__ import annotations

import base64

from tests.translators.bodies import body, function, user
from tests.translators.messages_client.messages import claude_code_request, decoded
from translators import translate_request
from translators.ir import size
from translators.ir.request import Document, FunctionTool, Image, Message, Reasoning, Request, Text, ToolCall
from translators.ir.size import CHARS_PER_TOKEN, PART_TOKENS, estimate_tokens


def _request(*items, system=(), tools=()) -> Request:
    return Request(model="m", system=list(system), items=list(items), tools=list(tools))


def test_text_counts_four_characters_a_token() -> None:
    message = Message(role="user", parts=[Text(text="x" * 400)])
    assert estimate_tokens(_request(message, system=["y" * 40])) == 110


def test_tool_declarations_count_their_name_description_and_schema() -> None:
    tool = FunctionTool(name="f" * 4, description="d" * 36, parameters={"type": "object"})
    assert estimate_tokens(_request(tools=[tool])) == (4 + 36 + len('{"type":"object"}')) // CHARS_PER_TOKEN


def test_calls_and_reasoning_count_their_text() -> None:
    call = ToolCall(kind="function", call_id="c", name="ab", arguments="x" * 38)
    thought = Reasoning(summary=["s" * 40], content=["t" * 40])
    assert estimate_tokens(_request(call, thought)) == 30


def test_an_image_or_a_binary_file_counts_a_fixed_amount_and_an_inline_text_file_its_bytes() -> None:
    text = base64.b64encode(b"z" * 800).decode()
    parts = [Image(url="data:image/png;base64,iVBORw0KGgo="),
             Document(media_type="application/pdf", data="JVBERi0=", size=5),
             Document(media_type="text/plain", data=text, size=800)]
    assert estimate_tokens(_request(Message(role="user", parts=parts))) == 2 * PART_TOKENS + 200


def test_claude_codes_real_request_is_estimated_near_a_quarter_of_its_characters() -> None:
    raw = claude_code_request()
    request, _ = decoded(raw)
    chars = sum(len(b["text"]) for b in raw["system"][1:]) + sum(
        len(b["text"]) for m in raw["messages"] for b in m["content"])
    assert chars // CHARS_PER_TOKEN < estimate_tokens(request) < len(str(raw)) // 2


def test_a_translation_estimates_its_request_once_and_a_copy_afresh(monkeypatch) -> None:
    """The encoder's output limit and the translation's record ask for the same request object:
    it is walked once. Another object, a copy with more items included, is walked again."""
    walked: list[int] = []
    real = size._estimate
    monkeypatch.setattr(size, "_estimate", lambda request: walked.append(1) or real(request))
    request = body(user("x" * 400), tools=[function("f")])
    translation = translate_request(request, "anthropic", "claude-sonnet-4-6")
    assert len(walked) == 1 and translation.input_estimate > 100
    first = _request(Message(role="user", parts=[Text(text="x" * 400)]))
    longer = first.model_copy(update={"items": [*first.items, *first.items]})
    assert (estimate_tokens(first), estimate_tokens(first), estimate_tokens(longer)) == (100, 100, 200)
    assert len(walked) == 3
