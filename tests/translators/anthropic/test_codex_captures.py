"""Real Codex 0.169 requests (tests/data/codex/, docs/codex.md) translated to Anthropic.

Expected values are read off the captured input by hand, not from the translator's output.
"""

from __future__ import annotations

from tests.translators.streamcheck import codex_request
from translators import translate_request

LITE_FUNCTIONS = [
    "exec_command",
    "write_stdin",
    "request_user_input",
    "apply_patch",
    "view_image",
    "get_goal",
    "create_goal",
    "update_goal",
]


def lite_request_with_history() -> dict:
    """The Lite capture (additional_tools, two developer messages, environment, "say hi") followed by
    the history of two apply_patch turns: the follow-up capture's call + output, then the compaction
    capture's reasoning (OpenAI-encrypted), commentary message, call + output.

    input[0] additional_tools  input[1..2] developer  input[3..4] user
    input[5] custom_tool_call call_patch_1   input[6] its custom_tool_call_output
    input[7] reasoning rs_1 (encrypted_content "ZW5jcnlwdGVkLWJsb2I=")
    input[8] assistant message, phase commentary
    input[9] custom_tool_call call_p1        input[10] its custom_tool_call_output
    """
    request = codex_request("request_lite_functions_namespace.json")
    followup = codex_request("request_followup_after_apply_patch.json")["input"]
    compaction = codex_request("request_local_compaction.json")["input"]
    request["input"] = request["input"][:5] + followup[4:6] + compaction[4:8]
    return request


def test_the_lite_request_reaches_anthropic_with_every_tool():
    translation = translate_request(lite_request_with_history(), "anthropic")
    names = [t["name"] for t in translation.body["tools"]]
    assert names == [*LITE_FUNCTIONS, "tool_search"]
    apply_patch = translation.body["tools"][3]
    assert apply_patch["input_schema"]["required"] == ["input"]
    assert "*** Begin Patch" in apply_patch["description"]


def test_every_history_call_is_followed_by_its_result():
    request = lite_request_with_history()
    messages = translate_request(request, "anthropic").body["messages"]
    patches = {
        item["call_id"]: item["input"] for item in request["input"] if item["type"] == "custom_tool_call"
    }
    assert [(m["role"], [b["type"] for b in m["content"]]) for m in messages] == [
        ("user", ["text", "text"]),
        ("assistant", ["tool_use"]),
        ("user", ["tool_result"]),
        ("assistant", ["text", "tool_use"]),
        ("user", ["tool_result"]),
    ]
    for call_turn, result_turn in ((messages[1], messages[2]), (messages[3], messages[4])):
        use = call_turn["content"][-1]
        assert use["name"] == "apply_patch"
        assert use["input"] == {"input": patches[use["id"]]}
        assert result_turn["content"][0]["tool_use_id"] == use["id"]
    assert [m["content"][-1]["id"] for m in (messages[1], messages[3])] == ["call_patch_1", "call_p1"]


def test_the_dropped_list_is_exact():
    translation = translate_request(lite_request_with_history(), "anthropic")
    # text.verbosity: Anthropic has no verbosity; input[7]: OpenAI-encrypted reasoning no other model can
    # read; input[8].phase: Anthropic messages have no phase; reasoning.effort: thinking is off for
    # this request, whose open tool turn carries no Anthropic signature. Everything else is carried
    # or is bookkeeping (ids, status, store, include, prompt_cache_key, client_metadata, reasoning.context).
    assert sorted(translation.dropped) == ["input[7]", "input[8].phase", "reasoning.effort", "text.verbosity"]
    assert len(translation.dropped) == len(set(translation.dropped))


def test_the_developer_messages_are_the_system_prompt_and_the_settings_carry_over():
    request = lite_request_with_history()
    body = translate_request(request, "anthropic").body
    assert [b["text"] for b in body["system"]] == [
        request["input"][1]["content"][0]["text"],
        "\n".join(part["text"] for part in request["input"][2]["content"]),
    ]
    assert body["model"] == request["model"]  # the recorded Lite request names claude-sonnet-4-5 itself
    assert body["tool_choice"] == {"type": "auto", "disable_parallel_tool_use": True}
    assert "client_metadata" not in body


def test_thinking_is_off_because_the_open_tool_turn_carries_no_anthropic_signature():
    translation = translate_request(lite_request_with_history(), "anthropic")
    assert "thinking" not in translation.body
    assert any("thinking turned off" in note for note in translation.notes)


def test_the_classic_request_drops_only_web_search_and_verbosity():
    request = codex_request("request_classic_gpt55.json")
    assert request["tools"][9]["type"] == "web_search"
    translation = translate_request(request, "anthropic", "claude-sonnet-4-6")
    assert sorted(translation.dropped) == ["text.verbosity", "tools[9]"]
    assert [t["name"] for t in translation.body["tools"]] == [*LITE_FUNCTIONS, "tool_search"]
    # Sonnet 4.6 thinks adaptively, at the effort Codex asked for
    assert translation.body["thinking"] == {"type": "adaptive", "display": "summarized"}
    assert translation.body["output_config"] == {"effort": request["reasoning"]["effort"]}


def test_the_unknown_model_request_flattens_its_namespace_and_describes_it():
    request = codex_request("request_unknown_model.json")
    translation = translate_request(request, "anthropic")
    names = [t["name"] for t in translation.body["tools"]]
    assert "multi_agent_v1__spawn_agent" in names
    assert translation.tools.lookup("multi_agent_v1__spawn_agent").namespace == "multi_agent_v1"
    assert "Tools for spawning and managing sub-agents." in translation.body["system"][-1]["text"]
    # tools[8] is web_search; reasoning.summary "auto" has no Anthropic meaning without an effort
    assert sorted(translation.dropped) == ["reasoning.summary", "tools[8]"]
