"""Anthropic's `cache_control` on the body: the client's breakpoints kept with their TTL, the
gateway's added after them (translators/anthropic/caching.py, docs/anthropic.md "Prompt caching")."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.translators.anthropic.test_request import thinking_item
from tests.translators.bodies import body, function, function_call, function_output, user
from tests.translators.messages_client import messages as mc
from translators import translate_request
from translators.anthropic import caching

HOUR = {"type": "ephemeral", "ttl": "1h"}
FIVE = {"type": "ephemeral"}


def marked(translation_body: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """(where, cache_control) of every breakpoint, in cache order."""
    out = [(f"tools[{i}]", t["cache_control"]) for i, t in enumerate(translation_body.get("tools", []))
           if "cache_control" in t]
    out += [(f"system[{i}]", b["cache_control"]) for i, b in enumerate(translation_body.get("system", []))
            if "cache_control" in b]
    for m, message in enumerate(translation_body["messages"]):
        out += [(f"messages[{m}].content[{j}]", b["cache_control"]) for j, b in enumerate(message["content"])
                if "cache_control" in b]
    return out


def test_a_codex_turn_marks_the_newest_block_the_last_request_end_and_the_system_prompt():
    request = body(user("a"), function_call("c1", "f"), function_output("c1", "out"),
                   function_call("c2", "f"), function_output("c2", "out2"),
                   tools=[function("f")], instructions="be brief")
    assert marked(translate_request(request, "anthropic").body) == [
        ("system[0]", FIVE),               # tools and system: still read when the history changes
        ("messages[0].content[0]", FIVE),  # the request before the last one ended here
        ("messages[2].content[0]", FIVE),  # the last request ended here
        ("messages[4].content[0]", FIVE)]  # the newest block: next turn reads up to here


def test_the_clients_breakpoints_stay_where_they_were_with_their_ttl():
    request = mc.body(
        mc.user(mc.text("question", cache_control=HOUR)),
        mc.assistant(mc.text("answer")),
        mc.user(mc.text("next")),
        system=[mc.text("rules", cache_control=HOUR)],
        tools=[mc.tool("A", cache_control=HOUR)],
    )
    translation = translate_request(request, "anthropic", client="messages")
    assert translation.dropped == []
    assert marked(translation.body) == [("tools[0]", HOUR), ("system[0]", HOUR),
                                        ("messages[0].content[0]", HOUR),  # the client's own
                                        ("messages[2].content[0]", FIVE)]  # the gateway's: the newest block


def test_a_gateway_mark_before_a_clients_hour_mark_is_an_hour_too():
    request = mc.body(mc.user(mc.text("a")), mc.assistant(mc.text("b")),
                      mc.user(mc.text("c", cache_control=HOUR)), system=[mc.text("rules")])
    translation = translate_request(request, "anthropic", client="messages")
    assert marked(translation.body) == [("system[0]", HOUR), ("messages[0].content[0]", HOUR),
                                        ("messages[2].content[0]", HOUR)]


def test_the_top_level_cache_control_lands_on_the_last_block_with_its_ttl():
    request = mc.body(mc.user(mc.text("a")), mc.assistant(mc.text("b")), mc.user(mc.text("c")),
                      cache_control=HOUR)
    body_ = translate_request(request, "anthropic", client="messages").body
    assert "cache_control" not in body_  # written on the block it means
    assert ("messages[2].content[0]", HOUR) in marked(body_)


def test_claude_codes_first_request_keeps_its_three_breakpoints():
    translation = translate_request(mc.claude_code_request(), "anthropic", client="messages")
    assert translation.dropped == ["system[0]"]  # the billing line alone
    # its system message follows its first user turn: one turn, so no earlier request to read
    assert marked(translation.body) == [("system[0]", FIVE), ("system[1]", FIVE),
                                        ("messages[0].content[2]", FIVE)]


def test_thinking_blocks_are_never_marked():
    request = body(user("a"), thinking_item(), function_call("c1", "f"), function_output("c1", "out"),
                   tools=[function("f")], reasoning={"effort": "high"})
    body_ = translate_request(request, "anthropic", "claude-sonnet-4-6").body
    thinking_blocks = [b for m in body_["messages"] for b in m["content"] if b["type"] == "thinking"]
    assert thinking_blocks and all("cache_control" not in b for b in thinking_blocks)


def test_another_upstream_reports_the_clients_breakpoints_dropped():
    request = mc.body(mc.user(mc.text("a", cache_control=FIVE)), system=[mc.text("s", cache_control=HOUR)])
    translation = translate_request(request, "gemini", "gemini-3-flash-preview", client="messages")
    assert sorted(translation.cosmetic) == ["messages[0].content[0].cache_control", "system[0].cache_control"]


def test_the_writes_for_an_hour_are_read_apart():
    from translators.anthropic.stream import usage_event
    by_ttl = {"ephemeral_5m_input_tokens": 100, "ephemeral_1h_input_tokens": 200}
    usage = usage_event({"input_tokens": 10, "cache_read_input_tokens": 500,
                         "cache_creation_input_tokens": 300, "cache_creation": by_ttl, "output_tokens": 7})
    read = (usage.input_tokens, usage.cached_tokens, usage.cache_write_tokens, usage.cache_write_1h_tokens)
    assert read == (810, 500, 300, 200)


def test_parallel_results_sent_as_they_finished_keep_the_clients_newest_mark_on_the_newest_block():
    """Claude Code lists parallel tool results as they finish and marks the last one; the results
    go upstream in call order, and its mark with the newest block, so the breakpoint left reads
    where the last request ended, 24 blocks back (docs/claude-code.md "Prompt caching")."""
    history = [mc.user(mc.text("go")), mc.assistant(mc.tool_use("t0", "Bash")),
               mc.user(mc.tool_result("t0", "out"))]
    calls = [mc.tool_use(f"c{i}", "Bash") for i in range(12)]
    finished = [3, 0, 11, 7, 4, 2, 1, 10, 9, 5, 6, 8]
    results = [mc.tool_result(f"c{i}", f"out {i}") for i in finished]
    results[-1]["cache_control"] = FIVE
    request = mc.body(*history, mc.assistant(*calls), mc.user(*results),
                      system=[mc.text("a", cache_control=FIVE), mc.text("b", cache_control=FIVE)])
    body_ = translate_request(request, "anthropic", client="messages").body
    assert [b["tool_use_id"] for b in body_["messages"][-1]["content"]] == [f"c{i}" for i in range(12)]
    assert marked(body_) == [("system[0]", FIVE), ("system[1]", FIVE), ("messages[2].content[0]", FIVE),
                             ("messages[4].content[11]", FIVE)]


_BLOCKS = st.sampled_from([{"type": "text", "text": "t"}, {"type": "text", "text": ""},
                           {"type": "thinking", "thinking": "x", "signature": "s"},
                           {"type": "redacted_thinking", "data": "d"}, {"type": "tool_use", "id": "a"},
                           {"type": "tool_result", "tool_use_id": "a"}, {"type": "image"}]).map(dict)
_BODIES = st.fixed_dictionaries({
    "tools": st.lists(st.builds(dict, name=st.just("f"), input_schema=st.builds(dict)), max_size=2),
    "system": st.lists(_BLOCKS, max_size=2),
    "messages": st.lists(st.fixed_dictionaries({"role": st.sampled_from(["user", "assistant"]),
                                                "content": st.lists(_BLOCKS, max_size=3)}), max_size=12)})


@given(_BODIES)
@settings(max_examples=400, deadline=None)
def test_a_body_without_a_clients_mark_is_marked_as_the_general_placement_marks_it(
        made: dict[str, Any]) -> None:
    """The unmarked placement (a Responses client's every request) reads from the body's end; it
    marks the very blocks the placement over every block's slot marks."""
    fast, general = copy.deepcopy(made), copy.deepcopy(made)
    caching.place(fast, marked=False)
    caching.place(general, marked=True)
    assert fast == general
    assert marked(fast) == marked(general)
