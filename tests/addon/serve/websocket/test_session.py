"""addon/serve/websocket/session.py: what each `response.create` on one connection becomes."""

from __future__ import annotations

from typing import Any

import pytest

from addon.serve.websocket.session import Local, Refused, Send, Session

DEVELOPER = {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "Be Codex."}]}
USER = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "list files"}]}
CALL = {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "exec_command",
        "arguments": '{"cmd": "ls"}'}
OUTPUT = {"type": "function_call_output", "call_id": "call_1", "output": "a.txt"}
ANSWER = {"type": "message", "role": "assistant", "id": "msg_1",
          "content": [{"type": "output_text", "text": "a.txt"}]}
TOOLS = [{"type": "function", "name": "exec_command", "parameters": {"type": "object"}}]


def create(**fields: Any) -> dict[str, Any]:
    return {"type": "response.create", "model": "gpt-5.5", "tools": TOOLS, "store": False, **fields}


def send(session: Session, **fields: Any) -> Send:
    plan = session.plan(create(**fields), now=1_700_000_000)
    assert isinstance(plan, Send)
    return plan


def prewarm(session: Session) -> str:
    plan = session.plan(create(generate=False, input=[DEVELOPER]), now=1_700_000_000)
    assert isinstance(plan, Local)
    return plan.events[-1]["response"]["id"]


def test_a_prewarm_is_answered_at_once_with_created_and_completed_at_zero_usage() -> None:
    plan = Session(max_bytes=1 << 20).plan(create(generate=False, input=[DEVELOPER]), now=1_700_000_000)
    assert isinstance(plan, Local)
    created, completed = plan.events
    assert (created["type"], completed["type"]) == ("response.created", "response.completed")
    assert created["response"]["id"] == completed["response"]["id"]
    assert completed["response"]["status"] == "completed"
    assert completed["response"]["output"] == []
    usage = completed["response"]["usage"]
    assert (usage["input_tokens"], usage["output_tokens"], usage["total_tokens"]) == (0, 0, 0)


def test_the_request_after_a_prewarm_carries_the_prewarm_input_then_its_own() -> None:
    session = Session(max_bytes=1 << 20)
    plan = send(session, previous_response_id=prewarm(session), input=[USER])
    assert plan.body["input"] == [DEVELOPER, USER]
    assert "previous_response_id" not in plan.body
    assert plan.body["tools"] == TOOLS


def test_a_tool_follow_up_is_rebuilt_from_the_last_input_and_the_output_the_client_saw() -> None:
    session = Session(max_bytes=1 << 20)
    first = send(session, input=[DEVELOPER, USER])
    session.finish(first, "resp_1", [CALL], size=1000)
    follow_up = send(session, previous_response_id="resp_1", input=[OUTPUT])
    assert follow_up.body["input"] == [DEVELOPER, USER, CALL, OUTPUT]
    session.finish(follow_up, "resp_2", [ANSWER], size=1000)
    third = send(session, previous_response_id="resp_2", input=[USER])
    assert third.body["input"] == [DEVELOPER, USER, CALL, OUTPUT, ANSWER, USER]


def test_the_socket_members_never_reach_the_responses_request_and_it_is_streamed() -> None:
    plan = send(Session(max_bytes=1 << 20), input="hi", generate=True, stream=False)
    assert "type" not in plan.body and "generate" not in plan.body
    assert plan.body["stream"] is True
    assert plan.body["input"] == [{"type": "message", "role": "user", "content": "hi"}]


def test_an_unknown_previous_response_id_is_left_for_the_store_and_not_extended_afterwards() -> None:
    session = Session(max_bytes=1 << 20)
    plan = send(session, previous_response_id="resp_stored", input=[USER])
    assert plan.body["previous_response_id"] == "resp_stored"
    assert plan.body["input"] == [USER]
    session.finish(plan, "resp_3", [ANSWER], size=100)
    # its history is the store's: this connection cannot extend it
    assert send(session, previous_response_id="resp_3", input=[USER]).body["previous_response_id"] == "resp_3"


def test_a_failed_answer_leaves_the_last_completed_one_to_extend() -> None:
    session = Session(max_bytes=1 << 20)
    first = send(session, input=[USER])
    session.finish(first, "resp_1", [ANSWER], size=100)
    retried = send(session, previous_response_id="resp_1", input=[USER])
    session.finish(retried, None, [], size=100)
    again = send(session, previous_response_id="resp_1", input=[USER])
    assert again.body["input"] == [USER, ANSWER, USER]


def test_a_history_past_the_request_bound_is_forgotten() -> None:
    session = Session(max_bytes=500)
    first = send(session, input=[USER])
    session.finish(first, "resp_1", [ANSWER], size=501)
    assert send(session, previous_response_id="resp_1", input=[USER]).body["previous_response_id"] == "resp_1"
    assert session.history == []


def test_a_prewarm_naming_an_answer_the_connection_does_not_hold_is_refused_as_not_found() -> None:
    with pytest.raises(Refused) as refused:
        Session(max_bytes=1 << 20).plan(create(generate=False, previous_response_id="resp_x"), now=0)
    event = refused.value.event()
    assert (event["type"], event["status"], event["error"]["code"]) == (
        "error", 400, "previous_response_not_found")


@pytest.mark.parametrize("message", [[], {"type": "response.cancel"}, {"model": "gpt-5.5"}])
def test_anything_but_response_create_is_refused_with_status_400(message: Any) -> None:
    with pytest.raises(Refused) as refused:
        Session(max_bytes=1 << 20).plan(message, now=0)
    assert refused.value.event()["status"] == 400


def test_an_input_neither_string_nor_array_is_refused() -> None:
    with pytest.raises(Refused) as refused:
        Session(max_bytes=1 << 20).plan(create(input={"role": "user"}), now=0)
    assert refused.value.param == "input"
