"""translators/core/report.py, core/errors.py and wire/upstream_errors.py: what could not be
carried, and error terms."""

from __future__ import annotations

import pytest

from translators.anthropic.errors import ERRORS as ANTHROPIC
from translators.bedrock.errors import ERRORS as BEDROCK
from translators.chat.errors import ERRORS as CHAT
from translators.core.errors import Refused, UpstreamProtocolError, error_type_for_status
from translators.core.report import Report
from translators.gemini.failures import ERRORS as GEMINI
from translators.wire.upstream_errors import PLAIN, clip, code_for, describe, text_of

TABLES = {"anthropic": ANTHROPIC, "chat": CHAT, "gemini": GEMINI, "bedrock": BEDROCK}


def test_dropped_paths_keep_their_order_and_appear_once():
    report = Report()
    for path in ("input[3].phase", "text.verbosity", "input[3].phase"):
        report.drop(path)
    assert report.dropped == ["input[3].phase", "text.verbosity"]


@pytest.mark.parametrize("path", ["tools[3].strict", "tools[0].tools[12].strict", "text.verbosity",
                                  "text.format.strict", "reasoning.summary", "input[7].phase",
                                  "input[2].content[1].detail", "service_tier"])
def test_a_drop_that_changes_nothing_the_model_sees_or_may_do_is_cosmetic(path):
    report = Report()
    report.drop(path)
    assert (report.dropped, report.cosmetic, report.lossy) == ([path], [path], [])


@pytest.mark.parametrize("path", ["tools[9]", "input[2].content[1]", "text.format", "reasoning.effort",
                                  "input[4]", "tool_choice", "parallel_tool_calls", "text.format.description",
                                  "tools[3].strictly", "xtools[3].strict", "tools[a].strict",
                                  "some_new_field"])
def test_every_other_drop_is_lossy(path):
    report = Report()
    report.drop(path)
    assert (report.dropped, report.cosmetic, report.lossy) == ([path], [], [path])


def test_a_site_may_name_the_kind_of_a_drop_that_depends_on_the_value():
    report = Report()
    report.drop("parallel_tool_calls", "cosmetic")
    report.drop("text.verbosity", "lossy")
    assert (report.cosmetic, report.lossy) == (["parallel_tool_calls"], ["text.verbosity"])


def test_a_path_named_lossy_once_stays_lossy_and_keeps_its_place():
    report = Report()
    report.drop("a", "cosmetic")
    report.drop("b")
    report.drop("a", "lossy")
    report.drop("a", "cosmetic")
    assert (report.dropped, report.lossy) == (["a", "b"], ["a", "b"])


def test_unread_keys_take_the_kind_of_their_path():
    report = Report()
    report.drop_unread({"type": "function", "strict": True, "defer_loading": True}, {"type"}, "tools[4]")
    assert (report.cosmetic, report.lossy) == (["tools[4].strict"], ["tools[4].defer_loading"])


UNREAD = [f"k{i}" for i in range(12, 0, -1)]
"""Twelve unread keys, newest-looking first: a hash-ordered set would all but never give them in
this order, in any process."""


def test_unread_keys_are_dropped_in_request_order():
    report = Report()
    report.drop_unread({"type": "x", **dict.fromkeys(UNREAD, 1)}, {"type"}, "tools[0]")
    assert report.dropped == [f"tools[0].{key}" for key in UNREAD]


def test_unread_keys_with_nothing_in_them_can_be_passed_over():
    report = Report()
    report.drop_unread({"a": None, "b": [], "c": "", "d": 0, "e": "x"}, set(), "input[1]", skip_empty=True)
    assert report.dropped == ["input[1].d", "input[1].e"]


def test_notes_keep_their_order_and_appear_once():
    report = Report()
    for text in ("b", "a", "b"):
        report.note(text)
    assert report.notes == ["b", "a"]


def test_an_empty_report_is_falsy():
    assert not Report()
    assert Report(dropped=["x"])


