"""The dropped report of a Messages client names the Messages fields, whichever upstream dropped
them (docs/claude-code.md "The report's words")."""

from __future__ import annotations

import pytest

from tests.translators.bodies import body as responses_body
from tests.translators.bodies import function
from tests.translators.bodies import user as responses_user
from tests.translators.messages_client.messages import body, tool
from translators import translate_request
from translators.messages_client.paths import renamer


@pytest.mark.parametrize(("ir", "messages"), [
    ("tools[3].parameters.$schema", "tools[3].input_schema.$schema"),
    ("tools[3].parameters", "tools[3].input_schema"),
    ("tools[3].strict", "tools[3].strict"),
    ("tools[2].filters", "tools[2].allowed_domains"),
    ("text.format", "output_config.format"),
    ("text.format.schema.properties.x.minLength", "output_config.format.schema.properties.x.minLength"),
    ("reasoning.effort", "output_config.effort"),
    ("reasoning.summary", "thinking.display"),
    ("user", "metadata.user_id"),
    ("parallel_tool_calls", "tool_choice.disable_parallel_tool_use"),
    ("messages[2].content[1].filename", "messages[2].content[1].title"),
    ("messages[1].content[0].summary", "messages[1].content[0].thinking"),
    # already in Messages words, or a path of the upstream's answer: as it is
    ("messages[1].content[0]", "messages[1].content[0]"),
    ("top_k", "top_k"),
    ("stop_sequences[5]", "stop_sequences[5]"),
    ("tool_choice", "tool_choice"),
    ("users", "users"),
])
def test_each_ir_path_is_named_by_its_messages_field(ir: str, messages: str) -> None:
    assert renamer("output_config.effort")(ir) == messages


def test_a_schema_keyword_gemini_drops_is_named_under_input_schema() -> None:
    schema = {"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
              "properties": {"n": {"type": "integer", "exclusiveMinimum": 0}}}
    request_body = body(tools=[tool("Read", input_schema=schema)], metadata={"user_id": "u"})
    translation = translate_request(request_body, "gemini", "gemini-2.5-flash", client="messages")
    assert translation.dropped == ["tools[0].input_schema.$schema",
                                   "tools[0].input_schema.properties.n.exclusiveMinimum", "metadata.user_id"]
    assert translation.cosmetic == ["metadata.user_id"]


def test_an_effort_from_a_thinking_budget_is_named_by_the_budget() -> None:
    # Claude Haiku 3.5 neither thinks nor takes an effort
    request_body = body(thinking={"type": "enabled", "budget_tokens": 2048})
    translation = translate_request(request_body, "anthropic", "claude-3-5-haiku-20241022", client="messages")
    assert "thinking.budget_tokens" in translation.dropped
    assert not any(path.startswith("reasoning") for path in translation.dropped)


def test_a_responses_clients_report_keeps_the_ir_words() -> None:
    schema_tool = function("f", parameters={"$schema": "x", "type": "object", "properties": {}})
    translation = translate_request(responses_body(responses_user("hi"), tools=[schema_tool]), "gemini",
                                    "gemini-2.5-flash")
    assert translation.dropped == ["tools[0].parameters.$schema"]
