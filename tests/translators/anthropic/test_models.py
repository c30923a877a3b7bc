"""translators/anthropic/models.py: the reader of Anthropic's `GET /v1/models/{id}` (answers shaped
like the anthropic SDK's `types.ModelInfo`), over the Claude family's shipped table."""

from __future__ import annotations

import pytest
from anthropic.types import ModelInfo

from translators.anthropic.models import from_model_info


def model_info(**overrides: object) -> dict[str, object]:
    """A models-endpoint answer, validated by the SDK's own type so the fixture is the vendor's shape."""
    yes, no = {"supported": True}, {"supported": False}
    info: dict[str, object] = {
        "type": "model", "id": "claude-sonnet-5-5", "display_name": "Claude Sonnet 5.5",
        "created_at": "2026-09-01T00:00:00Z", "lifecycle": "active", "max_input_tokens": 1_000_000,
        "max_tokens": 128_000,
        "capabilities": {
            "batch": yes, "citations": yes, "code_execution": yes, "image_input": yes, "pdf_input": no,
            "structured_outputs": yes,
            "context_management": {"supported": True, "compact_20260112": yes},
            "effort": {"supported": True, "low": yes, "medium": yes, "high": yes, "xhigh": no, "max": yes},
            "server_tools": {"supported": True, "code_execution": yes, "web_search": yes},
            "thinking": {"supported": True, "types": {"adaptive": yes, "between_tools": yes, "disabled": yes,
                                                      "enabled": no}},
        },
        **overrides,
    }
    ModelInfo.model_validate(info)
    return info


def test_the_vendors_answer_gives_window_limit_thinking_types_and_effort_words() -> None:
    caps = from_model_info(model_info(), "claude-sonnet-5-5")
    assert caps.source == "vendor"
    assert (caps.context_window, caps.max_output_tokens) == (1_000_000, 128_000)
    assert caps.thinking == {"adaptive", "between_tools", "disabled"}
    assert caps.effort == {"low", "medium", "high", "max"}
    assert caps.structured_output and caps.image_input and not caps.pdf_input and caps.web_search


def test_a_deprecated_model_says_when_it_retires() -> None:
    caps = from_model_info(model_info(lifecycle="deprecated", retires_at="2027-03-01T00:00:00Z"),
                           "claude-sonnet-5-5")
    assert caps.lifecycle == "deprecated" and caps.retires == "2027-03-01"
    assert "retires 2027-03-01" in (caps.lifecycle_note() or "")


def test_what_the_endpoint_does_not_publish_comes_from_the_table() -> None:
    # the one-sampling-knob rule is not in the capabilities object
    assert from_model_info(model_info(), "claude-sonnet-5-5").one_sampling_knob


def test_effort_words_are_empty_when_the_model_has_no_effort_knob() -> None:
    info = model_info()
    info["capabilities"]["effort"] = {"supported": False, "low": {"supported": False},  # type: ignore[index]
                                      "medium": {"supported": False}, "high": {"supported": False},
                                      "max": {"supported": False}}
    assert from_model_info(info, "claude-sonnet-5-5").effort == frozenset()


@pytest.mark.parametrize("body", [{"type": "error", "error": {"type": "not_found_error"}}, [], "x", None])
def test_a_body_that_is_not_a_model_is_refused(body: object) -> None:
    with pytest.raises(ValueError):
        from_model_info(body, "claude-sonnet-5-5")