@pytest.mark.parametrize(
    ("status", "kind"),
    [
        (400, "invalid_request_error"),
        (401, "authentication_error"),
        (404, "not_found_error"),
        (418, "invalid_request_error"),
        (429, "rate_limit_error"),
        (500, "server_error"),
        (529, "server_error"),
    ],
)
def test_error_types_follow_the_http_status(status, kind):
    assert error_type_for_status(status) == kind


def test_a_refusal_is_a_400_and_an_upstream_protocol_error_a_502():
    assert Refused("x").status == 400
    assert UpstreamProtocolError("x").status == 502
    assert UpstreamProtocolError("x").to_body()["error"]["code"] == "upstream_protocol_error"


@pytest.mark.parametrize(
    "message",
    [
        "prompt is too long: 210000 tokens > 200000 maximum",
        "This model's maximum context length is 128000 tokens",
        "input is too long for requested model",
    ],
)
def test_context_overflow_messages_are_context_length_exceeded(message):
    assert code_for(400, message) == "context_length_exceeded"


@pytest.mark.parametrize(
    ("status", "code"),
    [(401, "invalid_api_key"), (402, "insufficient_quota"), (429, "rate_limit_exceeded"),
     (500, "server_error"), (503, "server_is_overloaded"), (599, "server_error"),
     (418, "invalid_request_error")],
)
def test_the_http_status_decides_the_code_when_nothing_says_more(status, code):
    assert code_for(status, "something") == code


@pytest.mark.parametrize(
    ("dialect", "status", "vendor", "code"),
    [
        ("anthropic", 529, "overloaded_error", "server_is_overloaded"),
        ("anthropic", 500, "overloaded_error", "server_is_overloaded"),
        ("anthropic", 400, "billing_error", "insufficient_quota"),
        ("chat", 429, "insufficient_quota", "insufficient_quota"),
        ("gemini", 500, "UNAVAILABLE", "server_is_overloaded"),
        ("bedrock", 500, "com.amazon.bedrock#ServiceUnavailableException", "server_is_overloaded"),
        ("bedrock", 400, "validationException:http", "invalid_request_error"),
    ],
)
def test_a_dialects_error_table_names_what_its_types_mean(dialect, status, vendor, code):
    assert code_for(status, "something", vendor, TABLES[dialect]) == code


def test_a_dialects_own_overflow_wording_is_a_context_overflow_there_only():
    message = "input length and `max_tokens` exceed context limit: 187254 + 20000 > 200000"
    assert code_for(400, message, table=TABLES["bedrock"]) == "context_length_exceeded"
    assert code_for(400, message) == "invalid_request_error"


def test_an_error_without_a_status_takes_its_types_status():
    failure = describe(TABLES["anthropic"], "slow down", error_type="rate_limit_error")
    assert (failure.status, failure.code, failure.message) == (429, "rate_limit_exceeded",
                                                               "rate_limit_error: slow down")
    assert describe(TABLES["anthropic"], "x", error_type="mystery_error").status == 400


def test_a_retry_delay_is_written_into_the_message_once():
    assert describe(PLAIN, "Slow down.", status=429, retry_after=1.5).message == (
        "Slow down. Please try again in 1.5s.")
    said = "Rate limit reached, try again in 2s."
    assert describe(PLAIN, said, status=429, retry_after=2).message == said


def test_text_of_decodes_bytes_leniently_and_keeps_them_whole():
    assert text_of(b"\xffok") == "\ufffdok"
    assert text_of(b"x" * 5000) == "x" * 5000


def test_clip_is_where_a_long_message_is_cut_and_says_how_much_went():
    assert clip("x" * 4000) == "x" * 4000
    assert clip("x" * 4010) == "x" * 4000 + "... (10 more characters)"
    assert clip("abcdef", 4) == "abcd... (2 more characters)"


def test_a_renamed_path_keeps_the_kind_of_the_path_as_named() -> None:
    report = Report()
    report.drop("before")
    report.rename(lambda path: f"client.{path}")
    report.drop("user")  # cosmetic by COSMETIC, written in the client's words
    report.drop("text.format")
    assert report.dropped == ["before", "client.user", "client.text.format"]
    assert report.cosmetic == ["client.user"]
