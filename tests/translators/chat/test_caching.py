"""Prompt-cache breakpoints on a Chat route whose server takes them (OpenRouter's `cache_control`
on text parts), and none elsewhere (translators/chat/caching.py, docs/chat.md "Prompt caching")."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from tests.translators.bodies import body, function, function_call, function_output, user
from tests.translators.messages_client import messages as mc
from translators import translate_request
from translators.chat import DIALECT
from translators.chat.models import capabilities

MODEL = "anthropic/claude-sonnet-4.6"
EPHEMERAL = {"type": "ephemeral"}


def chat(request_body: dict[str, Any], cache_control: str | None = None, client: str = "responses") -> Any:
    caps = capabilities(MODEL)
    if cache_control is not None:
        caps = replace(caps, extra={**caps.extra, "cache_control": cache_control})
    return translate_request(request_body, "chat", MODEL, capabilities=caps, client=client)


def session() -> dict[str, Any]:
    return body(user("go"), function_call("c1", "f"), function_output("c1", "one"),
                function_call("c2", "f"), function_output("c2", "two"),
                tools=[function("f")], instructions="Be brief.")


def marked(messages: list[dict[str, Any]]) -> list[int]:
    return [i for i, m in enumerate(messages) if isinstance(m["content"], list)
            and any("cache_control" in p for p in m["content"])]


def test_by_default_no_breakpoint_is_sent():
    assert "cache_control" not in str(chat(session()).body)


def test_a_route_that_takes_them_gets_them_on_text_parts():
    messages = chat(session(), "True").body["messages"]
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "tool", "assistant", "tool"]
    # the system prompt, the end of the request before the last, of the last, and the newest message
    assert marked(messages) == [0, 1, 3, 5]
    assert messages[0]["content"] == [{"type": "text", "text": "Be brief.", "cache_control": EPHEMERAL}]
    assert messages[5]["content"] == [{"type": "text", "text": "two", "cache_control": EPHEMERAL}]
    assert messages[2]["content"] == ""  # an assistant turn of calls alone has no text to mark


def test_the_clients_own_breakpoints_are_reported_dropped_on_chat():
    request = mc.body(mc.user(mc.text("q", cache_control=EPHEMERAL)))
    assert chat(request, "True", client="messages").cosmetic == ["messages[0].content[0].cache_control"]


def test_cache_control_is_a_chat_option_and_a_route_key_off_by_default():
    option = next(o for o in DIALECT.options if o.name == "gateway_chat_cache_control")
    assert (option.default, option.route_key, option.type) == (False, "cache_control", bool)
    assert option.check is not None
    assert option.check(True) is None and option.check("false") is None
    assert option.check("yes") == "gateway_chat_cache_control 'yes': write true or false"
