"""translators/api.py with a client dialect other than Responses (translators/client_dialects.py):
a Messages body in, any upstream's body out; the upstream's answers and errors back in
Anthropic's shapes; the Responses client unchanged (docs/claude-code.md "Wiring")."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from anthropic.types import Message

import translators
from tests.translators.bodies import body, user
from tests.translators.messages_client.sdk import validate_stream
from translators import (
    Refused,
    stream_translator,
    translate_error,
    translate_request,
    translate_response,
)
from translators import client_dialects as clients
from translators import dialect as dialects
from translators.core.ids import sequential_ids

MESSAGES = {"model": "claude-opus-5-5", "max_tokens": 1000, "stream": True,
            "thinking": {"type": "adaptive", "display": "omitted"}, "output_config": {"effort": "high"},
            "system": [{"type": "text", "text": "Be brief."}],
            "messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}],
            "tools": [{"name": "Bash", "description": "Run.", "input_schema": {"type": "object"}}]}
CHAT_STREAM = b"".join(f"data: {json.dumps(chunk)}\n\n".encode() for chunk in (
    {"choices": [{"index": 0, "delta": {"role": "assistant", "content": "hel"}}]},
    {"choices": [{"index": 0, "delta": {"content": "lo"}, "finish_reason": "stop"}]},
    {"choices": [], "usage": {"prompt_tokens": 12, "completion_tokens": 2, "total_tokens": 14}},
)) + b"data: [DONE]\n\n"
CHAT_WHOLE = json.dumps({"id": "c1", "object": "chat.completion", "model": "deepseek-chat",
                         "choices": [{"index": 0, "message": {"role": "assistant", "content": "hello"},
                                      "finish_reason": "stop"}],
                         "usage": {"prompt_tokens": 12, "completion_tokens": 2, "total_tokens": 14}}).encode()


def test_a_messages_body_is_decoded_and_encoded_for_the_upstream() -> None:
    translation = translate_request(MESSAGES, "chat", "deepseek-chat", client="messages")
    assert translation.client == "messages"
    assert (translation.client_model, translation.model) == ("claude-opus-5-5", "deepseek-chat")
    assert translation.path == "/chat/completions"
    assert translation.body["messages"][0] == {"role": "system", "content": "Be brief."}
    assert translation.body["messages"][-1]["content"] in ("hi", [{"type": "text", "text": "hi"}])
    assert [t["function"]["name"] for t in translation.body["tools"]] == ["Bash"]
    assert translation.echo == {"thinking": {"type": "adaptive", "display": "omitted"}}


def test_the_responses_client_stays_the_default() -> None:
    request = body(user("hi"))
    assert translate_request(request, "chat", "deepseek-chat") == translate_request(
        request, "chat", "deepseek-chat", client="responses")
    assert translate_request(request, "chat", "deepseek-chat").client == "responses"


def test_a_messages_body_read_as_responses_is_refused_and_the_reverse() -> None:
    with pytest.raises(Refused):
        translate_request(MESSAGES, "chat", "deepseek-chat")  # no `input`
    with pytest.raises(Refused):
        translate_request(body(user("hi")), "chat", "deepseek-chat", client="messages")  # no max_tokens


def test_a_refusal_is_written_in_the_client_dialects_shape() -> None:
    with pytest.raises(Refused) as raised:
        translate_request({**MESSAGES, "max_tokens": None}, "chat", "deepseek-chat", client="messages")
    status, error = clients.get("messages").refusal(raised.value)
    assert status == 400
    message = "max_tokens must be a non-negative integer"  # led by the field at fault
    assert error == {"type": "error", "error": {"type": "invalid_request_error", "message": message}}


def test_the_responses_upstream_answers_a_messages_client_through_the_ir_and_codex_as_it_is() -> None:
    # docs/responses.md "As an upstream of other clients": the codec for Claude Code, the passthrough
    # for Codex
    translated = translate_request(MESSAGES, "responses", "gpt-5.5", client="messages")
    assert translated.body["store"] is False and translated.body["model"] == "gpt-5.5"
    assert "messages" not in translated.body
    codex = body(user("hi"))
    assert translate_request(codex, "responses", "gpt-5.5").body["input"] == codex["input"]


def test_an_unknown_client_dialect_is_refused() -> None:
    with pytest.raises(Refused, match="unknown client dialect 'grpc'"):
        translate_request(MESSAGES, "chat", "deepseek-chat", client="grpc")


def test_the_stream_comes_back_as_anthropic_events() -> None:
    translation = translate_request(MESSAGES, "chat", "deepseek-chat", client="messages")
    translator = stream_translator("chat", translation, new_id=sequential_ids())
    data = translator.feed(CHAT_STREAM) + translator.close()
    message, error = validate_stream(data)
    assert error is None and message is not None
    assert [b.text for b in message.content if b.type == "text"] == ["hello"]
    assert message.model == "claude-opus-5-5"
    assert message.stop_reason == "end_turn"
    assert (message.usage.input_tokens, message.usage.output_tokens) == (12, 2)


def test_a_stream_that_says_nothing_ends_in_one_error_event() -> None:
    translation = translate_request(MESSAGES, "chat", "deepseek-chat", client="messages")
    translator = stream_translator("chat", translation, new_id=sequential_ids())
    data = translator.feed(b"data: [DONE]\n\n") + translator.close()
    _message, error = validate_stream(data)
    assert error is not None and error["error"]["type"] == "invalid_request_error"


def test_a_whole_answer_is_a_message_with_status_200() -> None:
    translation = translate_request({**MESSAGES, "stream": False}, "chat", "deepseek-chat", client="messages")
    answer = translate_response("chat", translation, CHAT_WHOLE, new_id=sequential_ids())
    message = Message.model_validate(answer)
    assert [b.text for b in message.content if b.type == "text"] == ["hello"]
    assert clients.get("messages").answer_status(answer) == 200


def test_a_whole_answer_that_cannot_be_read_is_an_error_body_with_its_status() -> None:
    translation = translate_request({**MESSAGES, "stream": False}, "chat", "deepseek-chat", client="messages")
    answer = translate_response("chat", translation, b"not json", new_id=sequential_ids())
    assert answer["type"] == "error" and answer["error"]["type"] == "api_error"
    assert clients.get("messages").answer_status(answer) == 500


def test_an_upstream_429_is_a_rate_limit_error_with_retry_after() -> None:
    error = translate_error("chat", 429, b'{"error": {"message": "slow down"}}',
                            {"retry-after": "7", "content-type": "application/json"}, client="messages")
    assert error.status == 429
    assert error.body == {"type": "error", "error": {"type": "rate_limit_error",
                                                     "message": "chat upstream returned 429: slow down"}}
    assert error.headers["retry-after"] == "7"


@pytest.mark.parametrize("status", [503, 529])
def test_an_overloaded_upstream_is_529_overloaded_error(status: int) -> None:
    error = translate_error("gemini", status, b'{"error": {"message": "overloaded"}}', client="messages")
    assert (error.status, error.body["error"]["type"]) == (529, "overloaded_error")


def test_the_responses_client_keeps_its_error_shape_and_status() -> None:
    error = translate_error("gemini", 503, b'{"error": {"message": "overloaded"}}')
    assert error.status == 503
    assert set(error.body["error"]) == {"type", "code", "message", "param"}


def test_the_default_match_adds_the_messages_paths_on_their_own_host() -> None:
    assert clients.default_match() == (
        "api.anthropic.com/v1/messages", "api.anthropic.com/v1/messages/count_tokens",
        "api.anthropic.com/v1/models", "api.anthropic.com/v1/models/*")


def test_a_client_dialect_registered_from_outside_reads_its_requests_and_writes_its_answers(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The toy client (tests/support/toy_client.py) brings its own decoder and encoder: one
    `register` and `translate_request` / `translate_response` speak it."""
    from tests.support import toy_client

    monkeypatch.setattr(clients, "_REGISTERED", {})  # registered for this test only
    clients.register(toy_client.CLIENT_DIALECT)
    translation = translate_request({"model": "toy-1", "prompt": "hi", "stream": False}, "anthropic",
                                    "claude-sonnet-4-6", client=toy_client.NAME)
    assert [part["text"] for part in translation.body["messages"][0]["content"]] == ["hi"]
    upstream = {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-6",
                "content": [{"type": "text", "text": "hello"}], "stop_reason": "end_turn",
                "usage": {"input_tokens": 1, "output_tokens": 1}}
    assert translate_response("anthropic", translation, json.dumps(upstream).encode()) == {"text": "hello"}


