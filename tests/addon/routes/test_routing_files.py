"""A Chat route's `file_parts` (docs/chat.md "Files"): stated in the routes TOML, it reaches the
encoder, which then sends OpenAI's file part; a value no mode has is refused at load."""

from __future__ import annotations

from pathlib import Path

import pytest

from addon.routes.route_file import from_toml
from addon.routes.routing import RouteError, stated
from tests.translators.files import pdf, user_with
from translators import translate_request
from translators.chat.models import capabilities
from translators.core.pricing import Price

ROUTE = '[[route]]\nmodel = "*"\nupstream = "chat"\nbase_url = "http://127.0.0.1:8000/v1"\n'


def test_a_route_with_file_parts_openai_gets_openais_file_part(tmp_path: Path) -> None:
    config = tmp_path / "routes.toml"
    config.write_text(ROUTE + 'file_parts = "openai"\n')
    route = from_toml(str(config))[0]
    caps = stated(capabilities("local-model"), route)
    translation = translate_request({"model": "gpt-5.5", "input": [user_with(pdf())]}, "chat", "local-model",
                                    capabilities=caps)
    assert translation.body["messages"][0]["content"][1]["type"] == "file"
    assert translation.dropped == []


def test_a_route_without_it_drops_the_file(tmp_path: Path) -> None:
    config = tmp_path / "routes.toml"
    config.write_text(ROUTE)
    caps = stated(capabilities("local-model"), from_toml(str(config))[0])
    translation = translate_request({"model": "gpt-5.5", "input": [user_with(pdf())]}, "chat", "local-model",
                                    capabilities=caps)
    assert translation.dropped == ["input[0].content[1]"]
    assert any("this Chat route takes no files" in note for note in translation.notes)


def test_a_file_parts_value_no_mode_has_is_refused_at_load(tmp_path: Path) -> None:
    config = tmp_path / "routes.toml"
    config.write_text(ROUTE + 'file_parts = "yes"\n')
    with pytest.raises(RouteError, match="file_parts 'yes': write one of drop, openai"):
        from_toml(str(config))


def test_a_route_with_cache_control_true_gets_breakpoints_on_its_text_parts(tmp_path: Path) -> None:
    """docs/chat.md "Prompt caching": the TOML boolean reaches the encoder."""
    config = tmp_path / "routes.toml"
    config.write_text(ROUTE + "cache_control = true\n")
    caps = stated(capabilities("anthropic/claude-sonnet-4.6"), from_toml(str(config))[0])
    request = {"model": "gpt-5.5", "instructions": "Be brief.", "input": "hi"}
    translation = translate_request(request, "chat", "anthropic/claude-sonnet-4.6", capabilities=caps)
    messages = translation.body["messages"]
    assert messages[0]["content"][0]["cache_control"] == {"type": "ephemeral"}
    config.write_text(ROUTE + 'cache_control = "maybe"\n')
    with pytest.raises(RouteError, match="cache_control 'maybe': write true or false"):
        from_toml(str(config))


def test_a_routes_prices_are_read_and_a_bad_one_is_refused_at_load(tmp_path: Path) -> None:
    """docs/prices.md "A route's own prices"."""
    config = tmp_path / "routes.toml"
    config.write_text(ROUTE + "prices = {input = 0.27, output = 1.1, cache_read = 0.07}\n")
    [route] = from_toml(str(config))
    assert route.prices == Price(input=0.27, output=1.1, cache_read=0.07)
    config.write_text(ROUTE + "prices = {input = 0.27}\n")
    with pytest.raises(RouteError, match=r"route #1: prices: output is required"):
        from_toml(str(config))
    config.write_text(ROUTE + 'prices = "cheap"\n')
    with pytest.raises(RouteError, match="prices must be a table"):
        from_toml(str(config))
    config.write_text(ROUTE)
    assert from_toml(str(config))[0].prices is None
