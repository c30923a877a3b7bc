"""DSML tool-call markup in DeepSeek text -> real tool calls (docs/chat.md "DSML markup")."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.translators.chat.chatdata import (
    chunk,
    client_stream,
    decode,
    function,
    run_report,
    sse,
    text_stream,
    tool_call,
    translation,
)
from tests.translators.growth import SAME_COST_BOUND, slower
from tests.translators.streamcheck import done_items
from translators.chat import dsml
from translators.ir import events as ev

# As posted in opencode issue #24566 (DeepSeek-V4-Flash), quoted in docs/chat.md "DSML markup".
V4_BLOCK = (
    "<｜DSML｜tool_calls>\n"
    '<｜DSML｜invoke name="read">\n'
    '<｜DSML｜parameter name="filePath" string="true">'
    "I:\\hrc\\usermode\\src\\hypercall\\hypercall.cpp</｜DSML｜parameter>\n"
    '<｜DSML｜parameter name="limit" string="false">15</｜DSML｜parameter>\n'
    '<｜DSML｜parameter name="offset" string="false">357</｜DSML｜parameter>\n'
    "</｜DSML｜invoke>\n"
    "</｜DSML｜tool_calls>"
)
V4_ARGS = {"filePath": "I:\\hrc\\usermode\\src\\hypercall\\hypercall.cpp", "limit": 15, "offset": 357}
# The V3.2 form from the vLLM/xinference parser docstrings.
V32_BLOCK = (
    '<｜DSML｜function_calls>\n<｜DSML｜invoke name="get_weather">\n'
    '<｜DSML｜parameter name="location" string="true">杭州</｜DSML｜parameter>\n'
    "</｜DSML｜invoke>\n</｜DSML｜function_calls>"
)


def _args(calls: list[dsml.Call] | None) -> list[tuple[str, object]]:
    assert calls is not None
    return [(c.name, json.loads(c.arguments)) for c in calls]


def _segments(*pieces: str) -> list[dsml.Segment]:
    scanner = dsml.Scanner()
    out: list[dsml.Segment] = []
    for piece in pieces:
        out += scanner.feed(piece)
    return out + scanner.close()


def _text(segments: list[dsml.Segment]) -> str:
    return "".join(s for s in segments if isinstance(s, str))


def _calls(segments: list[dsml.Segment]) -> list[dsml.Call]:
    return [c for s in segments if not isinstance(s, str) for c in s]


# -- the grammar ------------------------------------------------------------------------------


def test_v4_tool_calls_block_parses_into_typed_arguments() -> None:
    assert _args(dsml.parse(V4_BLOCK)) == [("read", V4_ARGS)]


def test_v32_function_calls_wrapper_parses_too() -> None:
    assert _args(dsml.parse(V32_BLOCK)) == [("get_weather", {"location": "杭州"})]


@pytest.mark.parametrize("bar", ["|", "‖", "｜｜"])
def test_bar_variants_parse_like_the_full_width_bar(bar: str) -> None:
    assert _args(dsml.parse(V4_BLOCK.replace("｜", bar))) == [("read", V4_ARGS)]


def test_bare_invoke_without_wrapper_parses() -> None:
    block = (
        '<｜DSML｜invoke name="ls">\n'
        '<｜DSML｜parameter name="dir" string="true">.</｜DSML｜parameter>\n'
        "</｜DSML｜invoke>"
    )
    assert _args(dsml.parse(block)) == [("ls", {"dir": "."})]


def test_wrapper_left_open_parses() -> None:
    assert _args(dsml.parse(V4_BLOCK.removesuffix("</｜DSML｜tool_calls>"))) == [("read", V4_ARGS)]


def test_several_invokes_are_parallel_calls_in_order() -> None:
    block = (
        '<｜DSML｜tool_calls>\n<｜DSML｜invoke name="a">\n</｜DSML｜invoke>\n'
        '<｜DSML｜invoke name="b">\n</｜DSML｜invoke>\n</｜DSML｜tool_calls>'
    )
    assert [c.name for c in dsml.parse(block) or []] == ["a", "b"]


def test_string_false_values_are_json() -> None:
    block = (
        '<|DSML|invoke name="f">'
        '<|DSML|parameter name="n" string="false">1.5</|DSML|parameter>'
        '<|DSML|parameter name="b" string="false">true</|DSML|parameter>'
        '<|DSML|parameter name="o" string="false">{"k": [1, null]}</|DSML|parameter>'
        "</|DSML|invoke>"
    )
    assert _args(dsml.parse(block)) == [("f", {"n": 1.5, "b": True, "o": {"k": [1, None]}})]


def test_string_true_values_are_kept_verbatim() -> None:
    block = (
        '<|DSML|invoke name="f"><|DSML|parameter name="s" string="true">'
        ' 15\n<b>"x"</b> </|DSML|parameter></|DSML|invoke>'
    )
    assert _args(dsml.parse(block)) == [("f", {"s": ' 15\n<b>"x"</b> '})]


def test_string_false_value_that_is_not_json_stays_a_string() -> None:
    block = (
        '<|DSML|invoke name="f"><|DSML|parameter name="p" string="false">a b</|DSML|parameter></|DSML|invoke>'
    )
    assert _args(dsml.parse(block)) == [("f", {"p": "a b"})]


@pytest.mark.parametrize(
    "block",
    [
        '<|DSML|invoke nom="f"></|DSML|invoke>',  # no name
        '<|DSML|invoke name="f">loose text</|DSML|invoke>',  # text outside a parameter
        '<|DSML|invoke name="f"><|DSML|parameter string="true">x</|DSML|parameter></|DSML|invoke>',
        "<|DSML|tool_calls>\n</|DSML|tool_calls>",  # no call at all
    ],
)
def test_markup_that_does_not_parse_is_not_a_call(block: str) -> None:
    assert dsml.parse(block) is None


# -- finding blocks in streamed text -----------------------------------------------------------


def test_marker_split_across_pieces_at_every_position_gives_the_same_call() -> None:
    text = "I'll read it.\n\n" + V4_BLOCK
    for at in range(len(text) + 1):
        segments = _segments(text[:at], text[at:])
        assert _text(segments) == "I'll read it.", at
        assert _args(_calls(segments)) == [("read", V4_ARGS)], at


def test_long_close_marker_split_anywhere_still_ends_the_block() -> None:
    block = (
        '<｜｜DSML｜｜function_calls><｜｜DSML｜｜invoke name="f">'
        "</｜｜DSML｜｜invoke></｜｜DSML｜｜function_calls>"
    )
    for at in range(len(block) + 1):
        assert _segments(block[:at], block[at:], "after") == [[dsml.Call("f", "{}")], "after"], at


def test_one_character_pieces_leak_no_markup() -> None:
    segments = _segments(*("hello" + V32_BLOCK))
    assert _text(segments) == "hello"
    assert [c.name for c in _calls(segments)] == ["get_weather"]


def test_held_text_is_released_once_it_cannot_be_a_marker() -> None:
    scanner = dsml.Scanner()
    assert scanner.feed("hello<｜DS") == ["hello"]
    assert scanner.feed("X and more") == ["<｜DSX and more"]


def test_markup_that_does_not_parse_stays_text_verbatim() -> None:
    text = "see <｜DSML｜tool_calls> not really </｜DSML｜tool_calls> ok"
    segments = _segments(text)
    assert _text(segments) == text and not _calls(segments)


def test_unterminated_invalid_block_at_the_end_comes_back_as_text() -> None:
    text = 'x <|DSML|invoke name="f"><|DSML|parameter name="a" string="true">cut'
    assert _segments(text[:9], text[9:]) == ["x", " " + text[2:]]


@given(st.lists(st.text(alphabet="ab <>|｜‖/DSML\n", max_size=12), max_size=8))
def test_text_without_a_valid_block_passes_through_whole(pieces: list[str]) -> None:
    segments = _segments(*pieces)  # the alphabet cannot spell `name="..."`, so nothing parses
    assert not _calls(segments)
    assert _text(segments) == "".join(pieces)


# -- in a Chat stream --------------------------------------------------------------------------


def _dsml_stream(*pieces: str) -> bytes:
    return sse(
        chunk({"role": "assistant", "content": None, "reasoning_content": ""}),
        *(chunk({"content": p, "reasoning_content": None}) for p in pieces),
        chunk(finish="stop"),
    )


def _meaning(items: list[dict]) -> list[tuple]:
    return [
        (i["type"], i.get("name"), json.loads(i["arguments"]) if "arguments" in i else i.get("content"))
        for i in items
    ]


def test_dsml_in_deepseek_text_gives_the_same_calls_as_real_tool_calls() -> None:
    trans = translation(
        "deepseek-v4-flash", tools=[function("read", filePath="string", limit="integer", offset="integer")]
    )
    native = sse(
        chunk({"content": "Reading."}),
        chunk({"tool_calls": [tool_call(0, "call_00_x", "read", json.dumps(V4_ARGS))]}),
        chunk(finish="tool_calls"),
    )
    expected = _meaning(done_items(client_stream(native, trans)))
    text = "Reading.\n\n" + V4_BLOCK
    for at in range(len(text) + 1):
        assert _meaning(done_items(client_stream(_dsml_stream(text[:at], text[at:]), trans))) == expected, at


def test_recovered_calls_make_the_finish_reason_tool_calls() -> None:
    events = decode(_dsml_stream("ok\n\n" + V32_BLOCK))
    assert events[-1] == ev.Finished("tool_calls")


def test_recovery_is_noted_in_the_report() -> None:
    _, report = run_report(_dsml_stream(V32_BLOCK), translation("deepseek-chat"))
    assert any("DSML" in note for note in report.notes)


def test_block_left_open_at_the_end_of_the_stream_is_recovered() -> None:
    items = done_items(client_stream(_dsml_stream(V4_BLOCK.removesuffix("</｜DSML｜tool_calls>"))))
    assert [(i["type"], i["name"]) for i in items] == [("function_call", "read")]


def test_dsml_call_to_a_freeform_tool_is_a_custom_tool_call() -> None:
    trans = translation(
        "deepseek-chat", tools=[{"type": "custom", "name": "apply_patch", "description": "p"}]
    )
    patch = "*** Begin Patch\n*** Add File: a\n+x\n*** End Patch\n"
    block = (
        '<｜DSML｜invoke name="apply_patch">'
        f'<｜DSML｜parameter name="input" string="true">{patch}</｜DSML｜parameter>'
        "</｜DSML｜invoke>"
    )
    item = done_items(client_stream(_dsml_stream(block), trans))[0]
    assert (item["type"], item["input"]) == ("custom_tool_call", patch)


def test_plain_text_with_angle_brackets_is_untouched() -> None:
    text = "if a <b and c> d:\n  <|not dsml|>  "
    assert done_items(client_stream(text_stream(*text)))[0]["content"][0]["text"] == text


def test_a_long_open_block_costs_about_what_the_same_text_costs() -> None:
    """Only the new piece (and the old tail) is searched for the closing marker; the block's
    pieces are joined once (docs/design.md "Limits")."""
    head = ('<｜DSML｜tool_calls>\n<｜DSML｜invoke name="apply_patch">\n'
            '<｜DSML｜parameter name="input" string="true">')
    body = "q" * 1_600_000
    pieces = [body[i:i + 256] for i in range(0, len(body), 256)]

    def feed(first: str) -> None:
        scanner = dsml.Scanner()
        scanner.feed(first)
        for piece in pieces:
            scanner.feed(piece)

    assert slower(lambda: feed(head), lambda: feed("plain text ")) < SAME_COST_BOUND


def test_a_block_fed_in_many_pieces_is_the_same_call() -> None:
    pieces = [V4_BLOCK[i:i + 7] for i in range(0, len(V4_BLOCK), 7)]
    (calls,) = _segments(*pieces)
    assert isinstance(calls, list) and _args(calls) == [("read", V4_ARGS)]
