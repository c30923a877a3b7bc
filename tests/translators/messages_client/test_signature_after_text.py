"""A signature that comes after the answer's text (Gemini 3 signs the last part of an answer, a
signature-only part after the text, docs/gemini.md "Streaming"): the thinking block that carries it
is stopped before the text block, so the text is the block Claude Code takes for the answer
(docs/claude-code.md "A signature after the text")."""

from __future__ import annotations

from tests.translators.messages_client.messages import assistant, body, user
from tests.translators.messages_client.recordings import raw, run, run_encoder, sse_events
from tests.translators.messages_client.sdk import validate_stream
from translators import translate_request
from translators.core.ids import sequential_ids
from translators.core.report import Report
from translators.ir import events as ev
from translators.ir.request import VendorState
from translators.messages_client import MessagesEncoder, signature

RECORDED = "gemini/text_with_trailing_signature_part.jsonl"
SIGNED = VendorState(dialect="gemini", signature="EpAICo0I")


def stream(events: list[ev.Event], *, show_thinking: bool = False) -> tuple[bytes, MessagesEncoder]:
    encoder = MessagesEncoder(model="claude-opus-5-5", report=Report(), new_id=sequential_ids(),
                              show_thinking=show_thinking)
    return encoder.encode([ev.Started(), *events]) + encoder.finish(), encoder


def stopped(data: bytes) -> list[str]:
    """The block types in the order the stream stops them (the order Claude Code keeps them in)."""
    events = sse_events(data)
    started = {p["index"]: p["content_block"]["type"] for e, p in events if e == "content_block_start"}
    return [started[p["index"]] for e, p in events if e == "content_block_stop"]


def test_the_recorded_trailing_signature_is_stopped_before_the_text() -> None:
    for show_thinking in (False, True):
        out, _report = run(RECORDED, [raw(RECORDED)], show_thinking=show_thinking)
        assert stopped(out) == ["thinking", "text"]
        message, error = validate_stream(out)
        assert error is None and message is not None
        text = message.content[0]
        assert text.type == "text" and text.text.startswith("There are **3**")


def test_the_whole_answer_lists_the_signature_first_and_the_text_last() -> None:
    _out, _report, encoder = run_encoder(RECORDED, [raw(RECORDED)], show_thinking=False)
    content = encoder.message()["content"]
    assert [block["type"] for block in content] == ["thinking", "text"]
    state = signature.read(content[0]["signature"], "")
    assert state is not None and state.dialect == "gemini" and state.signature.startswith("EpAICo0I")


def test_the_signature_block_carries_the_state_the_next_turn_needs() -> None:
    out, _ = stream([ev.TextDelta("t", "answer"), ev.TextDone("t"), ev.ReasoningDone("s", SIGNED),
                     ev.Finished("stop")])
    message, _ = validate_stream(out)
    assert message is not None
    thinking = next(b for b in message.content if b.type == "thinking")
    assert signature.read(thinking.signature, "") == SIGNED


def test_a_text_followed_by_anything_else_stops_first() -> None:
    out, encoder = stream([ev.TextDelta("t", "looking"), ev.TextDone("t"),
                           ev.ToolCallStarted("c", "call_1", "Bash"),
                           ev.ToolCallDone("c", '{"command": "ls"}'), ev.Finished("tool_calls")])
    assert stopped(out) == ["text", "tool_use"]
    names = [e for e, _ in sse_events(out)]
    # the text's stop comes before the next block starts, as Anthropic orders them
    assert names.index("content_block_stop") < names.index("content_block_start", 2)
    assert [b["type"] for b in encoder.message()["content"]] == ["text", "tool_use"]


def test_a_thinking_block_with_its_own_text_after_the_answer_keeps_its_place() -> None:
    state = VendorState(dialect="anthropic", signature="s", text="more thoughts")
    out, _ = stream([ev.TextDelta("t", "a"), ev.TextDone("t"), ev.ReasoningDelta("r", "more thoughts"),
                     ev.ReasoningDone("r", state),
                     ev.Finished("stop")], show_thinking=True)
    assert stopped(out) == ["text", "thinking"]


def test_a_text_at_the_very_end_is_stopped_before_the_message_delta() -> None:
    out, _ = stream([ev.TextDelta("t", "bye"), ev.TextDone("t"), ev.Finished("stop")])
    names = [e for e, _ in sse_events(out)]
    assert names[-3:] == ["content_block_stop", "message_delta", "message_stop"]


def test_the_next_turn_gives_gemini_the_signature_on_the_text_it_signed() -> None:
    """Claude Code sends the blocks back in the order it kept them, the signature first: Gemini
    gets it on the answer's text part again (translators/gemini/contents.py)."""
    _out, _report, encoder = run_encoder(RECORDED, [raw(RECORDED)], show_thinking=False)
    kept = encoder.message()["content"]
    request = body(user("how many r in strawberry?"), assistant(*kept), user("and in raspberry?"))
    translation = translate_request(request, "gemini", "gemini-3-pro-preview", client="messages")
    (model_turn,) = [c for c in translation.body["contents"] if c["role"] == "model"]
    (part,) = model_turn["parts"]
    assert part["text"] == kept[1]["text"]
    assert part["thoughtSignature"].startswith("EpAICo0I")