def test_a_shipped_client_dialect_cannot_be_replaced() -> None:
    with pytest.raises(ValueError, match="shipped"):
        clients.register(clients.get("responses"))


ROOT = Path(translators.__file__).parent
CLIENT_FOLDERS = frozenset(f"{name}_client" for name in clients.BUILTIN)
VENDOR_FOLDERS = frozenset(dialects.BUILTIN)
_IMPORT = re.compile(r"^\s*(?:from|import) translators\.(\w+)|^\s*from translators import \(?([\w ,]+)",
                     re.MULTILINE)


def _imported(source: str) -> set[str]:
    """The top-level names of `translators` a module imports (`translators.X...`, `from translators
    import X`)."""
    found = set()
    for dotted, listed in _IMPORT.findall(source):
        found |= {dotted} if dotted else {name.split(" as ")[0].strip() for name in listed.split(",")}
    return found


def test_no_module_outside_a_client_folder_imports_one() -> None:
    """A client dialect is one folder: the registry loads it by name, as translators/dialect.py
    loads a vendor, and nothing else in the package names it (docs/architecture.md "The client
    side"); what two sides of one wire share lives in wire/ (wire/response_object.py)."""
    found = {str(path.relative_to(ROOT)): sorted(_imported(path.read_text()) & CLIENT_FOLDERS)
             for path in ROOT.rglob("*.py") if path.relative_to(ROOT).parts[0] not in CLIENT_FOLDERS}
    assert {path: names for path, names in found.items() if names} == {}


@pytest.mark.parametrize("folder", sorted(CLIENT_FOLDERS))
def test_no_client_folder_imports_another_nor_a_vendor(folder: str) -> None:
    others = (CLIENT_FOLDERS | VENDOR_FOLDERS) - {folder}
    found = {str(path.relative_to(ROOT)): sorted(_imported(path.read_text()) & others)
             for path in (ROOT / folder).rglob("*.py")}
    assert {path: names for path, names in found.items() if names} == {}


def test_the_import_scan_sees_both_forms() -> None:
    assert _imported("from translators.messages_client import errors") == {"messages_client"}
    assert _imported("from translators import client_dialects, messages_client as m") == {
        "client_dialects", "messages_client"}
