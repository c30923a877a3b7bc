"""Thought signatures put back where Gemini produced them (translators/gemini/contents.py)."""

from __future__ import annotations

import json

from tests.translators.gemini.support import function_tool, gemini_body
from translators.features import vendor_state
from translators.gemini.contents import SKIP_SIGNATURE
from translators.ir.request import VendorState

SIG = "RXBBQkNE+/=="
SIG2 = "RXBFRkdI+/=="
TOOLS = [function_tool("lookup"), function_tool("other")]


def user(text: str) -> dict:
    return {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}


def assistant(text: str) -> dict:
    return {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text}]}


def signed(signature: str, *call_ids: str, summary: str = "", provider: str = "gemini") -> dict:
    state = VendorState(dialect=provider, signature=signature, call_ids=list(call_ids))
    return {"type": "reasoning", "summary": [{"type": "summary_text", "text": summary}] if summary else [],
            "encrypted_content": vendor_state.encode(state)}


def fcall(call_id: str, name: str = "lookup") -> dict:
    return {"type": "function_call", "call_id": call_id, "name": name, "arguments": "{}"}


def fout(call_id: str) -> dict:
    return {"type": "function_call_output", "call_id": call_id, "output": "ok"}


def model_parts(body: dict, index: int = -1) -> list[dict]:
    turns = [c for c in body["contents"] if c["role"] == "model"]
    return turns[index]["parts"]


def test_call_signature_rides_on_the_function_call_part_of_that_call() -> None:
    body, _ = gemini_body(user("go"), signed(SIG, "c1"), fcall("c1"), fout("c1"), tools=TOOLS)
    assert model_parts(body) == [
        {"functionCall": {"name": "lookup", "args": {}, "id": "c1"}, "thoughtSignature": SIG}]


def test_call_signature_is_found_by_call_id_not_by_position() -> None:
    body, _ = gemini_body(user("go"), fcall("c0", "other"), signed(SIG, "c1"), fcall("c1"),
                          fout("c0"), fout("c1"), tools=TOOLS)
    assert [p.get("thoughtSignature") for p in model_parts(body)] == [None, SIG]


def test_only_the_first_call_of_a_parallel_set_carries_a_signature() -> None:
    body, _ = gemini_body(user("go"), signed(SIG, "a"), fcall("a"), fcall("b", "other"), fout("a"), fout("b"),
                          tools=TOOLS)
    assert [p.get("thoughtSignature") for p in model_parts(body)] == [SIG, None]


def test_each_sequential_step_gets_its_own_signature() -> None:
    body, _ = gemini_body(user("go"), signed(SIG, "a"), fcall("a"), fout("a"), signed(SIG2, "b"), fcall("b"),
                          fout("b"), tools=TOOLS)
    assert [model_parts(body, i)[0]["thoughtSignature"] for i in (0, 1)] == [SIG, SIG2]


def test_text_signature_rides_on_the_text_part_just_before_it() -> None:
    body, _ = gemini_body(user("q"), assistant("The answer."), signed(SIG), user("thanks"))
    assert model_parts(body) == [{"text": "The answer.", "thoughtSignature": SIG}]


def test_text_signature_before_any_text_rides_on_the_next_text_part_of_the_turn() -> None:
    body, _ = gemini_body(user("q"), signed(SIG), assistant("The answer."), user("thanks"))
    assert model_parts(body) == [{"text": "The answer.", "thoughtSignature": SIG}]


def test_text_signature_in_a_turn_without_text_is_noted_and_left_out() -> None:
    body, report = gemini_body(user("q"), signed(SIG), user("thanks"))
    assert SIG not in json.dumps(body)
    assert any("text signature" in n for n in report.notes)


def test_signature_state_is_replayed_but_its_summary_text_is_reported() -> None:
    _, report = gemini_body(user("go"), signed(SIG, "c1", summary="I should look"), fcall("c1"), fout("c1"),
                            tools=TOOLS)
    assert report.dropped == ["input[1].summary"]


def test_another_vendors_signature_is_reported_and_not_sent() -> None:
    body, report = gemini_body(user("go"), signed(SIG, "c1", provider="anthropic"), fcall("c1"), fout("c1"),
                               tools=TOOLS, model="gemini-2.5-flash")
    assert "input[1]" in report.dropped
    assert SIG not in json.dumps(body)


def test_unsigned_current_turn_call_gets_the_skip_placeholder_on_gemini_3() -> None:
    body, report = gemini_body(user("go"), fcall("a"), fcall("b", "other"), fout("a"), fout("b"), tools=TOOLS)
    assert [p.get("thoughtSignature") for p in model_parts(body)] == [SKIP_SIGNATURE, None]
    assert any(SKIP_SIGNATURE in n for n in report.notes)


def test_unsigned_calls_of_earlier_turns_get_no_placeholder() -> None:
    body, _ = gemini_body(user("go"), fcall("a"), fout("a"), assistant("done"), user("next"), tools=TOOLS)
    assert "thoughtSignature" not in model_parts(body, 0)[0]


def test_unsigned_calls_get_no_placeholder_before_gemini_3() -> None:
    body, _ = gemini_body(user("go"), fcall("a"), fout("a"), tools=TOOLS, model="gemini-2.5-pro")
    assert "thoughtSignature" not in model_parts(body)[0]


def test_text_signature_never_moves_to_a_later_turn() -> None:
    body, _ = gemini_body(user("q"), signed(SIG), user("thanks"), assistant("Later answer."), user("ok"))
    assert model_parts(body) == [{"text": "Later answer."}]


def test_a_user_turn_that_answers_calls_keeps_their_turn_open() -> None:
    # a user message right after the outputs joins their user turn (a compaction prompt does):
    # that turn still answers the calls, so they are of the current turn (docs/gemini.md "Thought
    # signatures")
    body, _ = gemini_body(user("go"), fcall("a"), fout("a"), user("now summarize"), tools=TOOLS)
    assert [c["role"] for c in body["contents"]] == ["user", "model", "user"]
    assert model_parts(body)[0]["thoughtSignature"] == SKIP_SIGNATURE
