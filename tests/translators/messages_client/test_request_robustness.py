"""Whatever the body, the decoder answers with a request or with the package's own refusal (which
becomes Anthropic's 400), never with another exception: a property over bodies made by replacing
parts of real and hand-written requests with values of every JSON type."""

from __future__ import annotations

import copy
import random
from typing import Any

from tests.support.depth import examples
from tests.translators.messages_client.messages import (
    assistant,
    body,
    claude_code_request,
    decoded,
    system_message,
    text,
    tool,
    tool_result,
    tool_use,
    user,
)
from translators.core.errors import TranslatorError

ODD_VALUES: list[Any] = [None, True, 0, -1, 1.5, "", "x", [], [None], {}, {"type": "text"}, {"type": 3}]


def _rich_body() -> dict[str, Any]:
    thinking = {"type": "thinking", "thinking": "t", "signature": "sig"}
    search = {"type": "server_tool_use", "id": "s1", "name": "web_search", "input": {"query": "q"}}
    result = {"type": "web_search_tool_result", "tool_use_id": "s1", "content": []}
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AA"}}
    document = {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "d"}}
    return body(
        user(text("a"), image, document),
        assistant(thinking, search, result, text("b"), tool_use("t1", "A", x="1")),
        user(tool_result("t1", [text("out"), {"type": "tool_reference", "tool_name": "B"}], is_error=True)),
        system_message("s", output_config={"effort": "low"}, clear_at="next_user_message"),
        user("c"),
        tools=[
            tool("A"),
            tool("B", defer_loading=True),
            {"type": "web_search_20250305", "name": "web_search"},
        ],
        tool_choice={"type": "any"},
        thinking={"type": "enabled", "budget_tokens": 2048},
        output_config={"effort": "high", "format": {"type": "json_schema", "schema": {}}},
        context_management={
            "edits": [
                {"type": "clear_thinking_20251015", "keep": {"type": "thinking_turns", "value": 1}},
                {
                    "type": "clear_tool_uses_20250919",
                    "trigger": {"type": "tool_uses", "value": 0},
                    "keep": {"type": "tool_uses", "value": 0},
                    "exclude_tools": ["B"],
                    "clear_tool_inputs": True,
                },
            ]
        },
        metadata={"user_id": "u"},
        system=[text("sys")],
    )


def _paths(value: Any, path: tuple = ()) -> list[tuple]:
    out = [path]
    if isinstance(value, dict):
        for key, inner in value.items():
            out += _paths(inner, (*path, key))
    elif isinstance(value, list):
        for i, inner in enumerate(value):
            out += _paths(inner, (*path, i))
    return out


def _replaced(value: Any, path: tuple, new: Any) -> Any:
    if not path:
        return new
    out = copy.deepcopy(value)
    target = out
    for step in path[:-1]:
        target = target[step]
    target[path[-1]] = new
    return out


def _decodes_or_refuses(request_body: dict[str, Any], case: str) -> None:
    try:
        decoded(request_body)
    except TranslatorError:
        pass
    except Exception as exc:  # the failure message names the case
        raise AssertionError(f"{case}: {exc!r}") from exc


def test_every_value_at_every_place_of_a_rich_body_gives_a_request_or_our_refusal() -> None:
    original = _rich_body()
    request, _ = decoded(original)  # the body itself is a valid request that uses every feature
    assert [t.name for t in request.tools] == ["A", "web_search", "B"]
    for path in _paths(original):
        for new in ODD_VALUES:
            _decodes_or_refuses(_replaced(original, path, new), f"{path} = {new!r}")


def test_odd_values_in_the_real_claude_code_request_give_a_request_or_our_refusal() -> None:
    original = claude_code_request()
    paths = _paths(original)
    rng = random.Random(len(paths))  # seeded: a failure repeats, and names its case
    for _ in range(examples(300)):
        path, new = rng.choice(paths), rng.choice(ODD_VALUES)
        _decodes_or_refuses(_replaced(original, path, new), f"{path} = {new!r}")
