"""translators/features/freeform.py: freeform (custom) tools on JSON-only targets."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from tests.translators.bodies import APPLY_PATCH_GRAMMAR, PATCH
from translators.features import freeform
from translators.ir.request import CustomTool


def test_the_synthesized_schema_has_one_required_string_argument_named_input():
    schema = freeform.schema()
    assert schema["type"] == "object"
    assert list(schema["properties"]) == ["input"]
    assert schema["properties"]["input"]["type"] == "string"
    assert schema["required"] == ["input"]


def test_the_description_keeps_the_tools_own_text_and_carries_syntax_and_definition():
    tool = CustomTool(
        name="apply_patch", description="Edit files.", syntax="lark", definition=APPLY_PATCH_GRAMMAR
    )
    text = freeform.description(tool)
    assert text.startswith("Edit files.")
    assert "lark grammar" in text
    assert APPLY_PATCH_GRAMMAR.strip() in text


def test_a_tool_without_grammar_gets_no_grammar_section():
    assert "grammar" not in freeform.description(CustomTool(name="exec", description="Run JS."))


def test_unwrap_returns_the_raw_text_of_the_input_argument():
    assert freeform.unwrap(json.dumps({"input": PATCH})) == PATCH


def test_arguments_that_are_not_json_pass_through_verbatim():
    assert freeform.unwrap("*** Begin Patch\n{oops") == "*** Begin Patch\n{oops"


def test_arguments_that_do_not_match_the_synthesized_schema_pass_through_verbatim():
    for text in ('{"patch": "x"}', '{"input": "x", "extra": 1}', '{"input": 3}', '"just a string"', "[]"):
        assert freeform.unwrap(text) == text


def test_wrap_then_unwrap_gives_back_the_same_text():
    assert freeform.unwrap(freeform.wrap(PATCH)) == PATCH


def test_text_that_matches_the_lark_grammar_has_no_mismatch():
    assert freeform.grammar_mismatch("lark", APPLY_PATCH_GRAMMAR, PATCH) is None


def test_text_that_does_not_match_the_lark_grammar_is_described():
    problem = freeform.grammar_mismatch("lark", APPLY_PATCH_GRAMMAR, "echo not a patch\n")
    assert isinstance(problem, str)
    assert problem


def test_a_regex_grammar_is_checked_as_a_full_match():
    assert freeform.grammar_mismatch("regex", r"[a-z]+", "abc") is None
    assert freeform.grammar_mismatch("regex", r"[a-z]+", "abc1") is not None


def test_a_tool_without_definition_is_never_a_mismatch():
    assert freeform.grammar_mismatch("lark", None, "anything") is None


def test_a_grammar_that_does_not_compile_is_not_blamed_on_the_text():
    assert freeform.grammar_mismatch("lark", "start: undefined_rule\n", "x") is None


def test_codex_apply_patch_grammar_with_zero_width_terminals_checks_real_patches():
    # Regression: lark refuses the zero-width `/(.*)/` terminals of Codex's grammar, and every
    # apply_patch call used to get a "does not parse" note.
    update = (
        "*** Begin Patch\n*** Update File: a.py\n@@ def f():\n-    return 1\n+    return 2\n+\n \n"
        "*** Delete File: b.py\n*** End Patch"
    )
    assert freeform.grammar_mismatch("lark", APPLY_PATCH_GRAMMAR, update) is None
    assert (
        freeform.grammar_mismatch("lark", APPLY_PATCH_GRAMMAR, "*** Begin Patch\n*** End Patch\n") is not None
    )


EXEC_GRAMMAR = r"""
start: pragma_source | plain_source
pragma_source: PRAGMA_LINE NEWLINE SOURCE
plain_source: SOURCE

PRAGMA_LINE: /[ \t]*\/\/ @exec:[^\r\n]*/
NEWLINE: /\r?\n/
SOURCE: /[\s\S]+/
"""
"""Codex's code-mode `exec` grammar (docs/codex.md "Code-mode exec")."""


def test_codex_exec_grammar_accepts_javascript_source():
    source = 'const r = await tools.exec_command({cmd:"echo hi"});\ntext(r);'
    assert freeform.grammar_mismatch("lark", EXEC_GRAMMAR, source) is None
    assert freeform.grammar_mismatch("lark", EXEC_GRAMMAR, "// @exec: yield_time_ms=10\n" + source) is None


def _stream(fragments: list[str]) -> str:
    streamer = freeform.InputStreamer()
    return "".join(streamer.feed(f) for f in fragments)


def test_the_streamer_yields_the_raw_text_at_every_split_point():
    arguments = json.dumps({"input": PATCH})
    for at in range(len(arguments) + 1):
        assert _stream([arguments[:at], arguments[at:]]) == PATCH, at


def test_the_streamer_decodes_surrogate_pairs_split_anywhere():
    arguments = json.dumps({"input": "a😀b"})  # ensure_ascii: \ud83d\ude00
    assert "\\ud83d\\ude00" in arguments
    assert _stream(list(arguments)) == "a😀b"


def test_the_streamer_accepts_whitespace_around_the_key():
    assert _stream(['{ "input" ', ':  "x\\ny"', "}"]) == "x\ny"


def test_the_streamer_stays_silent_when_the_arguments_are_not_the_input_object():
    assert _stream(['{"patch": "', "*** Begin", '"}']) == ""


@given(st.text(), st.lists(st.integers(min_value=0, max_value=400), max_size=6), st.booleans())
def test_the_streamer_output_is_the_text_for_any_chunking(text, cuts, ascii_only):
    arguments = json.dumps({"input": text}, ensure_ascii=ascii_only)
    points = sorted({min(c, len(arguments)) for c in cuts})
    pieces = [arguments[a:b] for a, b in zip([0, *points], [*points, len(arguments)], strict=True)]
    assert _stream(pieces) == text
