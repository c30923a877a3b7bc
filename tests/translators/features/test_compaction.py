"""translators/features/compaction.py and the compaction answer: Codex's remote compaction served by
another vendor's model (docs/compaction.md)."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from tests.translators.bodies import (
    assistant,
    body,
    custom,
    custom_call,
    custom_output,
    function,
    function_call,
    function_output,
    user,
)
from tests.translators.streamcheck import (
    assert_valid_responses_stream,
    done_items,
    events,
    fixture,
    per_event,
    run,
    sized,
    whole,
)
from translators import client_dialects, translate_request, translate_response
from translators.core.errors import UnsupportedFeature
from translators.core.ids import sequential_ids
from translators.core.report import Report
from translators.features import compaction
from translators.responses_client.request import decode

TRIGGER = {"type": "compaction_trigger"}
TARGETS = {"anthropic": "claude-sonnet-4-6", "chat": "deepseek-chat", "gemini": "gemini-2.5-flash",
           "bedrock": "us.anthropic.claude-sonnet-4-6"}
SUMMARY = compaction.Summary(summary="Goal: fix app.py.\nDone: read it.", dialect="anthropic",
                             model="claude-sonnet-4-6")
OPENAI_ITEM = {"type": "compaction", "id": "cmp_1", "encrypted_content": "gAAAAABopenai-encrypted"}


def gateway_item(summary: compaction.Summary = SUMMARY, kind: str = "compaction") -> dict[str, Any]:
    return {"type": kind, "id": "cmp_7", "encrypted_content": compaction.encode(summary)}


def history() -> list[dict[str, Any]]:
    return [
        user("fix the bug in app.py"),
        function_call("call_1", "exec_command", '{"cmd": "cat app.py"}'),
        function_output("call_1", "print(1/0)"),
        {"type": "reasoning", "summary": [{"type": "summary_text", "text": "thinking it over"}]},
        custom_call("call_2", "apply_patch", "*** Begin Patch\n*** End Patch\n"),
        custom_output("call_2", "Exit code: 0"),
        assistant("patched app.py"),
    ]


TOOLS = [function("exec_command", properties={"cmd": {"type": "string"}}), custom("apply_patch")]


def turns(target: str, sent: dict[str, Any]) -> list[tuple[str, str]]:
    """(role, text) of every text in an upstream body, in order, whatever the dialect."""
    out: list[tuple[str, str]] = []
    if target == "gemini":
        for content in sent["contents"]:
            out += [(content["role"], p["text"]) for p in content["parts"] if "text" in p]
        return out
    for message in sent["messages"]:
        content = message["content"]
        if isinstance(content, str):
            out.append((message["role"], content))
            continue
        out += [(message["role"], block["text"]) for block in content if "text" in block]
    return out


# -- the trigger and the payload ------------------------------------------------------------------


def test_only_a_final_compaction_trigger_asks_for_a_summary():
    assert compaction.is_trigger(body(user("q"), TRIGGER))
    assert not compaction.is_trigger(body(TRIGGER, user("q")))
    assert not compaction.is_trigger(body(user("q")))
    assert not compaction.is_trigger({"model": "m", "input": "text"})


def test_a_final_trigger_makes_the_request_a_compaction_and_is_not_kept_as_an_item():
    request = decode(body(user("q"), TRIGGER), Report())
    assert request.kind == "compaction"
    assert [item.type for item in request.items] == ["message"]
    assert decode(body(user("q")), Report()).kind == "turn"


def test_the_payload_carries_summary_dialect_model_and_version_and_comes_back_whole():
    encrypted = compaction.encode(SUMMARY)
    assert encrypted.startswith("dgw1c:")
    raw = json.loads(base64.urlsafe_b64decode(encrypted.removeprefix("dgw1c:")))
    assert raw == {"v": 1, "summary": SUMMARY.summary, "dialect": "anthropic", "model": "claude-sonnet-4-6"}
    assert compaction.decode(encrypted) == SUMMARY


@pytest.mark.parametrize("encrypted", [
    "dgw1c:not base64!",
    "dgw1c:" + base64.urlsafe_b64encode(b'{"summary": "no dialect"}').decode(),
    "dgw1c:" + base64.urlsafe_b64encode(b'{"v": 2, "summary": "s", "dialect": "d", "model": "m"}').decode(),
    "gAAAAABopenai-encrypted",
    "dgw1:" + base64.urlsafe_b64encode(b'{"dialect": "anthropic"}').decode(),  # reasoning state, not ours
    None,
])
def test_anything_but_a_readable_gateway_payload_decodes_to_nothing(encrypted):
    assert compaction.decode(encrypted) is None


# -- the summarizer's request ---------------------------------------------------------------------


@pytest.mark.parametrize("target", TARGETS)
def test_the_summary_request_sends_no_tools_and_ends_with_the_gateway_instruction(target):
    translation = translate_request(body(*history(), TRIGGER, tools=TOOLS), target, TARGETS[target])
    assert translation.compaction
    sent = translation.body
    text = json.dumps(sent)
    for key in ("tools", "toolConfig", "tool_choice", "tool_use", "tool_calls", "functionCall", "toolUse",
                "tool_result", "functionResponse", "toolResult"):
        assert f'"{key}"' not in text, key
    assert "compaction_trigger" not in text
    assert turns(target, sent)[-1] == ("user", compaction.INSTRUCTION)


@pytest.mark.parametrize("target", TARGETS)
def test_the_summary_request_keeps_the_whole_history_in_order_as_text(target):
    translation = translate_request(body(*history(), TRIGGER, tools=TOOLS), target, TARGETS[target])
    texts = [text for _, text in turns(target, translation.body)]
    expected = ["fix the bug in app.py", "exec_command", '{"cmd": "cat app.py"}', "print(1/0)", "apply_patch",
                "*** Begin Patch", "Exit code: 0", "patched app.py", compaction.INSTRUCTION]
    joined = "\n".join(texts)
    positions = [joined.find(piece) for piece in expected]
    assert -1 not in positions, list(zip(expected, positions, strict=True))
    assert positions == sorted(positions)
    assert "thinking it over" not in joined  # reasoning is left out, and said so
    assert any("reasoning item(s) left out" in note for note in translation.notes)


def test_the_summarizer_reasons_little():
    translation = translate_request(body(user("q"), TRIGGER, reasoning={"effort": "xhigh"}), "chat",
                                    "deepseek-reasoner")
    assert translation.body["reasoning_effort"] == "low"  # not the client's xhigh


def test_a_request_without_a_trigger_is_an_ordinary_turn():
    translation = translate_request(body(*history(), tools=TOOLS), "anthropic", TARGETS["anthropic"])
    assert not translation.compaction
    assert translation.body["tools"]


def test_a_trigger_to_the_responses_target_passes_untouched():
    translation = translate_request(body(user("q"), OPENAI_ITEM, TRIGGER), "responses")
    assert not translation.compaction
    assert translation.body["input"][1:] == [OPENAI_ITEM, TRIGGER]


# -- replay ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["compaction", "compaction_summary", "context_compaction"])
@pytest.mark.parametrize("target", TARGETS)
def test_a_gateway_compaction_item_becomes_the_summary_as_a_user_message(target, kind):
    translation = translate_request(body(user("old ask"), gateway_item(kind=kind), user("go on")), target,
                                    TARGETS[target])
    said = turns(target, translation.body)
    replay = compaction.REPLAY_PREFIX + SUMMARY.summary
    assert [text for _, text in said] == ["old ask", replay, "go on"]
    assert dict((text, role) for role, text in said)[replay] == "user"
    assert translation.dropped == []


@pytest.mark.parametrize("target", TARGETS)
def test_an_openai_compaction_item_is_dropped_with_a_note_not_refused(target):
    client = body(user("old ask"), OPENAI_ITEM, user("go on"))
    translation = translate_request(client, target, TARGETS[target])
    assert [text for _, text in turns(target, translation.body)] == ["old ask", "go on"]
    assert translation.dropped == ["input[1]"]
    assert any(note.startswith("input[1]:") and "OpenAI" in note and "lost" in note
               for note in translation.notes)


def test_a_corrupt_gateway_item_is_dropped_like_a_foreign_one():
    corrupt = {"type": "compaction", "encrypted_content": "dgw1c:%%%"}
    translation = translate_request(body(corrupt, user("go on")), "anthropic", TARGETS["anthropic"])
    assert translation.dropped == ["input[0]"]
    assert any(note.startswith("input[0]:") and "lost" in note for note in translation.notes)


def test_to_openai_a_gateway_item_becomes_a_user_message_and_openai_items_stay():
    client = body(user("old ask"), gateway_item(), OPENAI_ITEM, user("go on"))
    sent = translate_request(client, "responses").body["input"]
    assert sent[0] == client["input"][0] and sent[2:] == [OPENAI_ITEM, client["input"][3]]
    replay = compaction.REPLAY_PREFIX + SUMMARY.summary
    assert sent[1] == {"type": "message", "role": "user", "content": [{"type": "input_text", "text": replay}]}
    assert client["input"][1]["type"] == "compaction"  # the client's body is left as it was


def test_to_openai_a_corrupt_gateway_item_is_dropped_and_reported():
    translation = translate_request(body({"type": "compaction", "encrypted_content": "dgw1c:%%%"}, user("q")),
                                    "responses")
    assert translation.body["input"] == [user("q")]
    assert translation.dropped == ["input[0]"]


def test_a_second_compaction_summarizes_the_first_summary_too():
    translation = translate_request(body(gateway_item(), user("more work"), TRIGGER), "anthropic",
                                    TARGETS["anthropic"])
    texts = [text for _, text in turns("anthropic", translation.body)]
    assert texts == [compaction.REPLAY_PREFIX + SUMMARY.summary, "more work", compaction.INSTRUCTION]


# -- the answer -----------------------------------------------------------------------------------


def summarize(target: str = "anthropic"):
    return translate_request(body(*history(), TRIGGER, tools=TOOLS), target, TARGETS[target])


def anthropic_texts_and_usage(raw: bytes) -> tuple[str, dict[str, int]]:
    """The text and usage a recorded Anthropic stream carries, read straight from its JSON."""
    text, usage = [], {}
    for block in raw.decode().split("\n\n"):
        data = [line[6:] for line in block.split("\n") if line.startswith("data: ")]
        if not data:
            continue
        payload = json.loads(data[0])
        if payload["type"] == "message_start":
            usage["input_tokens"] = payload["message"]["usage"]["input_tokens"]
        elif payload["type"] == "message_delta":
            usage["output_tokens"] = payload["usage"]["output_tokens"]
        elif payload["type"] == "content_block_delta" and payload["delta"]["type"] == "text_delta":
            text.append(payload["delta"]["text"])
    return "".join(text), usage


def test_the_answer_is_exactly_one_compaction_item_then_completed_with_the_upstream_usage():
    raw = fixture("anthropic/thinking_then_text.sse")
    payloads = assert_valid_responses_stream(run("anthropic", summarize(), whole(raw)))
    items = done_items(payloads)
    assert [item["type"] for item in items] == ["compaction"]
    assert [p["type"] for p in payloads] == ["response.created", "response.in_progress",
                                             "response.output_item.added", "response.output_item.done",
                                             "response.completed"]
    assert payloads[2]["item"] == items[0]  # whole in `added` too
    text, usage = anthropic_texts_and_usage(raw)
    assert compaction.decode(items[0]["encrypted_content"]) == compaction.Summary(
        summary=text.strip(), dialect="anthropic", model="claude-sonnet-4-6")
    completed = payloads[-1]["response"]
    assert completed["output"] == items
    assert (completed["usage"]["input_tokens"], completed["usage"]["output_tokens"]) == (
        usage["input_tokens"], usage["output_tokens"])


@pytest.mark.parametrize(("target", "recording"), [
    ("chat", "deepseek/reasoning_content_stream.sse"),
    ("gemini", "gemini/sse_text_after_function_response.sse"),
    ("bedrock", "bedrock/converse_stream_text.eventstream"),
    ("anthropic", "anthropic/text_then_tool_use.jsonl"),
])
def test_every_upstream_answers_with_one_compaction_item_holding_its_text(target, recording):
    raw = fixture(recording)
    ordinary = translate_request(body(user("q")), target, TARGETS[target])
    said = [part["text"] for item in done_items(events(run(target, ordinary, whole(raw))))
            if item["type"] == "message" for part in item["content"]]
    payloads = assert_valid_responses_stream(run(target, summarize(target), whole(raw)))
    items = done_items(payloads)
    assert [item["type"] for item in items] == ["compaction"]
    assert payloads[-1]["type"] == "response.completed"
    summary = compaction.decode(items[0]["encrypted_content"])
    assert summary is not None and summary.summary == "\n\n".join(said).strip()
    assert (summary.dialect, summary.model) == (target, TARGETS[target])


def test_the_answer_does_not_depend_on_how_the_upstream_stream_is_cut():
    raw = fixture("anthropic/thinking_then_text.sse")
    translation = summarize()
    expected = run("anthropic", translation, whole(raw))
    assert run("anthropic", translation, per_event(raw)) == expected
    assert run("anthropic", translation, sized(raw, 1)) == expected
    assert run("anthropic", translation, sized(raw, 13)) == expected


def test_a_stream_cut_mid_summary_ends_with_one_failed_and_no_item():
    raw = fixture("anthropic/thinking_then_text.sse")
    cut = raw[: raw.index(b"text_delta") + 40]
    payloads = assert_valid_responses_stream(run("anthropic", summarize(), per_event(cut)))
    assert payloads[-1]["type"] == "response.failed"
    assert done_items(payloads) == []


def anthropic_stream(*texts: str) -> bytes:
    blocks: list[dict[str, Any]] = [
        {"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant",
                                              "model": "m", "content": [],
                                              "usage": {"input_tokens": 90000, "output_tokens": 1}}},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "hm"}},
        {"type": "content_block_stop", "index": 0},
    ]
    for i, text in enumerate(texts, start=1):
        blocks += [{"type": "content_block_start", "index": i, "content_block": {"type": "text", "text": ""}},
                   {"type": "content_block_delta", "index": i, "delta": {"type": "text_delta", "text": text}},
                   {"type": "content_block_stop", "index": i}]
    finish = {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 300}}
    blocks += [finish, {"type": "message_stop"}]
    return b"".join(f"event: {b['type']}\ndata: {json.dumps(b)}\n\n".encode() for b in blocks)


@pytest.mark.parametrize("texts", [(), ("  \n",)])
def test_an_empty_summary_fails_the_compaction_with_a_clear_message(texts):
    payloads = assert_valid_responses_stream(run("anthropic", summarize(), whole(anthropic_stream(*texts))))
    assert done_items(payloads) == []
    error = payloads[-1]["response"]["error"]
    assert payloads[-1]["type"] == "response.failed"
    assert "empty summary" in error["message"] and "claude-sonnet-4-6" in error["message"]


def test_two_text_blocks_make_one_summary_and_usage_is_not_inflated():
    payloads = events(run("anthropic", summarize(), whole(anthropic_stream("Part one.", "Part two."))))
    (item,) = done_items(payloads)
    assert compaction.decode(item["encrypted_content"]).summary == "Part one.\n\nPart two."
    usage = payloads[-1]["response"]["usage"]
    assert (usage["input_tokens"], usage["output_tokens"], usage["total_tokens"]) == (90000, 300, 90300)


def test_a_whole_answer_is_one_compaction_item_with_the_upstream_usage():
    answer = {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-6",
              "content": [{"type": "text", "text": "Goal: ship it."}], "stop_reason": "end_turn",
              "usage": {"input_tokens": 1200, "output_tokens": 34}}
    translation = summarize().model_copy(update={"stream": False})
    out = translate_response("anthropic", translation, json.dumps(answer).encode(), new_id=sequential_ids())
    assert out["status"] == "completed"
    assert [item["type"] for item in out["output"]] == ["compaction"]
    assert compaction.decode(out["output"][0]["encrypted_content"]).summary == "Goal: ship it."
    assert (out["usage"]["input_tokens"], out["usage"]["output_tokens"]) == (1200, 34)


# -- the /responses/compact form --------------------------------------------------------------------

ANSWER = {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-6",
          "content": [{"type": "text", "text": "Goal: ship it."}], "stop_reason": "end_turn",
          "usage": {"input_tokens": 1200, "output_tokens": 34}}
"""A whole Anthropic answer: the summary the upstream wrote."""


def compact(*items: dict[str, Any], target: str = "anthropic"):
    """What the Agents SDK posts to `/responses/compact` (no trigger, not streamed), translated."""
    sent = {"model": "gpt-5.5", "input": list(items) or history()}
    return translate_request(sent, target, TARGETS[target], kind="compaction_endpoint")


def answered(translation, answer: dict[str, Any] = ANSWER) -> dict[str, Any]:
    return translate_response("anthropic", translation, json.dumps(answer).encode(), new_id=sequential_ids(),
                              clock=lambda: 1_770_000_000)


@pytest.mark.parametrize("target", TARGETS)
def test_a_compact_endpoint_body_asks_for_the_summary_without_a_trigger_and_is_answered_whole(target):
    translation = compact(target=target)
    assert translation.compaction and not translation.stream
    texts = [text for _, text in turns(target, translation.body)]
    assert texts[0] == "fix the bug in app.py" and texts[-1] == compaction.INSTRUCTION
    assert '"tools"' not in json.dumps(translation.body)


def test_the_compact_endpoint_answer_is_the_compaction_object_user_messages_then_the_one_item():
    out = answered(compact(*history(), user("now ship it")))
    assert set(out) == {"id", "object", "created_at", "output", "usage"}
    assert (out["object"], out["created_at"]) == ("response.compaction", 1_770_000_000)
    *kept, item = out["output"]
    assert [(m["type"], m["role"], m["content"][0]["text"]) for m in kept] == [
        ("message", "user", "fix the bug in app.py"), ("message", "user", "now ship it")]
    assert all(m["id"] and m["status"] == "completed" for m in kept)
    assert item["type"] == "compaction"
    assert compaction.decode(item["encrypted_content"]) == compaction.Summary(
        summary="Goal: ship it.", dialect="anthropic", model="claude-sonnet-4-6")
    assert (out["usage"]["input_tokens"], out["usage"]["output_tokens"]) == (1200, 34)
    assert client_dialects.get("responses").answer_status(out) == 200


def test_a_kept_message_keeps_its_id_and_a_string_one_gets_parts_an_id_and_a_status():
    out = answered(translate_request({"model": "gpt-5.5", "input": "summarize me"}, "anthropic",
                                     kind="compaction_endpoint"))
    assert out["output"][0] == {"type": "message", "role": "user", "id": out["output"][0]["id"],
                                "content": [{"type": "input_text", "text": "summarize me"}],
                                "status": "completed"}
    assert out["output"][0]["id"].startswith("msg_")
    stored = {**user("stored"), "id": "msg_stored", "status": "completed"}
    assert answered(compact(stored))["output"][0] == stored


@pytest.mark.parametrize("content", [[], [{"type": "text", "text": "  "}]])
def test_a_compact_endpoint_answer_without_a_summary_is_a_500_error_body(content):
    out = answered(compact(), {**ANSWER, "content": content})
    assert set(out) == {"error"} and out["error"]["code"] == "server_error"
    assert out["error"]["message"] == ("compaction failed: anthropic claude-sonnet-4-6 returned an empty "
                                       "summary")
    assert client_dialects.get("responses").answer_status(out) == 500


def test_the_compact_endpoint_is_refused_for_an_openai_upstream_and_for_a_messages_client():
    with pytest.raises(UnsupportedFeature):
        translate_request({"model": "gpt-5.5", "input": "x"}, "responses", kind="compaction_endpoint")
    messages_body = {"model": "claude-sonnet-4-6", "max_tokens": 100,
                     "messages": [{"role": "user", "content": "x"}]}
    with pytest.raises(UnsupportedFeature):
        translate_request(messages_body, "anthropic", client="messages", kind="compaction_endpoint")
