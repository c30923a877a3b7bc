"""Requests that must not go upstream: refused with a Responses-shaped error (issue 2, Build 3)."""

from __future__ import annotations

import pytest

from tests.translators.bodies import body, user
from translators import MalformedRequest, Refused, TranslatorError, UnsupportedFeature, translate_request

REFUSED_ITEMS = [
    {"type": "item_reference", "id": "msg_123"},
    {"type": "compaction_trigger"},  # anywhere but last (a final one asks for a summary)
]


@pytest.mark.parametrize("item", REFUSED_ITEMS, ids=lambda i: i["type"])
def test_openai_only_items_are_refused_with_a_responses_shaped_error(item):
    with pytest.raises(Refused) as info:
        translate_request(body(user("q"), item, user("r")), "anthropic")
    error = info.value.to_body()["error"]
    assert set(error) == {"type", "code", "message", "param"}
    assert error["type"] == "invalid_request_error"
    assert error["code"] == "unsupported_feature"
    assert error["param"] == "input[1]"
    assert item["type"] in error["message"]
    assert info.value.status == 400


@pytest.mark.parametrize("field", ["previous_response_id", "conversation", "prompt"])
def test_server_side_state_is_refused(field):
    value = {"previous_response_id": "resp_1", "conversation": "conv_1", "prompt": {"id": "pmpt_1"}}[field]
    with pytest.raises(UnsupportedFeature) as info:
        translate_request(body(user("q"), **{field: value}), "anthropic")
    assert info.value.to_error()["param"] == field


def test_the_responses_target_lets_openai_judge_compaction_items_itself():
    translation = translate_request(body(user("q"), {"type": "compaction_trigger"}), "responses")
    assert translation.body["input"][1] == {"type": "compaction_trigger"}


@pytest.mark.parametrize("bad", [[], {"input": "x"}, {"model": "", "input": "x"}])
def test_a_body_that_is_not_a_responses_request_is_malformed(bad):
    with pytest.raises(MalformedRequest) as info:
        translate_request(bad, "anthropic")
    assert info.value.to_error()["type"] == "invalid_request_error"


def test_every_refusal_is_a_translator_error():
    assert issubclass(Refused, TranslatorError)
    assert issubclass(UnsupportedFeature, Refused)
    assert issubclass(MalformedRequest, Refused)
