"""What a Messages client sends that Chat Completions may or may not carry: `top_k` (an extension
some servers take, a route setting), `stop_sequences` (`stop`, bounded per server), a failed tool's
result (no flag: its text says so), `input_examples` (dropped); and back, the stop sequence vLLM
names and the keep-alive comments servers send (docs/chat.md "Sampling", "Streaming"; docs/
claude-code.md "Keep-alives")."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from tests.translators.chat.chatdata import chunk, sse
from tests.translators.messages_client.messages import assistant, body, tool, tool_result, tool_use, user
from tests.translators.messages_client.recordings import sse_events
from tests.translators.messages_client.sdk import validate_stream
from tests.translators.streamcheck import assert_chunking_invariant
from translators import Translation, stream_translator, translate_request
from translators.api import NOTHING_SENT
from translators.chat.models import capabilities
from translators.core.ids import sequential_ids


def chat(request_body: dict[str, Any], model: str = "Qwen/Qwen3-Coder-30B", **stated: str) -> Translation:
    caps = capabilities(model)
    return translate_request(request_body, "chat", model, client="messages",
                             capabilities=replace(caps, extra={**caps.extra, **stated}))


# -- top_k ----------------------------------------------------------------------------------------

def test_top_k_goes_to_a_server_that_takes_it() -> None:
    translation = chat(body(top_k=20))
    assert translation.body["top_k"] == 20
    assert translation.dropped == []


@pytest.mark.parametrize("model", ["gpt-4.1", "deepseek-chat"])
def test_top_k_is_dropped_for_an_api_that_refuses_or_ignores_it(model: str) -> None:
    translation = chat(body(top_k=20), model)
    assert "top_k" not in translation.body
    assert translation.dropped == ["top_k"]


def test_the_route_says_whether_top_k_is_sent() -> None:
    assert chat(body(top_k=20), "deepseek-chat", top_k_field="send").body["top_k"] == 20
    dropped = chat(body(top_k=20), top_k_field="drop")
    assert "top_k" not in dropped.body and dropped.dropped == ["top_k"]


# -- stop sequences -------------------------------------------------------------------------------

def test_stop_sequences_are_chats_stop() -> None:
    translation = chat(body(stop_sequences=["END", "###"]))
    assert translation.body["stop"] == ["END", "###"]
    assert translation.dropped == []


def test_openai_takes_four_stop_sequences_and_the_rest_are_reported() -> None:
    translation = chat(body(stop_sequences=["a", "b", "c", "d", "e", "f"]), "gpt-4.1")
    assert translation.body["stop"] == ["a", "b", "c", "d"]
    assert translation.dropped == ["stop_sequences[4]", "stop_sequences[5]"]


def test_openais_reasoning_models_take_no_stop_sequences() -> None:
    translation = chat(body(stop_sequences=["END"]), "gpt-5.5")
    assert "stop" not in translation.body
    assert translation.dropped == ["stop_sequences"]


def test_deepseek_takes_sixteen() -> None:
    translation = chat(body(stop_sequences=[str(i) for i in range(17)]), "deepseek-chat")
    assert len(translation.body["stop"]) == 16
    assert translation.dropped == ["stop_sequences[16]"]


# -- tool errors and examples ---------------------------------------------------------------------

def test_a_failed_tools_result_says_so_in_its_text() -> None:
    translation = chat(body(user("q"), assistant(tool_use("t1", "Bash")),
                            user(tool_result("t1", "exit 1", is_error=True)), tools=[tool("Bash")]))
    message = translation.body["messages"][-1]
    assert (message["role"], message["content"]) == ("tool", "Error: exit 1")
    assert translation.dropped == []
    assert any("is_error" in note for note in translation.notes)


def test_a_result_that_is_no_error_is_unmarked() -> None:
    translation = chat(body(user("q"), assistant(tool_use("t1", "Bash")), user(tool_result("t1", "ok")),
                            tools=[tool("Bash")]))
    assert translation.body["messages"][-1]["content"] == "ok"
    assert translation.notes == []


def test_input_examples_are_dropped() -> None:
    translation = chat(body(tools=[tool("Read", input_examples=[{"x": "a"}])]))
    assert "input_examples" not in translation.body["tools"][0]["function"]
    assert translation.dropped == ["tools[0].input_examples"]


# -- back: the stop sequence, keep-alives ---------------------------------------------------------

def through(translation: Translation, data: bytes) -> bytes:
    translator = stream_translator("chat", translation, new_id=sequential_ids(), clock=lambda: 0)
    return translator.feed(data) + translator.close()


def finish_chunk(**choice: Any) -> dict[str, Any]:
    out = chunk(finish="stop")
    out["choices"][0].update(choice)
    return out


def test_vllms_stop_reason_names_the_stop_sequence() -> None:
    data = sse(chunk({"role": "assistant", "content": "one two"}), finish_chunk(stop_reason="three"))
    message, _ = validate_stream(through(chat(body(stop_sequences=["three"])), data))
    assert (message.stop_reason, message.stop_sequence) == ("stop_sequence", "three")


@pytest.mark.parametrize("stop_reason", [None, 151645])
def test_a_stop_without_a_stop_string_is_the_end_of_the_turn(stop_reason: Any) -> None:
    data = sse(chunk({"role": "assistant", "content": "one two"}), finish_chunk(stop_reason=stop_reason))
    message, _ = validate_stream(through(chat(body(stop_sequences=["three"])), data))
    assert (message.stop_reason, message.stop_sequence) == ("end_turn", None)


def test_keep_alive_comments_are_pings_for_a_messages_client() -> None:
    data = b": OPENROUTER PROCESSING\n\n" + sse(chunk({"role": "assistant", "content": "hi"}),
                                               chunk(finish="stop"))
    data = data.replace(b"\n\ndata: {", b"\n\n: keep-alive\n\ndata: {", 1)
    out = through(chat(body()), data)
    names = [name for name, _ in sse_events(out)]
    assert names.count("ping") == 2 and names[0] == "ping"
    validate_stream(out)


def test_a_stream_of_keep_alives_alone_said_nothing() -> None:
    translation = chat(body())
    out = through(translation, b": keep-alive\n\n: keep-alive\n\ndata: [DONE]\n\n")
    events = sse_events(out)
    assert [name for name, _ in events] == ["ping", "ping", "message_start", "error"]
    assert events[-1][1]["error"]["message"].startswith(NOTHING_SENT)


def test_keep_alives_give_the_same_bytes_in_any_chunking() -> None:
    data = (b": OPENROUTER PROCESSING\n\n" + sse(chunk({"role": "assistant", "content": "hi"}), done=False)
            + b": keep-alive\r\n\r\n" + sse(finish_chunk(stop_reason="END")))
    out = assert_chunking_invariant("chat", chat(body(stop_sequences=["END"])), data)
    assert [name for name, _ in sse_events(out)].count("ping") == 2
